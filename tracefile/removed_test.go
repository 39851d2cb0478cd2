package tracefile

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
)

// The depth policy keeps communication (paradigm regions, messages) longer
// than the calls around it, so a kept event may sit below removed
// ancestors. Property: for random call trees with MPI-like calls and
// messages at any depth, removing the compute levels from a random depth
// down, and random other compute levels whole, the reader gives back
// exactly the recorded sequence minus the removed levels' events, with the
// regions of kept leaves and messages right.
func TestKeptBelowRemoved(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		type ev struct {
			depth int
			class Class
			rec   encode.Record
			open  uint32 // for leaves and messages: the region open at the depth
			oc    Class  // for messages: the class of that call
		}
		var evs []ev
		var stack []uint32
		var classes []Class
		now := uint64(100)
		for i := 0; i < 400; i++ {
			now += uint64(rng.IntN(3))
			switch k := rng.IntN(10); {
			case k < 4 && len(stack) < 12:
				c, r := ClassRegion, uint32(1+rng.IntN(5))
				if rng.IntN(4) == 0 {
					c, r = ClassParadigm, uint32(10+rng.IntN(3))
				}
				stack, classes = append(stack, r), append(classes, c)
				evs = append(evs, ev{depth: len(stack), class: c, rec: encode.Record{Kind: encode.KindEnter, Time: now, Region: r}, open: r})
			case k < 8 && len(stack) > 0:
				d := len(stack)
				evs = append(evs, ev{depth: d, class: classes[d-1], rec: encode.Record{Kind: encode.KindLeave, Time: now}, open: stack[d-1]})
				stack, classes = stack[:d-1], classes[:d-1]
			default:
				var open uint32
				var oc Class
				if len(stack) > 0 {
					open, oc = stack[len(stack)-1], classes[len(stack)-1]
				}
				evs = append(evs, ev{depth: len(stack), class: ClassMessage, rec: encode.Record{Kind: encode.KindSend, Time: now, Peer: 1, PeerRank: true, Tag: uint32(i), Bytes: 8}, open: open, oc: oc})
			}
		}
		for d := len(stack); d > 0; d-- {
			now++
			evs = append(evs, ev{depth: d, class: classes[d-1], rec: encode.Record{Kind: encode.KindLeave, Time: now}, open: stack[d-1]})
		}
		// Sequence numbers among events of the same time, as the probes give them.
		for i := range evs {
			if i > 0 && evs[i].rec.Time == evs[i-1].rec.Time {
				evs[i].rec.Seq = evs[i-1].rec.Seq + 1
			}
		}
		limit := 2 + rng.IntN(8)
		removedDepth := map[int]bool{}
		for d := 1; d < limit; d++ {
			removedDepth[d] = rng.IntN(5) == 0
		}
		removed := func(e ev) bool {
			return e.class == ClassRegion && (e.depth >= limit || removedDepth[e.depth])
		}
		type key struct {
			depth int
			class Class
		}
		levels := map[key][]encode.Record{}
		var order []key
		var want []ev
		for _, e := range evs {
			if removed(e) {
				continue
			}
			want = append(want, e)
			k := key{e.depth, e.class}
			if levels[k] == nil {
				order = append(order, k)
			}
			levels[k] = append(levels[k], e.rec)
		}
		tr := &Trace{Header: Header{Name: "t", StartWall: time0, TicksPerSecond: 1e9, Techniques: encode.All, Policy: "depth"},
			Regions: []Region{{ID: 1, Name: "a"}}, Locations: []Location{{ID: 0, Name: "main"}}}
		var bins []Bin
		for _, k := range order {
			recs := levels[k]
			e := encode.NewEncoder(encode.All)
			b := make([]byte, 64*len(recs)+64)
			n := e.StartBin(b, recs[0].Time, 0)
			for _, r := range recs {
				n += e.Put(b[n:], r)
			}
			bins = append(bins, Bin{Location: 0, Depth: k.depth, Class: k.class, Records: uint32(len(recs)), Data: b[:n]})
			tr.Locations[0].Levels = append(tr.Locations[0].Levels, LevelStats{Depth: k.depth, Class: k.class, Written: uint64(len(recs))})
		}
		data := encodeTrace(t, tr, bins)
		f, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		it := f.Events(0)
		var got Event
		i := 0
		for it.Next(&got) {
			if i >= len(want) {
				t.Fatalf("seed %d: more events than kept", seed)
			}
			w := want[i]
			region := w.rec.Region
			if w.rec.Kind != encode.KindEnter {
				region = w.open
				// A message whose region was removed has no region to name.
				if w.rec.Kind == encode.KindSend && w.depth > 0 && removed(ev{depth: w.depth, class: w.oc}) {
					region = 0
				}
			}
			if got.Kind != w.rec.Kind || got.Time != w.rec.Time || got.Depth != w.depth || got.Class != w.class || got.Region != region {
				t.Fatalf("seed %d (limit %d, removed %v): event %d: got %v %v d%d t%d r%d, want %v %v d%d t%d r%d",
					seed, limit, removedDepth, i, got.Kind, got.Class, got.Depth, got.Time, got.Region, w.rec.Kind, w.class, w.depth, w.rec.Time, region)
			}
			i++
		}
		if it.Err() != nil {
			t.Fatalf("seed %d (limit %d, removed %v): %v", seed, limit, removedDepth, it.Err())
		}
		if i != len(want) {
			t.Fatalf("seed %d: read %d events, kept %d", seed, i, len(want))
		}
	}
}

var time0 = time.Unix(1700000000, 0).UTC()
