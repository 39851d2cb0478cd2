package tracefile

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// An OpenMP thread's place reads back; a trace without one writes no THREAD
// TEAMS section, and a section that contradicts the file is an error
// naming the offset.
func TestTeams(t *testing.T) {
	tr, bins := sample(t)
	without := encodeTrace(t, tr, bins)
	tr.Locations[0].Team = []int{1, 3}
	data := encodeTrace(t, tr, bins)
	if len(data) <= len(without) {
		t.Errorf("a trace with a team place is %d bytes, without %d", len(data), len(without))
	}
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Locations[0].Team, []int{1, 3}) {
		t.Errorf("team %v, want [1 3]", f.Locations[0].Team)
	}
	if got, want := f.Locations[0].TeamLabel(), "level 2, thread 3 of a team forked by thread 1"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
	g, err := Read(bytes.NewReader(without), int64(len(without)))
	if err != nil {
		t.Fatal(err)
	}
	if g.Locations[0].Team != nil || g.Locations[0].TeamLabel() != "" {
		t.Errorf("a trace without places reads team %v", g.Locations[0].Team)
	}

	encode := func(tr *Trace, locs []Location) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, tr)
		if err != nil {
			t.Fatal(err)
		}
		w.section(secTeams, encodeTeams(locs))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, c := range []struct {
		name string
		locs func(tr *Trace) []Location
		want string
	}{
		{"undefined location", func(tr *Trace) []Location {
			return []Location{{ID: 9, Team: []int{0}}}
		}, "THREAD TEAMS: team location: location 9 is not defined"},
		{"twice", func(tr *Trace) []Location {
			tr.Locations[0].Team = []int{2}
			return []Location{{ID: tr.Locations[0].ID, Team: []int{0}}}
		}, "has two places"},
	} {
		tr, _ := sample(t)
		data := encode(tr, c.locs(tr))
		_, err := Read(bytes.NewReader(data), int64(len(data)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	// Zero levels.
	tr, _ = sample(t)
	var p wirecodec.Writer
	p.Uvarint(1)
	p.Uvarint(uint64(tr.Locations[0].ID))
	p.Uvarint(0)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, tr)
	if err != nil {
		t.Fatal(err)
	}
	w.section(secTeams, p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil || !strings.Contains(err.Error(), "0 levels") {
		t.Errorf("zero levels: error %v", err)
	}
}
