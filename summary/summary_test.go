package summary_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// rankTrace writes the trace of one rank: "work" for work ns, and "extra"
// for 1 µs if extra.
func rankTrace(t *testing.T, dir string, rank int, work uint64, extra bool) *tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: dir, Name: "run", Rank: rank, TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Region("work")
	l := m.Location("main")
	t0 := m.Now()
	l.EnterAt(r, t0+10)
	l.LeaveAt(r, t0+10+work)
	if extra {
		x := m.Region("extra")
		l.EnterAt(x, t0+20+work)
		l.LeaveAt(x, t0+1020+work)
	}
	return tracetest.Finish(t, m)
}

func TestRanks(t *testing.T) {
	dir := t.TempDir()
	files := []*tracefile.File{
		rankTrace(t, dir, 0, 100_000, false),
		rankTrace(t, dir, 1, 300_000, true),
		rankTrace(t, dir, 2, 200_000, false),
	}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "Regions per rank (inclusive time over 3 ranks") {
		t.Fatalf("no per-rank table:\n%s", s)
	}
	for _, want := range []string{
		`100\.000 µs\s+200\.000 µs\s+300\.000 µs\s+1\.50\s+1\s+work`, // min, mean, max, max/mean, slowest
		`0\.0 ns\s+333\.3 ns\s+1\.000 µs\s+3\.00\s+1\s+extra`,        // ranks without it count 0
	} {
		if !regexp.MustCompile(`(?m)^\s*` + want + `$`).MatchString(s) {
			t.Errorf("no line %q in\n%s", want, s)
		}
	}
	for r := 0; r < 3; r++ {
		if !strings.Contains(s, "run."+string(rune('0'+r))+".hmb (rank "+string(rune('0'+r))+")") {
			t.Errorf("no buffer story of rank %d:\n%s", r, s)
		}
	}
}

// Files that share a rank are not the ranks of one run: no per-rank table.
func TestNoRanksForUnrelatedFiles(t *testing.T) {
	files := []*tracefile.File{
		rankTrace(t, t.TempDir(), 0, 100_000, false),
		rankTrace(t, t.TempDir(), 0, 300_000, false),
	}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Regions per rank") {
		t.Errorf("a per-rank table for two rank-0 files:\n%s", out.String())
	}
}
