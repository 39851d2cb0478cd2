package otf2

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchArchive is an archive with one location and one region; it is
// replaced every benchEventsPerArchive events so that disk use stays small.
type benchArchive struct {
	a     *Archive
	w     *EventWriter
	r     RegionRef
	m     MetricRef
	c     CommRef
	bytes int64 // event file bytes of the replaced archives
}

const benchEventsPerArchive = 4 << 20

func newBenchArchive(b *testing.B, dir string) *benchArchive {
	a, err := Create(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	node, _ := a.SystemTreeNode("n", "machine", NoParent)
	proc, _ := a.LocationGroup("p", node)
	r, _ := a.Region(RegionDef{Name: "f"})
	m0, _ := a.MetricMember(MetricMemberDef{Name: "PAPI_TOT_CYC", ValueType: TypeUint64})
	m1, _ := a.MetricMember(MetricMemberDef{Name: "PAPI_TOT_INS", ValueType: TypeUint64})
	m, _ := a.MetricClass([]MetricMemberRef{m0, m1}, MetricSynchronousStrict, RecorderCPU)
	w, err := a.Location("thread", proc)
	if err != nil {
		b.Fatal(err)
	}
	c, err := a.MPICommWorld("MPI_COMM_WORLD", []LocationRef{w.Ref()})
	if err != nil {
		b.Fatal(err)
	}
	return &benchArchive{a: a, w: w, r: r, m: m, c: c}
}

// finish closes the writer, counts its file and removes the archive.
func (ba *benchArchive) finish(b *testing.B) {
	if err := ba.w.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(ba.w.file.path)
	if err != nil {
		b.Fatal(err)
	}
	ba.bytes += fi.Size()
	if err := ba.a.Abort(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEventWriterEnterLeave writes alternating enters and leaves, each
// at a new time (like libotf2's figures: 12 bytes/event), to disk.
func BenchmarkEventWriterEnterLeave(b *testing.B) {
	benchEvents(b, 1, func(w *EventWriter, ts uint64, ba *benchArchive) error {
		if ts&1 == 0 {
			return w.Enter(ts, ba.r)
		}
		return w.Leave(ts, ba.r)
	})
}

// BenchmarkEventWriterMPI writes what a non-blocking exchange and a
// collective leave per process: MpiIrecvRequest, MpiIsend,
// MpiIsendComplete, MpiIrecv, MpiCollectiveBegin and MpiCollectiveEnd, each
// at a new time.
func BenchmarkEventWriterMPI(b *testing.B) {
	benchEvents(b, 1, func(w *EventWriter, ts uint64, ba *benchArchive) error {
		req := ts / 6
		switch ts % 6 {
		case 0:
			return w.MpiIrecvRequest(ts, req)
		case 1:
			return w.MpiIsend(ts, 0, ba.c, 7, 4096, req)
		case 2:
			return w.MpiIsendComplete(ts, req)
		case 3:
			return w.MpiIrecv(ts, 0, ba.c, 7, 4096, req)
		case 4:
			return w.MpiCollectiveBegin(ts)
		}
		return w.MpiCollectiveEnd(ts, CollAllreduce, ba.c, NoRoot, 8, 8)
	})
}

// BenchmarkEventWriterMetric writes a two-value metric record before each
// enter and leave (libotf2: 17.26 bytes more per metric record).
func BenchmarkEventWriterMetric(b *testing.B) {
	vals := []MetricValue{123456789, 98765}
	benchEvents(b, 2, func(w *EventWriter, ts uint64, ba *benchArchive) error {
		vals[0] += 1000
		if err := w.Metric(ts, ba.m, vals); err != nil {
			return err
		}
		if ts&1 == 0 {
			return w.Enter(ts, ba.r)
		}
		return w.Leave(ts, ba.r)
	})
}

func benchEvents(b *testing.B, perCall int, write func(*EventWriter, uint64, *benchArchive) error) {
	root := b.TempDir()
	n := 0
	ba := newBenchArchive(b, filepath.Join(root, fmt.Sprint(n)))
	var total int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ba.w.Events() >= benchEventsPerArchive {
			b.StopTimer()
			ba.finish(b)
			total += ba.bytes
			n++
			ba = newBenchArchive(b, filepath.Join(root, fmt.Sprint(n)))
			b.StartTimer()
		}
		if err := write(ba.w, uint64(i), ba); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ba.finish(b)
	total += ba.bytes
	events := float64(b.N * perCall)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(total)/events, "bytes/event")
}
