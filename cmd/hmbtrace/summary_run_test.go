package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// summaryOf runs hmbtrace summary with args and returns its output.
func summaryOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if rc := run(append([]string{"summary"}, args...), &out, &errOut); rc != 0 {
		t.Fatalf("summary %v: exit %d: %s", args, rc, errOut.String())
	}
	return out.String()
}

// The summary of a run of many ranks tells the run once: its output at
// 512 ranks is no longer than at 16, one buffer story, the spread of each
// region over the ranks; -ranks tells each rank, and -tsv prints the same
// flat profile either way.
func TestSummaryOfManyRanks(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	defer func() { time.Local = local }()
	lines := map[int]int{}
	for _, ranks := range []int{16, 512} {
		dir := t.TempDir()
		tracetest.SyntheticRun(t, dir, "halo", ranks, 2)
		s := summaryOf(t, dir)
		lines[ranks] = strings.Count(s, "\n")
		for _, want := range []string{
			"Run halo: " + strconv.Itoa(ranks) + " ranks (0-" + strconv.Itoa(ranks-1) + ") on ",
			"Regions per rank (inclusive time over " + strconv.Itoa(ranks) + " ranks",
			"\nBuffers of the run (" + strconv.Itoa(ranks) + " ranks, summed)",
			"  reductions       on ",
			"    tiny on " + strconv.Itoa((ranks+2)/3) + " of " + strconv.Itoa(ranks) + " ranks",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%d ranks: no %q in\n%s", ranks, want, s)
			}
		}
		if strings.Contains(s, "Buffer of ") || strings.Contains(s, ".hmb") {
			t.Errorf("%d ranks: the summary of the run tells a rank's file:\n%s", ranks, s)
		}
		per := summaryOf(t, "-ranks", dir)
		if n := strings.Count(per, "\nBuffer of "); n != ranks {
			t.Errorf("-ranks: %d buffer stories of %d ranks", n, ranks)
		}
		if a, b := summaryOf(t, "-tsv", dir), summaryOf(t, "-tsv", "-ranks", dir); a != b || strings.Count(a, "\n") != 10 {
			t.Errorf("-tsv of the run:\n%s\nwith -ranks:\n%s", a, b)
		}
	}
	if lines[512] > lines[16] {
		t.Errorf("the summary of 512 ranks has %d lines, of 16 ranks %d", lines[512], lines[16])
	}
	// A run of a few ranks is told rank by rank, as before.
	dir := t.TempDir()
	tracetest.SyntheticRun(t, dir, "halo", 4, 2)
	if s := summaryOf(t, dir); strings.Count(s, "\nBuffer of ") != 4 || strings.Contains(s, "Run halo") {
		t.Errorf("4 ranks:\n%s", s)
	}
}
