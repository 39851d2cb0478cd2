package waitstate

import (
	"runtime"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// settledCPUTime collects the setup's garbage, then returns cpuTime: the
// process's CPU time counts the collector's threads, which would charge
// the writing of the run's files to the replay.
func settledCPUTime(b *testing.B) int64 {
	runtime.GC()
	return cpuTime(b)
}

// reportCPU reports the process's and the benchmark thread's CPU time
// since cpu0 and thread0 per event, of n.
func reportCPU(b *testing.B, cpu0, thread0 int64, n float64) {
	if cpu0 >= 0 {
		b.ReportMetric(float64(cpuTime(b)-cpu0)/n, "cpu-ns/event")
	}
	if thread0 >= 0 {
		b.ReportMetric(float64(threadCPUTime(b)-thread0)/n, "thread-ns/event")
	}
}

// BenchmarkAnalyze replays a synthetic run of 8 ranks (two locations
// each, halo exchanges and allreduces) with one worker: the cost per event
// read, in wall time and in the process's CPU time (user + system, GC
// included), which a loaded machine inflates less.
func BenchmarkAnalyze(b *testing.B) {
	dir := b.TempDir()
	var files []*tracefile.File
	for _, p := range tracetest.SyntheticRun(b, dir, "bench", 8, 2000) {
		files = append(files, tracetest.Open(b, p))
	}
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
		if _, err := Analyze(files, Options{Procs: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	reportCPU(b, cpu0, thread0, n)
}

// BenchmarkAnalyzeHalo replays a halo run of 16 ranks (a 2-D
// exchange with four neighbours and an allreduce per step, as the MPI
// wrappers record it) with one worker: the cost per event of the
// post-mortem analysis, both passes, on a realistic shape.
func BenchmarkAnalyzeHalo(b *testing.B) {
	benchAnalyze(b, openHaloSteps(b, 16, 2000))
}

// BenchmarkAnalyzeLulesh replays a run of LULESH's shape (8 ranks, mostly
// compute regions, one event in a hundred a message or a collective,
// clocks synchronised as an MPI run's are: lulRank) post-mortem with one
// worker, as BenchmarkInSituLulesh does in-situ.
func BenchmarkAnalyzeLulesh(b *testing.B) {
	benchAnalyze(b, openLulesh(b, 8, 200))
}

// benchAnalyze runs Analyze on files with one worker b.N times, on one
// thread, and reports the wall and CPU time and the allocations per event.
func benchAnalyze(b *testing.B, files []*tracefile.File) {
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
		if _, err := Analyze(files, Options{Procs: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	reportCPU(b, cpu0, thread0, n)
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() {
		if _, err := Analyze(files, Options{Procs: 1}); err != nil {
			b.Fatal(err)
		}
	}))/float64(events), "allocs/event")
}

// BenchmarkRead reads every event of the same run once, doing nothing
// with them: the floor of a replay pass, the reader's cost.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	var files []*tracefile.File
	for _, p := range tracetest.SyntheticRun(b, dir, "bench", 8, 2000) {
		files = append(files, tracetest.Open(b, p))
	}
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
	var e tracefile.Event
	for b.Loop() {
		for _, f := range files {
			for _, l := range f.Locations {
				it := f.Events(l.ID)
				for it.Next(&e) {
				}
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	reportCPU(b, cpu0, thread0, n)
}

// BenchmarkInSitu replays the same run in-situ, every rank's part in this
// process with the rounds' messages handed over in memory: the cost per
// event of reading, exchanging and replaying, and the bytes the ranks
// exchanged per message the run sent.
func BenchmarkInSitu(b *testing.B) {
	dir := b.TempDir()
	var files []*tracefile.File
	for _, p := range tracetest.SyntheticRun(b, dir, "bench", 8, 2000) {
		files = append(files, tracetest.Open(b, p))
	}
	var events, sent uint64
	for _, f := range files {
		for _, l := range f.Locations {
			events += l.Kept()
			for _, c := range l.Comm {
				sent += c.Sent
			}
		}
	}
	// The ranks replay on goroutines of their own: the process's time.
	cpu0 := settledCPUTime(b)
	b.ResetTimer()
	bytes := 0
	for b.Loop() {
		_, _, _, bytes = replayInSitu(b, files)
	}
	b.StopTimer()
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	reportCPU(b, cpu0, -1, n)
	if sent > 0 {
		b.ReportMetric(float64(bytes)/float64(sent), "B/message")
	}
}
