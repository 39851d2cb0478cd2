package cshim_test

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestOpenMPTeam: a team of 256 threads, most of which register in C
// alone and make their locations at their first replay (runtime.c,
// hmb_locate): at hmb_finalize for those that record a few events, in the
// middle of the region for every eighth, whose staging array fills. Every
// thread's events are in the trace, counted exactly, under its OpenMP
// name, and none was dropped.
func TestOpenMPTeam(t *testing.T) {
	const threads, calls, long = 256, 3, 2500 // 2,500 calls: 5,000 records, more than a staging array's 4,096
	build := library(t)
	p := buildOpenMP(t, build, "gcc", filepath.Join(root, "cshim", "testdata", "openmp", "team.c"))
	out, _ := p.run(t, []string{"HMB_THROTTLE=0"}, fmt.Sprint(threads), fmt.Sprint(calls), fmt.Sprint(long)) // every call counted in the trace
	if want := fmt.Sprintf("threads %d ran %d dropped 0\n", threads, 2*threads); out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	files, _ := filepath.Glob(filepath.Join(p.out, "*.hmb"))
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	evs := dump(t, files[0])
	// Per location: enters and leaves of work, and enters of the implicit
	// tasks (one per region); every location nests.
	type counts struct{ work, leaves, tasks, depth int }
	per := map[string]*counts{}
	for _, e := range evs {
		c := per[e.loc]
		if c == nil {
			c = &counts{}
			per[e.loc] = c
		}
		switch e.kind {
		case "ENTER":
			c.depth++
			if e.region == "work" {
				c.work++
			} else if len(e.region) > 20 && e.region[:20] == "!$omp implicit task " {
				c.tasks++
			}
		case "LEAVE":
			c.depth--
			if e.region == "work" {
				c.leaves++
			}
		}
	}
	if len(per) != threads {
		t.Errorf("%d locations, want %d", len(per), threads)
	}
	for i := 0; i < threads; i++ {
		loc := fmt.Sprintf("thread %d", i)
		c := per[loc]
		want := calls + 1
		if i%8 == 0 {
			want = long + 1
		}
		if c == nil {
			t.Errorf("%s: no location of that name", loc)
			continue
		}
		if c.work != want || c.leaves != want || c.tasks != 2 || c.depth != 0 {
			t.Errorf("%s: %d enters and %d leaves of work, %d implicit tasks, depth %d at the end; want %d, %d, 2, 0",
				loc, c.work, c.leaves, c.tasks, c.depth, want, want)
		}
	}
}
