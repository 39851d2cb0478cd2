package cshim_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOMPTTeamReuse: libomp (LLVM 14's __kmp_join_call) reads a region's
// parallel data for parallel_end from the team after it has returned the
// team to its pool, so a thread that forked a nested region in between has
// set that data to its own region. testdata/openmp/teamreuse.c drives the
// adapter's callbacks in that order on two threads: each region must still
// end on its own thread, and the region after it must not nest in it.
// The adapter once freed the other thread's stacks there and left that
// thread's region open (TestOpenMPClang crashed in about 1 run of 100).
func TestOMPTTeamReuse(t *testing.T) {
	// Not -fopenmp: the program calls the adapter's callbacks itself.
	p := compile(t, library(t), "hmbtrace-omp", "gcc", "teamreuse", "-pthread", "-I"+filepath.Join(root, "cshim", "openmp"),
		filepath.Join(root, "cshim", "testdata", "openmp", "teamreuse.c"))
	if stdout, _ := p.run(t, nil); !strings.Contains(stdout, "done") {
		t.Fatalf("output %q, want done", stdout)
	}
	evs := dump(t, filepath.Join(p.out, "teamreuse.0.hmb"))
	checkTrace(t, evs, []string{"after"}, nil)
	parallels := map[string]int{}
	for _, e := range evs {
		if e.kind != "ENTER" {
			continue
		}
		switch {
		case strings.HasPrefix(e.region, "!$omp parallel"):
			parallels[e.loc]++
		case e.region == "after" && e.depth != 1:
			t.Errorf("%s: after at depth %d, want 1 (its parallel region left before it)", e.loc, e.depth)
		}
	}
	if len(parallels) != 2 {
		t.Errorf("parallel regions per location %v, want one on each of two", parallels)
	}
	for loc, n := range parallels {
		if n != 1 {
			t.Errorf("%s: %d parallel regions, want 1", loc, n)
		}
	}
}
