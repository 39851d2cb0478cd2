package trend_test

import (
	"math"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The slowdown of "work" shows in "step" around it by the same amount: it
// is one finding, at "work", naming "step"; "io", whose spike also shows in
// "step", keeps its own. Every series is counted, with its reason.
func TestNestedEchoIsFolded(t *testing.T) {
	r, err := Analyze([]*tracefile.File{plant(t, true)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := render.DynamicsText(&text, r, 0); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Series.Region == "step" {
			t.Errorf("step's finding is listed although it echoes work's or io's: %s\n%s", f.Feature.Kind.String(), text.String())
		}
	}
	work := find(r, "work", "time per iteration", dynamics.TrendUp)
	if work == nil || len(work.Also) != 1 || work.Also[0] != "step" {
		t.Fatalf("work's trend should name step: %+v\n%s", work, text.String())
	}
	// The planted slowdown adds 500 ns × (i - 200) for i = 200..399.
	if want := 500.0 * 199 * 200 / 2; math.Abs(work.Severity-want) > 0.05*want {
		t.Errorf("work's trend costs %v, want %v ± 5 %%", work.Severity, want)
	}
	if !strings.Contains(text.String(), `also in "step" around it`) {
		t.Errorf("the text does not name the enclosing region:\n%s", text.String())
	}
	// Every series is accounted for in the count line.
	counted := 0
	for i := range r.Series {
		if r.Quiet[i] == "" {
			counted++
		}
	}
	if counted == 0 || !strings.Contains(text.String(), "6 series (region × location × metric): 2 with findings") ||
		!strings.Contains(text.String(), "1 only echoing a region inside them") {
		t.Errorf("counts:\n%s", text.String())
	}
}
