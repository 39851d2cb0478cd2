package cshim_test

import (
	"path/filepath"
	"regexp"
	"testing"
)

// TestSleepersBinsReclaimed runs testdata/c/sleepers.c: three threads hold
// current bins at six depths and sleep in a barrier while the main thread
// needs more bins than the pool has free. The reductions close the
// sleepers' deepest levels and take their bins back at once (the threads
// are not in a probe: buffer's doc, "The C probes write bins in place"),
// so every one of the main thread's records is kept. Before, the C probes'
// bins were never reclaimed: each take waited 200 ms for the sleepers and
// then dropped the main thread's records (1,562 of its 8,000 as no-bin).
func TestSleepersBinsReclaimed(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "sleepers", nil, filepath.Join(root, "cshim", "testdata", "c", "sleepers.c"))
	p.run(t, []string{"HMB_BUFFER_SIZE=16K", "HMB_BIN_SIZE=512", "HMB_THROTTLE=0"}, "4000")
	file := filepath.Join(p.out, "sleepers.0.hmb")
	sum, err := run(root, nil, built.hmbtrace, "summary", file)
	if err != nil {
		t.Fatalf("hmbtrace summary: %v\n%s", err, sum)
	}
	if !regexp.MustCompile(`(?m)^\s+reductions\s+[1-9]`).Match(sum) {
		t.Fatalf("the buffer made no reduction:\n%s", sum)
	}
	if regexp.MustCompile(`no-bin [1-9]`).Match(sum) {
		t.Errorf("records dropped for want of a bin:\n%s", sum)
	}
	if n := regionEvents(t, p, "main work"); n != 8000 {
		t.Errorf("%d events of the main thread's region kept, want all 8000:\n%s", n, sum)
	}
}
