package trend_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// phaseRank records rank's progress loop of 120 iterations with a phase
// series; rank 1 slows down from iteration 60.
func phaseRank(t *testing.T, rank int) *tracefile.File {
	t.Helper()
	cfg := measure.Config{Output: t.TempDir(), Name: "ranks", Rank: rank, Clock: "monotonic", TimerShift: measure.NoTimerShift}
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	step, work := m.Phase("step"), m.Region("work")
	loc := m.Location("main")
	rng := rand.New(rand.NewPCG(uint64(rank), 2))
	now := m.Now()
	for i := 0; i < 120; i++ {
		w := uint64(100_000 + rng.IntN(300))
		if rank == 1 && i >= 60 {
			w += 50_000
		}
		loc.EnterAt(step, now)
		loc.EnterAt(work, now+10)
		loc.LeaveAt(work, now+10+w)
		loc.LeaveAt(step, now+20+w)
		now += 30 + w
	}
	return tracetest.Finish(t, m)
}

// The phase series each rank cuts in-situ, gathered in rank order, give
// the dynamics of the rank files.
func TestInSituPhaseSeries(t *testing.T) {
	var files []*tracefile.File
	for r := 0; r < 3; r++ {
		files = append(files, phaseRank(t, r))
	}
	want, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var all *InSitu
	for _, f := range files {
		src, series := RankPhaseSeries(f)
		b, err := EncodeInSitu(&InSitu{Source: src, Series: series})
		if err != nil {
			t.Fatal(err)
		}
		part, err := DecodeInSitu(b)
		if err != nil {
			t.Fatal(err)
		}
		if all == nil {
			all = part
		} else {
			all.Merge(part)
		}
	}
	got, err := all.Analyze(Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := render.DynamicsTSV(&a, got); err != nil {
		t.Fatal(err)
	}
	if err := render.DynamicsTSV(&b, want); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || len(got.Series) != len(want.Series) || got.Source != want.Source {
		t.Errorf("in-situ (%d series, %+v)\n%s\nfrom the files (%d series, %+v)\n%s", len(got.Series), got.Source, a.String(), len(want.Series), want.Source, b.String())
	}
	if len(got.Findings) == 0 {
		t.Errorf("no findings: the step of rank 1 is not seen\n%s", a.String())
	}
}
