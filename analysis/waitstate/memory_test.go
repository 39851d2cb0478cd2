package waitstate

import (
	"reflect"
	"runtime"
	"sync"
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
	return openRun(t, paths)
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

// TestReplayRereadSame: a location whose log the forward pass did not
// keep (past logBudget) is swept from its trace again, with the same
// results, whichever locations kept theirs.
func TestReplayRereadSame(t *testing.T) {
	defer func(b int64) { logBudget = b }(logBudget)
	dir := t.TempDir()
	var synthetic []*tracefile.File
	for _, p := range tracetest.SyntheticRun(t, dir, "reread", 4, 50) {
		synthetic = append(synthetic, tracetest.Open(t, p))
	}
	for name, files := range map[string][]*tracefile.File{"halo": openHaloSteps(t, 16, 20), "synthetic": synthetic} {
		logBudget = 1 << 30
		want, err := Analyze(files, Options{Procs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want.Counts[LateSender] == 0 || len(want.DelayCosts) == 0 || want.CriticalPath == nil {
			t.Fatalf("%s: the run shows no waits or delays to compare", name)
		}
		// 0: no location keeps its log; 3000: some do.
		for _, budget := range []int64{0, 3000} {
			for _, procs := range []int{1, 2} {
				logBudget = budget
				var (
					mu            sync.Mutex
					kept, rereads int
				)
				sweepHook = func(a *analysis, n int) {
					if n < 0 {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if a.data[n].log.reread {
						rereads++
					} else {
						kept++
					}
				}
				got, err := Analyze(files, Options{Procs: procs})
				sweepHook = nil
				if rereads == 0 || budget == 0 && kept > 0 {
					t.Errorf("%s: log budget %d: %d locations kept their logs, %d reread their traces", name, budget, kept, rereads)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: log budget %d, %d workers: the result differs from the one of kept logs", name, budget, procs)
				}
			}
		}
	}
}

// TestReplayMemoryPerWorker: with no log kept, what the workers hold
// during the second pass does not grow with the locations. Before the
// sweeps the heap holds the run-wide tables (the files, the calls, the
// waits, no windows); after them, the tables plus the results (the
// intervals' times the delay costs need). In between, each worker makes
// the windows of the location it sweeps and lets them go at its end: the
// live heap at the end of each sweep exceeds the larger of the two by the
// workers' own state, which at 4x the ranks, with 1 and 2 workers, is
// about what it is at 1x (the bytes are exact, not times), and the
// windows held then are a worker's location's, not the run's.
func TestReplayMemoryPerWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("writes halo runs of 16 and 64 ranks and collects the heap at each sweep")
	}
	defer func(b int64) { logBudget = b }(logBudget)
	logBudget = 0
	// measure returns the live heap before and after the sweeps, and the
	// most at the end of one.
	measure := func(ranks, procs int) (before, after, peak uint64, mostLive int64) {
		files := openHaloSteps(t, ranks, 100)
		var (
			mu sync.Mutex
			ms runtime.MemStats
		)
		sweepHook = func(a *analysis, n int) {
			mu.Lock()
			defer mu.Unlock()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			switch n {
			case -1:
				before = ms.HeapAlloc
				if made := a.windowsMade.Load(); made != 0 {
					t.Errorf("%d ranks: %d windows made before the sweeps", ranks, made)
				}
			case -2:
				after = ms.HeapAlloc
				if a.windowsMade.Load() == 0 {
					t.Errorf("%d ranks: no windows made", ranks)
				}
			default:
				mostLive = max(mostLive, a.windowsLive.Load())
				if !a.data[n].log.reread {
					t.Errorf("location %d kept its log past a budget of 0 bytes", n)
				}
				peak = max(peak, ms.HeapAlloc)
			}
		}
		defer func() { sweepHook = nil }()
		res, err := Analyze(files, Options{Procs: procs})
		if err != nil {
			t.Fatal(err)
		}
		if res.Counts[LateSender] == 0 || res.UnmatchedRecvs != 0 {
			t.Fatalf("the halo run replayed badly: %d Late Sender, %d receives unmatched", res.Counts[LateSender], res.UnmatchedRecvs)
		}
		return before, after, peak, mostLive
	}
	for _, procs := range []int{1, 2} {
		b1, a1, p1, w1 := measure(16, procs)
		b4, a4, p4, w4 := measure(64, procs)
		// Windows made run-wide would be held at every sweep's end, 4x as
		// many at 4x the ranks.
		t.Logf("%d workers: at most %d windows held at a sweep's end at 16 ranks, %d at 64", procs, w1, w4)
		if w1 == 0 || w4 > w1*3/2 {
			t.Errorf("%d workers: %d windows held at a sweep's end at 16 ranks, %d at 64: the windows grow with the run", procs, w1, w4)
		}
		e1, e4 := int64(p1)-int64(max(b1, a1)), int64(p4)-int64(max(b4, a4))
		t.Logf("%d workers: 16 ranks: %d bytes before the sweeps, %d after, %+d at a sweep's end; 64 ranks: %d, %d, %+d", procs, b1, a1, e1, b4, a4, e4)
		if e4 > max(e1, 0)*3/2+256<<10 {
			t.Errorf("%d workers: a sweep holds %+d bytes beyond the run-wide tables and results at 16 ranks, %+d at 64", procs, e1, e4)
		}
	}
}
