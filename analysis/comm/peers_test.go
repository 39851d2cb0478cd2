package comm_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/hmbtrace/hmbtrace/analysis/comm"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Two unrelated runs that both call themselves rank 0: each one's messages
// between its own locations stay within it (they went to the last file's
// locations of the same ids), and a message by rank goes to the location
// that exchanges by rank, as in the exporters.
func TestPeersOfUnrelatedRunsAndRanks(t *testing.T) {
	file := func(name string, rank, toRank int) *tracefile.File {
		b := tracetest.NewBuilder(name, "host", rank, time.Unix(0, 0), "work")
		a, c := b.Location("a"), b.Location("c")
		a.Enter(10, 1)
		a.Message(11, encode.KindSend, 1, false, 0, 8) // a -> c
		a.Leave(20)
		c.Enter(10, 1)
		c.Message(12, encode.KindSend, 0, false, 0, 16) // c -> a
		if toRank >= 0 {
			c.Message(13, encode.KindSend, uint64(toRank), true, 0, 32)
		}
		c.Leave(20)
		return b.Write(t, t.TempDir())
	}
	m, err := FromFiles([]*tracefile.File{file("x", 0, -1), file("y", 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Cell{{From: 0, To: 1, Messages: 1, Bytes: 8}, {From: 1, To: 0, Messages: 1, Bytes: 16},
		{From: 2, To: 3, Messages: 1, Bytes: 8}, {From: 3, To: 2, Messages: 1, Bytes: 16}}
	if len(m.Cells) != len(want) || m.Unmatched != 0 {
		t.Fatalf("cells %+v, unmatched %d; want %+v", m.Cells, m.Unmatched, want)
	}
	for i := range want {
		if m.Cells[i] != want[i] {
			t.Errorf("cell %d: %+v, want %+v", i, m.Cells[i], want[i])
		}
	}
	// Both say rank 0: their nodes are told apart by file.
	var names []string
	for _, n := range m.Nodes {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, "|"); got != "x.0.hmb: a|x.0.hmb: c|y.0.hmb: a|y.0.hmb: c" {
		t.Errorf("node names %q, want them by file", got)
	}

	// Ranks 0 and 1 of one run: c sends by rank, so c is the rank's end.
	m, err = FromFiles([]*tracefile.File{file("z", 0, 1), file("z", 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	byRank := map[[2]int]uint64{}
	for _, c := range m.Cells {
		if c.Bytes == 32 {
			byRank[[2]int{c.From, c.To}] = c.Messages
		}
	}
	if len(byRank) != 2 || byRank[[2]int{1, 3}] != 1 || byRank[[2]int{3, 1}] != 1 || m.Unmatched != 0 {
		t.Errorf("messages by rank %v (unmatched %d), want c of rank 0 <-> c of rank 1 (nodes 1, 3)", byRank, m.Unmatched)
	}
	if m.Nodes[1].Name != "rank 0: c" || m.Nodes[3].Name != "rank 1: c" {
		t.Errorf("nodes %+v: want them by rank", m.Nodes)
	}
}
