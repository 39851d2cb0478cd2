package waitstate

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestDelayCostsPropagate is the chain of Böhme et al.'s example: rank 0
// computes long and sends late to rank 1, which therefore sends late to
// rank 2. Rank 0's work carries rank 1's wait as its short-term cost and
// the part of rank 2's wait that rank 1's wait caused as its long-term
// cost.
func TestDelayCostsPropagate(t *testing.T) {
	r, err := Analyze(propagateRun(t), Options{Procs: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Rank 2's wait: rank 1's interval (from its start, they never met)
	// holds 100 of work2 as rank 2's does, 20 of MPI_Recv past its wait,
	// and its 400 ns wait: 20 short-term to MPI_Recv, 400 carried back to
	// that wait. Rank 1's wait: rank 0's work is 500 against rank 1's 100
	// of work2 (another path): all 400, and the carried 400 long-term.
	want := map[DelayCost]bool{
		{Pattern: LateSender, Region: "work", Loc: 0, Time: 400}:                 true,
		{Pattern: LateSender, Region: "MPI_Recv", Loc: 1, Time: 20}:              true,
		{Pattern: LateSender, LongTerm: true, Region: "work", Loc: 0, Time: 400}: true,
	}
	var sum int64
	for _, c := range r.DelayCosts {
		sum += c.Time
		if r.PathName(c.Path) != c.Region {
			t.Errorf("cost %+v: call path %q", c, r.PathName(c.Path))
		}
		c.Path = 0
		if !want[c] {
			t.Errorf("unexpected delay cost %+v", c)
		}
		delete(want, c)
	}
	for c := range want {
		t.Errorf("missing delay cost %+v", c)
	}
	if total := r.Totals[LateSender]; sum != total || r.DelayUnexplained != 0 {
		t.Errorf("costs add up to %d ns (%d unexplained), the waits to %d", sum, r.DelayUnexplained, total)
	}
}

// propagateRun is TestDelayCostsPropagate's run.
func propagateRun(t *testing.T) []*tracefile.File {
	r0, r1, r2 := newRank(0, 3), newRank(1, 3), newRank(2, 3)
	r0.call("work", 0, 500, nil)
	r0.send("MPI_Send", 500, 510, 1, 0)
	r1.call("work2", 0, 100, nil)
	r1.recv(100, 520, 0, 0) // waits 400, until 500
	r1.send("MPI_Send", 520, 530, 2, 0)
	r2.call("work2", 0, 100, nil)
	r2.recv(100, 540, 1, 0) // waits 420, until 520
	return write(t, r0, r1, r2)
}

// TestDelayCostsRing is the ring: every rank sends to the next
// after its work, then receives from the previous; rank 2 works 5 µs
// longer each time. Rank 3's Late Sender waits go to rank 2's work, and
// what they propagate along the ring comes back to it as long-term cost.
func TestDelayCostsRing(t *testing.T) {
	r, err := Analyze(ringRun(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	const iters, slow = 6, 5000
	// Rank 3 waits for rank 2's extra work each time (less the first
	// round's start); ranks 0 and 1 wait in turn, later.
	ls := r.ByLocation(LateSender)
	if ls[3] < slow*iters*99/100 || ls[2] != 0 || ls[0] == 0 || ls[1] == 0 {
		t.Fatalf("Late Sender by rank %v, want about %d on rank 3, none on 2, some on 0 and 1", ls, slow*iters)
	}
	var short, long, elsewhere int64
	for _, c := range r.DelayCosts {
		switch {
		case c.Region == "work" && c.Loc == 2 && !c.LongTerm:
			short += c.Time
		case c.Region == "work" && c.Loc == 2:
			long += c.Time
		default:
			elsewhere += c.Time
		}
	}
	if short < ls[3]*99/100 || short > ls[3] {
		t.Errorf("short-term cost of rank 2's work: %d ns, want about rank 3's waits, %d", short, ls[3])
	}
	if long < (ls[0]+ls[1])*99/100 {
		t.Errorf("long-term cost of rank 2's work: %d ns, want about the waits of ranks 0 and 1, %d", long, ls[0]+ls[1])
	}
	// Each cost is rounded to the ns on its own.
	if d := long + elsewhere + short + r.DelayUnexplained - r.Totals[LateSender]; d < -int64(len(r.DelayCosts)) || d > int64(len(r.DelayCosts)) {
		t.Errorf("costs %d + %d + %d + unexplained %d, want the waits' %d", short, long, elsewhere, r.DelayUnexplained, r.Totals[LateSender])
	}
	t.Logf("waits %d: short %d, long %d, elsewhere %d, unexplained %d", r.Totals[LateSender], short, long, elsewhere, r.DelayUnexplained)
}

// ringRun is TestDelayCostsRing's run: 4 ranks, 6 rounds, rank 2 5 µs
// slower each.
func ringRun(t *testing.T) []*tracefile.File {
	const n, iters, slow = 4, 6, 5000
	ranks := make([]*rank, n)
	for i := range ranks {
		ranks[i] = newRank(i, n)
	}
	// Simulate the ring: each rank's time, work 1000 (6000 on rank 2),
	// send 10 (eager), receive until the message arrives (sent time).
	now := make([]uint64, n)
	for it := range iters {
		sent := make([]uint64, n)
		for i, k := range ranks {
			w := uint64(1000)
			if i == 2 {
				w += slow
			}
			k.call("work", now[i], now[i]+w, nil)
			now[i] += w
			k.send("MPI_Send", now[i], now[i]+10, int32((i+1)%n), uint32(it))
			sent[i] = now[i]
			now[i] += 10
		}
		for i, k := range ranks {
			from := (i + n - 1) % n
			leave := max(now[i], sent[from]) + 5
			k.recv(now[i], leave, int32(from), uint32(it))
			now[i] = leave
		}
	}
	return write(t, ranks...)
}
