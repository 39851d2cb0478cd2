package summary

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A version 1 profile, whose regions have no source, still reads: its
// regions are those of version 2 with no file and line 0.
func TestRunProfileVersion1(t *testing.T) {
	tr := &tracefile.Trace{Header: tracefile.Header{Name: "run", TicksPerSecond: 1e9},
		Regions:   []tracefile.Region{{ID: 1, Name: "solve"}},
		Locations: []tracefile.Location{{ID: 0, Profile: []tracefile.ProfileEntry{{Region: 1, Visits: 2, Inclusive: 5, Exclusive: 5}}}}}
	p := Local(tr, 0)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 is version 2 without each region's file ("": 0) and line
	// (0: 0) after its name and paradigm.
	name := append([]byte{byte(len("solve"))}, "solve"...)
	at := bytes.Index(b, name) + len(name) + 1
	if at < len(name)+1 || b[at] != 0 || b[at+1] != 0 {
		t.Fatalf("no region solve with an empty source in % x", b)
	}
	v1 := append(append([]byte(nil), b[:at]...), b[at+2:]...)
	v1[len(runMagic)] = 1
	var q RunProfile
	if err := q.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Errorf("version 1 read as %+v, want %+v", q, p)
	}
	v1[len(runMagic)] = runVersion + 1
	if err := q.UnmarshalBinary(v1); err == nil {
		t.Errorf("version %d read without an error", runVersion+1)
	}
}
