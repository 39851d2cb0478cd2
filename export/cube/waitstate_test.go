package cube

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The export of a real MPI run holds its wait states as Scalasca's
// metrics, each pattern's total what hmbtrace waitstate computes, and
// within its parent everywhere (Write checks it; cube_sanity too when at
// hand).
func TestExportWaitStates(t *testing.T) {
	var files []*tracefile.File
	for r := 0; r < 2; r++ {
		files = append(files, tracetest.Open(t, filepath.Join("testdata", "mpi", fmt.Sprintf("mpi-jacobi.%d.hmb", r))))
	}
	res, err := waitstate.Analyze(files, waitstate.Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ExportProcs(&b, files, 2); err != nil {
		t.Fatal(err)
	}
	toolCheck(t, b.Bytes())
	p, err := Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	left := int64(0)
	for _, a := range p.Attrs {
		if a[0] == NoteAttr+" wait states" {
			fmt.Sscanf(a[1], "%d", &left)
		}
	}
	found := 0
	var all int64
	for pat := waitstate.Pattern(0); pat < waitstate.NumPatterns; pat++ {
		all += res.Totals[pat]
		m := p.Metric(pat.Metric())
		if res.Totals[pat] == 0 {
			if m != nil {
				t.Errorf("%v: no waits, yet a metric %s", pat, m.Uniq)
			}
			continue
		}
		found++
		if m == nil {
			t.Errorf("%v: %d ns of waits, no metric %s in the archive", pat, res.Totals[pat], pat.Metric())
			continue
		}
		var sum float64
		for _, c := range p.Cnodes() {
			for _, l := range p.Locations() {
				sum += m.Value(c, l)
			}
		}
		if got := sum * 1e9; math.Abs(got-float64(res.Totals[pat])) > float64(left)+1e3 {
			t.Errorf("%v: %.0f ns in the archive, waitstate says %d (%d ns left out)", pat, got, res.Totals[pat], left)
		}
	}
	if found == 0 {
		t.Fatal("the two-rank Jacobi run has no wait states: the test checks nothing")
	}
	if float64(left) > 0.01*float64(all) {
		t.Errorf("%d of %d ns of waits left out of the archive", left, all)
	}
}

// The export books the critical path and the delay costs in Scalasca's
// trees: each metric's total is the analysis's, and the archive passes
// the tools' checks when they are at hand.
func TestExportCriticalPathAndDelays(t *testing.T) {
	var files []*tracefile.File
	for r := 0; r < 2; r++ {
		files = append(files, tracetest.Open(t, filepath.Join("testdata", "mpi", fmt.Sprintf("mpi-jacobi.%d.hmb", r))))
	}
	res, err := waitstate.Analyze(files, waitstate.Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.CriticalPath == nil || len(res.DelayCosts) == 0 {
		t.Fatalf("the Jacobi run has no critical path (%v) or no delay costs (%d): the test checks nothing", res.CriticalPath, len(res.DelayCosts))
	}
	var b bytes.Buffer
	if err := ExportProcs(&b, files, 2); err != nil {
		t.Fatal(err)
	}
	toolCheck(t, b.Bytes())
	p, err := Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	total := func(uniq string) float64 {
		m := p.Metric(uniq)
		if m == nil {
			t.Errorf("no metric %s in the archive", uniq)
			return 0
		}
		var sum float64
		for _, c := range p.Cnodes() {
			for _, l := range p.Locations() {
				sum += m.Value(c, l)
			}
		}
		return sum * 1e9
	}
	var imb, delays, long int64
	for _, g := range res.CriticalPath.Regions {
		imb += g.Imbalance
	}
	for _, d := range res.DelayCosts {
		delays += d.Time
		if d.LongTerm {
			long += d.Time
		}
	}
	for _, c := range []struct {
		uniq string
		want int64
	}{
		{"critical_path", res.CriticalPath.Length},
		{"critical_path_imbalance", imb},
		{"delay", delays},
		{"delay_mpi", delays},
	} {
		if got := total(c.uniq); math.Abs(got-float64(c.want)) > 1e3 {
			t.Errorf("%s: %.0f ns in the archive, the analysis says %d", c.uniq, got, c.want)
		}
	}
	for _, a := range p.Attrs {
		if a[0] == NoteAttr+" critical path" || a[0] == NoteAttr+" delay costs" {
			t.Errorf("%s: %s", a[0], a[1])
		}
	}
	t.Logf("critical path %d ns, imbalance %d ns, delay costs %d ns (%d long-term)", res.CriticalPath.Length, imb, delays, long)
}
