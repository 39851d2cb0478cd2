package score_test

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The hand-built traces of these tests: internal/tracetest's, shared with
// the other analyses' tests.
type call = tracetest.Call

var (
	c           = tracetest.C
	recordCalls = tracetest.RecordCalls
	hotHelper   = tracetest.HotHelper
)

const unit = 1000 // ns per time step of the figures of Weber et al.

// figure2 is Weber et al.'s figure 2: three processes running main, an
// initialisation i, and three invocations of a that call b then c.
func figure2(t testing.TB) *tracefile.File {
	iterations := func(b1 uint64) []call {
		return []call{
			c("i", 0, 4),
			c("a", 4, 10, c("b", 4, 4+b1), c("c", 4+b1, 10)),
			c("a", 10, 13, c("b", 10, 12), c("c", 12, 13)),
			c("a", 13, 16, c("b", 13, 15), c("c", 15, 16)),
		}
	}
	return recordCalls(t, measure.Config{}, unit, map[string][]call{
		"process 0": {c("main", 0, 18, iterations(5)...)},
		"process 1": {c("main", 0, 18, iterations(3)...)},
		"process 2": {c("main", 0, 18, iterations(1)...)},
	}, "process 0", "process 1", "process 2")
}
