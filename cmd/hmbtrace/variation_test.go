package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// recordPlanted writes a bulk-synchronous run of 6 ranks × 30 iterations in
// which every rank computes for 10-12 µs and then waits in a barrier for the
// slowest; rank 4 computes for 40 µs in iterations 3, 11 and 25.
func recordPlanted(t *testing.T) string {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "planted", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	const ranks, iterations, us = 6, 30, 1000
	mainR, iter, compute, wait := m.Region("main"), m.Region("iteration"), m.Region("compute"), m.Region("barrier wait")
	locs := make([]*measure.Location, ranks)
	t0 := m.Now()
	for r := range locs {
		locs[r] = m.Location("rank " + strconv.Itoa(r))
		locs[r].EnterAt(mainR, t0)
	}
	now := t0 + us
	for it := 0; it < iterations; it++ {
		work := make([]uint64, ranks)
		var slowest uint64
		for r := range work {
			work[r] = uint64(10+(r*5+it)%3) * us
			if r == 4 && (it == 3 || it == 11 || it == 25) {
				work[r] = 40 * us
			}
			slowest = max(slowest, work[r])
		}
		end := now + slowest + us
		for r, l := range locs {
			l.EnterAt(iter, now)
			l.EnterAt(compute, now)
			l.LeaveAt(compute, now+work[r])
			l.EnterAt(wait, now+work[r])
			l.LeaveAt(wait, end)
			l.LeaveAt(iter, end)
		}
		now = end
	}
	for _, l := range locs {
		l.LeaveAt(mainR, now+us)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if rc := run(args, &out, &errOut); rc != 0 {
		t.Fatalf("hmbtrace %v: exit %d: %s", args, rc, errOut.String())
	}
	return out.String()
}

func TestVariationReport(t *testing.T) {
	path := recordPlanted(t)
	out := runOK(t, "variation", "-sync", "barrier*", path)
	for _, want := range []string{
		"Time-dominant region: iteration",
		"180 invocations (at least 2p = 12 for p = 6 locations)",
		"runner-up: compute",
		"passed over: main",
		`Synchronization regions: "barrier wait"`,
		"Segments that stand out (robust z-score >= 3.5): 3 of 180",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The table lists the three planted segments and nothing else.
	i := strings.Index(out, "Segments that stand out")
	if i < 0 {
		t.Fatalf("no table:\n%s", out)
	}
	rows := strings.Split(strings.TrimSpace(out[i:]), "\n")[2:] // title, header
	var got []string
	for _, r := range rows {
		f := strings.Fields(r)
		if len(f) < 3 {
			t.Fatalf("table row %q", r)
		}
		got = append(got, f[0]+" "+f[1]+" "+f[2])
	}
	sort.Strings(got)
	if want := []string{"rank 4 11", "rank 4 25", "rank 4 3"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("segments that stand out %q; want %q\n%s", got, want, out)
	}
}

func TestVariationTSV(t *testing.T) {
	path := recordPlanted(t)
	out := runOK(t, "variation", "-sync", "barrier wait", "-tsv", path)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 180 {
		t.Fatalf("%d lines; want 180", len(lines))
	}
	type seg struct {
		key   string
		sos   int64
		score float64
	}
	var segs []seg
	for _, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("line %q: %d fields; want 5", line, len(f))
		}
		start, err1 := strconv.ParseInt(f[2], 10, 64)
		sos, err2 := strconv.ParseInt(f[3], 10, 64)
		score, err3 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil || err3 != nil || start < 0 {
			t.Fatalf("line %q: %v %v %v", line, err1, err2, err3)
		}
		segs = append(segs, seg{f[0] + "/" + f[1], sos, score})
	}
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].score > segs[j].score })
	top := map[string]bool{segs[0].key: true, segs[1].key: true, segs[2].key: true}
	for _, k := range []string{"rank 4/3", "rank 4/11", "rank 4/25"} {
		if !top[k] {
			t.Errorf("%s is not among the first three: %v", k, segs[:4])
		}
	}
	if segs[0].sos != 40000 || segs[3].score >= 3.5 {
		t.Errorf("first %+v, fourth %+v", segs[0], segs[3])
	}
}

func TestVariationSVG(t *testing.T) {
	path := recordPlanted(t)
	svg := filepath.Join(t.TempDir(), "view.svg")
	out := runOK(t, "variation", "-sync", "barrier wait", "-region", "compute", "-svg", svg, path)
	if !strings.Contains(out, "Segment region: compute (chosen by the user)") || !strings.Contains(out, "hot/cold view: "+svg) {
		t.Errorf("report:\n%s", out)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	rects, root := 0, ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v", svg, err)
		}
		if e, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = e.Name.Local
			}
			if e.Name.Local == "rect" {
				rects++
			}
		}
	}
	if root != "svg" || rects < 180 {
		t.Errorf("root %q with %d rects; want svg with a rect per segment", root, rects)
	}
}

func TestVariationErrors(t *testing.T) {
	path := recordPlanted(t)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"variation"}, "want at least one trace file"},
		{[]string{"variation", "-sync", "a,,b", path}, "-sync"},
		{[]string{"variation", "-region", "nope", path}, `no location visits a region named "nope"`},
		{[]string{"variation", "-svg", filepath.Join(dir, "no", "such", "dir.svg"), path}, "dir.svg"},
		{[]string{"score"}, "want at least one trace file"},
		{[]string{"score", "-property", "most", path}, `unknown overhead property "most"`},
		{[]string{"score", "-threshold", "0", path}, "-threshold 0"},
		{[]string{"score", "-min-share", "200", path}, "-min-share 200"},
	} {
		var out, errOut bytes.Buffer
		if rc := run(c.args, &out, &errOut); rc == 0 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("hmbtrace %v: exit %d, stderr %q; want an error with %q", c.args, rc, errOut.String(), c.want)
		}
	}
}

// TestVariationMPIOnly checks that a trace of MPI calls alone has no
// time-dominant region, said as such, and that -h states the rule.
func TestVariationMPIOnly(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "wrappers", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	waitall := m.RegionParadigm("MPI_Waitall", tracefile.ParadigmMPI)
	isend := m.RegionParadigm("MPI_Isend", tracefile.ParadigmMPI)
	t0 := m.Now()
	for r := 0; r < 2; r++ {
		l := m.Location("rank " + strconv.Itoa(r))
		for i := uint64(0); i < 10; i++ {
			at := t0 + i*100
			l.EnterAt(isend, at)
			l.LeaveAt(isend, at+10)
			l.EnterAt(waitall, at+20)
			l.LeaveAt(waitall, at+90)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"variation", m.Path()}, &out, &errOut); rc == 0 || !strings.Contains(errOut.String(), "no computation region") ||
		!strings.Contains(errOut.String(), "synchronization (MPI_Waitall)") {
		t.Errorf("exit %d, stderr %q; want no computation region, MPI_Waitall as synchronization", rc, errOut.String())
	}
	if !strings.Contains(helpOf["variation"], "MPI calls and\nsynchronization regions") {
		t.Errorf("variation -h does not say the rule:\n%s", helpOf["variation"])
	}
}
