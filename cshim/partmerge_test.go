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

// treeMerge merges the parts of ranks 0 to p-1 as the binomial tree does,
// every rank's merges in the order it makes them, and returns rank 0's;
// forget says whether the last merge is forgotten between two merges, so
// that each reads both parts.
func treeMerge(tb testing.TB, parts [][]byte, forget bool) []byte {
	tb.Helper()
	p := len(parts)
	cur := append([][]byte(nil), parts...)
	// All ranks merge in this one process, so a rank's running merge is
	// the last one written only at times (where no other rank merged in
	// between): both ways are taken.
	for step := 1; step < p; step <<= 1 {
		for r := p - 1; r >= 0; r-- {
			if r%(2*step) != 0 || r+step >= p {
				continue
			}
			if forget {
				forgetMerged()
			}
			m, err := PassMerge(PassComm, cur[r], cur[r+step])
			if err != nil {
				tb.Fatal(err)
			}
			cur[r] = m
		}
	}
	forgetMerged()
	return cur[0]
}

// TestPassMergeKeepsLast checks that merging from the last merge as read
// writes what reading both parts writes, that a part not written by the
// last merge is read (another rank's, or a pass's result changed on the
// way), and that the run's result at the root reads as it was written.
func TestPassMergeKeepsLast(t *testing.T) {
	const p = 13
	parts := make([][]byte, p)
	for r := range parts {
		parts[r] = commPart(t, r, p)
	}
	want := treeMerge(t, parts, true)
	got := treeMerge(t, parts, false)
	if !bytes.Equal(got, want) {
		t.Fatalf("merged from the last merge:\n%s\nread each time:\n%s", got, want)
	}
	all, err := comm.UnmarshalPartsWire(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != p {
		t.Fatalf("%d parts merged, want %d", len(all), p)
	}
	for i, part := range all {
		if part.Rank != i {
			t.Fatalf("part %d is rank %d's: the ranks' order is lost", i, part.Rank)
		}
	}

	// The last merge wrote ranks 0-1; a running merge of ranks 2-3 is read.
	forgetMerged()
	m01, err := PassMerge(PassComm, parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	m23, err := PassMerge(PassComm, parts[2], parts[3])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PassMerge(PassComm, m01, parts[4]); err != nil {
		t.Fatal(err)
	}
	v, err := commCodec.readMerged(PassComm, m23)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.([]comm.Part); len(got) != 2 || got[0].Rank != 2 || got[1].Rank != 3 {
		t.Fatalf("ranks 2-3's merge read as %+v", got)
	}
	forgetMerged()

	if _, err := PassMerge(PassReplay, parts[0], parts[1]); err == nil {
		t.Fatal("the replay's rounds merged, want an error: they are exchanged")
	}
}

// BenchmarkPassMergeRoot reports what rank 0's merges of the matrix cost
// at 64 ranks (six levels), reading its running merge each time
// ("read") or keeping it as read ("kept"), in allocations and bytes.
func BenchmarkPassMergeRoot(b *testing.B) {
	const p = 64
	parts := make([][]byte, p)
	for r := range parts {
		parts[r] = commPart(b, r, p)
	}
	// Rank 0's children's parts: ranks 1, 2-3, 4-7, ... 32-63, merged.
	var children [][]byte
	for step := 1; step < p; step <<= 1 {
		m := parts[step]
		for r := step + 1; r < 2*step; r++ {
			var err error
			if m, err = PassMerge(PassComm, m, parts[r]); err != nil {
				b.Fatal(err)
			}
		}
		children = append(children, m)
	}
	for _, mode := range []string{"read", "kept"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				forgetMerged()
				m := parts[0]
				for _, c := range children {
					if mode == "read" {
						forgetMerged()
					}
					var err error
					if m, err = PassMerge(PassComm, m, c); err != nil {
						b.Fatal(err)
					}
				}
			}
			forgetMerged()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/root")
		})
	}
}
