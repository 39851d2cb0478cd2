package waitstate

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// replayInSitu replays files in-situ, one Local per rank, its rounds'
// messages handed over in memory as libhmbtrace-mpi hands them over MPI,
// each part encoded and decoded as it travels, and the parts merged in
// rank order up a binomial tree as the collective end merges them. It
// counts the messages of the forward rounds and of the backward ones
// (from the ship round on), and their bytes.
func replayInSitu(t testing.TB, files []*tracefile.File) (res *Result, messages, backward, bytes int) {
	t.Helper()
	n := len(files)
	parts, err := ReplayInMemory(files, func(round, _, _ int, b []byte) {
		if round < Rounds(n) {
			messages++
		} else {
			backward++
		}
		bytes += len(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range parts {
		parts[i] = wireTrip(t, p)
	}
	// Gathered up the tree in the wire form as libhmbtrace-mpi gathers
	// them, kept by rank 0 in the archive's form.
	for step := 1; step < n; step *= 2 {
		for r := 0; r+step < n; r += 2 * step {
			parts[r].Merge(parts[r+step])
			parts[r] = wireTrip(t, parts[r])
		}
	}
	b, err := EncodeInSitu(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	all, err := DecodeInSitu(b)
	if err != nil {
		t.Fatal(err)
	}
	return all.Result(), messages, backward, bytes
}

// wireTrip returns p encoded in the wire form and read back, and checks
// that its archive form is the same either way.
func wireTrip(t testing.TB, p *InSitu) *InSitu {
	t.Helper()
	q, err := DecodeInSituWire(EncodeInSituWire(p))
	if err != nil {
		t.Fatal(err)
	}
	a, err := EncodeInSitu(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeInSitu(q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("the wire form read back differs:\n%s\nwant\n%s", b, a)
	}
	return q
}

// sameWaits checks that the in-situ result equals the post-mortem one:
// every (pattern, call path, location) value, the totals and what could
// not be replayed.
func sameWaits(t *testing.T, got, want *Result) {
	t.Helper()
	type cell struct {
		p         Pattern
		path, loc string
	}
	cells := func(r *Result) map[cell]Value {
		m := map[cell]Value{}
		for _, v := range r.Values {
			m[cell{v.Pattern, r.PathName(v.Path), r.Locations[v.Loc].Name}] = v
		}
		return m
	}
	a, b := cells(got), cells(want)
	for k, v := range b {
		if w, ok := a[k]; !ok || w.Time != v.Time || w.Count != v.Count || w.Region != v.Region {
			t.Errorf("%v in %s on %s: in-situ %+v, post-mortem %+v", k.p, k.path, k.loc, w, v)
		}
	}
	for k, w := range a {
		if _, ok := b[k]; !ok {
			t.Errorf("%v in %s on %s: in-situ %+v, none post-mortem", k.p, k.path, k.loc, w)
		}
	}
	if got.Totals != want.Totals || got.Counts != want.Counts {
		t.Errorf("totals in-situ %v %v, post-mortem %v %v", got.Totals, got.Counts, want.Totals, want.Counts)
	}
	if got.UnmatchedRecvs != want.UnmatchedRecvs || got.UnmatchedSends != want.UnmatchedSends ||
		got.UnmatchedCollectives != want.UnmatchedCollectives || got.Unresolved != want.Unresolved || got.ClockViolations != want.ClockViolations {
		t.Errorf("not replayed in-situ: %d %d %d %d %d; post-mortem %d %d %d %d %d",
			got.UnmatchedRecvs, got.UnmatchedSends, got.UnmatchedCollectives, got.Unresolved, got.ClockViolations,
			want.UnmatchedRecvs, want.UnmatchedSends, want.UnmatchedCollectives, want.Unresolved, want.ClockViolations)
	}
	if len(got.Locations) != len(want.Locations) || got.Total != want.Total {
		t.Errorf("in-situ %d locations, %d ns; post-mortem %d, %d", len(got.Locations), got.Total, len(want.Locations), want.Total)
	}
	sameWhy(t, got, want)
}

// sameWhy checks what the backward replay found: the delays, the delay
// costs, the critical path and the worst waits, by call path and location
// names.
func sameWhy(t *testing.T, got, want *Result) {
	t.Helper()
	loc := func(r *Result, i int) string {
		if i < 0 || i >= len(r.Locations) {
			return "-"
		}
		return r.Locations[i].Name
	}
	delays := func(r *Result) map[string]Value {
		m := map[string]Value{}
		for _, v := range r.Delays {
			m[fmt.Sprint(v.Pattern, "|", v.Region, "|", loc(r, v.Loc))] = Value{Time: v.Time, Count: v.Count}
		}
		return m
	}
	if a, b := delays(got), delays(want); !maps.Equal(a, b) {
		t.Errorf("delays in-situ %v,\npost-mortem %v", a, b)
	}
	costs := func(r *Result) map[string]int64 {
		m := map[string]int64{}
		for _, c := range r.DelayCosts {
			m[fmt.Sprint(c.Pattern, "|", c.LongTerm, "|", r.PathName(c.Path), "|", loc(r, c.Loc))] = c.Time
		}
		return m
	}
	if a, b := costs(got), costs(want); !maps.Equal(a, b) {
		t.Errorf("delay costs in-situ %v,\npost-mortem %v", a, b)
	}
	if got.DelayUnexplained != want.DelayUnexplained {
		t.Errorf("unexplained in-situ %d ns, post-mortem %d", got.DelayUnexplained, want.DelayUnexplained)
	}
	pathOf := func(r *Result) string {
		cp := r.CriticalPath
		if cp == nil {
			return "none"
		}
		s := fmt.Sprintf("%d..%d (%d) last %s hops %d;", cp.Start, cp.End, cp.Length, loc(r, cp.Last), cp.Hops)
		vals := map[string]int64{}
		for _, v := range cp.Values {
			vals[r.PathName(v.Path)+"@"+loc(r, v.Loc)] += v.Time
		}
		keys := slices.Sorted(maps.Keys(vals))
		for _, k := range keys {
			s += fmt.Sprintf(" %s=%d", k, vals[k])
		}
		return s + fmt.Sprint(" ", cp.Regions)
	}
	if a, b := pathOf(got), pathOf(want); a != b {
		t.Errorf("critical path in-situ %s,\npost-mortem %s", a, b)
	}
	worst := func(r *Result) []string {
		var out []string
		for _, w := range r.Worst {
			s := fmt.Sprintf("%v %s %s %d+%d peer %s", w.Pattern, r.PathName(w.Path), loc(r, w.Loc), w.Start, w.Time, loc(r, w.Peer))
			if d := w.Delay; d != nil {
				s += fmt.Sprintf(" delay %s %s %d/%d since %d", loc(r, d.Loc), d.Region, d.Time, d.Interval, d.Since)
				if d.Work != nil {
					s += fmt.Sprintf(" work %d %s", *d.Work, d.WorkRegion)
				}
			}
			out = append(out, s)
		}
		return out
	}
	if a, b := worst(got), worst(want); !slices.Equal(a, b) {
		t.Errorf("worst waits in-situ\n%s\npost-mortem\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestInSituKnownRuns: the runs whose waits the post-mortem tests know by
// construction give the same values in-situ.
func TestInSituKnownRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T) []*tracefile.File
	}{{"p2p", p2pRun}, {"collectives", collRun}, {"propagate", propagateRun}, {"ring", ringRun}, {"hybrid", hybridRun}, {"synced", syncedRun},
		{"imbalanced", func(t *testing.T) []*tracefile.File { return imbalancedRun(t, 5) }}, {"synthetic", func(t *testing.T) []*tracefile.File {
			// 8 ranks of two locations each: halo exchanges and allreduces.
			var files []*tracefile.File
			for _, p := range tracetest.SyntheticRun(t, t.TempDir(), "ws", 8, 50) {
				files = append(files, tracetest.Open(t, p))
			}
			return files
		}}} {
		t.Run(c.name, func(t *testing.T) {
			files := c.run(t)
			want, err := Analyze(files, Options{Procs: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, _, _, _ := replayInSitu(t, files)
			sameWaits(t, got, want)
			if got.Totals == [NumPatterns]int64{} {
				t.Error("no wait in-situ")
			}
			// What the backward replay must match is there to match.
			if len(want.DelayCosts) == 0 || len(want.Delays) == 0 || want.CriticalPath == nil || len(want.Worst) == 0 {
				t.Errorf("post-mortem: %d delay costs, %d delays, %d worst waits, critical path %+v", len(want.DelayCosts), len(want.Delays), len(want.Worst), want.CriticalPath)
			}
			if cp := want.CriticalPath; cp != nil && cp.Hops == 0 && c.name != "ring" && c.name != "synthetic" {
				t.Error("post-mortem: the critical path stays on one location") // the ring's and synthetic's do
			}
			if c.name == "propagate" || c.name == "ring" || c.name == "hybrid" || c.name == "synced" {
				long := false
				for _, d := range want.DelayCosts {
					long = long || d.LongTerm
				}
				if !long {
					t.Error("post-mortem: no long-term delay cost")
				}
			}
		})
	}
}

// syncedRun is Böhme's chain (propagateRun) with the ranks' clocks
// synchronised to a reference that started 1 µs after them: in-situ, the
// times before the reference's zero are negative, which the sweep must
// charge as any other.
func syncedRun(t *testing.T) []*tracefile.File {
	r0, r1, r2 := newRank(0, 3), newRank(1, 3), newRank(2, 3)
	r0.call("work", 0, 500, nil)
	r0.send("MPI_Send", 500, 510, 1, 0)
	r1.call("work2", 0, 100, nil)
	r1.recv(100, 520, 0, 0)
	r1.send("MPI_Send", 520, 530, 2, 0)
	r2.call("work2", 0, 100, nil)
	r2.recv(100, 540, 1, 0)
	for _, k := range []*rank{r0, r1, r2} {
		h := &k.b.Trace.Header
		h.ClockSync, h.ReferenceStart = []tracefile.ClockSync{{Ticks: 0, Offset: 0}}, 1000
	}
	files := write(t, r0, r1, r2)
	if files[0].GlobalNanos(0) >= 0 {
		t.Fatalf("the run's first time on the reference clock: %d ns, want it before its zero", files[0].GlobalNanos(0))
	}
	return files
}

// hybridRun is two ranks of three OpenMP threads each. On rank 0, thread
// 1 works 300 ns longer before the implicit barrier; then the main thread
// sends rank 1 a message that rank 1's main thread waits 300 ns for: a
// Late Sender wait that rank 0's barrier wait propagated, whose long-term
// cost is thread 1's work, found on rank 0 itself.
func hybridRun(t *testing.T) []*tracefile.File {
	var ranks []*rank
	for r := range 2 {
		k := newRank(r, 2)
		ls := []*tracetest.Location{k.l, k.b.Location("thread 1"), k.b.Location("thread 2")}
		work := [][]uint64{{100, 400, 150}, {100, 100, 100}}[r]
		end := []uint64{410, 110}[r]
		for i, l := range ls {
			k.b.Trace.Locations[i].Team = []int{i}
			l.Enter(10, id("!$omp implicit task"))
			l.Enter(20, id("work"))
			l.Leave(work[i])
			l.Enter(work[i], id("!$omp implicit barrier"))
			l.Leave(end)
			l.Leave(end + 10)
		}
		if r == 0 {
			k.send("MPI_Send", 430, 440, 1, 0)
		} else {
			k.recv(130, 445, 0, 0)
		}
		// Both end in an allreduce, rank 0 late.
		k.coll("MPI_Allreduce", []uint64{500, 450}[r], 510, -1, 8, 8)
		ranks = append(ranks, k)
	}
	return write(t, ranks...)
}

// TestInSituRandomRuns: 7 ranks (no power of two: trees with a missing
// branch) exchange messages by random (sender, tag) pairs with random
// times, and call collectives on the world and on a communicator of four
// of them (1, 3, 5, 6), each member at random times, some instance
// missing one member's record (shed by its buffer). The in-situ replay
// finds exactly the post-mortem waits, and its rounds carry messages only
// to peers and tree neighbours.
func TestInSituRandomRuns(t *testing.T) {
	const n = 7
	sub := []int32{1, 3, 5, 6}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 99))
		ranks := make([]*rank, n)
		subID := make([]uint32, n)
		for i := range ranks {
			ranks[i] = newRank(i, n)
			for _, m := range sub {
				if int(m) == i {
					subID[i] = ranks[i].b.Comm("", 1, sub, nil)
				}
			}
		}
		clock := make([]uint64, n)
		// span returns a call of about d ns on rank i, after its last.
		span := func(i int, d uint64) (uint64, uint64) {
			e := clock[i] + 1 + uint64(rng.IntN(100))
			clock[i] = e + d
			return e, e + d
		}
		for step := range 30 {
			switch step % 3 {
			case 0: // messages: every rank sends one, received in order
				type msg struct {
					from, to int
					tag      uint32
				}
				var msgs []msg
				for i := range n {
					m := msg{i, rng.IntN(n), uint32(rng.IntN(2))}
					msgs = append(msgs, m)
					name := "MPI_Send"
					if rng.IntN(3) == 0 {
						name = "MPI_Ssend"
					}
					e, l := span(i, 50+uint64(rng.IntN(200)))
					ranks[i].send(name, e, l, int32(m.to), m.tag)
				}
				for _, m := range msgs {
					e, l := span(m.to, 50+uint64(rng.IntN(200)))
					ranks[m.to].recv(e, l, int32(m.from), m.tag)
				}
			case 1: // a world collective
				name := []string{"MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce"}[rng.IntN(4)]
				root := int64(-1)
				if name == "MPI_Bcast" || name == "MPI_Reduce" {
					root = int64(rng.IntN(n))
				}
				for i := range n {
					e, l := span(i, 300)
					ranks[i].coll(name, e, l, root, 8, 8)
				}
			case 2: // a collective on the sub-communicator, one member's record missing now and then
				skip := -1
				if rng.IntN(4) == 0 {
					skip = int(sub[rng.IntN(len(sub))])
				}
				for _, m := range sub {
					i := int(m)
					e, l := span(i, 300)
					if i == skip {
						ranks[i].call("MPI_Allreduce", e, l, nil)
						continue
					}
					k := ranks[i]
					k.call("MPI_Allreduce", e, l, func() { k.l.Collective(e, -1, 8, 8, subID[i]) })
				}
			}
		}
		// An Irecv completed by MPI_Wait, rank 0 from rank 4.
		e, l := span(0, 5)
		ranks[0].call("MPI_Irecv", e, l, func() { ranks[0].l.Request(e, encode.KindIrecvRequest, 3) })
		e, l = span(0, 5000)
		ranks[0].call("MPI_Wait", e, l, func() { ranks[0].l.Irecv(l, 4, 9, 8, 1, 3) })
		e, l = span(4, 1)
		ranks[4].call("MPI_Isend", e, l, func() { ranks[4].l.Isend(e, 0, 9, 8, 1, 1) })
		files := write(t, ranks...)
		want, err := Analyze(files, Options{Procs: 2})
		if err != nil {
			t.Fatal(err)
		}
		got, messages, backward, _ := replayInSitu(t, files)
		sameWaits(t, got, want)
		if want.Totals[LateSender] == 0 || want.Totals[WaitNxN] == 0 || want.UnmatchedCollectives == 0 {
			t.Errorf("seed %d: the run lacks what it should test: %v, %d unmatched collectives", seed, want.Totals, want.UnmatchedCollectives)
		}
		// Round 0 goes to the peers and first tree neighbours, the others
		// to tree neighbours only: per communicator of m members, m-1 up
		// and m-1 down.
		if most := n*n + 2*(n-1+len(sub)-1); messages > most {
			t.Errorf("seed %d: %d messages, want at most %d", seed, messages, most)
		}
		// The backward rounds: per wait at most its record, its cost and
		// where the critical path would leave its late party, per rank
		// the delays of its longest waits, and the critical path's hops.
		waits := 0
		for _, c := range want.Counts {
			waits += c
		}
		if most := 3*waits + n*DefaultWorst + want.CriticalPath.Hops; backward > most {
			t.Errorf("seed %d: %d backward messages, want at most %d", seed, backward, most)
		}
	}
}

// TestInSituBadMessages: a message cut short, or for a communicator the
// rank is not in, is an error naming the sender, never a panic.
func TestInSituBadMessages(t *testing.T) {
	files := collRun(t)
	l, err := NewLocal(files[0], len(files))
	if err != nil {
		t.Fatal(err)
	}
	peer, err := NewLocal(files[1], len(files))
	if err != nil {
		t.Fatal(err)
	}
	out, err := peer.Outgoing(0)
	if err != nil {
		t.Fatal(err)
	}
	b := out[0]
	if len(b) < 4 {
		t.Fatalf("rank 1 sends rank 0 %d bytes in round 0", len(b))
	}
	for cut := range len(b) {
		l.round = 0
		if err := l.Incoming(0, map[int][]byte{1: b[:cut]}); err == nil {
			t.Errorf("a message cut to %d of %d bytes: no error", cut, len(b))
		}
	}
	l.round = 0
	if err := l.Incoming(0, map[int][]byte{1: {0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0}}); err == nil {
		t.Error("a part of an unknown communicator: no error")
	}
	if _, err := NewLocal(files[0], 0); err == nil {
		t.Error("a run of 0 ranks: no error")
	}
}

// TestInSituBackwardBadRecords: a backward record cut short, of an unknown
// tag, or naming a wait or call the rank does not have, is an error naming
// the sender, never a panic.
func TestInSituBackwardBadRecords(t *testing.T) {
	files := propagateRun(t)
	n := len(files)
	locals := make([]*Local, n)
	for i, f := range files {
		l, err := NewLocal(f, n)
		if err != nil {
			t.Fatal(err)
		}
		locals[i] = l
	}
	// Up to the ship round: rank 1's records for rank 0 (its wait).
	var ship []byte
	for round := 0; round <= Rounds(n); round++ {
		inbox := make([]map[int][]byte, n)
		for i := range inbox {
			inbox[i] = map[int][]byte{}
		}
		for i, l := range locals {
			out, err := l.Outgoing(round)
			if err != nil {
				t.Fatal(err)
			}
			for p, b := range out {
				inbox[p][i] = b
				if round == Rounds(n) && i == 1 && p == 0 {
					ship = b
				}
			}
		}
		if round == Rounds(n) {
			break
		}
		for i, l := range locals {
			if err := l.Incoming(round, inbox[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(ship) < 10 {
		t.Fatalf("rank 1 ships rank 0 %d bytes", len(ship))
	}
	fresh := func() *backward {
		b := *locals[0].why
		b.lateOf = map[[2]int]int{}
		b.late = nil
		b.waits = b.waits[:b.own:b.own]
		return &b
	}
	for cut := 1; cut < len(ship); cut++ {
		if err := fresh().take(1, ship[:cut]); err == nil {
			t.Errorf("a ship record cut to %d of %d bytes: no error", cut, len(ship))
		}
	}
	if err := fresh().take(1, ship); err != nil {
		t.Errorf("the whole record: %v", err)
	}
	for _, bad := range [][]byte{
		{99},                                    // no such tag
		{tagCost, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // the cost of a wait never shipped
		{tagToken, 7, 0, 0},                     // a location the rank does not have
		{tagMark, 7, 0, 0},                      // the same, passed by
		{tagSucc, 5, 0, 0, 0, 0, 0},             // where the path leaves rank 1 after a wait not rank 0's
		{tagDelay, 0, 0, 0, 0, 0, 0, 0},         // the delay of a wait that is not rank 0's for rank 1
	} {
		if err := fresh().take(1, bad); err == nil {
			t.Errorf("record %v: no error", bad)
		}
	}
}

// TestInSituRankFails: a rank that stops after the ship round (its
// replay failed: it sends nothing more) leaves the others to finish; the
// waits whose cost it owed are counted, not waited for.
func TestInSituRankFails(t *testing.T) {
	files := propagateRun(t)
	n := len(files)
	locals := make([]*Local, n)
	for i, f := range files {
		l, err := NewLocal(f, n)
		if err != nil {
			t.Fatal(err)
		}
		locals[i] = l
	}
	const failed = 1
	for round := 0; ; round++ {
		inbox := make([]map[int][]byte, n)
		for i := range inbox {
			inbox[i] = map[int][]byte{}
		}
		sent := false
		for i, l := range locals {
			if i == failed && round > Rounds(n) {
				continue
			}
			out, err := l.Outgoing(round)
			if err != nil {
				t.Fatal(err)
			}
			for p, b := range out {
				inbox[p][i], sent = b, true
			}
		}
		if round > Rounds(n) && !sent {
			break
		}
		for i, l := range locals {
			if i == failed && round > Rounds(n) {
				continue
			}
			if err := l.Incoming(round, inbox[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Rank 1's wait carries into rank 0's costs: its cost never came,
	// and rank 0 says it still awaits one (the driver's end then rests on
	// its idle waves).
	if locals[0].Settled() {
		t.Error("rank 0 settled though the cost of a wait it caused never came")
	}
	p, err := locals[0].Finish()
	if err != nil {
		t.Fatal(err)
	}
	if p.DelayIncomplete == 0 {
		t.Error("rank 0: no wait counted whose cost never came")
	}
	if _, err := locals[2].Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestInSituAsync: after the ship round libhmbtrace-mpi hands each rank
// the records as they arrive, a sender's several messages joined, the
// ranks out of step. Delivered so, in random order, the replay gives the
// same numbers as post-mortem.
func TestInSituAsync(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T) []*tracefile.File
	}{{"ring", ringRun}, {"hybrid", hybridRun}, {"synthetic", func(t *testing.T) []*tracefile.File {
		var files []*tracefile.File
		for _, p := range tracetest.SyntheticRun(t, t.TempDir(), "ws", 8, 50) {
			files = append(files, tracetest.Open(t, p))
		}
		return files
	}}} {
		t.Run(c.name, func(t *testing.T) {
			files := c.run(t)
			want, err := Analyze(files, Options{Procs: 1})
			if err != nil {
				t.Fatal(err)
			}
			for seed := range uint64(3) {
				rng := rand.New(rand.NewPCG(seed, 7))
				got := replayAsync(t, files, rng)
				sameWaits(t, got, want)
			}
		})
	}
}

// replayAsync runs the forward rounds and the ship round in step, then
// delivers each rank's pending records (per sender in order, joined) to
// a rank picked at random until none is left.
func replayAsync(t *testing.T, files []*tracefile.File, rng *rand.Rand) *Result {
	t.Helper()
	n := len(files)
	locals := make([]*Local, n)
	for i, f := range files {
		l, err := NewLocal(f, n)
		if err != nil {
			t.Fatal(err)
		}
		locals[i] = l
	}
	pending := make([]map[int][]byte, n) // by receiver, then sender
	for i := range pending {
		pending[i] = map[int][]byte{}
	}
	send := func(from int, out map[int][]byte) {
		for p, b := range out {
			pending[p][from] = append(pending[p][from], b...)
		}
	}
	last := Rounds(n) // the ship round
	for round := 0; round <= last; round++ {
		for i, l := range locals {
			out, err := l.Outgoing(round)
			if err != nil {
				t.Fatal(err)
			}
			send(i, out)
		}
		if round == last {
			break
		}
		for i, l := range locals {
			in := pending[i]
			pending[i] = map[int][]byte{}
			if err := l.Incoming(round, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every rank takes the ship round's records once, then whatever
	// comes, when it comes.
	calls := make([]int, n)
	settled := make([]bool, n)
	take := func(i int) {
		defer func() {
			if settled[i] && !locals[i].Settled() {
				t.Errorf("rank %d: settled, then awaiting a cost again", i)
			}
			settled[i] = locals[i].Settled()
		}()
		in := pending[i]
		pending[i] = map[int][]byte{}
		if err := locals[i].Incoming(last+calls[i], in); err != nil {
			t.Fatal(err)
		}
		calls[i]++
		out, err := locals[i].Outgoing(last + calls[i])
		if err != nil {
			t.Fatal(err)
		}
		send(i, out)
	}
	for _, i := range rng.Perm(n) {
		take(i)
	}
	for {
		var ready []int
		for i := range pending {
			if len(pending[i]) > 0 {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			break
		}
		take(ready[rng.IntN(len(ready))])
	}
	// Each rank knows its own end: once nothing is left to deliver, every
	// one says it awaits no cost more; and one that said so early got no
	// cost after (takeCost refuses a cost not awaited).
	for i, l := range locals {
		if !l.Settled() {
			t.Errorf("rank %d: not settled with no record left", i)
		}
	}
	var run *InSitu
	for _, l := range locals {
		p, err := l.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if run == nil {
			run = p
		} else {
			run.Merge(p)
		}
	}
	return run.Result()
}

// threadRun is two ranks; rank 0 has a second thread that messages its
// main thread by location: the main thread waits 300 ns in MPI_Recv for
// the thread's late send (Late Sender between threads), then sends rank 1
// the message rank 1 waits for (propagated: a long-term cost on rank 0's
// thread), and the thread's MPI_Ssend waits 130 ns for the main thread's
// receive (Late Receiver between threads). Both ranks end in an
// allreduce, rank 0 late.
func threadRun(t *testing.T) []*tracefile.File {
	r0, r1 := newRank(0, 2), newRank(1, 2)
	th := r0.b.Location("thread 1")
	byLoc := func(l *tracetest.Location, name string, enter, leave uint64, kind encode.Kind, peer uint64) {
		l.Enter(enter, id(name))
		at := enter
		if kind == encode.KindRecv {
			at = leave
		}
		l.Message(at, kind, peer, false, 5, 8)
		l.Leave(leave)
	}
	th.Enter(0, id("work"))
	th.Leave(400)
	byLoc(th, "MPI_Send", 400, 410, encode.KindSend, 0)
	byLoc(th, "MPI_Ssend", 450, 600, encode.KindSend, 0)
	r0.call("work2", 0, 100, nil)
	r0.call("MPI_Recv", 100, 420, func() { r0.l.Message(420, encode.KindRecv, 1, false, 5, 8) })
	r0.send("MPI_Send", 430, 440, 1, 0)
	r0.call("work2", 440, 580, nil)
	r0.call("MPI_Recv", 580, 600, func() { r0.l.Message(600, encode.KindRecv, 1, false, 5, 8) })
	r0.coll("MPI_Allreduce", 610, 620, -1, 8, 8)
	r1.recv(130, 445, 0, 0)
	r1.coll("MPI_Allreduce", 450, 620, -1, 8, 8)
	return write(t, r0, r1)
}

// TestInSituThreadMessages: messages between the threads of a rank, by
// location, are replayed in-situ as post-mortem replays them: their Late
// Sender and Late Receiver, the delay costs they carry to other ranks and
// the critical path through them.
func TestInSituThreadMessages(t *testing.T) {
	files := threadRun(t)
	want, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	// What the run plants, post-mortem.
	if want.Totals[LateSender] != 300+300 || want.Totals[LateReceiver] != 130 || want.Unresolved != 0 || want.UnmatchedSends != 0 {
		t.Fatalf("post-mortem: Late Sender %d ns (want 600), Late Receiver %d ns (want 130), %d unresolved, %d unmatched sends",
			want.Totals[LateSender], want.Totals[LateReceiver], want.Unresolved, want.UnmatchedSends)
	}
	long := false
	for _, d := range want.DelayCosts {
		long = long || d.LongTerm && d.Region == "work"
	}
	if !long {
		t.Errorf("post-mortem: no long-term delay cost of the thread's work: %+v", want.DelayCosts)
	}
	got, messages, _, _ := replayInSitu(t, files)
	sameWaits(t, got, want)
	if got.Unresolved != 0 || got.UnmatchedSends != 0 {
		t.Errorf("in-situ: %d unresolved, %d unmatched sends", got.Unresolved, got.UnmatchedSends)
	}
	if messages == 0 {
		t.Error("no forward message between the ranks")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sameWaits(t, replayAsync(t, files, rng), want)
}

// TestInSituSpreadOnArrival: rank 0 is late for rank 1 (wait X, ending at
// 500 ns) and then for rank 2 (wait Y, ending at 1000 ns); the backward
// order spreads Y first. Rank 2 fails after the ship round, so Y's cost
// never comes: X's, which came, is spread all the same (its cost charged
// to rank 0's work), and only Y counts as incomplete.
func TestInSituSpreadOnArrival(t *testing.T) {
	r0, r1, r2 := newRank(0, 3), newRank(1, 3), newRank(2, 3)
	r0.call("work", 0, 500, nil)
	r0.send("MPI_Send", 500, 510, 1, 0)
	r0.call("work2", 510, 1000, nil)
	r0.send("MPI_Send", 1000, 1010, 2, 0)
	r1.call("work2", 0, 100, nil)
	r1.recv(100, 520, 0, 0)
	r2.call("work2", 0, 100, nil)
	r2.recv(100, 1020, 0, 0)
	files := write(t, r0, r1, r2)
	n := len(files)
	locals := make([]*Local, n)
	for i, f := range files {
		l, err := NewLocal(f, n)
		if err != nil {
			t.Fatal(err)
		}
		locals[i] = l
	}
	const failed = 2
	for round := 0; ; round++ {
		inbox := make([]map[int][]byte, n)
		for i := range inbox {
			inbox[i] = map[int][]byte{}
		}
		sent := false
		for i, l := range locals {
			if i == failed && round > Rounds(n) {
				continue
			}
			out, err := l.Outgoing(round)
			if err != nil {
				t.Fatal(err)
			}
			for p, b := range out {
				inbox[p][i], sent = b, true
			}
		}
		if round > Rounds(n) && !sent {
			break
		}
		for i, l := range locals {
			if i == failed && round > Rounds(n) {
				continue
			}
			if err := l.Incoming(round, inbox[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	p, err := locals[0].Finish()
	if err != nil {
		t.Fatal(err)
	}
	if p.DelayIncomplete != 1 {
		t.Errorf("rank 0: %d waits whose cost never came, want 1 (rank 2's)", p.DelayIncomplete)
	}
	var work int64
	for _, c := range p.DelayCosts {
		if c.Region == "work" && !c.LongTerm && c.Pattern == LateSender {
			work += c.Time
		}
	}
	if work <= 0 {
		t.Errorf("rank 0: no short-term cost of its work for rank 1's wait: %+v", p.DelayCosts)
	}
}
