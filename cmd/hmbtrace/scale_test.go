package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestToolsMemoryLinear: on a run archive of a halo code with an
// irregular split (tracetest.WriteHaloArchive), what comm, dump
// -definitions and the OTF2 export allocate per rank is about the
// same at 10^3 ranks as at 10^2: the tools' memory grows linearly with
// the ranks, not as their square (allocated bytes, not times).
func TestToolsMemoryLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("writes runs of 10^2 and 10^3 ranks")
	}
	// summary replays the waits up to 1,024 locations (analysis/waitstate),
	// so at both sizes here.
	cmds := [][]string{{"comm", "-tsv"}, {"dump", "-definitions"}, {"export", "-format", "otf2", "-o", "OUT"}, {"summary"}}
	perRank := func(ranks int) []float64 {
		dir := t.TempDir()
		if _, err := tracetest.WriteHaloArchive(dir, "halo", ranks, 1024, 2, true); err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, c := range cmds {
			args := append([]string(nil), c...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = filepath.Join(t.TempDir(), "otf2")
				}
			}
			var stdout, stderr bytes.Buffer
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if rc := run(append(args, dir), &stdout, &stderr); rc != 0 {
				t.Fatalf("%v: exit %d: %s", args, rc, stderr.String())
			}
			runtime.ReadMemStats(&after)
			out = append(out, float64(after.TotalAlloc-before.TotalAlloc)/float64(ranks))
		}
		return out
	}
	small, large := perRank(100), perRank(1000)
	for i, c := range cmds {
		t.Logf("%v: %.0f bytes allocated per rank at 10^2 ranks, %.0f at 10^3", c, small[i], large[i])
		// 1.25: summary's quadratic term, the replay's keys of members in
		// text, was 1.45 (106 KB per rank at 10^2 ranks, 154 KB at 10^3).
		if large[i] > 1.25*small[i]+4096 {
			t.Errorf("%v: %.0f bytes allocated per rank at 10^2 ranks, %.0f at 10^3: it grows faster than the ranks", c, small[i], large[i])
		}
	}
}
