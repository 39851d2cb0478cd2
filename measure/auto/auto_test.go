package auto_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/measure/auto"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var (
	outer = auto.NewSite("example.com/p.outer", "/src/p/p.go", 10)
	inner = auto.NewSite("example.com/p.(*T).inner", "/src/p/p.go", 20)
)

func outerFunc() {
	defer auto.Enter(outer).End()
	innerFunc()
}

func innerFunc() {
	defer auto.Enter(inner).End()
}

// TestEnterStartsAndCloseWrites runs what instrumented code runs: the
// first probe starts the measurement from the environment, Close writes
// the trace with the sites' names, files and lines, and the probes
// allocate nothing.
func TestEnterStartsAndCloseWrites(t *testing.T) {
	if measure.Current() != nil {
		t.Skip("a measurement runs already")
	}
	dir := t.TempDir()
	t.Setenv("HMB_OUTPUT", dir)
	t.Setenv("HMB_NAME", "auto")
	outerFunc()
	m := measure.Current()
	if m == nil {
		t.Fatal("the first probe started no measurement")
	}
	if a := testing.AllocsPerRun(100, outerFunc); a != 0 {
		t.Errorf("a probed call allocates %v times", a)
	}
	auto.Close()
	if measure.Current() != nil {
		t.Error("Close left the measurement running")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.hmb"))
	if len(files) != 1 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("want one trace in %s, have %v", dir, entries)
	}
	f, err := tracefile.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]int{"example.com/p.outer": 10, "example.com/p.(*T).inner": 20}
	for _, r := range f.Regions {
		if line, ok := want[r.Name]; ok {
			if r.File != "/src/p/p.go" || r.Line != line {
				t.Errorf("%s at %s:%d", r.Name, r.File, r.Line)
			}
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("regions missing from the trace: %v", want)
	}
	var visits uint64
	for _, l := range f.Locations {
		for _, p := range l.Profile {
			if f.RegionName(p.Region) == "example.com/p.(*T).inner" {
				visits += p.Visits
			}
		}
	}
	if visits != 101+1 {
		t.Errorf("inner visited %d times, want 102", visits)
	}
}

// BenchmarkEnter is the cost of a probed call's enter and leave.
func BenchmarkEnter(b *testing.B) {
	if measure.Current() == nil {
		b.Setenv("HMB_OUTPUT", b.TempDir())
		innerFunc()
		defer auto.Close()
	}
	b.ResetTimer()
	for range b.N {
		innerFunc()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/event")
}
