package tracetest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Ranks records the trace of a run of ranks processes with locs locations
// each, for the tests that check that the tools' output does not depend on
// how many workers read it: every location runs iters iterations of a
// solver-like loop (compute, a kernel of varying length, an exchange with
// messages to the next location of its process and to the next rank, a
// barrier), each location and rank at its own pace. A bufferSize that is
// not 0 makes the buffer shed levels. The files are closed when the test
// ends.
func Ranks(t testing.TB, dir string, ranks, locs, iters, bufferSize int) []*tracefile.File {
	t.Helper()
	var files []*tracefile.File
	for r := 0; r < ranks; r++ {
		cfg := measure.Config{IgnoreEnv: true, Output: dir, Name: "ranks", Rank: r, Clock: "monotonic", NoThrottle: true, BufferSize: 16 << 20}
		if bufferSize > 0 {
			cfg.BufferSize, cfg.BinSize = bufferSize, 1<<10
		}
		m, err := measure.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var rg []measure.Region
		for _, n := range []string{"main", "step", "compute", "kernel", "exchange", "MPI_Barrier"} {
			rg = append(rg, m.Region(n))
		}
		ls := make([]*measure.Location, locs)
		for i := range ls {
			ls[i] = m.Location(fmt.Sprintf("thread %d", i))
		}
		start := m.Now()
		for li, l := range ls {
			now := start + uint64(li*37)
			at := func(dt int) uint64 { now += uint64(dt); return now }
			l.EnterAt(rg[0], at(10))
			for i := 0; i < iters; i++ {
				l.EnterAt(rg[1], at(50))
				l.EnterAt(rg[2], at(20))
				for k := 0; k < 3; k++ {
					l.EnterAt(rg[3], at(15))
					// A slow iteration now and then, a slower location
					// and rank: the analyses have something to find.
					d := 400 + (i*7+k*13+li*5+r*11)%60
					if i%17 == 5 {
						d *= 3
					}
					l.LeaveAt(rg[3], at(d+li*20+r*30))
				}
				l.LeaveAt(rg[2], at(10))
				l.EnterAt(rg[4], at(20))
				next := ls[(li+1)%len(ls)]
				l.MessageAt(measure.Message{Peer: uint64(next.ID()), Tag: 1, Bytes: 4096}, at(30))
				prev := ls[(li+len(ls)-1)%len(ls)]
				l.MessageAt(measure.Message{Recv: true, Peer: uint64(prev.ID()), Tag: 1, Bytes: 4096}, at(100))
				if ranks > 1 && li == 0 {
					l.MessageAt(measure.Message{Peer: uint64((r + 1) % ranks), PeerIsRank: true, Tag: 2, Bytes: 1 << 16}, at(40))
					l.MessageAt(measure.Message{Recv: true, Peer: uint64((r + ranks - 1) % ranks), PeerIsRank: true, Tag: 2, Bytes: 1 << 16}, at(300))
				}
				l.LeaveAt(rg[4], at(50))
				l.EnterAt(rg[5], at(10))
				l.LeaveAt(rg[5], at(200+(i*3+li)%90))
				l.LeaveAt(rg[1], at(10))
			}
			l.LeaveAt(rg[0], at(10))
		}
		files = append(files, Finish(t, m))
	}
	return files
}

// BadNesting writes a trace of six locations whose second and fifth do not
// nest (a leave at a depth nothing is open at, at different times), for
// the tests that check that an error of a tool on several workers is the
// one of a sequential run: the first bad location's. The file is closed
// when the test ends.
func BadNesting(t testing.TB, dir string) *tracefile.File {
	t.Helper()
	b := NewBuilder("bad", "node", 0, time.Unix(1700000000, 0), "main", "work")
	for n := 0; n < 6; n++ {
		l := b.Location(fmt.Sprintf("thread %d", n))
		l.Enter(10, 1)
		for k := uint64(0); k < 500; k++ {
			l.Enter(20+10*k, 2)
			l.Leave(25 + 10*k)
		}
		if n == 1 || n == 4 {
			l.Put(3, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: 3000 + uint64(n)})
		}
		l.Leave(9000)
	}
	f := b.Write(t, dir)
	return f
}

// SameErrorForProcs checks that run, given a trace from BadNesting, fails
// with 1, 2, 3, 6 and 8 workers, each time with the error of 1 worker,
// which names the first bad location ("thread 1"): the error a sequential
// run stops at. run gets the number of workers.
func SameErrorForProcs(t testing.TB, run func(procs int) error) {
	t.Helper()
	var want string
	for _, procs := range []int{1, 2, 3, 6, 8} {
		err := run(procs)
		if err == nil {
			t.Fatalf("%d workers: no error", procs)
		}
		if procs == 1 {
			want = err.Error()
		} else if err.Error() != want {
			t.Errorf("%d workers: %v; 1 worker: %s", procs, err, want)
		}
	}
	if !strings.Contains(want, `"thread 1"`) {
		t.Errorf("error %q does not name the first bad location", want)
	}
}

// SameOutputForProcs checks that write, which writes a tool's output of the
// trace named name with procs workers, writes with 2, 3 and 8 workers the
// bytes it writes with 1, and returns those.
func SameOutputForProcs(t testing.TB, name string, write func(w *bytes.Buffer, procs int) error) []byte {
	t.Helper()
	var want bytes.Buffer
	if err := write(&want, 1); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{2, 3, 8} {
		var got bytes.Buffer
		if err := write(&got, procs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: %d workers write %d bytes, 1 worker %d: not the same output", name, procs, got.Len(), want.Len())
		}
	}
	return want.Bytes()
}
