package report

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
)

// synthetic describes a stencil-like run written with EnterAt and LeaveAt
// at made-up times: per location, iterations of compute (rows update
// calls), exchange (send, halo wait, a message to the next location) and
// residual (an allreduce wait), then a 60 ns check when tiny is set.
// Iterations in [slowFrom, slowTo) on location 1 compute twice as slowly,
// so the analyses find something.
type synthetic struct {
	locations, iterations, rows int
	slowFrom, slowTo            int
	tiny                        bool
	cfg                         measure.Config
}

// events is how many events the run records.
func (s synthetic) events() int {
	per := 2*s.rows + 15
	if s.tiny {
		per += 2
	}
	return s.locations * (2 + s.iterations*per)
}

// record writes the trace into dir and returns its path. Times are
// nanoseconds (the monotonic clock), so the run lasts as long as the
// made-up times say; record waits for the clock to pass the last of them
// before Close, so that the file's duration covers every event. The
// made-up times pass about as fast as this machine records them (a 3 µs
// row per 4 events), so that the run does not end long after its last
// event.
func (s synthetic) record(t testing.TB, dir string) string {
	t.Helper()
	cfg := s.cfg
	cfg.Output, cfg.Name, cfg.Clock = dir, "synthetic", "monotonic"
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	regions := map[string]measure.Region{}
	for _, name := range []string{"main", "iteration", "compute", "update row", "exchange", "send halo", "halo wait", "residual", "check", "allreduce wait"} {
		regions[name] = m.Region(name)
	}
	locs := make([]*measure.Location, s.locations)
	for i := range locs {
		locs[i] = m.Location(fmt.Sprintf("worker %d", i))
	}
	t0 := m.Now() + 1000
	ends := make([]uint64, s.locations)
	var wg sync.WaitGroup
	for i, l := range locs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ends[i] = s.play(l, locs[(i+1)%len(locs)], regions, i, t0)
		}()
	}
	wg.Wait()
	last := t0
	for _, e := range ends {
		last = max(last, e)
	}
	for m.Now() <= last {
		time.Sleep(time.Duration(last-m.Now()) + time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}

// play records location i's calls from t and returns the time of its last
// event.
func (s synthetic) play(l, next *measure.Location, r map[string]measure.Region, i int, t uint64) uint64 {
	// A small deterministic jitter keeps the durations from being equal.
	seed := uint64(i)*0x9E3779B97F4A7C15 + 1
	jitter := func(n uint64) uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed % n
	}
	in := func(name string) { l.EnterAt(r[name], t); t += 20 }
	out := func(name string) { l.LeaveAt(r[name], t); t += 20 }
	in("main")
	for it := 0; it < s.iterations; it++ {
		in("iteration")
		in("compute")
		row := uint64(3000)
		if i == 1 && it >= s.slowFrom && it < s.slowTo {
			row = 6000
		}
		for k := 0; k < s.rows; k++ {
			in("update row")
			t += row + jitter(400)
			out("update row")
		}
		out("compute")
		in("exchange")
		in("send halo")
		l.MessageAt(measure.Message{Peer: uint64(next.ID()), Tag: 1, Bytes: 4096}, t)
		t += 300 + jitter(100)
		out("send halo")
		in("halo wait")
		t += 2000 + jitter(1000)
		out("halo wait")
		out("exchange")
		in("residual")
		t += 400
		in("allreduce wait")
		t += 1000 + jitter(3000)
		out("allreduce wait")
		out("residual")
		if s.tiny {
			in("check")
			t += 60
			out("check")
		}
		out("iteration")
	}
	out("main")
	return t
}
