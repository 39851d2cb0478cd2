package waitstate

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"

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
// The exchange runs in Rounds(world) rounds of point-to-point messages
// (the cshim driver says how): round 0 carries the messages' times and the
// first tree level, rounds up to half of them the levels up the trees,
// the others the levels down. A rank sends one message per peer and round
// at most, to the peers it talked to or its tree neighbours: no rank holds
// anything of size world², and each communicator's tree has log2 of its
// size levels.
//
// The critical path and the delay costs need the windows of every wait on
// the late party, which the post-mortem replay's second pass reads: they
// stay post-mortem, as do the worst waits and the late party's regions.
// Messages between the threads of a process (by location, not by rank)
// are not replayed in-situ.

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
}

// wireSend is a send as its receiver learns it.
type wireSend struct {
	comm        uint64
	tag         uint32
	enter, time int64
	blocking    bool
}

// wirePost is a receive as its sender learns it: the enter of the call
// that posted it.
type wirePost struct {
	comm  uint64
	tag   uint32
	enter int64
}

// commTree is a communicator this rank replays collectives on with its
// other members.
type commTree struct {
	key     uint64
	members []int32 // world ranks, in the communicator's rank order
	me      int     // this rank's index in members
	ops     []member
	times   []collTimes // this subtree's, then (after the rounds down) the instance's
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
	l := &Local{a: a, rank: f.Header.Rank, world: world, rankLoc: -1, sentTo: map[int][]wireSend{}, postedBy: map[int][]wirePost{}, treeOf: map[uint64]*commTree{}}
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
			ct := newCollTimes()
			ct.add(m.op.start, m.op.root >= 0 && m.op.root == int64(l.rank))
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
	if round != l.round || round >= Rounds(l.world) {
		return nil, fmt.Errorf("waitstate: rank %d: round %d asked for, round %d of %d due", l.rank, round, l.round, Rounds(l.world))
	}
	type msg struct {
		sends []wireSend
		posts []wirePost
		parts []*commTree
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
		for _, s := range d.sends {
			sc := d.calls[s.call]
			m := to(s.peer)
			m.sends = append(m.sends, wireSend{l.keys[s.comm], s.tag, sc.enter, s.time, s.blocking})
		}
		for _, q := range d.recvs {
			m := to(q.peer)
			m.posts = append(m.posts, wirePost{l.keys[q.comm], q.tag, d.calls[q.post].enter})
		}
	}
	half := Rounds(l.world) / 2
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
		var b []byte
		b = binary.AppendUvarint(b, uint64(len(m.sends)))
		for _, s := range m.sends {
			b = binary.LittleEndian.AppendUint64(b, s.comm)
			b = binary.AppendUvarint(b, uint64(s.tag))
			b = binary.AppendVarint(b, s.enter)
			b = binary.AppendVarint(b, s.time-s.enter)
			b = append(b, boolByte(s.blocking))
		}
		b = binary.AppendUvarint(b, uint64(len(m.posts)))
		for _, p := range m.posts {
			b = binary.LittleEndian.AppendUint64(b, p.comm)
			b = binary.AppendUvarint(b, uint64(p.tag))
			b = binary.AppendVarint(b, p.enter)
		}
		b = binary.AppendUvarint(b, uint64(len(m.parts)))
		for _, t := range m.parts {
			b = binary.LittleEndian.AppendUint64(b, t.key)
			b = binary.AppendUvarint(b, uint64(len(t.times)))
			for _, ct := range t.times {
				b = binary.AppendUvarint(b, uint64(ct.Members))
				b = binary.AppendVarint(b, ct.Latest)
				b = binary.AppendVarint(b, ct.Root)
				b = binary.AppendVarint(b, ct.Earliest)
			}
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
	if round != l.round || round >= Rounds(l.world) {
		return fmt.Errorf("waitstate: rank %d: messages of round %d, round %d of %d due", l.rank, round, l.round, Rounds(l.world))
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

// errShort is a message that ends inside a record.
var errShort = errors.New("ends inside a record")

// take decodes one peer's message of a round.
func (l *Local) take(peer int, b []byte, up bool) error {
	uv := func() (uint64, error) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, errShort
		}
		b = b[k:]
		return v, nil
	}
	sv := func() (int64, error) {
		v, k := binary.Varint(b)
		if k <= 0 {
			return 0, errShort
		}
		b = b[k:]
		return v, nil
	}
	u64 := func() (uint64, error) {
		if len(b) < 8 {
			return 0, errShort
		}
		v := binary.LittleEndian.Uint64(b)
		b = b[8:]
		return v, nil
	}
	var err error
	must := func(v uint64, e error) uint64 {
		if err == nil {
			err = e
		}
		return v
	}
	mustS := func(v int64, e error) int64 {
		if err == nil {
			err = e
		}
		return v
	}
	// A count is bounded by the bytes left: every record takes one at least.
	count := func() int {
		if err != nil {
			return 0
		}
		n := must(uv())
		if err == nil && n > uint64(len(b)) {
			err = fmt.Errorf("%d records in %d bytes", n, len(b))
		}
		if err != nil {
			return 0
		}
		return int(n)
	}
	n := count()
	for i := 0; i < n && err == nil; i++ {
		s := wireSend{comm: must(u64()), tag: uint32(must(uv()))}
		s.enter = mustS(sv())
		s.time = s.enter + mustS(sv())
		if err == nil && len(b) == 0 {
			err = errShort
		}
		if err == nil {
			s.blocking, b = b[0] != 0, b[1:]
			l.sentTo[peer] = append(l.sentTo[peer], s)
		}
	}
	n = count()
	for i := 0; i < n && err == nil; i++ {
		p := wirePost{comm: must(u64()), tag: uint32(must(uv()))}
		p.enter = mustS(sv())
		if err == nil {
			l.postedBy[peer] = append(l.postedBy[peer], p)
		}
	}
	n = count()
	for i := 0; i < n && err == nil; i++ {
		key := must(u64())
		k := count()
		times := make([]collTimes, 0, k)
		for j := 0; j < k && err == nil; j++ {
			ct := collTimes{Members: int(must(uv()))}
			ct.Latest, ct.Root, ct.Earliest = mustS(sv()), mustS(sv()), mustS(sv())
			times = append(times, ct)
		}
		if err != nil {
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
				t.times = append(t.times, newCollTimes())
			}
			t.times[j].merge(ct)
		}
	}
	if err == nil && len(b) > 0 {
		err = fmt.Errorf("%d bytes after the records", len(b))
	}
	return err
}

// Finish replays this rank's waits once the rounds are over and returns
// its part of the run's.
func (l *Local) Finish() (*InSitu, error) {
	if l.round != Rounds(l.world) || l.finished {
		return nil, fmt.Errorf("waitstate: rank %d: finished after %d of %d rounds", l.rank, l.round, Rounds(l.world))
	}
	l.finished = true
	a, out := l.a, &l.found
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
	for n := range a.data {
		if n != l.rankLoc {
			// Messages by rank are the rank location's: a peer's sends
			// are paired with its receives only, as post-mortem.
			a.receives(n, out, func(*recv) (sentMsg, bool) { return sentMsg{}, false })
			continue
		}
		a.receives(n, out, func(q *recv) (sentMsg, bool) {
			k := qkey{q.peer, l.keys[q.comm], q.tag}
			list := sends[k]
			if len(list) == 0 {
				return sentMsg{}, false
			}
			s := list[0]
			sends[k] = list[1:]
			return sentMsg{enter: s.enter, time: s.time, blocking: s.blocking, loc: -1, call: -1}, true
		})
	}
	// Late Receiver on the sender: its blocking sends, each paired with
	// the receiver's k-th receive of the same key.
	if l.rankLoc >= 0 {
		posts := map[qkey][]int64{}
		for peer, list := range l.postedBy {
			for _, p := range list {
				k := qkey{peer, p.comm, p.tag}
				posts[k] = append(posts[k], p.enter)
			}
		}
		n := l.rankLoc
		d := a.data[n]
		for _, s := range d.sends {
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
			if idle := lateReceiverWait(sc.enter, sc.leave, post); idle > 0 {
				out.waits = append(out.waits, wait{Instance: Instance{Pattern: LateReceiver, Region: a.regionName(n, s.call), Path: a.path(n, s.call),
					Loc: n, Start: sc.enter, Time: idle, Peer: -1}, lateCall: -1, call: s.call, partner: s.peer})
			}
		}
	}
	// The collectives, with every instance's times.
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
			p, idle, ok := collWait(&m.op, c, m.op.root >= 0 && m.op.root == int64(l.rank), &ct)
			if !ok {
				continue
			}
			out.waits = append(out.waits, wait{Instance: Instance{Pattern: p, Region: a.regionName(m.loc, m.op.call), Path: a.path(m.loc, m.op.call), Loc: m.loc,
				Start: c.enter, Time: idle, Peer: -1}, lateCall: -1, call: m.op.call, partner: commPartner(m.op.comm)})
		}
	}
	a.openmp(out)

	res := &Result{}
	// The locations as the post-mortem replay lists them, whose files are
	// the ranks'.
	locs := slices.Clone(a.locs)
	for i := range locs {
		locs[i].File = l.rank
	}
	part := &InSitu{Locations: locs, Paths: a.tree, Synced: len(a.files[0].Header.ClockSync) > 0, Values: sumWaits(res, out.waits),
		Matched: out.matched, UnmatchedRecvs: out.unmatchedRecvs, UnmatchedCollectives: out.colls, ClockViolations: out.clock}
	for _, d := range a.data {
		part.Total += d.last - d.first
		part.Sends += uint64(len(d.sends))
		part.Unresolved += d.unresolved
	}
	return part, nil
}

// InSitu is the wait states of some ranks of a run, replayed in-situ: one
// rank's part, or the run's once merged. It holds the patterns' values
// per (call path, location); the critical path, the delays and the worst
// waits are the post-mortem replay's.
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
	base := len(s.Locations)
	s.Locations = append(s.Locations, o.Locations...)
	for _, v := range o.Values {
		if v.Path >= 0 && v.Path < len(remap) {
			v.Path = remap[v.Path]
		}
		v.Loc += base
		s.Values = append(s.Values, v)
	}
	slices.SortFunc(s.Values, compareValue)
	s.Total += o.Total
	s.Sends += o.Sends
	s.Matched += o.Matched
	s.UnmatchedRecvs += o.UnmatchedRecvs
	s.UnmatchedCollectives += o.UnmatchedCollectives
	s.Unresolved += o.Unresolved
	s.ClockViolations += o.ClockViolations
}

// Result returns s as a Result, for the renderers: without critical path,
// delays and worst waits.
func (s *InSitu) Result() *Result {
	r := &Result{Locations: s.Locations, Paths: s.Paths, Values: s.Values, Total: s.Total, Synced: s.Synced,
		UnmatchedSends: s.Sends - min(s.Matched, s.Sends), UnmatchedRecvs: s.UnmatchedRecvs, UnmatchedCollectives: s.UnmatchedCollectives,
		Unresolved: s.Unresolved, ClockViolations: s.ClockViolations}
	for _, v := range s.Values {
		if v.Pattern < NumPatterns {
			r.Totals[v.Pattern] += v.Time
			r.Counts[v.Pattern] += v.Count
		}
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
	for i, p := range s.Paths {
		if p.Parent < -1 || p.Parent >= i {
			return nil, fmt.Errorf("waitstate: the in-situ wait states: call path %d has parent %d", i, p.Parent)
		}
	}
	for _, v := range s.Values {
		if v.Pattern >= NumPatterns || v.Loc < 0 || v.Loc >= len(s.Locations) || v.Path < -1 || v.Path >= len(s.Paths) || v.Time < 0 {
			return nil, fmt.Errorf("waitstate: the in-situ wait states: a value %+v out of range (%d locations, %d call paths)", v, len(s.Locations), len(s.Paths))
		}
	}
	return &s, nil
}
