package cshim

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
)

// commPart is rank r's part of the matrix in a ring of p ranks with a
// halo: it sends to its two neighbours.
func commPart(tb testing.TB, r, p int) []byte {
	tb.Helper()
	part := comm.Part{Rank: r, Nodes: []string{fmt.Sprintf("rank %d", r)}, IDs: []uint32{0}, RankLoc: 0,
		Sends: []comm.PartSend{
			{From: 0, ToRank: (r + p - 1) % p, ToLoc: -1, Messages: 20, Bytes: 20 * 512},
			{From: 0, ToRank: (r + 1) % p, ToLoc: -1, Messages: 20, Bytes: 20 * 512},
		}}
	return comm.MarshalPartsWire([]comm.Part{part})
}

// subtreeMerge returns what rank r sends its parent in a binomial tree of
// the ranks' parts (its subtree holds ranks r to r+size-1): its children's
// subtrees first, each sent as PassHeld writes it, then r's merges, its
// running merge held between them, as the ranks make them.
func subtreeMerge(tb testing.TB, pass int, parts [][]byte, r, size int) []byte {
	tb.Helper()
	var children [][]byte
	for step := 1; step < size && r+step < len(parts); step <<= 1 {
		children = append(children, subtreeMerge(tb, pass, parts, r+step, min(step, len(parts)-r-step)))
	}
	if len(children) == 0 {
		return parts[r]
	}
	for i, c := range children {
		if err := PassMerge(pass, parts[r], i > 0, c); err != nil {
			tb.Fatal(err)
		}
	}
	m, err := PassHeld(pass)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestPassMergeHeld checks that the tree's merges, each rank's running
// merge held between its children's parts, write what merging the ranks'
// parts in rank order writes; that the root takes its result as held; and
// that a merge that fails leaves the running merge held.
func TestPassMergeHeld(t *testing.T) {
	const p = 13
	parts := make([][]byte, p)
	var want []comm.Part
	for r := range parts {
		parts[r] = commPart(t, r, p)
		v, err := comm.UnmarshalPartsWire(parts[r])
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v...)
	}
	got := subtreeMerge(t, PassComm, parts, 0, 16)
	if wb := comm.MarshalPartsWire(want); !bytes.Equal(got, wb) {
		t.Fatalf("the tree's merge:\n%x\nthe ranks' parts in order:\n%x", got, wb)
	}

	// The root: its own part, then its children's (ranks 1, 2-3, 4-7,
	// 8-12), made first, as other ranks make them.
	defer forgetHeld()
	var children [][]byte
	for _, lo := range []int{1, 2, 4, 8} {
		children = append(children, subtreeMerge(t, PassComm, parts, lo, min(lo, p-lo)))
	}
	for i, c := range children {
		if err := PassMerge(PassComm, parts[0], i > 0, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := PassMerge(PassComm, nil, true, []byte{0xff, 0xff}); err == nil {
		t.Fatal("a child's part that is not one merged, want an error")
	}
	rp := &runPart{codec: commCodec, pass: PassComm, isHeld: true}
	v, err := rp.value()
	if err != nil {
		t.Fatal(err)
	}
	all := v.([]comm.Part)
	if len(all) != p {
		t.Fatalf("%d parts at the root, want %d", len(all), p)
	}
	for i, part := range all {
		if part.Rank != i {
			t.Fatalf("part %d is rank %d's: the ranks' order is lost", i, part.Rank)
		}
	}
	// The pass's cost counts what the root took: its part and its children's.
	took := len(parts[0])
	for _, c := range children {
		took += len(c)
	}
	if rp.size() != took {
		t.Errorf("the root took %d bytes, want %d (its part and its children's)", rp.size(), took)
	}
	if b, err := rp.bytes(); err != nil || !bytes.Equal(b, got) {
		t.Fatalf("the root's result written: %d bytes (%v), want the tree's %d", len(b), err, len(got))
	}
	if err := PassMerge(PassComm, nil, true, parts[0]); err == nil {
		t.Fatal("a merge into a running merge the root took, want an error: it holds none")
	}
	if _, err := PassHeld(PassComm); err == nil {
		t.Fatal("a running merge sent twice, want an error")
	}
	if err := PassMerge(PassReplay, parts[0], false, parts[1]); err == nil {
		t.Fatal("the replay's rounds merged, want an error: they are exchanged")
	}
}

// BenchmarkPassMergeRoot reports what rank 0's merges of the matrix cost
// at 64 ranks (six levels), its running merge held between them and taken
// at the end ("held"), or written after each and read again at the next,
// as before it was held ("written"), in allocations and bytes.
func BenchmarkPassMergeRoot(b *testing.B) {
	const p = 64
	parts := make([][]byte, p)
	for r := range parts {
		parts[r] = commPart(b, r, p)
	}
	// Rank 0's children's parts: ranks 1, 2-3, 4-7, ... 32-63, merged.
	var children [][]byte
	for step := 1; step < p; step <<= 1 {
		children = append(children, subtreeMerge(b, PassComm, parts, step, step))
	}
	for _, mode := range []string{"written", "held"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				m := parts[0]
				for k, c := range children {
					isHeld := mode == "held" && k > 0
					if err := PassMerge(PassComm, m, isHeld, c); err != nil {
						b.Fatal(err)
					}
					if mode == "written" {
						var err error
						if m, err = PassHeld(PassComm); err != nil {
							b.Fatal(err)
						}
					}
				}
				var err error
				if mode == "written" {
					_, err = commCodec.decode(m)
				} else {
					_, err = takeHeldMerge(PassComm)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			forgetHeld()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/root")
		})
	}
}
