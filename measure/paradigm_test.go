package measure

import (
	"fmt"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// MPI regions and messages at depth 7, under compute calls down to depth
// 9, in a buffer far too small for the compute events: the depth policy
// closes compute depths first, and every MPI enter and leave and every
// message stays in the trace, below ancestors that were removed (issue 16).
func TestParadigmKeptLongest(t *testing.T) {
	t.Run("all", func(t *testing.T) { testParadigmKeptLongest(t, 0) })
	// The duration filter holds the enters: a message writes those around
	// it that can be, and the MPI call is one even when its callers are not.
	t.Run("min-duration", func(t *testing.T) { testParadigmKeptLongest(t, time.Nanosecond) })
}

func testParadigmKeptLongest(t *testing.T, minDur time.Duration) {
	// The MPI calls' records (8 per step) take 2–5 bytes each, by how far
	// apart in time the probes run: under -race or a loaded machine 16,000
	// of them outgrew a 64 KiB buffer of their own, and the test failed
	// about one run in three. 128 KiB holds them at any pace, while the
	// compute calls at depths 6 to 8 (120 per step) still fill it many
	// times over.
	m := startTest(t, Config{BufferSize: 128 << 10, BinSize: 512, NoThrottle: true, MinDuration: minDur})
	var compute []Region
	for d := 1; d <= 9; d++ {
		compute = append(compute, m.Region(fmt.Sprintf("compute %d", d)))
	}
	send := m.RegionParadigm("MPI_Send", tracefile.ParadigmMPI)
	recv := m.RegionParadigm("MPI_Recv", tracefile.ParadigmMPI)
	loc := m.Location("rank 0")
	const steps = 2000
	var sends int
	for s := 0; s < steps; s++ {
		for d := 0; d < 5; d++ { // depths 1 to 5
			loc.Enter(compute[d])
		}
		for k := 0; k < 20; k++ { // compute at depths 6 to 8, to fill the buffer
			loc.Enter(compute[5])
			loc.Enter(compute[6])
			loc.Enter(compute[7])
			loc.Leave(compute[7])
			loc.Leave(compute[6])
			loc.Leave(compute[5])
		}
		loc.Enter(compute[5]) // depth 6
		loc.Enter(send)       // depth 7
		loc.SendRank(1, uint32(s), 64)
		sends++
		loc.Leave(send)
		loc.Enter(recv)
		loc.RecvRank(1, uint32(s), 64)
		loc.Leave(recv)
		for d := 5; d >= 0; d-- {
			loc.Leave(compute[d])
		}
		_ = compute[8]
	}
	m.Close()
	f := openTrace(t, m)
	depthReduced := false
	for _, r := range f.Reductions {
		if r.Reason == tracefile.ByDepth && r.Class == tracefile.ClassRegion && r.Depth <= 6 {
			depthReduced = true
		}
		if r.Reason == tracefile.ByDepth && r.Class != tracefile.ClassRegion {
			t.Errorf("communication closed: %+v", r)
		}
	}
	if !depthReduced {
		t.Fatalf("the buffer did not close depth 6 or above: %+v", f.Reductions)
	}
	l := &f.Locations[0]
	it := f.Events(l.ID)
	var e tracefile.Event
	var mpiEnters, mpiLeaves, msgs, compute6 int
	for it.Next(&e) {
		switch {
		case e.Kind == encode.KindEnter && (e.Region == uint32(send) || e.Region == uint32(recv)):
			mpiEnters++
			if e.Depth != 7 || e.Class != tracefile.ClassParadigm {
				t.Fatalf("MPI enter at depth %d, class %v", e.Depth, e.Class)
			}
		case e.Kind == encode.KindLeave && (e.Region == uint32(send) || e.Region == uint32(recv)):
			mpiLeaves++
		case e.Kind == encode.KindSend || e.Kind == encode.KindRecv:
			msgs++
			if e.Region != uint32(send) && e.Region != uint32(recv) {
				t.Fatalf("message in region %d, want the MPI call's", e.Region)
			}
		case e.Kind == encode.KindEnter && e.Region == uint32(compute[5]):
			compute6++
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if mpiEnters != 2*steps || mpiLeaves != 2*steps || msgs != 2*sends {
		t.Errorf("kept %d MPI enters, %d leaves, %d messages; want %d, %d, %d", mpiEnters, mpiLeaves, msgs, 2*steps, 2*steps, 2*sends)
	}
	if compute6 >= 21*steps {
		t.Errorf("every depth-6 compute call kept: the test does not exercise removed ancestors")
	}
	if l.Recorded != l.Accounted() {
		t.Errorf("recorded %d, accounted %d", l.Recorded, l.Accounted())
	}
	t.Logf("reductions %+v; depth-6 compute calls kept: %d of %d", f.Reductions, compute6, 21*steps)
}

// SNAP's case: one thread makes its MPI calls, with messages, at depth 3
// (under an OpenMP parallel region and its implicit task), another polls
// MPI_Test at depth 2 far more often than the buffer holds. The depth
// policy closes the paradigm regions' depths, the first thread's MPI
// calls first, but keeps every message: messages and collectives are shed
// only after the enters and leaves of every paradigm region.
func TestMessagesOutliveParadigmRegions(t *testing.T) {
	m := startTest(t, Config{BufferSize: 64 << 10, BinSize: 512, NoThrottle: true})
	parallel := m.RegionParadigm("!$omp parallel", tracefile.ParadigmOpenMP)
	task := m.RegionParadigm("!$omp implicit task", tracefile.ParadigmOpenMP)
	send := m.RegionParadigm("MPI_Send", tracefile.ParadigmMPI)
	test := m.RegionParadigm("MPI_Test", tracefile.ParadigmMPI)
	master, worker := m.Location("thread 0"), m.Location("thread 1")
	master.Enter(parallel)
	master.Enter(task)
	worker.Enter(task)
	const steps = 300
	for s := 0; s < steps; s++ {
		master.Enter(send) // depth 3
		master.SendRank(1, uint32(s), 64)
		master.Leave(send)
		for k := 0; k < 200; k++ {
			worker.Enter(test) // depth 2
			worker.Leave(test)
		}
	}
	worker.Leave(task)
	master.Leave(task)
	master.Leave(parallel)
	m.Close()
	f := openTrace(t, m)
	var paradigm int
	for _, r := range f.Reductions {
		switch {
		case r.Reason == tracefile.ByDepth && r.Class == tracefile.ClassParadigm:
			paradigm++
		case r.Reason == tracefile.ByDepth && r.Class == tracefile.ClassMessage:
			t.Errorf("messages closed: %+v", r)
		}
	}
	if paradigm == 0 {
		t.Fatalf("no paradigm depth closed: the test does not test what it says (%+v)", f.Reductions)
	}
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	var sends int
	for it.Next(&e) {
		if e.Kind == encode.KindSend {
			sends++
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if f.Locations[0].Name != "thread 0" || sends != steps {
		t.Errorf("%s kept %d of %d sends", f.Locations[0].Name, sends, steps)
	}
	for i := range f.Locations {
		if l := &f.Locations[i]; l.Recorded != l.Accounted() {
			t.Errorf("%s: recorded %d, accounted %d", l.Name, l.Recorded, l.Accounted())
		}
	}
}
