package render

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/score"
)

// TestBufferAdvice checks the sentence that says which buffer would have
// kept the whole run, for a run that kept everything and one that did not.
func TestBufferAdvice(t *testing.T) {
	f := score.FileScore{UnreducedBytes: 3 << 20, UnreducedBins: 384, BinSize: 8 << 10, Buffer: 64 << 20}
	got := bufferAdvice(&f)
	want := "The whole run unreduced takes about 3.0 MiB of records in 384 bins of 8.0 KiB: HMB_BUFFER_SIZE=" +
		sizeSetting(f.UnreducedBuffer()) + " would keep it (an estimate). This run had 64.0 MiB and kept every event."
	if got != want {
		t.Errorf("advice\n%q; want\n%q", got, want)
	}
	f.Buffer, f.Removed = 1<<20, 10
	if got := bufferAdvice(&f); !strings.HasSuffix(got, "This run had 1.0 MiB and removed events.") {
		t.Errorf("advice for a reduced run: %q", got)
	}
	if !strings.Contains(ScoreColumns(score.PrologOverhead), "  prolog ovhd the probes' cost inside the region's own time") {
		t.Errorf("columns for prolog:\n%s", ScoreColumns(score.PrologOverhead))
	}
}
