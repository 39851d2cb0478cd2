package encode

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomTaskRecords makes a stream as randomRecords does with task records
// of every kind and ids of every size mixed in.
func randomTaskRecords(rng *rand.Rand, n int) []Record {
	recs := randomRecords(rng, n)
	for i := range recs {
		if rng.IntN(3) == 0 {
			recs[i] = Record{Time: recs[i].Time, Seq: recs[i].Seq,
				Kind: KindTaskCreate + Kind(rng.IntN(4)), Task: rng.Uint64N(1 << uint(rng.IntN(64)))}
		}
	}
	return recs
}

func TestTaskRecordsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tech := range allTechniqueSets() {
		recs := randomTaskRecords(rng, 300)
		_, got := decodeBin(t, tech, encodeBin(t, tech, 5, recs))
		if !reflect.DeepEqual(normalize(got), normalize(recs)) {
			t.Fatalf("techniques %s:\n got %+v\nwant %+v", tech, got, recs)
		}
	}
}

func TestTaskRecordSize(t *testing.T) {
	e := NewEncoder(All)
	b := make([]byte, MaxTaskSize)
	e.StartBin(b, 10, 0)
	// token, delta, sub-kind, id: 4 bytes for a small id.
	if n := e.Put(b, Record{Kind: KindTaskSwitch, Time: 11, Task: 9}); n != 4 {
		t.Errorf("switch to task 9: %d bytes, want 4", n)
	}
	if n := e.Task(b, KindEnter, 12, 0, 1); n != 0 {
		t.Errorf("Task with KindEnter wrote %d bytes, want 0", n)
	}
	for _, k := range []Kind{KindTaskCreate, KindTaskSwitch, KindTaskComplete, KindTaskSuspend} {
		if s := k.String(); !strings.HasPrefix(s, "TASK_") {
			t.Errorf("Kind %d is named %q", k, s)
		}
	}
	if s := Kind(18).String(); s != "Kind(18)" {
		t.Errorf("Kind 18 named %q", s)
	}
}

func TestTaskRecordErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		rec  []byte
		want string
	}{
		{"unknown sub-kind", []byte{TokTask, 1, 3, 5}, "unknown sub-kind"},
		{"sub-kind enter", []byte{TokTask, 1, byte(KindEnter), 5}, "unknown sub-kind"},
		{"no id", []byte{TokTask, 1, byte(KindTaskCreate)}, "truncated varint"},
		{"no sub-kind", []byte{TokTask, 1}, "truncated varint"},
	} {
		bin := append([]byte{TokBin, 0, 0}, c.rec...)
		d := NewDecoder(All)
		if err := d.Reset(bin); err != nil {
			t.Fatal(err)
		}
		var r Record
		for d.Next(&r) {
		}
		if d.Err() == nil || !strings.Contains(d.Err().Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, d.Err(), c.want)
		}
	}
}
