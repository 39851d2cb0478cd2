package cube

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ringStart is the planted run's start: fixed, so its archive's bytes are.
var ringStart = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// ring writes a planted two-rank run on two hosts, two threads per rank,
// with times in nanoseconds: rank r's main thread runs main [0, 1000+r]
// calling compute [10, 400+r·100] and then MPI_Send (rank 0) or MPI_Recv
// (rank 1) [500, 900]; its second thread runs compute [20, 220] twice
// (the second ends at 520), and rank 1's second thread has a call still
// open at the end (its last event at 700). The main threads count cycles
// (rank 1 also instructions, named first): 0 at main's enter, 100 and 500
// around compute, 600 and 700 around the MPI call, 1000 at main's leave;
// instructions are twice the cycles.
func ring(t testing.TB) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	var files []*tracefile.File
	for r := 0; r < 2; r++ {
		b := tracetest.NewBuilder("ring", []string{"node-a", "node-b"}[r], r, ringStart, "main", "compute", "MPI_Send", "MPI_Recv")
		b.Trace.Regions[0].File, b.Trace.Regions[0].Line = "ring.c", 10
		b.Trace.Regions[1].File, b.Trace.Regions[1].Line = "ring.c", 30
		b.Trace.Regions[2].Paradigm = tracefile.ParadigmMPI
		b.Trace.Regions[3].Paradigm = tracefile.ParadigmMPI
		count := func(c uint64) []uint64 { return []uint64{c} }
		b.Trace.Header.Metrics = []string{"cycles"}
		if r == 1 {
			b.Trace.Header.Metrics = []string{"instructions", "cycles"}
			count = func(c uint64) []uint64 { return []uint64{2 * c, c} }
		}
		m := b.Location("main")
		m.Enter(0, 1, count(0)...)
		m.Enter(10, 2, count(100)...)
		m.Leave(uint64(400+r*100), count(500)...)
		m.Enter(500, uint32(3+r), count(600)...)
		m.Leave(900, count(700)...)
		m.Leave(uint64(1000+r), count(1000)...)
		w := b.Location("thread 1")
		w.Enter(20, 2)
		w.Leave(220)
		w.Enter(320, 2)
		w.Leave(520)
		if r == 1 {
			w.Enter(600, 1)
			w.Enter(650, 2)
			w.Leave(700)
		}
		files = append(files, b.Write(t, dir))
	}
	return files
}

func TestFromFiles(t *testing.T) {
	files := ring(t)
	p, err := FromFiles(files, 2)
	if err != nil {
		t.Fatal(err)
	}
	locs := p.Locations()
	if len(locs) != 4 {
		t.Fatalf("%d locations, want 4", len(locs))
	}
	ms := p.Machines()
	if len(ms) != 1 || ms[0].Name != "ring" || len(ms[0].Nodes) != 2 || ms[0].Nodes[1].Name != "node-b" ||
		ms[0].Nodes[1].Processes[0].Rank != 1 || ms[0].Nodes[1].Processes[0].Locations[1].Name != "thread 1" {
		t.Fatalf("system tree: %+v", ms[0])
	}
	// The call tree merges the locations' paths: main, main/compute,
	// main/MPI_Send, main/MPI_Recv, compute (thread 1's top level).
	var paths []string
	for _, c := range p.Cnodes() {
		paths = append(paths, pathOf(c))
	}
	want := []string{"main", "main/compute", "main/MPI_Send", "main/MPI_Recv", "compute"}
	if len(paths) != len(want) {
		t.Fatalf("call paths %q, want %q", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("call paths %q, want %q", paths, want)
		}
	}
	tm, vis := p.Metric(TimeMetric), p.Metric(VisitsMetric)
	cn := p.Cnodes()
	check := func(c *Cnode, l *Location, secs, visits float64) {
		t.Helper()
		if got := tm.Value(c, l); math.Abs(got-secs) > 1e-15 {
			t.Errorf("time of %s at %s = %g s, want %g", pathOf(c), l.Name, got, secs)
		}
		if got := vis.Value(c, l); got != visits {
			t.Errorf("visits of %s at %s = %g, want %g", pathOf(c), l.Name, got, visits)
		}
	}
	// Rank 0 main: 1000 − 390 (compute) − 400 (send) = 210 ns itself.
	check(cn[0], locs[0], 210e-9, 1)
	check(cn[1], locs[0], 390e-9, 1)
	check(cn[2], locs[0], 400e-9, 1)
	check(cn[3], locs[0], 0, 0)
	// Rank 1 main: 1001 − 490 − 400 = 111.
	check(cn[0], locs[2], 111e-9, 1)
	check(cn[1], locs[2], 490e-9, 1)
	check(cn[3], locs[2], 400e-9, 1)
	// Thread 1 of rank 0: compute twice at the top.
	check(cn[4], locs[1], 400e-9, 2)
	// Thread 1 of rank 1: main left open at its last event (700): 100 −
	// 50 ns itself, compute under it 50 ns.
	check(cn[0], locs[3], 50e-9, 1)
	check(cn[1], locs[3], 50e-9, 1)
	check(cn[4], locs[3], 400e-9, 2)
	// Counters: one metric per name over the files, exclusive counts.
	cyc, ins := p.Metric("cycles"), p.Metric("instructions")
	if cyc == nil || ins == nil || cyc.Type != Uint64 {
		t.Fatalf("counter metrics %v %v", cyc, ins)
	}
	for _, l := range []*Location{locs[0], locs[2]} {
		for i, want := range []float64{500, 400} {
			if got := cyc.Value(cn[i], l); got != want {
				t.Errorf("cycles of %s at %s = %g, want %g", pathOf(cn[i]), l.Name, got, want)
			}
		}
	}
	if got := cyc.Value(cn[2], locs[0]); got != 100 {
		t.Errorf("cycles of main/MPI_Send at rank 0 = %g, want 100", got)
	}
	if got := ins.Value(cn[3], locs[2]); got != 200 {
		t.Errorf("instructions of main/MPI_Recv at rank 1 = %g, want 200", got)
	}
	if got := ins.Value(cn[0], locs[0]) + cyc.Value(cn[4], locs[1]); got != 0 {
		t.Errorf("counts where none were read: %g", got)
	}
	if r := p.Regions()[2]; r.Name != "MPI_Send" || r.Mod != "MPI" || r.Paradigm != "mpi" {
		t.Errorf("MPI_Send region %+v: want module MPI, paradigm mpi", r)
	}
}

func pathOf(c *Cnode) string {
	s := c.Region.Name
	for a := c.Parent; a != nil; a = a.Parent {
		s = a.Region.Name + "/" + s
	}
	return s
}

// The exact call-path profile, when kept, wins over the events: it counts
// what the buffer shed.
func TestFromFilesExactCallPaths(t *testing.T) {
	b := tracetest.NewBuilder("exact", "h", 0, ringStart, "main", "work")
	l := b.Location("main")
	l.Enter(0, 1)
	l.Enter(10, 2)
	l.Leave(20)
	l.Leave(30)
	b.Trace.Locations[0].CallPaths = []tracefile.CallPath{
		{Parent: 0, Region: 1, Visits: 1, Inclusive: 5000, Exclusive: 1000},
		{Parent: 1, Region: 2, Visits: 7, Inclusive: 4000, Exclusive: 4000},
	}
	f := b.Write(t, t.TempDir())
	p, err := FromFiles([]*tracefile.File{f}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cn, loc := p.Cnodes(), p.Locations()[0]
	if got := p.Metric(VisitsMetric).Value(cn[1], loc); got != 7 {
		t.Errorf("visits of main/work = %g, want the exact profile's 7", got)
	}
	if got := p.Metric(TimeMetric).Value(cn[1], loc); math.Abs(got-4e-6) > 1e-15 {
		t.Errorf("time of main/work = %g, want 4e-6", got)
	}
}

// The archive is the same for any number of workers.
func TestFromFilesProcs(t *testing.T) {
	files := ring(t)
	tracetest.SameOutputForProcs(t, "cube", func(w *bytes.Buffer, procs int) error {
		return ExportProcs(w, files, procs)
	})
}

func TestFromFilesErrors(t *testing.T) {
	if _, err := FromFiles(nil, 1); err == nil {
		t.Error("no files: no error")
	}
	b := tracetest.NewBuilder("empty", "h", 0, ringStart, "main")
	b.Location("main")
	f := b.Write(t, t.TempDir())
	if _, err := FromFiles([]*tracefile.File{f}, 1); err == nil {
		t.Error("a file without calls: no error")
	}
	bad := tracetest.BadNesting(t, t.TempDir())
	tracetest.SameErrorForProcs(t, func(procs int) error {
		_, err := FromFiles([]*tracefile.File{bad}, procs)
		return err
	})
}

// OpenMP constructs go under Time > OpenMP, barriers under its
// Synchronization > Barrier; a thread's time in a barrier is all three.
func TestFromFilesOpenMP(t *testing.T) {
	b := tracetest.NewBuilder("omp", "h", 0, ringStart, "main", "!$omp parallel @loop.c:5", "!$omp implicit barrier @loop.c:9", "work")
	b.Trace.Regions[1].Paradigm = tracefile.ParadigmOpenMP
	b.Trace.Regions[2].Paradigm = tracefile.ParadigmOpenMP
	for th := 0; th < 2; th++ {
		l := b.Location(fmt.Sprintf("thread %d", th))
		if th == 0 {
			l.Enter(0, 1)
		}
		l.Enter(10, 2)
		l.Enter(20, 4)
		l.Leave(uint64(100 + 50*th))
		l.Enter(uint64(100+50*th), 3)
		l.Leave(200)
		l.Leave(210)
		if th == 0 {
			l.Leave(300)
		}
	}
	f := b.Write(t, t.TempDir())
	p, err := FromFiles([]*tracefile.File{f}, 1)
	if err != nil {
		t.Fatal(err)
	}
	omp, bar := p.Metric("omp_time"), p.Metric("omp_barrier")
	if omp == nil || bar == nil || p.Metric("omp_synchronization") == nil || p.Metric("mpi") != nil {
		t.Fatalf("metrics %v", p.MetricList())
	}
	locs := p.Locations()
	barrier := p.Region("!$omp implicit barrier @loop.c:9", "OpenMP", 0, 0, "", "")
	if len(p.Regions()) != 4 {
		t.Fatalf("the barrier region is not the trace's: %d regions", len(p.Regions()))
	}
	if n := len(p.CnodesOf(barrier)); n != 2 {
		t.Fatalf("%d call paths of the barrier, want 2", n)
	}
	for _, c := range p.CnodesOf(barrier) {
		for th, want := range []float64{100e-9, 50e-9} {
			l := locs[th]
			if p.Metric(TimeMetric).Value(c, l) == 0 {
				continue // the other thread's path
			}
			if got := bar.Value(c, l); math.Abs(got-want) > 1e-18 {
				t.Errorf("barrier of %s = %g, want %g", l.Name, got, want)
			}
			if got := omp.Value(c, l); math.Abs(got-want) > 1e-18 {
				t.Errorf("OpenMP at the barrier of %s = %g, want %g", l.Name, got, want)
			}
		}
	}
	var b2 bytes.Buffer
	if err := p.Write(&b2); err != nil {
		t.Fatal(err)
	}
	toolCheck(t, b2.Bytes())
}

// A trace whose buffer shed events says so in the anchor; one that kept
// all does not.
func TestFromFilesNote(t *testing.T) {
	shed := tracetest.Ranks(t, t.TempDir(), 1, 2, 3000, 64<<10)
	p, err := FromFiles(shed, 2)
	if err != nil {
		t.Fatal(err)
	}
	note := ""
	for _, a := range p.Attrs {
		if a[0] == NoteAttr {
			note = a[1]
		}
	}
	if !strings.Contains(note, "ranks.0.hmb: ") || !strings.Contains(note, "events were removed") {
		t.Errorf("note %q", note)
	}
	q, err := FromFiles(ring(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range q.Attrs {
		if a[0] == NoteAttr {
			t.Errorf("a trace that kept everything: note %q", a[1])
		}
	}
}
