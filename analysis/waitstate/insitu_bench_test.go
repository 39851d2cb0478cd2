package waitstate

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// lulRank returns one rank of a run shaped as LULESH's trace is: per
// step, many short enters and leaves of compute regions (nested two
// deep), then an exchange with two neighbours and an MPI_Allreduce. Of
// its events about one in a hundred is a message or a collective, as in
// LULESH's; the compute's length varies with rank and step, so there are
// waits to find and to charge.
func lulRank(name string, rank, ranks, steps int) *tracetest.Builder {
	regions := []string{"main", "step", "MPI_Sendrecv", "MPI_Allreduce"}
	const kernels = 24
	for k := range kernels {
		regions = append(regions, fmt.Sprintf("kernel%d", k))
	}
	b := tracetest.NewBuilder(name, "node0", rank, time.Unix(1700000000, 0), regions...)
	// In-situ a run's ranks have synchronised clocks: times on the
	// reference clock, each rank's drifting a little.
	h := &b.Trace.Header
	h.ClockSync = []tracefile.ClockSync{{Ticks: 0, Offset: int64(rank) * 100}, {Ticks: 1 << 30, Offset: int64(rank)*100 + 3000}}
	h.ReferenceStart = 500
	world := make([]int32, ranks)
	for i := range world {
		world[i] = int32(i)
	}
	w := b.Comm("MPI_COMM_WORLD", 0, world, nil)
	b.Comm("MPI_COMM_SELF", 0, []int32{int32(rank)}, nil)
	l := b.Location(fmt.Sprint("rank ", rank))
	now := uint64(1000)
	at := func(dt int) uint64 { now += uint64(dt); return now }
	l.Enter(at(10), 1)
	for s := range steps {
		l.Enter(at(20), 2)
		for j := range 200 {
			k := uint32(5 + j%(kernels/2))
			l.Enter(at(10), k)
			l.Enter(at(10), k+kernels/2)
			l.Leave(at(50 + (rank*7+s*13+j)%40))
			l.Leave(at(10))
		}
		for k, peer := range []int{(rank + 1) % ranks, (rank + ranks - 1) % ranks} {
			l.Enter(at(10), 3)
			l.MessageComm(at(20), encode.KindSend, int32(peer), uint32(k), 8192, w)
			back := []int{(rank + ranks - 1) % ranks, (rank + 1) % ranks}[k]
			l.MessageComm(at(300), encode.KindRecv, int32(back), uint32(k), 8192, w)
			l.Leave(at(10))
		}
		l.Enter(at(10), 4)
		l.Collective(at(200), -1, 8, 8, w)
		l.Leave(at(10))
		l.Leave(at(10))
	}
	l.Leave(at(10))
	return b
}

// openRun opens every rank of the run archives at paths.
func openRun(t testing.TB, paths []string) []*tracefile.File {
	t.Helper()
	var files []*tracefile.File
	for _, p := range paths {
		a, err := tracefile.OpenArchive(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Slots {
			f, err := a.OpenRank(i)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		a.Close()
	}
	return files
}

// openLulesh writes a run of lulRank's shape and opens it.
func openLulesh(t testing.TB, ranks, steps int) []*tracefile.File {
	t.Helper()
	paths, err := tracetest.WriteArchive(t.TempDir(), "lul", ranks, ranks, func(r int) *tracetest.Builder {
		return lulRank("lul", r, ranks, steps)
	})
	if err != nil {
		t.Fatal(err)
	}
	return openRun(t, paths)
}

// benchInSitu replays files in-situ b.N times on one thread and reports
// that thread's CPU time per event, the allocations per event, and the
// events.
func benchInSitu(b *testing.B, files []*tracefile.File) {
	var events uint64
	for _, f := range files {
		for _, l := range f.Locations {
			events += l.Kept()
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, thread0 := settledCPUTime(b), threadCPUTime(b)
	b.ResetTimer()
	for b.Loop() {
		replayInSitu(b, files)
	}
	b.StopTimer()
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	reportCPU(b, cpu0, thread0, n)
	b.ReportMetric(testing.AllocsPerRun(1, func() { replayInSitu(b, files) })/float64(events), "allocs/event")
}

// BenchmarkInSituLulesh replays a run of LULESH's shape (8 ranks, mostly
// compute regions, lulRank) in-situ: the CPU per event of NewLocal and
// the rounds, forward and backward, as the collective end spends it.
func BenchmarkInSituLulesh(b *testing.B) {
	benchInSitu(b, openLulesh(b, 8, 200))
}

// BenchmarkInSituArchive is BenchmarkInSituLulesh on the archive at
// $HMB_INSITU_ARCHIVE (a real run's, e.g. LULESH's), skipped without it.
func BenchmarkInSituArchive(b *testing.B) {
	p := os.Getenv("HMB_INSITU_ARCHIVE")
	if p == "" {
		b.Skip("HMB_INSITU_ARCHIVE names no run archive")
	}
	benchInSitu(b, openRun(b, []string{p}))
}

// TestInSituArchive: the in-situ replay of the run archive at
// $HMB_INSITU_ARCHIVE (a real run's) gives the post-mortem results;
// skipped without it.
func TestInSituArchive(t *testing.T) {
	p := os.Getenv("HMB_INSITU_ARCHIVE")
	if p == "" {
		t.Skip("HMB_INSITU_ARCHIVE names no run archive")
	}
	files := openRun(t, []string{p})
	want, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, _ := replayInSitu(t, files)
	sameWaits(t, got, want)
	if out := os.Getenv("HMB_INSITU_JSON"); out != "" {
		// For comparing builds: the in-situ result as it is.
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInSituLuleshShape: on lulRank's shape, whose sweeps skip most
// records between windows, in-situ gives the post-mortem results.
func TestInSituLuleshShape(t *testing.T) {
	files := openLulesh(t, 8, 20)
	want, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, _ := replayInSitu(t, files)
	sameWaits(t, got, want)
	if len(want.DelayCosts) == 0 || want.CriticalPath == nil {
		t.Errorf("post-mortem: %d delay costs, critical path %+v: nothing for the sweeps to match", len(want.DelayCosts), want.CriticalPath)
	}
}
