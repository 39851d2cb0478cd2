package tracefile_test

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// recordLoops records two locations of main { 300 × solve { 3 × compute,
// exchange } } at given times, some calls long, with a leave at the tick of
// the one before. testdata/v1/loops.0.hmb was written by this function at
// commit 31df501, before region prediction (encode/predict.go): its bins
// hold the first token table.
func recordLoops(t *testing.T, out string) string {
	m, err := measure.Start(measure.Config{Output: out, Name: "v1", BufferSize: 64 << 10, BinSize: 512, Clock: "monotonic", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	var rs []measure.Region
	for _, n := range []string{"main", "solve", "compute", "exchange", "MPI_Send"} {
		rs = append(rs, m.Region(n))
	}
	for li := 0; li < 2; li++ {
		loc := m.Location(fmt.Sprint("loc ", li))
		ts := uint64(1e9)
		step := func(i int) { ts += uint64(8 + (i*37+li*11)%900) }
		loc.EnterAt(rs[0], ts)
		for i := 0; i < 300; i++ {
			step(i)
			loc.EnterAt(rs[1], ts)
			for k := 0; k < 3; k++ {
				step(i + k)
				loc.EnterAt(rs[2], ts)
				if i%50 == 0 {
					ts += 40000
				}
				step(i + k + 1)
				loc.LeaveAt(rs[2], ts)
			}
			step(i)
			loc.EnterAt(rs[3], ts)
			step(i + 3)
			loc.LeaveAt(rs[3], ts)
			loc.LeaveAt(rs[1], ts)
		}
		step(1)
		loc.LeaveAt(rs[0], ts)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}

// dumpEvents prints every location's events, one line each.
func dumpEvents(t *testing.T, path string) (string, *tracefile.File) {
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var b strings.Builder
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			fmt.Fprintf(&b, "%d %v %d %d %d %d %d %v %d %d\n", l.ID, e.Kind, e.Time, e.Seq, e.Depth, e.Region, e.Peer, e.PeerRank, e.Tag, e.Bytes)
		}
		if err := it.Err(); err != nil {
			t.Fatalf("%s: location %d: %v", path, l.ID, err)
		}
	}
	return b.String(), f
}

// A file of the first token table still reads, to the events its own
// reader read (their digest was taken then), which are the events of the
// same run recorded now with region prediction.
func TestReadsFirstTokenTable(t *testing.T) {
	old, f := dumpEvents(t, filepath.Join("testdata", "v1", "loops.0.hmb"))
	if f.Header.Techniques != encode.All&^encode.Predict {
		t.Errorf("testdata/v1/loops.0.hmb: techniques %v, want the set before Predict", f.Header.Techniques)
	}
	const lines, digest = 6004, "2c77633312eebef4feffc5cb7f1ce4750f3f34a8b5f292f86b6eb22fbeed35c7"
	if n, sum := strings.Count(old, "\n"), fmt.Sprintf("%x", sha256.Sum256([]byte(old))); n != lines || sum != digest {
		t.Errorf("testdata/v1/loops.0.hmb: %d events with digest %s, want %d with %s", n, sum, lines, digest)
	}
	now, g := dumpEvents(t, recordLoops(t, t.TempDir()))
	if g.Header.Techniques != encode.All {
		t.Errorf("recorded now with techniques %v, want all", g.Header.Techniques)
	}
	if now != old {
		t.Errorf("the same run recorded now reads differently:\nnow %.300s\nold %.300s", now, old)
	}
	_, oldBytes := f.Bins()
	_, newBytes := g.Bins()
	if newBytes >= oldBytes {
		t.Errorf("bins of region prediction take %d bytes, the first table's %d", newBytes, oldBytes)
	}
	t.Logf("bins: first table %d bytes, with region prediction %d", oldBytes, newBytes)
}
