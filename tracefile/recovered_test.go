package tracefile

import (
	"bytes"
	"strings"
	"testing"
)

// A recovered trace's RECOVERED section reads back as written; a trace
// without one reads as not recovered; a second one, or an end no version
// wrote, is refused by name.
func TestRecoveredSection(t *testing.T) {
	tr, bins := sample(t)
	data := encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil || f.Recovered != nil {
		t.Fatalf("a written trace: recovered %+v, %v", f.Recovered, err)
	}
	want := Recovered{End: EndSignal, Signal: 15, Unaccounted: 12345, Cut: 2, Orphans: 1, LostDefs: 3, LostLevels: 4}
	tr.Recovered = &want
	data = encodeTrace(t, tr, bins)
	f, err = Read(bytes.NewReader(data), int64(len(data)))
	if err != nil || f.Recovered == nil || *f.Recovered != want {
		t.Fatalf("recovered %+v, %v; want %+v", f.Recovered, err, want)
	}
	if s := f.Recovered.EndText(); !strings.Contains(s, "signal 15 (SIGTERM)") {
		t.Errorf("end %q", s)
	}
	for _, c := range []struct {
		extra []byte
		want  string
	}{
		{encodeRecovered(&want), "a second RECOVERED section"},
		{nil, "end: 9 is not one of the 5 known"},
	} {
		var buf bytes.Buffer
		if c.extra == nil {
			tr.Recovered = &Recovered{End: 9}
		}
		w, err := NewWriter(&buf, tr)
		if err != nil {
			t.Fatal(err)
		}
		if c.extra != nil {
			w.section(secRecovered, c.extra)
		}
		for _, b := range bins {
			w.Bin(b)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error saying %q, got %v", c.want, err)
		}
	}
}
