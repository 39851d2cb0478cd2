package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/cube"
)

// export -format cube writes a .cubex that the cube reader reads back
// with the trace's call paths, one thread per location.
func TestExportCube(t *testing.T) {
	path := recordMessages(t)
	out := filepath.Join(t.TempDir(), "msg.cubex")
	if got := hmbtrace(t, "export", "-format", "cube", "-o", out, path); got != "wrote "+out+"\n" {
		t.Errorf("output %q", got)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cube.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Locations()); n != 3 {
		t.Errorf("%d locations, want 3", n)
	}
	var paths []string
	for _, c := range p.Cnodes() {
		s := c.Region.Name
		if c.Parent != nil {
			s = c.Parent.Region.Name + "/" + s
		}
		paths = append(paths, s)
	}
	if got := strings.Join(paths, ", "); got != "main, main/send halo, main/compute" {
		t.Errorf("call paths %s", got)
	}
	visits := p.Metric(cube.VisitsMetric)
	var n float64
	for _, l := range p.Locations() {
		n += visits.Value(p.Cnodes()[2], l)
	}
	if n != 9 {
		t.Errorf("compute visits %g, want 9", n)
	}
	// A bad format names the formats.
	var o, e bytes.Buffer
	if rc := run([]string{"export", "-format", "cubex", "-o", out, path}, &o, &e); rc == 0 || !strings.Contains(e.String(), "cube") {
		t.Errorf("-format cubex: exit %d, %q", rc, e.String())
	}
}
