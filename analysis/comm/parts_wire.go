package comm

import (
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// The wire form of the parts, as they go up the reduction tree at the
// collective end of a run: binary, varints, a send's receiving rank as
// its distance from the sender's. The root of the tree reads every rank's
// part once and writes its running merge at each of its ⌈log₂ p⌉ levels;
// in JSON (MarshalParts, which the archive keeps) a rank's part of a halo
// code took about 340 bytes and the root's merges of 10⁵ ranks' 3.5 s of
// CPU (BenchmarkRootMergeScale in cshim). A list's count is written one
// more than its length, 0 for nil, so that parts read back marshal to the
// same JSON as the parts sent.

// partsWireMagic begins the wire form, and changes with it.
const partsWireMagic = "HMBCP1"

// MarshalPartsWire returns the wire form of parts.
func MarshalPartsWire(parts []Part) []byte {
	// Sized once: a halo code's rank takes about 60 bytes.
	w := make(wirecodec.Writer, 0, len(partsWireMagic)+64*len(parts))
	w = append(w, partsWireMagic...)
	w.OptCount(len(parts), parts != nil)
	for i := range parts {
		p := &parts[i]
		w.Varint(int64(p.Rank))
		w.OptCount(len(p.Nodes), p.Nodes != nil)
		for _, n := range p.Nodes {
			w.String(n)
		}
		w.OptCount(len(p.IDs), p.IDs != nil)
		for _, id := range p.IDs {
			w.Uvarint(uint64(id))
		}
		w.Varint(int64(p.RankLoc))
		w.OptCount(len(p.Sends), p.Sends != nil)
		for _, s := range p.Sends {
			w.Varint(int64(s.From))
			w.Varint(int64(s.ToRank - p.Rank))
			w.Varint(int64(s.ToLoc))
			w.Uvarint(s.Messages)
			w.Uvarint(s.Bytes)
		}
		w.Uvarint(p.Unmatched)
		w.Varint(int64(p.Exact))
		w.Varint(int64(p.Counted))
		w.Uvarint(p.Shed)
		w.Uvarint(p.Channel)
		w.Uvarint(p.ChannelUnreceived)
	}
	return w
}

// UnmarshalPartsWire reads what MarshalPartsWire wrote, and checks it as
// UnmarshalParts does.
func UnmarshalPartsWire(b []byte) ([]Part, error) {
	if len(b) < len(partsWireMagic) || string(b[:len(partsWireMagic)]) != partsWireMagic {
		return nil, fmt.Errorf("comm: the run's matrix parts: not their wire form")
	}
	r := wirecodec.MakeReader(b, len(partsWireMagic))
	const lo, hi = math.MinInt32, math.MaxInt32
	var ps []Part
	// A part takes 11 bytes at the least: a rank with no locations (its
	// rank, three empty lists, its location and six zero counts).
	if n, ok := r.OptCount("parts", 11); ok {
		ps = make([]Part, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			p := Part{Rank: r.Int("rank", lo, hi)}
			if m, ok := r.OptCount("nodes", 1); ok {
				p.Nodes = make([]string, 0, m)
				for j := 0; j < m && r.OK(); j++ {
					p.Nodes = append(p.Nodes, r.String("node"))
				}
			}
			if m, ok := r.OptCount("ids", 1); ok {
				p.IDs = make([]uint32, 0, m)
				for j := 0; j < m && r.OK(); j++ {
					p.IDs = append(p.IDs, r.U32("id"))
				}
			}
			p.RankLoc = r.Int("rank location", lo, hi)
			if m, ok := r.OptCount("sends", 5); ok {
				p.Sends = make([]PartSend, 0, m)
				for j := 0; j < m && r.OK(); j++ {
					s := PartSend{From: r.Int("from", lo, hi), ToRank: p.Rank + r.Int("to rank", lo, hi), ToLoc: r.Int("to location", lo, hi)}
					s.Messages, s.Bytes = r.Uvarint("messages"), r.Uvarint("bytes")
					p.Sends = append(p.Sends, s)
				}
			}
			p.Unmatched = r.Uvarint("unmatched")
			p.Exact = r.Int("exact", lo, hi)
			p.Counted = r.Int("counted", lo, hi)
			p.Shed = r.Uvarint("shed")
			p.Channel = r.Uvarint("channel")
			p.ChannelUnreceived = r.Uvarint("channel unreceived")
			ps = append(ps, p)
		}
	}
	r.Done()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("comm: the run's matrix parts: %w", err)
	}
	return ps, checkParts(ps)
}
