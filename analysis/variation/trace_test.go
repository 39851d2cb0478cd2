package variation_test

import "github.com/hmbtrace/hmbtrace/internal/tracetest"

// The hand-built traces of these tests: internal/tracetest's, shared with
// the other analyses' tests.
type call = tracetest.Call

var (
	c           = tracetest.C
	recordCalls = tracetest.RecordCalls
	hotHelper   = tracetest.HotHelper
)

// unit and figure2 are Weber et al.'s figures' time step and figure 2.
const unit = tracetest.WeberUnit

var figure2 = tracetest.WeberFigure2
