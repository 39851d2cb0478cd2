package measure

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

func TestSmoke(t *testing.T) {
	m := startTest(t, Config{Name: "smoke"})
	a, b := m.Region("a"), m.Region("b")
	loc := m.Location("main")
	for i := 0; i < 1000; i++ {
		loc.Enter(a)
		loc.Enter(b)
		loc.Leave(b)
		loc.Leave(a)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	it := f.Events(0)
	var e tracefile.Event
	n := 0
	for it.Next(&e) {
		n++
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if n != 4000 {
		t.Fatalf("read %d events", n)
	}
	st := m.Stats()
	t.Logf("%+v", st.Locations)
	t.Logf("bytes/event %.2f", float64(st.BytesUsed)/float64(st.Kept))
}
