package waitstate

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// The backward replay in-situ: after the forward rounds each rank knows
// the waits it suffered (it is their waiting party) and, for each, the late
// party (a world rank and its location) and how that rank names its late
// call. What the post-mortem second pass computes from the windows of
// every wait on the late party is then computed where the late party's
// events are, as Scalasca's backward replay does (Böhme et al.):
//
//   - the ship round: each waiting rank sends each wait to its late
//     party's rank, one record a wait. Every rank then lays the windows of
//     the waits it caused and of its own waits' synchronisation intervals
//     over its events (the post-mortem sweep, delay.go) once: the late
//     party's regions during each wait (Delays), its work before the late
//     call for the longest waits, and the intervals' times per call path;
//   - the rounds after it: a waiting rank sends each wait's cost (its
//     interval's times less its own waits there, and the long-term cost the
//     wait collected) to the late party, once every wait it was late for
//     that carries into this one was spread; the late party spreads each
//     wait it caused when its cost comes (spreadCost), charging its own
//     call paths and carrying the propagated part into its own waits,
//     each part kept with the wait's place in the post-mortem replay's
//     order (backwardKey) and summed in that order. The critical path travels as a
//     token from the location that finished last, back through the waits,
//     to the late party of each (walk). Each rank sends the longest of its
//     waits' late parties the delay they caused back (Instance.Delay).
//
// Every record is one per message or collective wait recorded, and a
// rank's messages go to the ranks it waited for or was waited for by. The
// rounds end when no rank has anything more to send. Each rank knows from
// the ship round how many costs will come to it and says when it awaits
// none more (Settled), so the driver looks for the end only then; a wait
// whose cost never came (its rank failed) is counted in
// InSitu.DelayIncomplete.

// refKind says how the late rank finds a wait's late call.
type refKind uint8

const (
	refLocal refKind = iota // a call of the late location itself: idx
	refSend                 // the idx-th send of the late rank's rank location
	refRecv                 // the idx-th receive of the late rank's rank location: its posting call
	refColl                 // the late member's operation of instance idx of communicator key
)

// peerRef is a wait's late party, as its waiting rank knows it.
type peerRef struct {
	rank, loc int // world rank (-1: not known) and location in its file
	kind      refKind
	key       uint64
	idx       int
}

// lateWait is a wait this rank was the late party of, as its waiting
// rank sent it.
type lateWait struct {
	from, id int // the waiting rank and the wait's index there
	// w holds the wait with Peer the late location here and lateCall its
	// call; its key the backward order's.
	key            backwardKey
	named, planned bool
	late           span
	near           []int // this rank's own waits in the late interval
	arrived        bool  // its cost came
	carried        float64
	tW             map[uint64]int64 // the waiting party's interval times by call path hash
}

// wireDelay is a Delay as the late rank sends it to the waiting rank;
// since tells whether Delay.Since is a time (in-situ, -1 may be one).
type wireDelay struct {
	Delay
	rank  int
	since bool
}

// backward is one rank's backward replay.
type backward struct {
	l *Local
	// waits are this rank's own waits, then those it was late for (Peer
	// the late location here, lateCall its call): the sweep's indices.
	waits   []wait
	own     int
	refs    []peerRef
	keys    []backwardKey
	named   []bool
	planned []bool
	waiter  []span
	pending []int
	carried []float64
	sent    []bool
	// unsent counts the planned own waits whose cost is not sent yet.
	unsent int
	// ownOf is per location its own waits (Time > 0, not wrong-order) by
	// start, as delayCosts' own.
	ownOf [][]int
	late  []lateWait
	// lateOf finds a lateWait by (waiting rank, index there); order is
	// the planned ones in the backward order, pos each one's place in it.
	// A wait is spread as soon as its cost came (arrived, in the order
	// the costs came; spread counts them), not after those before it in
	// the order: what it adds to the costs, to the unexplained time and
	// to its own waits' carried costs is kept with its place (spent,
	// unspent, parts) and summed in the order at the end or once
	// complete, so the sums are the post-mortem replay's to the bit while
	// a late cost holds back only the waits it carries into.
	lateOf  map[[2]int]int
	order   []int
	pos     []int
	arrived []int
	spread  int
	spent   [][]spentCost // per late wait: its costs, in spreadCost's order
	unspent []float64     // per late wait: its unexplained time
	parts   [][]carriedPart
	ready   []int
	// The calls the late rank's references name, kept past packPartners.
	sendCalls, postCalls []int32
	partners             [][]uint64
	times                [][]pathNs
	tW                   [][]byte // per own wait: its interval's times, encoded
	hashes               []uint64 // per run-wide call path: its names' hash
	out                  map[int][]byte
	self                 [][]byte // records to this rank itself
	swept                bool

	costs       map[spreadKey]float64
	unexplained []float64
	delays      []Value
	delayOf     map[int]wireDelay // replies, by own wait
	candidates  []int

	// The critical path: releases per location, the spans it crossed
	// here, the ends it knows, and per own wait to another rank where the
	// path would leave that rank after it (succ).
	releases [][]release
	spans    [][]span
	path     inSituPath
	succ     map[int]pathExit
}

// spentCost is a cost a late wait charges one of this rank's call paths.
type spentCost struct {
	key spreadKey
	ns  float64
}

// carriedPart is the part of a late wait's cost (at pos in the backward
// order) that one of this rank's own waits carries on.
type carriedPart struct {
	pos int
	ns  float64
}

type spreadKey struct {
	p    Pattern
	long bool
	path int32
	loc  int
}

// release is a wait as the critical path's walk sees it on its waiting
// location: when it ended, its late party's rank and location, and which
// of the rank's own waits it is.
type release struct {
	end       int64
	rank, loc int
	wait      int
}

// Record tags of the backward rounds.
const (
	tagShip = 1 + iota
	tagCost
	tagDelay
	tagToken
	tagMark
	tagSucc
)

// newBackward readies the backward replay from the forward pass's waits
// and their late parties, and writes the ship round's records.
func (l *Local) newBackward(refs []peerRef) *backward {
	a := l.a
	b := &backward{l: l, waits: l.found.waits, own: len(l.found.waits), refs: refs, lateOf: map[[2]int]int{}, out: map[int][]byte{},
		costs: map[spreadKey]float64{}, unexplained: make([]float64, len(a.data)), delayOf: map[int]wireDelay{}, succ: map[int]pathExit{}}
	l.found.waits = nil
	n := b.own
	b.keys = make([]backwardKey, n)
	b.planned = make([]bool, n)
	b.waiter = make([]span, n)
	b.pending = make([]int, n)
	b.carried = make([]float64, n)
	b.sent = make([]bool, n)
	b.tW = make([][]byte, n)
	b.named = make([]bool, n)
	b.candidates = a.worstOf(b.waits, DefaultWorst)
	for _, i := range b.candidates {
		b.named[i] = true
	}
	if l.rankLoc >= 0 {
		d := a.data[l.rankLoc]
		for _, s := range d.sends {
			b.sendCalls = append(b.sendCalls, s.call)
		}
		for _, q := range d.recvs {
			b.postCalls = append(b.postCalls, q.post)
		}
	}
	b.partners = a.packPartners()
	b.ownOf = make([][]int, len(a.data))
	b.releases = make([][]release, len(a.data))
	b.spans = make([][]span, len(a.data))
	for i := range b.waits {
		w := &b.waits[i]
		ref := refs[i]
		b.keys[i] = a.backwardKeyOf(w)
		if w.Pattern == LateSenderWrongOrder || w.Time <= 0 {
			continue
		}
		b.ownOf[w.Loc] = append(b.ownOf[w.Loc], i)
		if ref.rank < 0 || ref.rank == l.rank && ref.loc == a.locs[w.Loc].Loc {
			continue
		}
		b.releases[w.Loc] = append(b.releases[w.Loc], release{w.Start + w.Time, ref.rank, ref.loc, i})
		if w.call < 0 {
			continue
		}
		b.planned[i] = true
		b.unsent++
		keyW := w.partner
		if w.partner >= 0 && w.partner < threadPeer { // a message by rank: the late party's
			keyW = ref.rank
		}
		sp := span{a.lastSync(b.partners, w.Loc, keyW, w.call), w.Start}
		sp.start = min(sp.start, sp.end)
		b.waiter[i] = sp
	}
	for _, l := range b.ownOf {
		slices.SortFunc(l, func(x, y int) int { return cmp.Compare(b.waits[x].Start, b.waits[y].Start) })
	}
	for _, r := range b.releases {
		slices.SortFunc(r, func(x, y release) int {
			if x.end != y.end {
				return cmp.Compare(x.end, y.end)
			}
			if x.rank != y.rank {
				return cmp.Compare(x.rank, y.rank)
			}
			return cmp.Compare(x.loc, y.loc)
		})
	}
	// The ship round: every wait with a late party, to its rank.
	for i := range b.waits {
		w := &b.waits[i]
		ref := refs[i]
		if ref.rank < 0 || w.Time <= 0 {
			continue
		}
		lo := a.locs[w.Loc]
		var r wirecodec.Writer
		r = append(r, tagShip)
		r.Uvarint(uint64(i))
		r.Uvarint(uint64(w.Pattern))
		r.Varint(w.Start)
		r.Varint(w.Time)
		r.Uvarint(uint64(lo.Loc))
		r.Varint(int64(w.call))
		r.Uvarint(uint64(ref.loc))
		r = append(r, byte(ref.kind))
		r.U64(ref.key)
		r.Uvarint(uint64(ref.idx))
		r.Varint(int64(w.partner))
		r = append(r, boolByte(b.named[i])|boolByte(b.planned[i])<<1)
		b.send(ref.rank, r)
	}
	if l.best.ok && l.best.rank == l.rank && l.best.loc < len(a.data) {
		b.path.HasEnd, b.path.End, b.path.LastRank, b.path.LastLoc = true, l.best.last, l.rank, l.best.loc
	}
	return b
}

// send queues record r for rank to.
func (b *backward) send(to int, r []byte) {
	if to == b.l.rank {
		b.self = append(b.self, r)
		return
	}
	b.out[to] = append(b.out[to], r...)
}

// backOutgoing returns the records of the next backward round.
func (l *Local) backOutgoing() (map[int][]byte, error) {
	if l.why == nil {
		l.endForward()
	}
	out := l.why.out
	l.why.out = map[int][]byte{}
	return out, nil
}

// backIncoming takes a backward round's records and goes on as far as
// they let it.
func (l *Local) backIncoming(in map[int][]byte) error {
	b := l.why
	if b == nil {
		return fmt.Errorf("waitstate: rank %d: backward records before the ship round", l.rank)
	}
	peers := make([]int, 0, len(in))
	for p := range in {
		peers = append(peers, p)
	}
	slices.Sort(peers)
	for _, p := range peers {
		if err := b.take(p, in[p]); err != nil {
			return fmt.Errorf("waitstate: rank %d: backward round %d: rank %d's records: %w", l.rank, l.round-Rounds(l.world), p, err)
		}
	}
	if !b.swept {
		// The ship round is in: every wait this rank caused is known.
		for len(b.self) > 0 {
			r := b.self[0]
			b.self = b.self[1:]
			if err := b.take(l.rank, r); err != nil {
				return fmt.Errorf("waitstate: rank %d: its own records: %w", l.rank, err)
			}
		}
		if err := b.sweep(); err != nil {
			return fmt.Errorf("waitstate: rank %d: %w", l.rank, err)
		}
	}
	if err := b.progress(); err != nil {
		return fmt.Errorf("waitstate: rank %d: %w", l.rank, err)
	}
	return nil
}

// wireReader reads the records of a message with the wire codec; its
// first error sticks.
type wireReader struct{ wirecodec.Reader }

func newWireReader(b []byte, off int) wireReader { return wireReader{wirecodec.MakeReader(b, off)} }

func (r *wireReader) fail(err error) { r.Fail("", err.Error()) }
func (r *wireReader) uv() uint64     { return r.Uvarint("a record") }
func (r *wireReader) sv() int64      { return r.Varint("a record") }
func (r *wireReader) u64() uint64    { return r.U64("a record") }
func (r *wireReader) byte1() byte    { return r.U8("a record") }
func (r *wireReader) str() string    { return r.String("a string") }

// small reads a count or index, at most MaxInt32.
func (r *wireReader) small() int { return int(r.Uint("an index", math.MaxInt32)) }

// records reads a count of records, bounded by the bytes left: every
// record takes one at least.
func (r *wireReader) records() int { return r.Count("records", 1) }

// take decodes one peer's records of a backward round.
func (b *backward) take(peer int, msg []byte) error {
	r := &wireReader{wirecodec.MakeReader(msg, 0)}
	for r.Len() > 0 && r.OK() {
		switch tag := r.byte1(); tag {
		case tagShip:
			if b.swept {
				return errors.New("a wait shipped after the ship round")
			}
			b.takeShip(peer, r)
		case tagCost:
			b.takeCost(peer, r)
		case tagDelay:
			id := r.small()
			d := wireDelay{rank: peer}
			d.Loc = r.small()
			d.Region, d.Time, d.Interval, d.Since = r.str(), r.sv(), r.sv(), r.sv()
			d.since = r.byte1() != 0
			if r.byte1() != 0 {
				w := r.sv()
				d.Work, d.WorkRegion = &w, r.str()
			}
			if r.OK() && (id >= b.own || b.refs[id].rank != peer) {
				return fmt.Errorf("the delay of wait %d, which is not one of this rank's for rank %d", id, peer)
			}
			b.delayOf[id] = d
		case tagToken, tagMark:
			loc, t, hops := r.small(), r.sv(), r.small()
			if r.OK() && loc >= len(b.l.a.data) {
				return fmt.Errorf("the critical path at location %d of %d", loc, len(b.l.a.data))
			}
			if r.OK() && !b.swept {
				return errors.New("the critical path before the ship round")
			}
			if r.OK() && tag == tagToken {
				b.walk(loc, t, hops)
			} else if r.OK() {
				b.walkLocal(loc, t, hops, true)
			}
		case tagSucc:
			id := r.small()
			e := pathExit{end: r.byte1() != 0}
			e.rank, e.loc, e.t, e.hops = r.small(), r.small(), r.sv(), r.small()
			if r.OK() && (id >= b.own || b.refs[id].rank != peer) {
				return fmt.Errorf("where the critical path leaves rank %d after wait %d, which is not one of this rank's for it", peer, id)
			}
			if r.OK() && !e.end && e.rank >= b.l.world {
				return fmt.Errorf("the critical path to rank %d of %d", e.rank, b.l.world)
			}
			b.succ[id] = e
		default:
			return fmt.Errorf("a record of tag %d", tag)
		}
	}
	return r.Err()
}

// takeShip takes a wait this rank was late for.
func (b *backward) takeShip(peer int, r *wireReader) {
	a := b.l.a
	id := r.small()
	p := Pattern(r.uv())
	start, time := r.sv(), r.sv()
	wloc, call := r.small(), r.sv()
	loc := r.small()
	kind := refKind(r.byte1())
	key := r.u64()
	idx := r.small()
	partner := r.sv()
	flags := r.byte1()
	if !r.OK() {
		return
	}
	if p >= NumPatterns || loc >= len(a.data) || call < -1 || call > math.MaxInt32 {
		r.fail(fmt.Errorf("a wait of pattern %d on location %d (of %d), call %d", p, loc, len(a.data), call))
		return
	}
	// The late call, and the late party's key of what it synchronised
	// through (lastSync's partner).
	lateCall, keyL := int32(-1), int(partner)
	switch kind {
	case refLocal:
		if peer != b.l.rank || idx >= len(a.data[loc].calls) {
			r.fail(fmt.Errorf("call %d of location %d named by rank %d", idx, loc, peer))
			return
		}
		lateCall = int32(idx)
		if partner >= threadPeer {
			// A message between this rank's threads: the late
			// location's key of the waiting one.
			w := slices.IndexFunc(a.locs, func(lo Location) bool { return lo.Loc == wloc })
			if w < 0 {
				r.fail(fmt.Errorf("a message's wait on location %d, which this rank lacks", wloc))
				return
			}
			keyL = threadPeer + w
		}
	case refSend, refRecv:
		calls := b.sendCalls
		if kind == refRecv {
			calls = b.postCalls
		}
		if loc != b.l.rankLoc || idx >= len(calls) {
			r.fail(fmt.Errorf("message %d of location %d: this rank has %d by rank", idx, loc, len(calls)))
			return
		}
		lateCall, keyL = calls[idx], peer
	case refColl:
		t := b.l.treeOf[key]
		if t == nil || idx >= len(t.ops) || t.ops[idx].loc != loc {
			r.fail(fmt.Errorf("collective %d of communicator %#x on location %d: not this rank's", idx, key, loc))
			return
		}
		lateCall, keyL = t.ops[idx].op.call, commPartner(t.ops[idx].op.comm)
	default:
		r.fail(fmt.Errorf("a late call of kind %d", kind))
		return
	}
	k := [2]int{peer, id}
	if _, dup := b.lateOf[k]; dup {
		r.fail(fmt.Errorf("wait %d twice", id))
		return
	}
	w := wait{Pattern: p, Loc: -1, Start: start, Time: time, Peer: loc, lateCall: lateCall, call: int32(call), partner: keyL}
	lw := lateWait{from: peer, id: id, key: backwardKey{start + time, start, peer, wloc, int32(call), p}, named: flags&1 != 0, planned: flags&2 != 0}
	if lw.planned {
		lw.late = span{a.lastSync(b.partners, loc, keyL, lateCall), start + time}
		lw.late.start = min(lw.late.start, lw.late.end)
	}
	b.lateOf[k] = len(b.late)
	b.late = append(b.late, lw)
	b.waits = append(b.waits, w)
}

// takeCost takes the cost of a wait this rank was late for.
func (b *backward) takeCost(peer int, r *wireReader) {
	id := r.small()
	carried := math.Float64frombits(r.u64())
	n := r.small()
	if r.OK() && n > r.Len() {
		r.fail(fmt.Errorf("%d call paths in %d bytes", n, r.Len()))
	}
	tW := make(map[uint64]int64, n)
	for range n {
		h := r.u64()
		tW[h] += r.sv()
	}
	if !r.OK() {
		return
	}
	i, ok := b.lateOf[[2]int{peer, id}]
	if !ok || !b.late[i].planned || b.late[i].arrived {
		r.fail(fmt.Errorf("the cost of wait %d, which this rank does not wait for", id))
		return
	}
	lw := &b.late[i]
	lw.arrived, lw.carried, lw.tW = true, carried, tW
	b.arrived = append(b.arrived, i)
}

// sweep lays the windows of the waits this rank caused and of its own
// waits' intervals over its locations' enters and leaves: the
// post-mortem second pass's sweep, on this rank's part of the windows.
func (b *backward) sweep() error {
	a := b.l.a
	b.swept = true
	wins := make([][]window, len(a.data))
	for k := range b.late {
		lw := &b.late[k]
		i := b.own + k
		w := &b.waits[i]
		n := w.Peer
		wins[n] = append(wins[n], window{start: w.Start, end: w.Start + w.Time, wait: int32(i), kind: winDuring})
		if c := w.lateCall; lw.named && c >= 0 {
			d := a.data[n]
			from := d.first
			if c > 0 {
				from = d.calls[c-1].leave
			}
			wins[n] = append(wins[n], window{start: from, end: d.calls[c].enter, wait: int32(i), kind: winWork})
		}
		if lw.planned && lw.late.end > lw.late.start {
			wins[n] = append(wins[n], window{start: lw.late.start, end: lw.late.end, wait: int32(i), kind: winLate})
		}
	}
	for i := range b.own {
		if sp := b.waiter[i]; b.planned[i] && sp.end > sp.start {
			n := b.waits[i].Loc
			wins[n] = append(wins[n], window{start: sp.start, end: sp.end, wait: int32(i), kind: winWaiter})
		}
	}
	named := make([]bool, len(b.waits))
	copy(named, b.named)
	for k := range b.late {
		named[b.own+k] = b.late[k].named
	}
	b.times = make([][]pathNs, 2*len(b.waits))
	outs := make([]delayOut, len(a.data))
	for n := range a.data {
		if len(wins[n]) == 0 {
			continue
		}
		slices.SortFunc(wins[n], compareWindow)
		outs[n].times = b.times
		if err := a.sweep(n, b.waits, wins[n], named, &outs[n]); err != nil {
			return err
		}
	}
	a.unifyPaths()
	b.hashPaths()
	for n, o := range outs {
		f := a.files[a.locs[n].File]
		for k, v := range o.costs {
			v.Region = f.RegionName(k.region)
			b.delays = append(b.delays, *v)
		}
	}
	// The delays of the longest waits, back to their waiting ranks.
	for k := range b.late {
		lw := &b.late[k]
		i := b.own + k
		w := b.waits[i]
		if !lw.named {
			continue
		}
		dl := a.delayOf(w, outs[w.Peer].during[i], outs[w.Peer].work[i])
		if dl == nil {
			continue
		}
		r := wirecodec.Writer{tagDelay}
		r.Uvarint(uint64(lw.id))
		r.Uvarint(uint64(a.locs[w.Peer].Loc))
		r.String(dl.Region)
		r.Varint(dl.Time)
		r.Varint(dl.Interval)
		r.Varint(dl.Since)
		r = append(r, boolByte(w.lateCall > 0)) // delayOf's Since is a time
		r.Bool(dl.Work != nil)
		if dl.Work != nil {
			r.Varint(*dl.Work)
			r.String(dl.WorkRegion)
		}
		b.send(lw.from, r)
	}
	// Each own wait's interval times, less its own waits there.
	for i := range b.own {
		if !b.planned[i] {
			continue
		}
		w := &b.waits[i]
		tW := a.globalTimes(w.Loc, b.times[interval(i, winWaiter)], nil)
		for _, j := range overlapping(nil, b.ownOf[w.Loc], b.waits, b.waiter[i]) {
			tW = subPath(tW, b.waits[j].Path, overlap(b.waits[j], b.waiter[i]))
		}
		var enc wirecodec.Writer
		enc.Uvarint(uint64(len(tW)))
		for _, p := range tW {
			enc.U64(b.hashes[p.path])
			enc.Varint(p.ns)
		}
		b.tW[i] = enc
	}
	// The waits this rank caused, in the backward order; each holds back
	// its own waits in its interval that come after it in that order.
	for k := range b.late {
		lw := &b.late[k]
		if !lw.planned {
			continue
		}
		b.order = append(b.order, k)
		lw.near = overlapping(nil, b.ownOf[b.waits[b.own+k].Peer], b.waits, lw.late)
		for _, j := range lw.near {
			if compareBackward(lw.key, b.keys[j]) < 0 {
				b.pending[j]++
			}
		}
	}
	slices.SortFunc(b.order, func(x, y int) int { return compareBackward(b.late[x].key, b.late[y].key) })
	b.pos = make([]int, len(b.late))
	for at, k := range b.order {
		b.pos[k] = at
	}
	b.spent = make([][]spentCost, len(b.late))
	b.unspent = make([]float64, len(b.late))
	b.parts = make([][]carriedPart, b.own)
	for i := range b.own {
		if b.planned[i] && b.pending[i] == 0 {
			b.ready = append(b.ready, i)
		}
	}
	// Where the critical path would leave this rank after each wait it
	// caused on another rank, back to the waiting rank.
	for k := range b.late {
		lw := &b.late[k]
		w := &b.waits[b.own+k]
		if lw.from == b.l.rank || w.Pattern == LateSenderWrongOrder {
			continue
		}
		e := b.walkLocal(w.Peer, w.Start+w.Time, 0, false)
		r := wirecodec.Writer{tagSucc}
		r.Uvarint(uint64(lw.id))
		r.Bool(e.end)
		r.Uvarint(uint64(e.rank))
		r.Uvarint(uint64(e.loc))
		r.Varint(e.t)
		r.Uvarint(uint64(e.hops))
		b.send(lw.from, r)
	}
	if b.path.HasEnd {
		b.walk(b.path.LastLoc, b.path.End, 0)
	}
	return nil
}

// hashPaths names each run-wide call path by a hash of its regions' names
// from the top: the same path on every rank.
func (b *backward) hashPaths() {
	tree := b.l.a.tree
	for i := len(b.hashes); i < len(tree); i++ {
		h := fnv.New64a()
		var pb [8]byte
		if p := tree[i].Parent; p >= 0 {
			binary.LittleEndian.PutUint64(pb[:], b.hashes[p])
			h.Write(pb[:])
		}
		h.Write([]byte(tree[i].Region))
		b.hashes = append(b.hashes, h.Sum64())
	}
}

// progress sends the costs that are ready and spreads the waits whose
// costs came, until neither is left; records to itself are taken at
// once. An own wait's cost is ready once every wait it carries costs of
// was spread: its carried cost is then their parts summed in the
// backward order.
func (b *backward) progress() error {
	a := b.l.a
	var (
		tLbuf, excess []pathNs
		props         []propagating
	)
	for {
		did := false
		for len(b.ready) > 0 {
			i := b.ready[0]
			b.ready = b.ready[1:]
			b.sent[i] = true
			b.unsent--
			r := wirecodec.Writer{tagCost}
			r.Uvarint(uint64(i))
			r.U64(math.Float64bits(b.carried[i]))
			r = append(r, b.tW[i]...)
			b.tW[i] = nil
			b.send(b.refs[i].rank, r)
			did = true
		}
		for len(b.self) > 0 {
			r := b.self[0]
			b.self = b.self[1:]
			if err := b.take(b.l.rank, r); err != nil {
				return fmt.Errorf("its own records: %w", err)
			}
			did = true
		}
		for len(b.arrived) > 0 && b.swept {
			k := b.arrived[0]
			b.arrived = b.arrived[1:]
			b.spread++
			lw := &b.late[k]
			i := b.own + k
			w := b.waits[i]
			tL := a.globalTimes(w.Peer, b.times[interval(i, winLate)], tLbuf[:0])
			tLbuf = tL
			props = props[:0]
			for _, j := range lw.near {
				ov := overlap(b.waits[j], lw.late)
				tL = subPath(tL, b.waits[j].Path, ov)
				props = append(props, propagating{j, ov})
			}
			var un float64
			excess, un = spreadCost(w.Time, lw.carried, tL, func(p int32) int64 { return lw.tW[b.hashes[p]] }, props, excess[:0],
				func(long bool, path int32, ns float64) {
					b.spent[k] = append(b.spent[k], spentCost{spreadKey{w.Pattern, long, path, w.Peer}, ns})
				},
				func(j int, ns float64) {
					if compareBackward(lw.key, b.keys[j]) < 0 {
						b.parts[j] = append(b.parts[j], carriedPart{b.pos[k], ns})
					}
				})
			b.unspent[k] = un
			for _, j := range lw.near {
				if compareBackward(lw.key, b.keys[j]) < 0 {
					if b.pending[j]--; b.pending[j] == 0 && b.planned[j] && !b.sent[j] {
						b.carried[j] = sumParts(b.parts[j])
						b.parts[j] = nil
						b.ready = append(b.ready, j)
					}
				}
			}
			lw.tW = nil
			did = true
		}
		if !did {
			return nil
		}
	}
}

// settled tells whether this rank awaits nothing more of the backward
// replay's delay costs: every wait it caused came with its cost and was
// spread, and every planned wait of its own sent its cost. Each rank knows
// from the ship round how many costs will come to it, so it can tell its
// own end without asking the others; what may still move after it are
// the critical path's token and the records no rank waits for (delays,
// where the path leaves a rank), which the driver's final reductions
// cover.
func (b *backward) settled() bool {
	return b.swept && b.unsent == 0 && b.spread == len(b.order) && len(b.ready) == 0 && len(b.self) == 0
}

// Settled tells whether this rank's backward replay awaits no record
// more than those no rank counts on (see backward.settled): the cshim
// driver has it join the reductions that find the replay's end only then,
// rather than over and over while costs are still on their way.
func (l *Local) Settled() bool {
	return l.why != nil && l.why.settled()
}

// pathExit is where the critical path leaves this rank after it arrived
// on one of its locations: through own wait wait, a hop to the late
// party (rank, loc) at t; or its start (end). hops counts the hops made
// on this rank, the one out included.
type pathExit struct {
	end       bool
	rank, loc int
	t         int64
	hops      int
	wait      int
}

// walkLocal follows the critical path back from time t on location n, as
// walkCriticalPath does, until it leaves this rank or reaches its start.
// With charge it keeps the spans crossed, and at the start the path's
// start and hops (those before it came, hops, and those made here).
func (b *backward) walkLocal(n int, t int64, hops int, charge bool) pathExit {
	a := b.l.a
	e := pathExit{}
	for {
		l := b.releases[n]
		i, _ := slices.BinarySearchFunc(l, t, func(r release, t int64) int { return cmp.Compare(r.end, t) })
		first := a.data[n].first
		if i == 0 || l[i-1].end <= first {
			if charge {
				b.spans[n] = append(b.spans[n], span{min(first, t), t})
				b.path.HasStart, b.path.Start, b.path.Hops = true, min(first, t), hops+e.hops
			}
			e.end = true
			return e
		}
		r := l[i-1]
		if charge {
			b.spans[n] = append(b.spans[n], span{r.end, t})
		}
		e.hops++
		if r.rank != b.l.rank {
			e.rank, e.loc, e.t, e.wait = r.rank, r.loc, r.end, r.wait
			return e
		}
		n, t = r.loc, r.end
	}
}

// walk follows the critical path back from time t on location n (hops
// made so far) and hands it on. Where the rank it goes to told already
// where the path would leave it (succ), the path skips that rank: it is
// only told the stretch it holds (a mark), and the path goes on from
// there, two ranks a round.
func (b *backward) walk(n int, t int64, hops int) {
	e := b.walkLocal(n, t, hops, true)
	if e.end {
		return
	}
	hops += e.hops
	s, ok := b.succ[e.wait]
	if !ok {
		b.send(e.rank, appendPathAt(tagToken, e.loc, e.t, hops))
		return
	}
	b.send(e.rank, appendPathAt(tagMark, e.loc, e.t, hops))
	if !s.end {
		b.send(s.rank, appendPathAt(tagToken, s.loc, s.t, hops+s.hops))
	}
}

// appendPathAt is a record of the critical path at (location, time) with
// the hops made so far.
func appendPathAt(tag byte, loc int, t int64, hops int) []byte {
	m := wirecodec.Writer{tag}
	m.Uvarint(uint64(loc))
	m.Varint(t)
	m.Uvarint(uint64(hops))
	return m
}

// finish puts this rank's part of the critical path, the delays, the
// delay costs and its longest waits into part.
func (b *backward) finish(part *InSitu) error {
	a := b.l.a
	if !b.swept {
		return fmt.Errorf("waitstate: rank %d: finished before the ship round", b.l.rank)
	}
	// The costs and unexplained times of the waits spread, summed in the
	// backward order as the post-mortem replay sums them.
	for _, k := range b.order {
		if !b.late[k].arrived {
			part.DelayIncomplete++ // a cost that never came
			continue
		}
		for _, c := range b.spent[k] {
			b.costs[c.key] += c.ns
		}
		b.unexplained[b.waits[b.own+k].Peer] += b.unspent[k]
	}
	// The critical path's spans on this rank, charged per call path.
	path := map[[2]int]int64{} // (location, local path)
	for n, spans := range b.spans {
		if len(spans) == 0 {
			continue
		}
		wins := make([]window, 0, len(spans))
		for _, s := range spans {
			wins = append(wins, window{start: s.start, end: s.end, wait: -1, kind: winPath})
		}
		slices.SortFunc(wins, compareWindow)
		var o delayOut
		if err := a.sweep(n, b.waits, wins, nil, &o); err != nil {
			return fmt.Errorf("waitstate: rank %d: %w", b.l.rank, err)
		}
		for p, ns := range o.path {
			path[[2]int{n, int(p)}] += ns
		}
	}
	for n := range a.data {
		a.data[n].log = regionLog{}
	}
	a.unifyPaths()
	if b.path.HasEnd || b.path.HasStart || len(path) > 0 {
		cp := b.path
		for k, ns := range path {
			g := a.paths[k[0]][k[1]]
			cp.Values = append(cp.Values, PathTime{Region: a.tree[g].Region, Path: g, Loc: k[0], Time: ns})
		}
		slices.SortFunc(cp.Values, comparePathTime)
		part.Path = &cp
	}
	// The exclusive time per region, for the critical path's imbalance.
	excl := map[string]int64{}
	for _, lo := range a.locs {
		f := a.files[lo.File]
		for _, p := range f.Locations[lo.Loc].Profile {
			excl[f.RegionName(p.Region)] += f.TicksToNanos(p.Exclusive)
		}
	}
	for name, ns := range excl {
		part.Exclusive = append(part.Exclusive, RegionNs{name, ns})
	}
	slices.SortFunc(part.Exclusive, func(x, y RegionNs) int { return cmp.Compare(x.Region, y.Region) })

	slices.SortFunc(b.delays, compareValue)
	part.Delays = b.delays
	for k, ns := range b.costs {
		if t := int64(math.Round(ns)); t > 0 {
			part.DelayCosts = append(part.DelayCosts, inSituCost{Pattern: k.p, DelayCost: DelayCost{LongTerm: k.long, Region: a.tree[k.path].Region, Path: int(k.path), Loc: k.loc, Time: t}})
		}
	}
	slices.SortFunc(part.DelayCosts, compareInSituCost)
	part.Unexplained = b.unexplained
	for _, i := range b.candidates {
		w := b.waits[i]
		ref := b.refs[i]
		ww := inSituWait{Instance: a.instance(&w), PeerRank: ref.rank, PeerLoc: ref.loc, DelayRank: -1}
		ww.Peer = -1
		if d, ok := b.delayOf[i]; ok {
			dl := d.Delay
			ww.Delay, ww.DelayRank, ww.Since = &dl, d.rank, d.since
		}
		part.Worst = append(part.Worst, ww)
	}
	return nil
}

// sumParts adds parts in the backward order of the waits they come from.
func sumParts(parts []carriedPart) float64 {
	slices.SortFunc(parts, func(x, y carriedPart) int { return cmp.Compare(x.pos, y.pos) })
	var sum float64
	for _, p := range parts {
		sum += p.ns
	}
	return sum
}

func comparePathTime(x, y PathTime) int {
	if x.Path != y.Path {
		return cmp.Compare(x.Path, y.Path)
	}
	return cmp.Compare(x.Loc, y.Loc)
}
