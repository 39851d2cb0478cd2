package measure

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The trace converts buffer's classes and reasons to tracefile's by number
// (trace.go): the two packages must number them alike.
func TestClassAndReasonNumbering(t *testing.T) {
	if int(buffer.NumClasses) != int(tracefile.NumClasses) {
		t.Fatalf("buffer has %d classes, tracefile %d", buffer.NumClasses, tracefile.NumClasses)
	}
	for c := range int(buffer.NumClasses) {
		if b, f := buffer.Class(c).String(), tracefile.Class(c).String(); b != f {
			t.Errorf("class %d is %q in buffer, %q in tracefile", c, b, f)
		}
	}
	if int(buffer.NumReasons) != int(tracefile.NumReasons) {
		t.Fatalf("buffer has %d reasons, tracefile %d", buffer.NumReasons, tracefile.NumReasons)
	}
	for r := range int(buffer.NumReasons) {
		if b, f := buffer.Reason(r).String(), tracefile.Reason(r).String(); b != f {
			t.Errorf("reason %d is %q in buffer, %q in tracefile", r, b, f)
		}
	}
}
