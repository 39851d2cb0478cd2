package measure

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The trace read back from memory while the measurement records holds
// every event so far, those of the current bins too, and its statistics
// agree; the measurement records on as before.
func TestMemoryTraceHoldsCurrentBins(t *testing.T) {
	m, err := Start(Config{Output: t.TempDir(), Name: "mem", IgnoreEnv: true, BinSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	outer, inner := m.Region("outer"), m.Region("inner")
	l := m.Location("main")
	l.Enter(outer)
	for i := 0; i < 1000; i++ { // more than one bin at depth 1
		l.Enter(inner)
		l.Leave(inner)
	}
	f, err := m.memoryTrace()
	if err != nil {
		t.Fatal(err)
	}
	var e tracefile.Event
	n := 0
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 2001 {
		t.Errorf("%d events in memory, want 2001 (outer still open)", n)
	}
	l.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
