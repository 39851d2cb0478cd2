package waitstate

import (
	"runtime"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// openHalo writes a halo run of ranks processes with an irregular split
// communicator as run archives in a temporary directory and opens every
// rank of it.
func openHalo(t testing.TB, ranks int) []*tracefile.File {
	return openHaloSteps(t, ranks, 2)
}

// openHaloSteps is openHalo with steps iterations of the halo exchange.
func openHaloSteps(t testing.TB, ranks, steps int) []*tracefile.File {
	t.Helper()
	paths, err := tracetest.WriteHaloArchive(t.TempDir(), "halo", ranks, 1024, steps, true)
	if err != nil {
		t.Fatal(err)
	}
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

// TestReplayMemoryLinear: what the replay allocates per rank of a halo run
// is about the same at 10^3 ranks as at 10^2. Every rank's file lists the
// members of MPI_COMM_WORLD and of a split of it: keying communicators by
// their members per file made the replay quadratic in the ranks (bytes
// allocated, exact, not times).
func TestReplayMemoryLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("writes runs of 10^2 and 10^3 ranks")
	}
	perRank := func(ranks int) (float64, *Result) {
		files := openHalo(t, ranks)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := Analyze(files, Options{Procs: 1})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(ranks), res
	}
	small, rs := perRank(100)
	large, rl := perRank(1000)
	t.Logf("%.0f bytes allocated per rank at 10^2 ranks, %.0f at 10^3", small, large)
	// The replay must have found the run's waits, or bytes say nothing.
	for _, r := range []*Result{rs, rl} {
		if r.Counts[LateSender] == 0 || r.UnmatchedRecvs != 0 || r.UnmatchedSends != 0 {
			t.Fatalf("the halo run replayed badly: %d Late Sender, %d receives and %d sends unmatched",
				r.Counts[LateSender], r.UnmatchedRecvs, r.UnmatchedSends)
		}
	}
	if large > 1.25*small+4096 {
		t.Errorf("%.0f bytes allocated per rank at 10^2 ranks, %.0f at 10^3: the replay grows faster than the ranks", small, large)
	}
}
