package tracefile_test

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestStory checks the buffer's story of a run whose buffer was too small:
// its counts add up to what was recorded, the reductions have times within
// the run, and the messages and the usage error are counted.
func TestStory(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "story", BufferSize: 16 << 10, BinSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	regions := make([]measure.Region, 5)
	for i := range regions {
		regions[i] = m.Region(fmt.Sprintf("level%d", i))
	}
	l := m.Location("main")
	const iterations = 3000
	for it := 0; it < iterations; it++ {
		for _, r := range regions {
			l.Enter(r)
		}
		l.SendRank(1, 7, 64)
		for j := len(regions) - 1; j >= 0; j-- {
			l.Leave(regions[j])
		}
	}
	l.Leave(regions[0]) // nothing open: a usage error
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st := f.Story()
	if !st.Balanced || st.Recorded != st.Kept+st.Filtered+st.RemovedTotal {
		t.Errorf("recorded %d, kept %d, filtered %d, removed %d: not balanced (Balanced %v)", st.Recorded, st.Kept, st.Filtered, st.RemovedTotal, st.Balanced)
	}
	var removed, kept uint64
	for _, r := range st.RemovedBy {
		if r.N == 0 {
			t.Errorf("reason %v listed with no events", r.Reason)
		}
		removed += r.N
	}
	for _, c := range st.KeptClasses {
		kept += c.N
	}
	if removed != st.RemovedTotal || removed == 0 || kept != st.Kept {
		t.Errorf("removed by reason %d, total %d; kept by class %d, kept %d", removed, st.RemovedTotal, kept, st.Kept)
	}
	if len(st.Reductions) == 0 {
		t.Fatal("a 16 KiB buffer reduced nothing")
	}
	for _, r := range st.Reductions {
		if r.At < 0 || r.At > f.Duration() {
			t.Errorf("reduction at %d ns, outside the run of %d ns", r.At, f.Duration())
		}
	}
	if msg := st.Messages; msg.Exact != 1 || msg.Sent != iterations || msg.SentBytes != 64*iterations || msg.Peers != 1 || msg.Shed == 0 {
		t.Errorf("messages %+v; want %d sent to one peer, exact, some shed", msg, iterations)
	}
	if st.UsageTotal != 1 || len(st.UsageKinds) != 1 || st.UsageKinds[0].N != 1 {
		t.Errorf("usage errors %d %+v; want the one leave with nothing open", st.UsageTotal, st.UsageKinds)
	}
	if st.Bins == 0 || st.BytesPerEvent() <= 0 {
		t.Errorf("%d bins, %g bytes per event", st.Bins, st.BytesPerEvent())
	}
}
