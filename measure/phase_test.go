package measure

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A million iterations keep the configured number of samples, and summed
// over them each region gives exactly its flat profile.
func TestPhaseSeriesInConstantMemory(t *testing.T) {
	const iters, slots = 1_000_000, 64
	m := startTest(t, Config{PhaseSlots: slots, BufferSize: 1 << 20, BinSize: 4096})
	step := m.Phase("step")
	work, io := m.Region("work"), m.Region("io")
	loc := m.Location("main")
	now := m.Now()
	for i := 0; i < iters; i++ {
		loc.EnterAt(step, now)
		loc.EnterAt(work, now+1)
		loc.LeaveAt(work, now+uint64(5+i%7))
		if i%10 == 0 {
			loc.EnterAt(io, now+20)
			loc.LeaveAt(io, now+25)
		}
		loc.LeaveAt(step, now+30)
		now += 40
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	l := f.Location(0)
	ps := l.Phase
	if ps == nil {
		t.Fatal("no phase series in the file")
	}
	if ps.Iterations != iters || len(ps.Samples) > slots || len(ps.Samples) < slots/2 {
		t.Fatalf("%d iterations in %d samples of width %d; want %d iterations in at most %d", ps.Iterations, len(ps.Samples), ps.Width, iters, slots)
	}
	if ps.Width&(ps.Width-1) != 0 || uint64(len(ps.Samples)-1)*ps.Width >= iters {
		t.Fatalf("width %d with %d samples does not cover %d iterations", ps.Width, len(ps.Samples), iters)
	}
	sums := map[uint32]tracefile.ProfileEntry{}
	for _, s := range ps.Samples {
		for _, e := range s.Entries {
			a := sums[e.Region]
			a.Visits += e.Visits
			a.Inclusive += e.Inclusive
			a.Exclusive += e.Exclusive
			sums[e.Region] = a
		}
	}
	for _, p := range l.Profile {
		got := sums[p.Region]
		if got.Visits != p.Visits || got.Inclusive != p.Inclusive || got.Exclusive != p.Exclusive {
			t.Errorf("%s: samples sum to %+v, profile %+v", f.RegionName(p.Region), got, p)
		}
	}
}

// Merging: with 4 slots, 10 iterations of known cost end as samples of 4,
// 4 and 2 iterations.
func TestPhaseSamplesMergePairwise(t *testing.T) {
	m := startTest(t, Config{PhaseSlots: 4, TimerShift: NoTimerShift})
	step := m.Phase("step")
	loc := m.Location("main")
	now := m.Now()
	for i := 1; i <= 10; i++ {
		loc.EnterAt(step, now)
		loc.LeaveAt(step, now+uint64(i)) // iteration i takes i ticks
		now += 100
	}
	m.Close()
	ps := openTrace(t, m).Location(0).Phase
	var got []string
	for _, s := range ps.Samples {
		got = append(got, fmt.Sprintf("%d:%d", s.Entries[0].Visits, s.Entries[0].Inclusive))
	}
	// After 4 iterations the slots are full: [1][2][3][4] merge to [1+2][3+4],
	// width 2; then [5+6][7+8] fill them again and merge to [1..4][5..8],
	// width 4; [9+10] is the partial sample.
	if want := "[4:10 4:26 2:19]"; fmt.Sprint(got) != want || ps.Width != 4 {
		t.Errorf("samples %v of width %d, want %s of width 4", got, ps.Width, want)
	}
}

func TestPhaseFromEnvironmentAndCounters(t *testing.T) {
	needCounters(t)
	withReplay(t, []uint64{0}, []uint64{7}, []uint64{10}, []uint64{30})
	m := startTest(t, Config{Phase: "iteration", Metrics: []string{"page-faults"}})
	it := m.Region("iteration")
	loc := m.Location("main")
	for i := 0; i < 2; i++ {
		loc.Enter(it)
		loc.Leave(it)
	}
	m.Close()
	ps := openTrace(t, m).Location(0).Phase
	if ps == nil || len(ps.Samples) != 2 {
		t.Fatalf("phase series %+v", ps)
	}
	if a, b := ps.Samples[0].Entries[0].CounterInclusive, ps.Samples[1].Entries[0].CounterInclusive; fmt.Sprint(a, b) != "[7] [20]" {
		t.Errorf("counter sums per sample %v %v, want [7] [20]", a, b)
	}
}
