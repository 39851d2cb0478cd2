package waitstate

import (
	"os"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestWriteLulesh writes the run of LULESH's shape that
// BenchmarkAnalyzeLulesh replays (8 ranks, 200 steps, one archive) into
// HMB_LULESH_DIR when it is set: the trace the post-mortem replay's
// outputs are compared on, byte for byte, before and after a change.
func TestWriteLulesh(t *testing.T) {
	dir := os.Getenv("HMB_LULESH_DIR")
	if dir == "" {
		t.Skip("HMB_LULESH_DIR is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const ranks, steps = 8, 200
	if _, err := tracetest.WriteArchive(dir, "lul", ranks, ranks, func(r int) *tracetest.Builder {
		return lulRank("lul", r, ranks, steps)
	}); err != nil {
		t.Fatal(err)
	}
}
