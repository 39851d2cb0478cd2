package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/render"
)

// dynamics -tsv starts with its header; a bad -min-share is a usage error
// naming the flag; -h explains the method, citing the papers by author.
func TestDynamicsTSVAndFlags(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "d", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	step := m.Phase("step")
	loc := m.Location("main")
	now := m.Now()
	for i := 0; i < 100; i++ {
		d := uint64(10_000 + (i*7919)%97)
		if i == 40 {
			d = 200_000
		}
		loc.EnterAt(step, now)
		loc.LeaveAt(step, now+d)
		now += d + 10
	}
	m.Close()
	var out, errOut bytes.Buffer
	if rc := run([]string{"dynamics", "-tsv", m.Path()}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if lines[0] != render.DynamicsTSVHeader || len(lines) != 2 || !strings.HasPrefix(lines[1], "step\tmain\ttime per iteration\tpeak\t40\t40\t") {
		t.Errorf("dynamics -tsv:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if rc := run([]string{"dynamics", "-min-share", "1.5", m.Path()}, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), "-min-share 1.5") {
		t.Errorf("-min-share 1.5: exit %d: %s", rc, errOut.String())
	}
	if strings.Contains(helpOf["dynamics"], "seed 0") || !strings.Contains(helpOf["dynamics"], "Oleynik") {
		t.Errorf("dynamics -h: %s", helpOf["dynamics"])
	}
}
