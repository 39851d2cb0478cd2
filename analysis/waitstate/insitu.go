package waitstate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The replay in-situ: at the collective end of an MPI run (cshim's run
// results), each rank replays its own events while they are still in
// memory, with the code the post-mortem replay runs (receives, collWait,
// openmp), and exchanges with its peers only the times a pattern needs,
// in the run's own communication pattern, as Scalasca's parallel replay
// does (Geimer et al.):
//
//   - to every rank it sent messages to, the enter time of each send (with
//     its communicator, tag and record time), in sending order; to every
//     rank it received from, the enter time of the call that posted each
//     receive, in receiving order. The receiver pairs the k-th receive of
//     (sender, communicator, tag) with the k-th send, as MPI matches them,
//     and finds Late Sender; the sender pairs its blocking sends likewise
//     and finds Late Receiver;
//   - per communicator it is a member of, an array of collTimes, one per
//     collective operation in the order its members call them, reduced
//     up a binomial tree over the communicator's members (in its rank
//     order, over the world's private duplicate) and sent back down: every
//     member then has each instance's latest start, its root's start and
//     the first other member's, and finds its own waits.
//
// The forward exchange runs in Rounds(world) rounds of point-to-point
// messages (the cshim driver says how): round 0 carries the messages'
// times and the first tree level, rounds up to half of them the levels up
// the trees, the others the levels down; the world's tree carries the
// location that finished last, where the critical path starts. A rank
// sends one message per peer and round at most, to the peers it talked to
// or its tree neighbours: no rank holds anything of size world², and each
// communicator's tree has log2 of its size levels. The messages name each
// send and receive by its place, and the trees say which member was late
// (the first in the communicator's order of those that tie), so that each
// wait knows its late party and how that rank finds its late call.
//
// The backward replay follows (insitu_why.go): the critical path, the
// delays, the delay costs and the worst waits, from more rounds until no
// rank has anything to send. Messages between the threads of a process
// (by location, not by rank) never leave it: its rank pairs them itself,
// in the post-mortem order, and their waits' late parties are its own
// locations (threadPeer).

// threadPeer is added to the location (run-wide index) of a message's
// peer in-situ when the message is between the threads of the rank, by
// location id, not by world rank: no world rank comes near it, and the
// replay pairs such messages on the rank itself, as post-mortem does.
const threadPeer = 1 << 30

// Rounds returns the rounds of the exchange in a run of world ranks: up
// and down the trees of ceil(log2 world) levels.
func Rounds(world int) int {
	if world < 2 {
		return 0
	}
	return 2 * bits.Len(uint(world-1))
}

// Local is one rank's part of the replay in-situ, between its rounds.
type Local struct {
	a           *analysis
	rank, world int
	rankLoc     int // the location whose messages are by rank, -1 none
	found       findings
	keys        []uint64             // per run-wide communicator: its key's hash
	sentTo      map[int][]wireSend   // per peer: its sends to this rank, in order
	postedBy    map[int][]wirePost   // per peer: its receives from this rank, in order
	trees       []*commTree          // the communicators with other members
	treeOf      map[uint64]*commTree // by key
	alone       uint64               // collectives with no other member to replay them with
	round       int
	finished    bool
	// peerLoc is, per peer rank, its location whose messages are by
	// rank, as its messages of round 0 say.
	peerLoc map[int]int
	// best is the location of the world that finished last, as far as
	// this rank heard (the world's tree, up and down).
	best lastLoc
	// why is the backward replay, from the end of the forward rounds.
	why *backward
	// What the forward pass counted, kept past the backward replay, which
	// lets the messages go.
	total             int64
	sends, unresolved uint64
}

// lastLoc is a location's last time, and which it is: the critical path
// starts at the last of the world's, the first by (rank, location) of
// those that tie.
type lastLoc struct {
	last      int64
	rank, loc int
	ok        bool
}

// after tells whether x is the better start of the critical path.
func (x lastLoc) after(y lastLoc) bool {
	if !y.ok {
		return x.ok
	}
	if !x.ok || x.last != y.last {
		return x.ok && x.last > y.last
	}
	if x.rank != y.rank {
		return x.rank < y.rank
	}
	return x.loc < y.loc
}

// wireSend is a send as its receiver learns it; idx is its place among
// its sender's sends, by which the receiver names it back.
type wireSend struct {
	comm        uint64
	tag         uint32
	enter, time int64
	blocking    bool
	idx         int
}

// wirePost is a receive as its sender learns it: the enter of the call
// that posted it, and its place among its receiver's receives.
type wirePost struct {
	comm  uint64
	tag   uint32
	enter int64
	idx   int
}

// treeTimes is collTimes with who the late members are: the member (by
// its index in the communicator) that started last, the first of those
// that tie, and the location of its operation, as the post-mortem replay
// picks it; likewise the earliest other than the root, and the root's
// location.
type treeTimes struct {
	collTimes
	LateIdx, LateLoc   int
	EarlyIdx, EarlyLoc int
	RootLoc            int
}

func newTreeTimes() treeTimes {
	return treeTimes{collTimes: newCollTimes(), LateIdx: -1, EarlyIdx: -1, RootLoc: -1}
}

// add adds member idx, whose operation on location loc started at start.
func (t *treeTimes) add(start int64, isRoot bool, idx, loc int) {
	o := newTreeTimes()
	o.collTimes.add(start, isRoot)
	o.LateIdx, o.LateLoc = idx, loc
	if isRoot {
		o.RootLoc = loc
	} else {
		o.EarlyIdx, o.EarlyLoc = idx, loc
	}
	t.merge(o)
}

// merge adds the members of o.
func (t *treeTimes) merge(o treeTimes) {
	if o.LateIdx >= 0 && (t.LateIdx < 0 || o.Latest > t.Latest || o.Latest == t.Latest && o.LateIdx < t.LateIdx) {
		t.LateIdx, t.LateLoc = o.LateIdx, o.LateLoc
	}
	if o.EarlyIdx >= 0 && (t.EarlyIdx < 0 || o.Earliest < t.Earliest || o.Earliest == t.Earliest && o.EarlyIdx < t.EarlyIdx) {
		t.EarlyIdx, t.EarlyLoc = o.EarlyIdx, o.EarlyLoc
	}
	if o.RootLoc >= 0 {
		t.RootLoc = o.RootLoc
	}
	t.collTimes.merge(o.collTimes)
}

// commTree is a communicator this rank replays collectives on with its
// other members.
type commTree struct {
	key     uint64
	members []int32 // world ranks, in the communicator's rank order
	me      int     // this rank's index in members
	ops     []member
	times   []treeTimes // this subtree's, then (after the rounds down) the instance's
}

// NewLocal reads the events of f, the trace of one rank of a run of world
// ranks (in memory at the collective end), for its part of the replay.
func NewLocal(f *tracefile.File, world int) (*Local, error) {
	if world < 1 || f.Header.Rank < 0 || f.Header.Rank >= world {
		return nil, fmt.Errorf("waitstate: rank %d of a run of %d ranks", f.Header.Rank, world)
	}
	r, err := newRunOf([]*tracefile.File{f}, world)
	if err != nil {
		return nil, fmt.Errorf("waitstate: rank %d: %w", f.Header.Rank, err)
	}
	// The backward replay sweeps the enters and leaves twice (its own
	// waits, then the costs its peers sent): without a budget for the
	// logs every sweep decoded the rank's whole trace again. The logs
	// (2 to 4 bytes an enter or leave) may take up to twice the bytes of
	// the rank's trace, so that the collective end never holds more than
	// about three times the buffer the run used; past that a location's
	// sweeps decode its events again.
	r.keepLog = true
	_, traceBytes := f.Bins()
	r.logLeft.Store(min(logBudget, 2*traceBytes+1<<20))
	data := make([]*locData, len(r.locs))
	for n := range r.locs {
		d, err := r.read(n)
		if err != nil {
			return nil, fmt.Errorf("waitstate: rank %d: %w", f.Header.Rank, err)
		}
		data[n] = d
	}
	a := &analysis{run: r, data: data}
	a.unifyPaths()
	l := &Local{a: a, rank: f.Header.Rank, world: world, rankLoc: -1, sentTo: map[int][]wireSend{}, postedBy: map[int][]wirePost{}, treeOf: map[uint64]*commTree{},
		peerLoc: map[int]int{}}
	for n, d := range data {
		if c := (lastLoc{d.last, l.rank, r.locs[n].Loc, true}); c.after(l.best) {
			l.best = c
		}
	}
	for i := range r.locs {
		lo := &r.locs[i]
		if len(f.Locations) == 1 {
			lo.Name = fmt.Sprintf("rank %d", l.rank)
		} else {
			lo.Name = tracefile.RankLabel(l.rank, f.Locations[lo.Loc].Name)
		}
	}
	// The location whose messages are by rank: the one the post-mortem
	// replay pairs a peer's messages with.
	if end, ok, err := r.peers.Resolve(0, &tracefile.Event{PeerRank: true, Peer: uint64(l.rank)}); err != nil {
		return nil, fmt.Errorf("waitstate: rank %d: %w", l.rank, err)
	} else if ok {
		l.rankLoc = end.Loc
	}
	l.keys = r.keys
	l.makeTrees()
	return l, nil
}

// makeTrees lists this rank's collectives per communicator, in the order
// the post-mortem replay matches them in, and its part of each instance.
func (l *Local) makeTrees() {
	a := l.a
	ops := map[int][]member{}
	for n, d := range a.data {
		for _, op := range d.colls {
			ops[op.comm] = append(ops[op.comm], member{n, op})
		}
	}
	ids := make([]int, 0, len(a.comms[0]))
	for _, c := range a.comms[0] {
		if c >= 0 {
			ids = append(ids, c)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, c := range ids {
		list := ops[c]
		slices.SortStableFunc(list, func(x, y member) int {
			if x.op.start != y.op.start {
				return cmp.Compare(x.op.start, y.op.start)
			}
			return cmp.Compare(x.loc, y.loc)
		})
		// A communicator of one (MPI_COMM_SELF), or one this rank is no
		// member of, has no instance to replay: its collectives are
		// counted as the post-mortem replay counts them.
		members := a.members[c]
		me := slices.Index(members, int32(l.rank))
		if me < 0 || len(members) < 2 {
			l.alone += uint64(len(list))
			continue
		}
		t := &commTree{key: l.keys[c], members: members, me: me, ops: list}
		for _, m := range list {
			ct := newTreeTimes()
			ct.add(m.op.start, m.op.root >= 0 && m.op.root == int64(l.rank), me, a.locs[m.loc].Loc)
			t.times = append(t.times, ct)
		}
		if _, dup := l.treeOf[t.key]; dup {
			// Two keys of one hash (a chance of 2^-64 a pair): the
			// second is not replayed, and its parts go to the first.
			l.alone += uint64(len(list))
			continue
		}
		l.treeOf[t.key] = t
		l.trees = append(l.trees, t)
	}
}

// Outgoing returns this rank's messages of round (0 to Rounds(world)-1),
// by peer world rank.
func (l *Local) Outgoing(round int) (map[int][]byte, error) {
	if round != l.round || l.finished {
		return nil, fmt.Errorf("waitstate: rank %d: round %d asked for, round %d due", l.rank, round, l.round)
	}
	if round >= Rounds(l.world) {
		return l.backOutgoing()
	}
	type msg struct {
		sends []wireSend
		posts []wirePost
		parts []*commTree
		best  bool
	}
	msgs := map[int]*msg{}
	to := func(peer int) *msg {
		m := msgs[peer]
		if m == nil {
			m = &msg{}
			msgs[peer] = m
		}
		return m
	}
	if round == 0 && l.rankLoc >= 0 {
		d := l.a.data[l.rankLoc]
		for i, s := range d.sends {
			if s.peer >= threadPeer {
				continue // to a thread of this rank
			}
			sc := d.calls[s.call]
			m := to(s.peer)
			m.sends = append(m.sends, wireSend{l.keys[s.comm], s.tag, sc.enter, s.time, s.blocking, i})
		}
		for i, q := range d.recvs {
			if q.peer >= threadPeer {
				continue
			}
			m := to(q.peer)
			m.posts = append(m.posts, wirePost{l.keys[q.comm], q.tag, d.calls[q.post].enter, i})
		}
	}
	half := Rounds(l.world) / 2
	// The world's last location, up and down the world's tree.
	if round < half {
		if s := 1 << round; l.rank%(2*s) == s {
			to(l.rank - s).best = true
		}
	} else if s := 1 << (2*half - 1 - round); l.rank%(2*s) == 0 && l.rank+s < l.world {
		to(l.rank + s).best = true
	}
	for _, t := range l.trees {
		if round < half {
			// Up: the member at an odd multiple of s sends its subtree's
			// times to the one s below.
			if s := 1 << round; t.me%(2*s) == s {
				m := to(int(t.members[t.me-s]))
				m.parts = append(m.parts, t)
			}
			continue
		}
		// Down: the instance's times to the member s above.
		if s := 1 << (2*half - 1 - round); t.me%(2*s) == 0 && t.me+s < len(t.members) {
			m := to(int(t.members[t.me+s]))
			m.parts = append(m.parts, t)
		}
	}
	out := make(map[int][]byte, len(msgs))
	for peer, m := range msgs {
		var b wirecodec.Writer
		b.Uvarint(uint64(l.rankLoc + 1))
		b.Uvarint(uint64(len(m.sends)))
		for _, s := range m.sends {
			b.U64(s.comm)
			b.Uvarint(uint64(s.tag))
			b.Varint(s.enter)
			b.Varint(s.time - s.enter)
			b.Bool(s.blocking)
			b.Uvarint(uint64(s.idx))
		}
		b.Uvarint(uint64(len(m.posts)))
		for _, p := range m.posts {
			b.U64(p.comm)
			b.Uvarint(uint64(p.tag))
			b.Varint(p.enter)
			b.Uvarint(uint64(p.idx))
		}
		b.Uvarint(uint64(len(m.parts)))
		for _, t := range m.parts {
			b.U64(t.key)
			b.Uvarint(uint64(len(t.times)))
			for _, ct := range t.times {
				b.Uvarint(uint64(ct.Members))
				b.Varint(ct.Latest)
				b.Varint(ct.Root)
				b.Varint(ct.Earliest)
				for _, v := range [...]int{ct.LateIdx, ct.LateLoc, ct.EarlyIdx, ct.EarlyLoc, ct.RootLoc} {
					b.Uvarint(uint64(v + 1))
				}
			}
		}
		b.Bool(m.best && l.best.ok)
		if m.best && l.best.ok {
			b.Varint(l.best.last)
			b.Uvarint(uint64(l.best.rank))
			b.Uvarint(uint64(l.best.loc))
		}
		out[peer] = b
	}
	return out, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Incoming takes the messages of round from the peers (by world rank);
// after the last round, Finish.
func (l *Local) Incoming(round int, in map[int][]byte) error {
	if round != l.round || l.finished {
		return fmt.Errorf("waitstate: rank %d: messages of round %d, round %d due", l.rank, round, l.round)
	}
	if round >= Rounds(l.world) {
		if err := l.backIncoming(in); err != nil {
			return err
		}
		l.round++
		return nil
	}
	peers := make([]int, 0, len(in))
	for p := range in {
		peers = append(peers, p)
	}
	slices.Sort(peers)
	up := round < Rounds(l.world)/2
	for _, p := range peers {
		if err := l.take(p, in[p], up); err != nil {
			return fmt.Errorf("waitstate: rank %d: round %d: rank %d's message: %w", l.rank, round, p, err)
		}
	}
	l.round++
	return nil
}

// take decodes one peer's message of a round.
func (l *Local) take(peer int, b []byte, up bool) error {
	r := &wireReader{wirecodec.MakeReader(b, 0)}
	if loc := r.small() - 1; r.OK() && loc >= 0 {
		l.peerLoc[peer] = loc
	}
	n := r.records()
	for i := 0; i < n && r.OK(); i++ {
		s := wireSend{comm: r.u64(), tag: uint32(r.uv())}
		s.enter = r.sv()
		s.time = s.enter + r.sv()
		s.blocking = r.byte1() != 0
		s.idx = r.small()
		if r.OK() {
			l.sentTo[peer] = append(l.sentTo[peer], s)
		}
	}
	n = r.records()
	for i := 0; i < n && r.OK(); i++ {
		p := wirePost{comm: r.u64(), tag: uint32(r.uv())}
		p.enter = r.sv()
		p.idx = r.small()
		if r.OK() {
			l.postedBy[peer] = append(l.postedBy[peer], p)
		}
	}
	n = r.records()
	for i := 0; i < n && r.OK(); i++ {
		key := r.u64()
		k := r.records()
		times := make([]treeTimes, 0, k)
		for j := 0; j < k && r.OK(); j++ {
			ct := treeTimes{collTimes: collTimes{Members: r.small()}}
			ct.Latest, ct.Root, ct.Earliest = r.sv(), r.sv(), r.sv()
			ct.LateIdx, ct.LateLoc, ct.EarlyIdx, ct.EarlyLoc, ct.RootLoc = r.small()-1, r.small()-1, r.small()-1, r.small()-1, r.small()-1
			times = append(times, ct)
		}
		if !r.OK() {
			break
		}
		t := l.treeOf[key]
		if t == nil {
			return fmt.Errorf("collective times of a communicator this rank is no member of (key %#x)", key)
		}
		if !up {
			t.times = times
			continue
		}
		for j, ct := range times {
			if j == len(t.times) {
				t.times = append(t.times, newTreeTimes())
			}
			t.times[j].merge(ct)
		}
	}
	if has := r.byte1() != 0; r.OK() && has {
		c := lastLoc{last: r.sv(), ok: true}
		c.rank, c.loc = r.small(), r.small()
		if r.OK() && (up && c.after(l.best) || !up) {
			l.best = c
		}
	}
	if r.OK() && r.Len() > 0 {
		r.fail(fmt.Errorf("%d bytes after the records", r.Len()))
	}
	return r.Err()
}

// endForward replays this rank's waits once the forward rounds are over,
// and readies the backward replay.
func (l *Local) endForward() {
	a, out := l.a, &l.found
	var refs []peerRef // per wait of out.waits: its late party
	// The waits found since refs last grew, whose late party is another
	// rank's location: kind says how it finds its late call.
	refer := func(kind refKind) {
		for i := len(refs); i < len(out.waits); i++ {
			w := &out.waits[i]
			ref := peerRef{rank: -1}
			switch {
			case w.Peer >= 0:
				ref = peerRef{rank: l.rank, loc: a.locs[w.Peer].Loc, kind: refLocal, idx: int(w.lateCall)}
				if w.partner >= 0 && w.partner < threadPeer {
					// A Late Receiver between threads: the sender's key
					// of the receiver, as its sends name it.
					w.partner += threadPeer
				}
			case w.Peer <= -2:
				ref = peerRef{rank: -2 - w.Peer, kind: kind, idx: int(w.lateCall)}
				if loc, ok := l.peerLoc[ref.rank]; ok {
					ref.loc = loc
				} else {
					ref.rank = -1
				}
				w.Peer, w.lateCall = -1, -1
			}
			refs = append(refs, ref)
		}
	}
	// Late Sender on the receiver: its sender's sends to it, per
	// (communicator, tag), in sending order.
	type qkey struct {
		peer int
		comm uint64
		tag  uint32
	}
	sends := map[qkey][]wireSend{}
	for peer, list := range l.sentTo {
		for _, s := range list {
			k := qkey{peer, s.comm, s.tag}
			sends[k] = append(sends[k], s)
		}
	}
	// The messages between this rank's threads, per (sender, receiver,
	// communicator, tag), in sending order: paired here, as post-mortem
	// pairs them, with the sender's calls at hand.
	type tkey struct {
		from, to, comm int
		tag            uint32
	}
	local := map[tkey][]int{}
	for m, d := range a.data {
		for i, s := range d.sends {
			if s.peer >= threadPeer {
				k := tkey{m, s.peer - threadPeer, s.comm, s.tag}
				local[k] = append(local[k], i)
			}
		}
	}
	for n := range a.data {
		a.receives(n, out, func(q *recv) (sentMsg, bool) {
			if q.peer >= threadPeer {
				k := tkey{q.peer - threadPeer, n, q.comm, q.tag}
				list := local[k]
				if len(list) == 0 || k.from >= len(a.data) {
					return sentMsg{}, false
				}
				local[k] = list[1:]
				sd := a.data[k.from]
				s := sd.sends[list[0]]
				sc := sd.calls[s.call]
				return sentMsg{enter: sc.enter, leave: sc.leave, time: s.time, blocking: s.blocking, loc: k.from, call: s.call}, true
			}
			if n != l.rankLoc {
				// Messages by rank are the rank location's: a peer's
				// sends are paired with its receives only, as post-mortem.
				return sentMsg{}, false
			}
			k := qkey{q.peer, l.keys[q.comm], q.tag}
			list := sends[k]
			if len(list) == 0 {
				return sentMsg{}, false
			}
			s := list[0]
			sends[k] = list[1:]
			// The late party as -2 - its rank, and its send by its place
			// among the sender's: refer resolves them.
			return sentMsg{enter: s.enter, time: s.time, blocking: s.blocking, loc: -2 - q.peer, call: int32(s.idx)}, true
		})
		refer(refSend)
	}
	// Late Receiver on the sender: its blocking sends, each paired with
	// the receiver's k-th receive of the same key.
	if l.rankLoc >= 0 {
		posts := map[qkey][]wirePost{}
		for peer, list := range l.postedBy {
			for _, p := range list {
				k := qkey{peer, p.comm, p.tag}
				posts[k] = append(posts[k], p)
			}
		}
		n := l.rankLoc
		d := a.data[n]
		for _, s := range d.sends {
			if s.peer >= threadPeer {
				continue // paired by its receiver, above
			}
			k := qkey{s.peer, l.keys[s.comm], s.tag}
			list := posts[k]
			if len(list) == 0 {
				continue
			}
			post := list[0]
			posts[k] = list[1:]
			if !s.blocking {
				continue
			}
			sc := d.calls[s.call]
			if idle := lateReceiverWait(sc.enter, sc.leave, post.enter); idle > 0 {
				out.waits = append(out.waits, wait{Pattern: LateReceiver, Path: a.path(n, s.call),
					Loc: n, Start: sc.enter, Time: idle, Peer: -2 - s.peer, lateCall: int32(post.idx), call: s.call, partner: s.peer})
			}
		}
		refer(refRecv)
	}
	// The collectives, with every instance's times.
	refer(refLocal)
	out.colls += l.alone
	for _, t := range l.trees {
		for j, ct := range t.times {
			if ct.Members != len(t.members) {
				if t.me == 0 {
					out.colls++ // counted once, by the first member
				}
				continue
			}
			if j >= len(t.ops) {
				continue
			}
			m := t.ops[j]
			c := a.data[m.loc].calls[m.op.call]
			p, idle, ok := collWait(&m.op, c, m.op.root >= 0 && m.op.root == int64(l.rank), &ct.collTimes)
			if !ok {
				continue
			}
			late, lateLoc := ct.LateIdx, ct.LateLoc
			switch p {
			case LateBroadcast:
				late, lateLoc = slices.Index(t.members, int32(m.op.root)), ct.RootLoc
			case EarlyReduce:
				late, lateLoc = ct.EarlyIdx, ct.EarlyLoc
			}
			ref := peerRef{rank: -1}
			if late >= 0 && late < len(t.members) && lateLoc >= 0 {
				ref = peerRef{rank: int(t.members[late]), loc: lateLoc, kind: refColl, key: t.key, idx: j}
			}
			out.waits = append(out.waits, wait{Pattern: p, Path: a.path(m.loc, m.op.call), Loc: m.loc,
				Start: c.enter, Time: idle, Peer: -1, lateCall: -1, call: m.op.call, partner: commPartner(m.op.comm)})
			refs = append(refs, ref)
		}
	}
	a.openmp(out)
	refer(refLocal)
	for _, d := range a.data {
		l.total += d.last - d.first
		l.sends += uint64(len(d.sends))
		l.unresolved += d.unresolved
	}
	l.why = l.newBackward(refs)
}

// Finish ends this rank's replay once no rank has anything more to send
// and returns its part of the run's.
func (l *Local) Finish() (*InSitu, error) {
	if l.round <= Rounds(l.world) || l.finished {
		return nil, fmt.Errorf("waitstate: rank %d: finished after %d rounds, %d at least", l.rank, l.round, Rounds(l.world)+1)
	}
	l.finished = true
	a, out := l.a, &l.found
	res := &Result{}
	// The locations as the post-mortem replay lists them, whose files are
	// the ranks'.
	locs := slices.Clone(a.locs)
	for i := range locs {
		locs[i].File = l.rank
	}
	h := &a.files[0].Header
	part := &InSitu{Locations: locs, Synced: len(h.ClockSync) > 0, Values: a.sumWaits(res, l.why.waits[:l.why.own]),
		OriginWall: h.StartWall.UnixNano(), OriginSync: min(0, a.files[0].GlobalNanos(h.StartTicks>>h.TimerShift)),
		Matched: out.matched, UnmatchedRecvs: out.unmatchedRecvs, UnmatchedCollectives: out.colls, ClockViolations: out.clock,
		Total: l.total, Sends: l.sends, Unresolved: l.unresolved}
	if err := l.why.finish(part); err != nil {
		return nil, err
	}
	part.Paths = a.tree
	return part, nil
}

// InSitu is the wait states of some ranks of a run, replayed in-situ: one
// rank's part, or the run's once merged. It holds what Result holds: the
// patterns' values per (call path, location), the critical path, the
// delays and delay costs, and the longest waits; a location of another
// part is named by its rank and its index in its file until Result.
type InSitu struct {
	Locations []Location `json:"locations"`
	Paths     []CallPath `json:"paths"`
	Values    []Value    `json:"values"`
	Total     int64      `json:"total_ns"` // the locations' times summed, ns
	Synced    bool       `json:"synced"`   // every rank's clock was synchronised
	// Sends counts the messages sent, Matched those paired with their
	// receive; the rest as Result's.
	Sends                uint64 `json:"sends"`
	Matched              uint64 `json:"matched"`
	UnmatchedRecvs       uint64 `json:"unmatched_receives"`
	UnmatchedCollectives uint64 `json:"unmatched_collectives"`
	Unresolved           uint64 `json:"unresolved"`
	ClockViolations      uint64 `json:"clock_violations"`

	// The backward replay's, as Result's: Delays, DelayCosts, the
	// unexplained waiting time per late location (summed by Result in
	// location order, as post-mortem), the candidates for the longest
	// waits, and the critical path's part of each rank with the regions'
	// exclusive times for its imbalance.
	Delays      []Value      `json:"delays,omitempty"`
	DelayCosts  []inSituCost `json:"delay_costs,omitempty"`
	Unexplained []float64    `json:"unexplained_ns,omitempty"`
	Worst       []inSituWait `json:"worst,omitempty"`
	Path        *inSituPath  `json:"critical_path,omitempty"`
	Exclusive   []RegionNs   `json:"exclusive,omitempty"`
	// DelayIncomplete counts the waits whose cost never reached their late
	// party (its waiting rank failed): their delay costs are missing.
	DelayIncomplete uint64 `json:"delay_incomplete,omitempty"`
	// The origin of the run's axis (tracefile.Axis), the earliest of the
	// ranks': the wall-clock start without synchronised clocks, else the
	// reference clock's zero or the earliest start before it, ns. The
	// times of the worst waits and the critical path are on it.
	OriginWall int64 `json:"origin_wall_ns"`
	OriginSync int64 `json:"origin_sync_ns"`
}

// inSituCost is a DelayCost with its pattern, which DelayCost's JSON
// leaves to the list it is in.
type inSituCost struct {
	Pattern Pattern `json:"pattern"`
	DelayCost
}

func (c inSituCost) cost() DelayCost {
	d := c.DelayCost
	d.Pattern = c.Pattern
	return d
}

// inSituWait is one of the longest waits of a rank, its late party (and
// the location of its Delay) by rank and index in its file; Since tells
// whether its Delay's Since is a time (before the axis's origin is taken
// off, -1 may be one).
type inSituWait struct {
	Instance
	PeerRank  int  `json:"peer_rank"`
	PeerLoc   int  `json:"peer_loc"`
	DelayRank int  `json:"delay_rank"`
	Since     bool `json:"since,omitempty"`
}

// inSituPath is a rank's part of the critical path: its time per (call
// path, location), and the path's end (where it starts, the last
// location) or start (where the walk ended), when they are this rank's.
type inSituPath struct {
	Values   []PathTime `json:"values"`
	HasEnd   bool       `json:"has_end"`
	End      int64      `json:"end_ns"`
	LastRank int        `json:"last_rank"`
	LastLoc  int        `json:"last_loc"`
	HasStart bool       `json:"has_start"`
	Start    int64      `json:"start_ns"`
	Hops     int        `json:"hops"`
}

// RegionNs is a region's time, ns.
type RegionNs struct {
	Region string `json:"region"`
	Ns     int64  `json:"ns"`
}

// Merge adds o, the part of ranks after s's, to s.
func (s *InSitu) Merge(o *InSitu) {
	if len(s.Locations) == 0 && len(s.Paths) == 0 && len(s.Values) == 0 && s.Total == 0 {
		s.Synced = o.Synced
	} else {
		s.Synced = s.Synced && o.Synced
	}
	idx := make(map[treeKey]int, len(s.Paths))
	for i, p := range s.Paths {
		idx[treeKey{p.Parent, p.Region}] = i
	}
	remap := make([]int, len(o.Paths))
	for i, p := range o.Paths {
		parent := -1
		if p.Parent >= 0 && p.Parent < i {
			parent = remap[p.Parent]
		}
		k := treeKey{parent, p.Region}
		id, ok := idx[k]
		if !ok {
			id = len(s.Paths)
			idx[k] = id
			s.Paths = append(s.Paths, CallPath{Parent: parent, Region: p.Region})
		}
		remap[i] = id
	}
	path := func(p int) int {
		if p >= 0 && p < len(remap) {
			return remap[p]
		}
		return p
	}
	base := len(s.Locations)
	s.Locations = append(s.Locations, o.Locations...)
	// Each list is s's, sorted, then o's, moved to s's paths and
	// locations: o's alone is sorted (its order changes only where the
	// remap reorders its paths) and the two merged in one pass, so that a
	// merge costs the result's length, not its length's log more, at the
	// root of a large run. o's locations follow all of s's, so no element
	// of o's compares equal to one of s's and the merge gives what sorting
	// the whole did.
	values := make([]Value, 0, len(o.Values)+len(o.Delays))
	for _, v := range o.Values {
		v.Path = path(v.Path)
		v.Loc += base
		values = append(values, v)
	}
	s.Values = mergeRuns(s.Values, values, compareValue, sameValueRun)
	s.Total += o.Total
	s.Sends += o.Sends
	s.Matched += o.Matched
	s.UnmatchedRecvs += o.UnmatchedRecvs
	s.UnmatchedCollectives += o.UnmatchedCollectives
	s.Unresolved += o.Unresolved
	s.ClockViolations += o.ClockViolations

	values = values[:0]
	for _, v := range o.Delays {
		v.Loc += base
		values = append(values, v)
	}
	s.Delays = mergeRuns(s.Delays, values, compareValue, sameValueRun)
	costs := make([]inSituCost, 0, len(o.DelayCosts))
	for _, c := range o.DelayCosts {
		c.Path = path(c.Path)
		c.Loc += base
		costs = append(costs, c)
	}
	s.DelayCosts = mergeRuns(s.DelayCosts, costs, compareInSituCost, sameCostRun)
	// Parts without the backward replay's (of an older version) count
	// their locations' unexplained time as 0.
	for len(s.Unexplained) < base {
		s.Unexplained = append(s.Unexplained, 0)
	}
	s.Unexplained = append(s.Unexplained[:base], o.Unexplained...)
	worst := make([]inSituWait, 0, len(o.Worst))
	for _, w := range o.Worst {
		w.Path = path(w.Path)
		w.Loc += base
		worst = append(worst, w)
	}
	s.Worst = mergeRuns(s.Worst, worst, compareInSituWait, nil)
	if len(s.Worst) > DefaultWorst {
		s.Worst = s.Worst[:DefaultWorst]
	}
	if o.Path != nil {
		if s.Path == nil {
			s.Path = &inSituPath{}
		}
		times := make([]PathTime, 0, len(o.Path.Values))
		for _, v := range o.Path.Values {
			v.Path = path(v.Path)
			v.Loc += base
			times = append(times, v)
		}
		s.Path.Values = mergeRuns(s.Path.Values, times, comparePathTime, samePathRun)
		if o.Path.HasEnd {
			s.Path.HasEnd, s.Path.End, s.Path.LastRank, s.Path.LastLoc = true, o.Path.End, o.Path.LastRank, o.Path.LastLoc
		}
		if o.Path.HasStart {
			s.Path.HasStart, s.Path.Start, s.Path.Hops = true, o.Path.Start, o.Path.Hops
		}
	}
	s.Exclusive = addExclusive(s.Exclusive, o.Exclusive)
	s.DelayIncomplete += o.DelayIncomplete
	if base == 0 {
		s.OriginWall, s.OriginSync = o.OriginWall, o.OriginSync
	} else {
		s.OriginWall, s.OriginSync = min(s.OriginWall, o.OriginWall), min(s.OriginSync, o.OriginSync)
	}
}

// compareInSituCost orders as compareDelayCost the costs with their
// patterns (not the embedded DelayCost's, which the wire leaves 0),
// without copying them out.
func compareInSituCost(x, y inSituCost) int {
	if x.Pattern != y.Pattern {
		return cmp.Compare(x.Pattern, y.Pattern)
	}
	return compareCostPlace(&x.DelayCost, &y.DelayCost)
}

func compareInSituWait(x, y inSituWait) int { return compareInstance(x.Instance, y.Instance) }

// mergeRuns returns a and b merged in cmp's order, in a's array when it
// has room. Either is sorted first if it is not (a part made by hand,
// or o's list once its paths are remapped: sortRuns); b is the caller's
// to reorder. The elements of a that tie with one of b come first, as
// a stable sort of a then b orders them.
func mergeRuns[T any](a, b []T, cmp func(x, y T) int, same func(x, y T) bool) []T {
	if !slices.IsSortedFunc(a, cmp) {
		slices.SortFunc(a, cmp)
	}
	if len(b) == 0 {
		return a
	}
	return mergeSorted(a, sortRuns(b, cmp, same), cmp)
}

// sortRuns returns b sorted. b is o's list with its paths remapped: runs
// of elements that share every key of cmp but the location (same), each
// run in order, the runs out of order where the remap swapped two paths.
// So it moves whole runs, ordered by their first elements, which costs
// b's length and the runs' sort, not b's sort; and sorts b whole if the
// runs were not in order themselves (a part made by hand), or when same
// is nil.
func sortRuns[T any](b []T, cmp func(x, y T) int, same func(x, y T) bool) []T {
	if slices.IsSortedFunc(b, cmp) {
		return b
	}
	if same == nil {
		slices.SortFunc(b, cmp)
		return b
	}
	n := 1
	for i := 1; i < len(b); i++ {
		if !same(b[i-1], b[i]) {
			n++
		}
	}
	runs := make([][2]int, 0, n)
	for i := 0; i < len(b); {
		j := i + 1
		for j < len(b) && same(b[j-1], b[j]) {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	slices.SortStableFunc(runs, func(x, y [2]int) int { return cmp(b[x[0]], b[y[0]]) })
	out := make([]T, 0, len(b))
	for _, r := range runs {
		out = append(out, b[r[0]:r[1]]...)
	}
	if !slices.IsSortedFunc(out, cmp) {
		slices.SortFunc(out, cmp)
	}
	return out
}

// The runs of sortRuns: the elements that differ at most by location.
func sameValueRun(x, y Value) bool {
	return x.Pattern == y.Pattern && x.Region == y.Region && x.Path == y.Path
}

func sameCostRun(x, y inSituCost) bool {
	return x.Pattern == y.Pattern && x.LongTerm == y.LongTerm && x.Path == y.Path
}

func samePathRun(x, y PathTime) bool { return x.Path == y.Path }

// mergeSorted returns the sorted a and b merged, a's elements before
// b's equal ones. It fills a's array from its end: an element of a moves
// only past the elements of b that follow it, never over one of a not yet
// moved, and the elements of a before all of b's stay where they are.
func mergeSorted[T any](a, b []T, cmp func(x, y T) int) []T {
	n := len(a)
	out := slices.Grow(a, len(b))[:n+len(b)]
	i, j := n-1, len(b)-1
	for k := len(out) - 1; j >= 0; k-- {
		if i >= 0 && cmp(out[i], b[j]) > 0 {
			out[k] = out[i]
			i--
		} else {
			out[k] = b[j]
			j--
		}
	}
	return out
}

// addExclusive adds the exclusive times of o to s's, by region: both
// sorted by region, each region once (s's are put so first if they are
// not, as the map of regions did).
func addExclusive(s, o []RegionNs) []RegionNs {
	byRegion := func(x, y RegionNs) int { return cmp.Compare(x.Region, y.Region) }
	s = sumRegions(s, byRegion)
	if len(o) == 0 {
		return s
	}
	if !regionsOnce(o) {
		o = sumRegions(slices.Clone(o), byRegion)
	}
	// The regions of o that s has are added in place; the others are
	// merged in.
	var add []RegionNs
	i := 0
	for _, e := range o {
		for i < len(s) && s[i].Region < e.Region {
			i++
		}
		if i < len(s) && s[i].Region == e.Region {
			s[i].Ns += e.Ns
		} else {
			add = append(add, e)
		}
	}
	if len(add) == 0 {
		return s
	}
	return mergeSorted(s, add, byRegion)
}

// regionsOnce tells whether es is sorted by region, each once.
func regionsOnce(es []RegionNs) bool {
	for i := 1; i < len(es); i++ {
		if es[i-1].Region >= es[i].Region {
			return false
		}
	}
	return true
}

// sumRegions sorts es by region and sums the times of a region that is
// in it more than once, in place.
func sumRegions(es []RegionNs, byRegion func(x, y RegionNs) int) []RegionNs {
	if regionsOnce(es) {
		return es
	}
	slices.SortFunc(es, byRegion)
	out := es[:0]
	for _, e := range es {
		if len(out) > 0 && out[len(out)-1].Region == e.Region {
			out[len(out)-1].Ns += e.Ns
		} else {
			out = append(out, e)
		}
	}
	return out
}

// Result returns s as a Result, for the renderers.
func (s *InSitu) Result() *Result {
	r := &Result{Locations: s.Locations, Paths: s.Paths, Values: s.Values, Total: s.Total, Synced: s.Synced,
		UnmatchedSends: s.Sends - min(s.Matched, s.Sends), UnmatchedRecvs: s.UnmatchedRecvs, UnmatchedCollectives: s.UnmatchedCollectives,
		Unresolved: s.Unresolved, ClockViolations: s.ClockViolations, Delays: s.Delays, DelayUnexplained: sumUnexplained(s.Unexplained),
		DelayIncomplete: s.DelayIncomplete}
	for _, v := range s.Values {
		if v.Pattern < NumPatterns {
			r.Totals[v.Pattern] += v.Time
			r.Counts[v.Pattern] += v.Count
		}
	}
	for _, c := range s.DelayCosts {
		r.DelayCosts = append(r.DelayCosts, c.cost())
	}
	// Another part's location by its rank and index in its file.
	at := make(map[[2]int]int, len(s.Locations))
	for i, lo := range s.Locations {
		at[[2]int{lo.Rank, lo.Loc}] = i
	}
	locOf := func(rank, loc int) int {
		if i, ok := at[[2]int{rank, loc}]; ok {
			return i
		}
		return -1
	}
	origin := s.OriginSync
	if !s.Synced {
		origin = s.OriginWall
	}
	for _, w := range s.Worst {
		inst := w.Instance
		inst.Peer = locOf(w.PeerRank, w.PeerLoc)
		inst.Start -= origin
		if inst.Delay != nil {
			d := *inst.Delay
			d.Loc = locOf(w.DelayRank, d.Loc)
			if w.Since {
				d.Since -= origin
			} else {
				d.Since = -1
			}
			inst.Delay = &d
		}
		r.Worst = append(r.Worst, inst)
	}
	if p := s.Path; p != nil && p.HasEnd {
		cp := &CriticalPath{End: p.End - origin, Start: p.Start - origin, Last: locOf(p.LastRank, p.LastLoc), Hops: p.Hops, Values: p.Values}
		cp.Length = cp.End - cp.Start
		onPath := map[string]int64{}
		for _, v := range p.Values {
			onPath[v.Region] += v.Time
		}
		total := map[string]int64{}
		for _, e := range s.Exclusive {
			if _, ok := onPath[e.Region]; ok {
				total[e.Region] += e.Ns
			}
		}
		cp.Regions = imbalanceOf(onPath, total, s.Values, len(s.Locations))
		r.CriticalPath = cp
	}
	return r
}

// EncodeInSitu returns s in the form of an archive's results section.
func EncodeInSitu(s *InSitu) ([]byte, error) { return json.Marshal(s) }

// DecodeInSitu reads what EncodeInSitu wrote, checking its indices.
func DecodeInSitu(b []byte) (*InSitu, error) {
	var s InSitu
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("waitstate: the in-situ wait states: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check checks the indices of s, as read.
func (s *InSitu) check() error {
	for i, p := range s.Paths {
		if p.Parent < -1 || p.Parent >= i {
			return fmt.Errorf("waitstate: the in-situ wait states: call path %d has parent %d", i, p.Parent)
		}
	}
	bad := func(what string, v any) error {
		return fmt.Errorf("waitstate: the in-situ wait states: %s %+v out of range (%d locations, %d call paths)", what, v, len(s.Locations), len(s.Paths))
	}
	loc := func(l int) bool { return l >= 0 && l < len(s.Locations) }
	path := func(p int) bool { return p >= -1 && p < len(s.Paths) }
	for _, v := range s.Values {
		if v.Pattern >= NumPatterns || !loc(v.Loc) || !path(v.Path) || v.Time < 0 {
			return bad("a value", v)
		}
	}
	for _, v := range s.Delays {
		if v.Pattern >= NumPatterns || !loc(v.Loc) || v.Time < 0 {
			return bad("a delay", v)
		}
	}
	for _, c := range s.DelayCosts {
		if c.Pattern >= NumPatterns || !loc(c.Loc) || c.Path < 0 || c.Path >= len(s.Paths) {
			return bad("a delay cost", c)
		}
	}
	for _, w := range s.Worst {
		if w.Pattern >= NumPatterns || !loc(w.Loc) || !path(w.Path) {
			return bad("a worst wait", w)
		}
	}
	if s.Path != nil {
		for _, v := range s.Path.Values {
			if !loc(v.Loc) || v.Path < 0 || v.Path >= len(s.Paths) {
				return bad("a time on the critical path", v)
			}
		}
	}
	if len(s.Unexplained) > len(s.Locations) {
		return bad("the unexplained times of locations", len(s.Unexplained))
	}
	return nil
}
