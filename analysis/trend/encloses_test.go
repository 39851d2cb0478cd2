package trend

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
)

// A region that does not enclose another (its values are smaller in some
// iteration) keeps its feature even if it happens at the same place.
func TestEnclosureNeedsEveryIteration(t *testing.T) {
	p := &Series{Region: "a", Values: []float64{5, 5, 9, 5}}
	c := &Series{Region: "b", Values: []float64{4, 6, 8, 4}}
	if encloses(p, c) {
		t.Error("a encloses b although b is larger in iteration 1")
	}
	c.Values[1] = 5
	if !encloses(p, c) || encloses(c, p) {
		t.Error("a should enclose b, not the reverse")
	}
	f := dynamics.Feature{Kind: dynamics.Peak, From: 2, To: 2, Severity: 4}
	if !echoes(f, dynamics.Feature{Kind: dynamics.Peak, From: 2, To: 2, Severity: 3.9}) {
		t.Error("the same peak should echo")
	}
	if echoes(f, dynamics.Feature{Kind: dynamics.Peak, From: 2, To: 2, Severity: 1}) {
		t.Error("a peak a quarter as costly explains only a quarter")
	}
	if echoes(f, dynamics.Feature{Kind: dynamics.StepUp, From: 1, To: 2, Severity: 4}) {
		t.Error("a step is not a peak")
	}
}
