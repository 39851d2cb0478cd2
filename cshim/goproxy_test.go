package cshim_test

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestManyThreadsCallGo: threads beyond those that may call Go themselves
// make their locations, regions, names and bins through goproxy.c's proxy
// thread; every thread's calls are in the trace, under its name, with its
// own region.
func TestManyThreadsCallGo(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "many_threads", nil, filepath.Join(root, "cshim", "testdata", "c", "many_threads.c"))
	out, _ := p.run(t, nil)
	var n, calls int
	if _, err := fmt.Sscanf(out, "threads %d calls %d", &n, &calls); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	files, _ := filepath.Glob(filepath.Join(p.out, "*.hmb"))
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	per := map[string]map[string]int{}
	for _, e := range dump(t, files[0]) {
		if e.kind != "ENTER" {
			continue
		}
		if per[e.loc] == nil {
			per[e.loc] = map[string]int{}
		}
		per[e.loc][e.region]++
	}
	for i := 0; i < n; i++ {
		loc := fmt.Sprintf("worker %d", i)
		got := per[loc]
		if got["shared"] != calls || got[fmt.Sprintf("own %d", i)] != calls || len(got) != 2 {
			t.Errorf("%s: enters %v, want %d of shared and of own %d", loc, got, calls, i)
		}
	}
}
