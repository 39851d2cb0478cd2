package tracetest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// SyntheticRun writes the rank files of a run of ranks processes, named
// name, to dir, and returns their paths in rank order; no file is left
// open. Every rank has two locations that run iters steps of a halo code
// (compute, a halo exchange of MPI calls with messages to the neighbour
// ranks, an allreduce), each rank at its own pace, with its exact flat
// profile as the probes keep it; for the views of a whole run, it varies
// by rank what they put together:
//   - odd ranks count ticks at 2.4 GHz, even ones at 1 GHz;
//   - every fourth rank (0, 4, ...) enters a region "checkpoint" the
//     others never do;
//   - every third rank (0, 3, ...) switched "tiny" off (HMB_THROTTLE);
//   - every fifth rank from 2 (2, 7, ...) reduced: its buffer closed the
//     depth of the MPI calls, removing some of their events.
//
// It writes ranks files without the probes, so a run of thousands of
// ranks takes seconds.
func SyntheticRun(t testing.TB, dir, name string, ranks, iters int) []string {
	t.Helper()
	paths := make([]string, ranks)
	for r := range paths {
		paths[r] = syntheticRank(t, dir, name, r, ranks, iters)
	}
	return paths
}

// synthLoc records calls on a location of a Builder and keeps its flat
// profile as the probes do.
type synthLoc struct {
	l     *Location
	now   uint64
	stack []synthFrame
	prof  []tracefile.ProfileEntry // by region id - 1
}

type synthFrame struct {
	region       uint32
	start, child uint64
}

func (s *synthLoc) enter(region uint32, dt uint64) {
	s.now += dt
	s.l.Enter(s.now, region)
	s.stack = append(s.stack, synthFrame{region: region, start: s.now})
}

func (s *synthLoc) leave(dt uint64) {
	s.now += dt
	s.l.Leave(s.now)
	f := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	d := s.now - f.start
	e := &s.prof[f.region-1]
	e.Region = f.region
	e.Visits++
	e.Inclusive += d
	e.Exclusive += d - f.child
	if n := len(s.stack); n > 0 {
		s.stack[n-1].child += d
	}
}

// call is a call of region lasting d ticks, entered dt after the last event.
func (s *synthLoc) call(region uint32, dt, d uint64) {
	s.enter(region, dt)
	s.leave(d)
}

func syntheticRank(t testing.TB, dir, name string, rank, ranks, iters int) string {
	t.Helper()
	const (
		main = iota + 1
		step
		compute
		halo
		isend
		irecv
		waitall
		allreduce
		checkpoint
		tiny
	)
	b := NewBuilder(name, fmt.Sprintf("node%03d", rank/8), rank, time.Unix(1700000000, int64(rank)*1000),
		"main", "step", "compute", "halo", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "checkpoint", "tiny")
	for _, id := range []int{isend, irecv, waitall, allreduce} {
		b.Trace.Regions[id-1].Paradigm = tracefile.ParadigmMPI
	}
	b.Matrix = true
	b.Trace.Header.PID = 1000 + rank
	b.Trace.Header.BufferSize, b.Trace.Header.BinSize = 1<<20, 1<<10
	if rank%2 == 1 {
		b.Trace.Header.TicksPerSecond = 2.4e9
	}
	r := uint64(rank)
	var locs []*synthLoc
	for li := range 2 {
		s := &synthLoc{l: b.Location(fmt.Sprintf("thread %d", li)), now: 100 + uint64(li)*7, prof: make([]tracefile.ProfileEntry, len(b.Trace.Regions))}
		locs = append(locs, s)
		s.enter(main, 10)
		if li == 0 && rank%3 == 0 {
			for range 3 {
				s.call(tiny, 5, 20)
			}
		}
		for i := range iters {
			it := uint64(i)
			s.enter(step, 10)
			s.call(compute, 20, 1000+(r*37+it*11+uint64(li)*13)%500)
			s.enter(halo, 10)
			for _, peer := range []int{(rank + 1) % ranks, (rank + ranks - 1) % ranks} {
				s.enter(isend, 5)
				s.l.Message(s.now+1, encode.KindSend, uint64(peer), true, 1, 4096)
				s.leave(20)
				s.enter(irecv, 5)
				s.l.Message(s.now+1, encode.KindRecv, uint64(peer), true, 1, 4096)
				s.leave(20)
			}
			s.call(waitall, 5, 100+(r*53+it*7)%300)
			s.leave(5)
			s.call(allreduce, 10, 200+(r*29)%150)
			s.leave(10)
		}
		if rank%4 == 0 {
			s.call(checkpoint, 10, 5000+r)
		}
		s.leave(10)
		loc := &b.Trace.Locations[li]
		for _, e := range s.prof {
			if e.Visits > 0 {
				loc.Profile = append(loc.Profile, e)
			}
		}
		if li == 0 && rank%3 == 0 {
			for k := range loc.Profile {
				if e := &loc.Profile[k]; e.Region == tiny {
					e.Throttled, e.ThrottledAt, e.VisitsAfter = true, 150, 1000+r
				}
			}
		}
	}
	var removed uint64
	for i, s := range locs {
		loc := &b.Trace.Locations[i]
		loc.Recorded = 0
		loc.Levels = nil
		for _, lv := range s.l.levels {
			n := uint64(len(lv.records))
			st := tracefile.LevelStats{Depth: lv.depth, Class: lv.class, Written: n}
			// The buffer of a reducing rank closed depth 4, the MPI calls in
			// the halo exchange, and revoked some of their records.
			if rank%5 == 2 && lv.depth == 4 && lv.class == tracefile.ClassRegion {
				k := 10 + r%7
				st.Written += k
				st.Revoked[tracefile.ByDepth] = k
				st.Closed, st.By = true, tracefile.ByDepth
				removed += k
			}
			loc.Recorded += st.Written
			loc.Levels = append(loc.Levels, st)
		}
		b.Trace.Header.EndTicks = max(b.Trace.Header.EndTicks, s.l.last)
		loc.Comm = s.l.matrix()
	}
	if removed > 0 {
		b.Trace.Reductions = []tracefile.Reduction{{Reason: tracefile.ByDepth, Depth: 4, Time: b.Trace.Header.EndTicks / 2, Bins: 1, Records: removed}}
	}
	path := filepath.Join(dir, name+"."+strconv.Itoa(rank)+".hmb")
	if err := tracefile.WriteFile(path, &b.Trace, b.bins); err != nil {
		t.Fatal(err)
	}
	return path
}
