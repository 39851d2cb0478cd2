package waitstate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// DefaultWorst is the number of worst waits a Result keeps by default.
const DefaultWorst = 20

// Options tunes Analyze.
type Options struct {
	// Procs is the number of workers: 0 for HMB_TOOL_PROCS or GOMAXPROCS,
	// 1 for the sequential path. The result is the same for any number.
	Procs int
	// Worst is the number of longest waits to keep (0: DefaultWorst, < 0:
	// none).
	Worst int
}

// Analyze replays the communication of files, the ranks of one run (or one
// process's file), and returns their wait states.
func Analyze(files []*tracefile.File, opt Options) (*Result, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("waitstate: no trace files")
	}
	procs, err := parallel.Procs(opt.Procs)
	if err != nil {
		return nil, fmt.Errorf("waitstate: %w", err)
	}
	worst := opt.Worst
	if worst == 0 {
		worst = DefaultWorst
	}
	r, err := newRun(files)
	if err != nil {
		return nil, fmt.Errorf("waitstate: %w", err)
	}
	r.keepLog = true // the second pass sweeps the enters and leaves again
	r.logLeft.Store(logBudget)
	data := make([]*locData, len(r.locs))
	if err := parallel.Do(procs, len(r.locs), func(n int) error {
		d, err := r.read(n)
		data[n] = d
		return err
	}); err != nil {
		return nil, fmt.Errorf("waitstate: %w", err)
	}
	a := &analysis{run: r, data: data}
	a.indexSends()
	a.unifyPaths()

	// The receivers replay their messages in parallel; each keeps what it
	// found in its own slot, summed up in location order after. A receiver
	// appends its waits to a scratch list that the next receiver of the
	// same worker reuses, and keeps an exact copy: grown from nothing per
	// location, the lists and their copies were a fifth of the bytes the
	// replay allocated on a halo run, and the collector's work with them.
	found := make([]findings, len(r.locs))
	scratch := make(chan []wait, procs) // at most procs receivers run at once
	if err := parallel.Do(procs, len(r.locs), func(n int) error {
		var buf []wait
		select {
		case buf = <-scratch:
		default:
		}
		f := &found[n]
		f.waits = buf[:0]
		a.receiver(n, f)
		buf, f.waits = f.waits, slices.Clone(f.waits)
		scratch <- buf
		return nil
	}); err != nil {
		return nil, err
	}
	a.sends = nil // the receivers are done with it: let it go
	// A member's operation waits at most once: the collectives' and
	// barriers' waits are sized once rather than grown by copying.
	ops := 0
	for _, d := range data {
		ops += len(d.colls) + len(d.omp)
	}
	extra := findings{waits: make([]wait, 0, ops)}
	a.collectives(&extra)
	a.openmp(&extra)

	res := &Result{Locations: r.locs, Synced: r.axis.Synced(), Paths: a.tree}
	var sends, matched uint64
	for n, d := range data {
		res.Total += d.last - d.first
		res.Unresolved += d.unresolved
		sends += uint64(len(d.sends))
		matched += found[n].matched
	}
	res.UnmatchedSends = sends - min(matched, sends)
	found = append(found, extra)
	n := 0
	for _, f := range found {
		n += len(f.waits)
	}
	waits := make([]wait, 0, n)
	for i, f := range found {
		res.UnmatchedRecvs += f.unmatchedRecvs
		res.UnmatchedCollectives += f.colls
		res.ClockViolations += f.clock
		waits = append(waits, f.waits...)
		found[i].waits = nil // copied: let the collector have them
	}
	res.Values = a.sumWaits(res, waits)
	named := a.worstOf(waits, max(worst, 0))
	if err := a.secondPass(procs, res, waits, named); err != nil {
		return nil, fmt.Errorf("waitstate: %w", err)
	}
	res.Paths = a.tree // the second pass adds the paths it charged
	return res, nil
}

// sumWaits adds the waits up per (pattern, call path, location), sorted.
func (a *analysis) sumWaits(res *Result, waits []wait) []Value {
	type key struct {
		p         Pattern
		path, loc int
	}
	// A run's waits fall in few keys, met again and again: a small table
	// of the keys found last saves hashing one per wait.
	var (
		out   []Value
		at    = map[key]int32{}
		cache [64]struct {
			k  key
			at int32
		}
	)
	for i := range cache {
		cache[i].at = -1
	}
	for i := range waits {
		w := &waits[i]
		res.Totals[w.Pattern] += w.Time
		res.Counts[w.Pattern]++
		k := key{w.Pattern, w.Path, w.Loc}
		c := &cache[(uint(w.Path)*0x9e3779b1^uint(w.Loc)*0x85ebca6b^uint(w.Pattern))%uint(len(cache))]
		if c.at < 0 || c.k != k {
			j, ok := at[k]
			if !ok {
				j = int32(len(out))
				at[k] = j
				out = append(out, Value{Pattern: w.Pattern, Region: a.waitRegion(w), Path: w.Path, Loc: w.Loc})
			}
			c.k, c.at = k, j
		}
		v := &out[c.at]
		v.Time += w.Time
		v.Count++
	}
	slices.SortFunc(out, compareValue)
	return out
}

// worstOf returns the indices of the n longest waits, longest first. It
// keeps the n best seen so far in order, so it costs a comparison per
// wait rather than a sort of them all.
func (a *analysis) worstOf(waits []wait, n int) []int {
	best := make([]int, 0, n)
	if n == 0 {
		return best
	}
	less := func(i int, j int) int { return a.compareWait(&waits[i], &waits[j]) }
	for i := range waits {
		if len(best) == n && less(i, best[n-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, i, less)
		if len(best) == n {
			best = best[:n-1]
		}
		best = slices.Insert(best, at, i)
	}
	return best
}

// analysis is the state of the replay after the forward pass.
type analysis struct {
	*run
	data []*locData
	// sends by (sender, receiver, communicator, tag), in sending order:
	// MPI's non-overtaking rule pairs the k-th of them with the k-th
	// receive of the same key.
	sends map[msgKey]*sendQueue
	// The run's call tree, and per location its local paths' places in it.
	tree    []CallPath
	treeIdx map[treeKey]int
	paths   [][]int
	// The windows the sweeps' workers hold now, and made in all: each
	// worker makes its location's (windowSource).
	windowsLive, windowsMade atomic.Int64
}

// treeKey is a node of the run's call tree: a region name under a parent.
type treeKey struct {
	parent int
	name   string
}

// unifyPaths puts the locations' call trees together, in location order,
// by region name. Called again after a pass that made more local paths, it
// adds only those.
func (a *analysis) unifyPaths() {
	if a.treeIdx == nil {
		a.treeIdx = map[treeKey]int{}
		a.paths = make([][]int, len(a.data))
	}
	for n, d := range a.data {
		f := a.files[a.locs[n].File]
		ids := a.paths[n]
		for _, p := range d.paths[len(ids):] {
			parent := -1
			if p.parent >= 0 {
				parent = ids[p.parent]
			}
			k := treeKey{parent, f.RegionName(p.region)}
			id, ok := a.treeIdx[k]
			if !ok {
				id = len(a.tree)
				a.treeIdx[k] = id
				a.tree = append(a.tree, CallPath{Parent: parent, Region: k.name})
			}
			ids = append(ids, id)
		}
		a.paths[n] = ids
	}
}

// sendQueue is the sends of one key in sending order, and how many of
// them the receiver matched so far. Only the key's receiver moves next, so
// the receivers' parallel replay needs no lock.
type sendQueue struct {
	ids  []int32
	next int
}

type msgKey struct {
	from, to, comm int
	tag            uint32
}

func (a *analysis) indexSends() {
	a.sends = map[msgKey]*sendQueue{}
	for n, d := range a.data {
		// A location sends to few keys, over and over: the last queues
		// found save hashing the key, as in receiver.
		var cache [8]struct {
			k msgKey
			q *sendQueue
		}
		for i, s := range d.sends {
			k := msgKey{n, s.peer, s.comm, s.tag}
			c := &cache[(uint(s.peer)*31+uint(s.tag)*7+uint(s.comm))%uint(len(cache))]
			q := c.q
			if q == nil || c.k != k {
				if q = a.sends[k]; q == nil {
					q = &sendQueue{}
					a.sends[k] = q
				}
				c.k, c.q = k, q
			}
			q.ids = append(q.ids, int32(i))
		}
	}
}

// findings is what the replay found: the waits (on any location) and the
// counts of what it could not replay.
type findings struct {
	waits                 []wait
	unmatchedRecvs, colls uint64
	matched               uint64 // receives paired with their send
	clock                 uint64
}

// wait is one instance, with the late party's call that ended its delay
// (-1 if none), the waiting call, and what the two synchronised through
// (a partner key: the other location for a message, else commPartner or
// teamPartner). Its fields are Instance's but for the region, which the
// waiting call names (instance), and the delay, which only the worst
// waits get: a run has about one wait per five events, copied and read
// in several orders, so a wait holds no pointer (the collector neither
// scans the lists nor has them copied with write barriers) and takes 64
// bytes, not 88.
type wait struct {
	Start, Time     int64
	Path, Loc, Peer int // as Instance's
	partner         int
	lateCall        int32
	call            int32
	Pattern         Pattern
}

// waitRegion is the region of w's waiting call ("" for a wait of another
// rank's, in-situ, whose Loc is -1).
func (a *analysis) waitRegion(w *wait) string {
	if w.Loc < 0 {
		return ""
	}
	return a.regionName(w.Loc, w.call)
}

// instance returns w as an Instance, without its delay.
func (a *analysis) instance(w *wait) Instance {
	return Instance{Pattern: w.Pattern, Region: a.waitRegion(w), Path: w.Path, Loc: w.Loc, Start: w.Start, Time: w.Time, Peer: w.Peer}
}

// compareWait is compareInstance of the two waits' instances, naming
// their regions only when all else ties.
func (a *analysis) compareWait(x, y *wait) int {
	switch {
	case x.Time != y.Time:
		return cmp.Compare(y.Time, x.Time)
	case x.Pattern != y.Pattern:
		return cmp.Compare(x.Pattern, y.Pattern)
	case x.Loc != y.Loc:
		return cmp.Compare(x.Loc, y.Loc)
	case x.Start != y.Start:
		return cmp.Compare(x.Start, y.Start)
	}
	return cmp.Compare(a.waitRegion(x), a.waitRegion(y))
}

// teamPartner is the partner key of an OpenMP barrier: the whole team.
const teamPartner = math.MinInt

// commPartner is the partner key of a collective on run-wide communicator
// comm.
func commPartner(comm int) int { return -1 - comm }

// path returns the run-wide call path of call c of location loc.
func (a *analysis) path(loc int, c int32) int {
	return a.paths[loc][a.data[loc].calls[c].path]
}

func (a *analysis) regionName(loc int, c int32) string {
	lo := a.locs[loc]
	return a.files[lo.File].RegionName(a.data[loc].calls[c].region)
}

// lateSender is a Late Sender instance kept to find the wrong order: its
// send's time and its index in the receiver's waits.
type lateSender struct {
	sendTime int64
	w        int
}

// maxPending bounds the Late Sender instances a receiver keeps to find a
// message received in the wrong order, as Scalasca does (100).
const maxPending = 100

// receiver replays the receives of location n: Late Sender (with its
// wrong order) on n, Late Receiver on the senders.
func (a *analysis) receiver(n int, out *findings) {
	// A location receives from few (peer, communicator, tag) keys, over
	// and over: the last queues found save hashing the key.
	var cache [8]struct {
		k msgKey
		q *sendQueue
	}
	a.receives(n, out, func(q *recv) (sentMsg, bool) {
		k := msgKey{q.peer, n, q.comm, q.tag}
		c := &cache[(uint(q.peer)*31+uint(q.tag)*7+uint(q.comm))%uint(len(cache))]
		sq := c.q
		if sq == nil || c.k != k {
			sq = a.sends[k]
			c.k, c.q = k, sq
		}
		if sq == nil || sq.next >= len(sq.ids) {
			return sentMsg{}, false
		}
		sd := a.data[q.peer]
		s := sd.sends[sq.ids[sq.next]]
		sq.next++
		sc := sd.calls[s.call]
		return sentMsg{enter: sc.enter, leave: sc.leave, time: s.time, blocking: s.blocking, loc: q.peer, call: s.call}, true
	})
}

// sentMsg is what a receive learns of the send it is paired with: the
// sending call's enter and leave, the send record's time, whether the
// send may wait for the receive, and the sender's location and call
// (loc -1 in-situ, where the sender finds its Late Receiver itself).
type sentMsg struct {
	enter, leave, time int64
	blocking           bool
	loc                int
	call               int32
}

// receives replays the receives of location n, each paired with its send
// by match (false: none), in the location's order: the one definition of
// Late Sender and its wrong order, post-mortem and in-situ.
func (a *analysis) receives(n int, out *findings, match func(q *recv) (sentMsg, bool)) {
	d := a.data[n]
	var pending []lateSender
	// The latest send among pending: a message sent after it (the usual
	// order) cannot make any of them wrong-order, so the scan is skipped.
	pendingMax := int64(math.MinInt64)
	// A call completing several receives counts the largest wait once.
	var (
		group     wait
		groupSend int64
		grouped   bool
		groupCall int32 = -1
	)
	flush := func() {
		if grouped {
			pending = appendPending(pending, lateSender{groupSend, len(out.waits)})
			pendingMax = max(pendingMax, groupSend)
			out.waits = append(out.waits, group)
		}
		grouped, groupCall = false, -1
	}
	for i := range d.recvs {
		q := &d.recvs[i]
		if q.call != groupCall {
			flush()
		}
		s, ok := match(q)
		if !ok {
			out.unmatchedRecvs++
			continue
		}
		out.matched++
		rc := d.calls[q.call]

		// Wrong order: earlier Late Sender waits for messages sent after
		// this one, which was received only now.
		if s.time < pendingMax {
			kept := pending[:0]
			pendingMax = math.MinInt64
			for _, p := range pending {
				if p.sendTime > s.time {
					w := out.waits[p.w]
					w.Pattern = LateSenderWrongOrder
					out.waits = append(out.waits, w)
					continue
				}
				kept = append(kept, p)
				pendingMax = max(pendingMax, p.sendTime)
			}
			pending = kept
		}

		idle, clock := lateSenderWait(s.enter, rc.enter, rc.leave)
		if clock {
			out.clock++
		}
		if idle > 0 {
			w := wait{Pattern: LateSender, Path: a.path(n, q.call), Loc: n, Start: rc.enter, Time: idle, Peer: s.loc, lateCall: s.call, call: q.call, partner: q.peer}
			if multiCompletion(a.regionName(n, q.call)) {
				if !grouped || idle > group.Time {
					group, groupSend, grouped = w, s.time, true
				}
				groupCall = q.call
			} else {
				pending = appendPending(pending, lateSender{s.time, len(out.waits)})
				pendingMax = max(pendingMax, s.time)
				out.waits = append(out.waits, w)
			}
		}

		// Late Receiver: the send could not return before this receive
		// was posted.
		if s.blocking && s.loc >= 0 {
			if idle := lateReceiverWait(s.enter, s.leave, d.calls[q.post].enter); idle > 0 {
				out.waits = append(out.waits, wait{Pattern: LateReceiver, Path: a.path(s.loc, s.call),
					Loc: s.loc, Start: s.enter, Time: idle, Peer: n, lateCall: q.post, call: s.call, partner: n})
			}
		}
	}
	flush()
}

// lateSenderWait is the Late Sender wait of a receive call entered at
// recvEnter and left at recvLeave whose message's send call was entered
// at sendEnter: min(send enter, receive leave) − receive enter. clock
// tells that the send was entered after the receive returned, which only
// clocks out of step show (the wait is clipped there).
func lateSenderWait(sendEnter, recvEnter, recvLeave int64) (idle int64, clock bool) {
	if sendEnter > recvLeave {
		return recvLeave - recvEnter, true
	}
	return sendEnter - recvEnter, false
}

// lateReceiverWait is the Late Receiver wait of a blocking send call
// entered at sendEnter and left at sendLeave whose receive was posted at
// postEnter: the time before the post, when the send returned only after
// it; 0 when it did not wait.
func lateReceiverWait(sendEnter, sendLeave, postEnter int64) int64 {
	if sendLeave > postEnter {
		return max(postEnter-sendEnter, 0)
	}
	return 0
}

// appendPending keeps the last maxPending instances. The oldest is
// dropped by reslicing; append moves the rest to the front of a new array
// only when the old one is full, so keeping costs O(1) per instance.
func appendPending(p []lateSender, ls lateSender) []lateSender {
	if len(p) == maxPending {
		p = p[1:]
	}
	return append(p, ls)
}

// member is one rank's part in a collective instance.
type member struct {
	loc int
	op  collOp
}

// collectives replays the collectives: each communicator's k-th operation
// on every member is one instance (MPI orders collectives on a
// communicator alike on all its members).
func (a *analysis) collectives(out *findings) {
	// Per file and communicator, the operations in start order.
	type fileComm struct{ file, comm int }
	ops := map[fileComm][]member{}
	for n, d := range a.data {
		f := a.locs[n].File
		for _, op := range d.colls {
			k := fileComm{f, op.comm}
			ops[k] = append(ops[k], member{n, op})
		}
	}
	for k, list := range ops {
		slices.SortStableFunc(list, func(x, y member) int {
			if x.op.start != y.op.start {
				return cmp.Compare(x.op.start, y.op.start)
			}
			return cmp.Compare(x.loc, y.loc)
		})
		ops[k] = list
	}
	comms := make([]int, 0)
	seen := map[int]bool{}
	for k := range ops {
		if !seen[k.comm] {
			seen[k.comm] = true
			comms = append(comms, k.comm)
		}
	}
	slices.Sort(comms)
	for _, c := range comms {
		var lists [][]member
		var rankOf []int
		longest, complete := 0, true
		for _, rank := range a.members[c] {
			f, ok := a.byRank[int(rank)]
			if !ok || f < 0 {
				complete = false
				continue
			}
			l := ops[fileComm{f, c}]
			lists = append(lists, l)
			rankOf = append(rankOf, int(rank))
			longest = max(longest, len(l))
		}
		// One instance at a time: collective keeps none of inst.
		inst := make([]member, 0, len(lists))
		for j := 0; j < longest; j++ {
			inst = inst[:0]
			for _, l := range lists {
				if j < len(l) {
					inst = append(inst, l[j])
				}
			}
			if !complete || len(inst) < len(lists) || len(inst) < 2 {
				out.colls++
				continue
			}
			a.collective(inst, rankOf, out)
		}
	}
}

// collective computes the waits of one collective instance; ranks are the
// members' world ranks.
func (a *analysis) collective(inst []member, ranks []int, out *findings) {
	latest, earliest, root := 0, -1, -1
	rootRank := inst[0].op.root
	t := newCollTimes()
	for i, m := range inst {
		if m.op.start > inst[latest].op.start {
			latest = i
		}
		isRoot := rootRank >= 0 && int64(ranks[i]) == rootRank
		if isRoot {
			root = i
		}
		t.add(m.op.start, isRoot)
	}
	for i, m := range inst {
		if i != root && (earliest < 0 || m.op.start < inst[earliest].op.start) {
			earliest = i
		}
	}
	for i, m := range inst {
		c := a.data[m.loc].calls[m.op.call]
		p, idle, ok := collWait(&m.op, c, i == root, &t)
		if !ok {
			continue
		}
		late := latest
		switch p {
		case LateBroadcast:
			late = root
		case EarlyReduce:
			late = earliest
		}
		out.waits = append(out.waits, wait{Pattern: p, Path: a.path(m.loc, m.op.call), Loc: m.loc,
			Start: c.enter, Time: idle, Peer: inst[late].loc, lateCall: inst[late].op.call, call: m.op.call, partner: commPartner(m.op.comm)})
	}
}

// collTimes is what the members of one collective instance need of each
// other's starts: how many members took part, the latest start, the
// root's start (math.MinInt64: no member is the root) and the earliest
// start of a member other than the root (math.MaxInt64: none). In-situ,
// the members reduce these over MPI.
type collTimes struct {
	Members                int
	Latest, Root, Earliest int64
}

func newCollTimes() collTimes {
	return collTimes{Latest: math.MinInt64, Root: math.MinInt64, Earliest: math.MaxInt64}
}

// add adds a member that started at start.
func (t *collTimes) add(start int64, isRoot bool) {
	t.Members++
	t.Latest = max(t.Latest, start)
	if isRoot {
		t.Root = start
	} else {
		t.Earliest = min(t.Earliest, start)
	}
}

// merge adds the members of o.
func (t *collTimes) merge(o collTimes) {
	t.Members += o.Members
	t.Latest = max(t.Latest, o.Latest)
	t.Root = max(t.Root, o.Root)
	t.Earliest = min(t.Earliest, o.Earliest)
}

// collWait is the one definition of the collective patterns: the pattern
// and wait of a member's operation op, whose waiting call is c, in an
// instance whose members' starts t sums up; false when it did not wait.
// The member that started last (or the root, or the first sender) does
// not wait for itself: its wait is 0 or less by the same formula, since
// its waiting call begins no earlier than its start.
func collWait(op *collOp, c call, isRoot bool, t *collTimes) (Pattern, int64, bool) {
	var until int64
	var p Pattern
	self := false
	switch op.kind {
	case collBarrier:
		p, until, self = WaitBarrier, t.Latest, op.start == t.Latest
	case collNxN:
		if op.recvd == 0 {
			return 0, 0, false
		}
		p, until, self = WaitNxN, t.Latest, op.start == t.Latest
	case coll1toN:
		if t.Root == math.MinInt64 || isRoot || op.recvd == 0 {
			return 0, 0, false
		}
		p, until = LateBroadcast, t.Root
	case collNto1:
		if t.Root == math.MinInt64 || !isRoot || t.Earliest == math.MaxInt64 || op.recvd == 0 {
			return 0, 0, false
		}
		p, until = EarlyReduce, t.Earliest
	default:
		return 0, 0, false
	}
	idle := min(until, c.leave) - c.enter
	if idle <= 0 || self {
		return 0, 0, false
	}
	return p, idle, true
}

// openmp replays the OpenMP barriers: the visits of one barrier region by
// the threads of one team, in the same parallel region, the same number of
// times before, are one barrier. Threads are matched by their place
// (tracefile.Location.Team) and their count of implicit tasks, which holds
// when every parallel region uses the whole team.
func (a *analysis) openmp(out *findings) {
	// A barrier's instance is its team's visits with the same key. The
	// keys are numbered as the locations first meet them, and each visit
	// goes into one array with its key's number, then into its instance's
	// place by a counting sort that keeps the locations' order: the
	// instances and their members in the order a map of slices gave them,
	// without a slice per instance (a LULESH run of 64 ranks of 2 threads
	// has 1.7 M instances of 2: 455 MB went to them and their map).
	type key struct {
		file, team int32
		region     uint32
		task, nth  int
	}
	type visit struct {
		inst  int32
		loc   int32
		call  int32
		start int64
	}
	teams := map[string]int32{} // a team is its forker's place, the thread's Team less its own number
	index := map[key]int32{}
	total := 0
	for _, d := range a.data {
		total += len(d.omp)
	}
	visits := make([]visit, 0, total)
	for n, d := range a.data {
		lo := a.locs[n]
		team := a.files[lo.File].Locations[lo.Loc].Team
		if len(team) == 0 || len(d.omp) == 0 {
			continue
		}
		forker := fmt.Sprint(team[:len(team)-1])
		t, ok := teams[forker]
		if !ok {
			t = int32(len(teams))
			teams[forker] = t
		}
		for _, v := range d.omp {
			k := key{int32(lo.File), t, d.calls[v.call].region, v.task, v.nth}
			i, ok := index[k]
			if !ok {
				i = int32(len(index))
				index[k] = i
			}
			visits = append(visits, visit{inst: i, loc: int32(n), call: v.call, start: d.calls[v.call].enter})
		}
	}
	at := make([]int32, len(index)+1)
	for _, v := range visits {
		at[v.inst+1]++
	}
	for i := 1; i < len(at); i++ {
		at[i] += at[i-1]
	}
	index = nil
	byInst := make([]visit, len(visits))
	next := slices.Clone(at[:len(at)-1])
	for _, v := range visits {
		byInst[next[v.inst]] = v
		next[v.inst]++
	}
	visits, next = nil, nil
	for i := 0; i+1 < len(at); i++ {
		g := byInst[at[i]:at[i+1]]
		if len(g) < 2 {
			continue
		}
		latest := 0
		for j, m := range g {
			if m.start > g[latest].start {
				latest = j
			}
		}
		for j, m := range g {
			c := a.data[m.loc].calls[m.call]
			idle := min(g[latest].start, c.leave) - c.enter
			if idle <= 0 || j == latest {
				continue
			}
			p := OMPBarrier
			if a.kind(a.locs[m.loc].File, c.region) == regionOMPImplicitBarrier {
				p = OMPImplicitBarrier
			}
			out.waits = append(out.waits, wait{Pattern: p, Path: a.path(int(m.loc), m.call), Loc: int(m.loc),
				Start: c.enter, Time: idle, Peer: int(g[latest].loc), lateCall: g[latest].call, call: m.call, partner: teamPartner})
		}
	}
}

// describe names an instance's place for errors and text.
func (r *Result) describe(loc int) string {
	if loc < 0 || loc >= len(r.Locations) {
		return "-"
	}
	return strings.TrimSpace(r.Locations[loc].Name)
}
