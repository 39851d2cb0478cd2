package waitstate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// call is one visit of a synchronisation region (an MPI call, an OpenMP
// barrier) on a location, on the run's time axis.
type call struct {
	region       uint32 // the file's region id
	path         int32  // its call path, an index of locData.paths
	enter, leave int64
}

// send is a message the location sent.
type send struct {
	call     int32 // the call that holds it: MPI_Send, MPI_Isend, ...
	peer     int   // the receiving location (run-wide index)
	comm     int   // run-wide communicator
	tag      uint32
	time     int64 // of the send record
	blocking bool  // a blocking send whose return may wait for the receive
}

// recv is a message the location received.
type recv struct {
	call int32 // the call that completed it: MPI_Recv, MPI_Wait, ...
	post int32 // the call that posted it (MPI_Irecv), or call
	peer int   // the sending location
	comm int
	tag  uint32
	time int64 // of the receive record
}

// collOp is one member's part in a collective operation.
type collOp struct {
	call  int32 // the call that waited: the collective, or the completion of a non-blocking one
	start int64 // when the member entered the operation (the starting call's enter)
	kind  collKind
	comm  int
	root  int64 // world rank, -1 for none
	recvd uint64
	seq   uint64 // order among the location's starts
}

// ompVisit is one visit of an OpenMP barrier by a thread.
type ompVisit struct {
	call     int32
	implicit bool
	task     int // which implicit task (parallel region) of the thread
	nth      int // which visit of this barrier region within the task
}

// locData is what the forward pass gathers on one location.
type locData struct {
	calls      []call
	sends      []send
	recvs      []recv
	colls      []collOp
	omp        []ompVisit
	paths      []localPath
	pathIdx    map[localPath]int32            // the index of each of paths
	pathCache  *[pathCacheSize]pathCacheEntry // the last paths looked up, while a pass reads the location
	log        regionLog                      // the enters and leaves, for the second pass (post-mortem)
	first      int64
	last       int64
	unresolved uint64 // messages whose peer is not among the files
}

// collKind says how a collective synchronises.
type collKind uint8

const (
	collOther collKind = iota
	collBarrier
	collNxN
	coll1toN
	collNto1
)

// collKindOf classifies an MPI collective by its name (blocking or not).
func collKindOf(name string) collKind {
	n, ok := strings.CutPrefix(name, "MPI_")
	if !ok {
		return collOther
	}
	if len(n) > 1 && n[0] == 'I' && n[1] >= 'a' && n[1] <= 'z' || strings.HasPrefix(n, "Ibarrier") {
		n = strings.ToUpper(n[1:2]) + n[2:] // MPI_Iallreduce -> Allreduce
	}
	switch n {
	case "Barrier":
		return collBarrier
	case "Allreduce", "Alltoall", "Alltoallv", "Alltoallw", "Allgather", "Allgatherv",
		"Reduce_scatter", "Reduce_scatter_block":
		return collNxN
	case "Bcast", "Scatter", "Scatterv":
		return coll1toN
	case "Reduce", "Gather", "Gatherv":
		return collNto1
	}
	return collOther
}

// blockingSend tells the sends whose call may not return before the
// receive was posted. MPI_Bsend never waits; MPI_Sendrecv returns after
// its own receive, which says nothing about the other side's.
func blockingSend(name string) bool {
	return name == "MPI_Send" || name == "MPI_Ssend" || name == "MPI_Rsend"
}

// multiCompletion tells the calls that complete several requests at once.
func multiCompletion(name string) bool {
	switch name {
	case "MPI_Waitall", "MPI_Waitsome", "MPI_Testall", "MPI_Testsome":
		return true
	}
	return false
}

// run is what the replay knows of the files: locations, communicators,
// the time axis.
type run struct {
	files []*tracefile.File
	axis  *tracefile.Axis
	peers *tracefile.Peers
	first []int // per file: the run-wide index of its first location
	locs  []Location
	// Per file: its communicators' run-wide ids by file-local id (0: the
	// world), and the run-wide communicators' members.
	comms   []map[uint32]int
	members [][]int32
	byRank  map[int]int // world rank -> file, -1 when several files claim it
	// Per file and region id: how the region synchronises; by map for
	// the ids too large for the slice (ids are dense in files the probes
	// write, not in every file a tool may be given).
	kinds      [][]regionKind
	kindsOfBig []map[uint32]regionKind
	// keys are the run-wide communicators' identities in-situ (commHash),
	// the same on every member.
	keys []uint64
	// insitu is set for one rank's replay of its own trace at the
	// collective end (insitu.go): times on the reference clock of the
	// run's clock synchronisation, peers as world ranks.
	insitu bool
	// keepLog makes the forward pass keep each location's enters and
	// leaves (locData.log) for a second pass, while logLeft, the bytes
	// the logs may still take, lasts.
	keepLog bool
	logLeft atomic.Int64
}

// regionKind says what a region is to the replay.
type regionKind uint8

const (
	regionCompute regionKind = iota
	regionMPI
	regionOMPBarrier
	regionOMPImplicitBarrier
	regionOMPImplicitTask
)

func newRun(files []*tracefile.File) (*run, error) { return newRunOf(files, 0) }

// newRunOf makes the run of files; with world > 0, the run of one rank's
// file replayed in-situ in a run of world ranks.
func newRunOf(files []*tracefile.File, world int) (*run, error) {
	r := &run{files: files, axis: tracefile.NewAxis(files), peers: tracefile.NewPeers(files), byRank: map[int]int{}, insitu: world > 0}
	ranks := r.newLocations()
	if r.insitu {
		ranks = make([]int32, world)
		for i := range ranks {
			ranks[i] = int32(i)
		}
	}
	if err := r.newComms(ranks); err != nil {
		return nil, err
	}
	return r, nil
}

// newLocations lists the files' locations and region kinds, and returns
// their ranks, sorted.
func (r *run) newLocations() []int32 {
	files := r.files
	byFile := tracefile.SharedRank(files)
	var world []int32
	for i, f := range files {
		r.first = append(r.first, len(r.locs))
		for k, l := range f.Locations {
			name := tracefile.LocationLabel(files, i, byFile, l.Name)
			if len(files) > 1 && !byFile && len(f.Locations) == 1 {
				name = fmt.Sprintf("rank %d", f.Header.Rank) // the rank says it all, as in comm
			}
			r.locs = append(r.locs, Location{File: i, Loc: k, ID: l.ID, Rank: f.Header.Rank, Name: name})
		}
		if _, dup := r.byRank[f.Header.Rank]; dup {
			r.byRank[f.Header.Rank] = -1
		} else {
			r.byRank[f.Header.Rank] = i
		}
		world = append(world, int32(f.Header.Rank))
		kinds := make([]regionKind, len(f.Regions)+1)
		var big map[uint32]regionKind
		for _, reg := range f.Regions {
			if int(reg.ID) < len(kinds) {
				kinds[reg.ID] = kindOfRegion(reg)
				continue
			}
			if big == nil {
				big = map[uint32]regionKind{}
			}
			big[reg.ID] = kindOfRegion(reg)
		}
		r.kinds = append(r.kinds, kinds)
		r.kindsOfBig = append(r.kindsOfBig, big)
	}
	slices.Sort(world)
	return slices.Compact(world)
}

// newComms identifies the files' communicators run-wide by the run's
// unified definitions (tracefile.ReadUnified): a communicator is the same
// on every member, since MPI creates them collectively, in one order.
// MPI_COMM_SELF is one definition of the run there, but each rank's is its
// own here, as its members say. world is the members of MPI_COMM_WORLD
// for the files that do not define it. Run-wide ids are dense, in the
// order the files (as given) first name them.
func (r *run) newComms(world []int32) error {
	u, err := tracefile.ReadUnified(r.files)
	if err != nil {
		return err
	}
	type commID struct {
		unified uint32
		self    int // the rank of an MPI_COMM_SELF, else -1
	}
	ids := map[commID]int{}
	intern := func(k commID, c *tracefile.Comm, seq int) int {
		id, ok := ids[k]
		if !ok {
			id = len(r.members)
			ids[k] = id
			r.members = append(r.members, c.Members)
			if r.insitu {
				r.keys = append(r.keys, commHash(c.Members, c.Remote, seq))
			}
		}
		return id
	}
	// The files without MPI_COMM_WORLD take the run's communicator with its
	// members, the first of them, when a file defines one: found once.
	worldID := -1
	worldOf := func() int {
		if worldID >= 0 {
			return worldID
		}
		c := &tracefile.Comm{Members: world}
		k := commID{unified: 0, self: -1}
		for i := range u.Defs.Comms {
			d := &u.Defs.Comms[i]
			if d.Seq == 0 && d.Remote == nil && slices.Equal(d.Members, world) {
				k.unified = d.ID
				break
			}
		}
		worldID = intern(k, c, 0)
		return worldID
	}
	for i, f := range r.files {
		m := make(map[uint32]int, len(f.Comms)+1)
		hasWorld := false
		for j := range f.Comms {
			c := &f.Comms[j]
			uid := u.Maps[i].Comms[c.ID]
			if uid == 0 || int(uid) > len(u.Defs.Comms) {
				return fmt.Errorf("%s: communicator %d (%s) is not among the run's definitions", f.Path, c.ID, c.Name)
			}
			k := commID{uid, -1}
			if isSelf(c) {
				k.self = f.Header.Rank
			}
			id := intern(k, c, u.Defs.Comms[uid-1].Seq)
			if c.Remote != nil {
				id = -1 - id // inter-communicators: not replayed
			}
			m[c.ID] = id
			if c.Name == "MPI_COMM_WORLD" {
				m[0], hasWorld = id, true
			}
		}
		if !hasWorld {
			m[0] = worldOf()
		}
		r.comms = append(r.comms, m)
	}
	return nil
}

// isSelf tells MPI_COMM_SELF as the run's definitions tell it: one
// definition for the run, whose members are each rank itself.
func isSelf(c *tracefile.Comm) bool {
	return c.Name == "MPI_COMM_SELF" && c.Remote == nil && len(c.Members) <= 1
}

// commHash is the identity of a communicator that its members exchange
// in-situ: its members, remote group and which of the rank's
// communicators with those members it is (seq), hashed. It costs a pass
// over the members, never text of them.
func commHash(members, remote []int32, seq int) uint64 {
	h := fnv.New64a()
	var b [binary.MaxVarintLen64]byte
	put := func(v int64) { h.Write(b[:binary.PutVarint(b[:], v)]) }
	put(int64(len(members)))
	for _, x := range members {
		put(int64(x))
	}
	put(int64(len(remote)))
	if remote != nil {
		put(1)
		for _, x := range remote {
			put(int64(x))
		}
	} else {
		put(0)
	}
	put(int64(seq))
	return h.Sum64()
}

func kindOfRegion(reg tracefile.Region) regionKind {
	switch {
	case strings.HasPrefix(reg.Name, "!$omp barrier"):
		return regionOMPBarrier
	case strings.HasPrefix(reg.Name, "!$omp implicit barrier"):
		return regionOMPImplicitBarrier
	case strings.HasPrefix(reg.Name, "!$omp implicit task"):
		return regionOMPImplicitTask
	case reg.Paradigm == tracefile.ParadigmMPI || strings.HasPrefix(reg.Name, "MPI_"):
		return regionMPI
	}
	return regionCompute
}

func (r *run) kind(file int, region uint32) regionKind {
	if k := r.kinds[file]; int(region) < len(k) {
		return k[region]
	}
	return r.kindsOfBig[file][region]
}

// frame is an open region during the forward pass.
type frame struct {
	region uint32
	call   int32 // its call, for a synchronisation region; -1 else
	path   int32 // its call path; -1 for none (a removed region), -2 not known yet
}

// pathCacheSize is the number of paths pathOf caches, indexed by the top
// bits of a hash of the key: LULESH's shape charges some 40 paths under
// one step, which 64 slots indexed by the low bits held with a miss in
// eight lookups.
const (
	pathCacheBits = 8
	pathCacheSize = 1 << pathCacheBits
)

// pathCacheEntry is a path of pathIdx, cached.
type pathCacheEntry struct {
	key  localPath
	id   int32
	used bool
}

// localPath is a node of a location's call tree: region (an id of the
// file) called from parent (-1: the top).
type localPath struct {
	parent int32
	region uint32
}

// pathOf returns the call path of stack[i], made on first use (only the
// paths that some analysis charges are needed). A removed ancestor (region
// 0) is no node: its children hang on the next known one above.
func (d *locData) pathOf(stack []frame, i int) int32 {
	if fr := &stack[i]; fr.path == -2 {
		parent := int32(-1)
		if i > 0 && stack[i-1].region != 0 && stack[i-1].path >= 0 {
			// The caller's path is known: nearly every call, without the
			// recursion's call.
			parent = stack[i-1].path
		} else {
			for j := i - 1; j >= 0 && parent < 0; j-- {
				if stack[j].region != 0 {
					parent = d.pathOf(stack, j)
				}
			}
		}
		k := localPath{parent, fr.region}
		// A loop enters the same paths again and again: a small cache in
		// front of the map saves its hashing.
		if d.pathCache == nil {
			d.pathCache = new([pathCacheSize]pathCacheEntry)
		}
		c := &d.pathCache[(uint32(parent)*0x9e3779b1^fr.region*0x85ebca6b)>>(32-pathCacheBits)]
		if c.used && c.key == k {
			fr.path = c.id
			return fr.path
		}
		id, ok := d.pathIdx[k]
		if !ok {
			id = int32(len(d.paths))
			d.pathIdx[k] = id
			d.paths = append(d.paths, k)
		}
		*c = pathCacheEntry{key: k, id: id, used: true}
		fr.path = id
	}
	return stack[i].path
}

// read is the forward pass over location n: its synchronisation calls,
// messages, collectives and barriers, on the run's time axis.
func (r *run) read(n int) (*locData, error) {
	lo := r.locs[n]
	f := r.files[lo.File]
	d := &locData{first: -1, pathIdx: map[localPath]int32{}}
	// The exact profile and communication matrix say how many calls and
	// messages to expect (the buffer may have shed some of their events).
	l := &f.Locations[lo.Loc]
	var calls, sent, received, enters uint64
	for _, p := range l.Profile {
		enters += p.Visits
		if k := r.kind(lo.File, p.Region); k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier {
			calls += p.Visits
		}
	}
	for _, c := range l.Comm {
		sent += c.Sent
		received += c.Received
	}
	const most = 1 << 22 // a hint, not a promise: bound what a file may claim
	d.calls = make([]call, 0, min(calls, most))
	d.sends = make([]send, 0, min(sent, most))
	d.recvs = make([]recv, 0, min(received, most))
	keepLog := false
	if r.keepLog {
		// About 3 bytes a record (regionlog.go): an enter and a leave per
		// visit the profile counts, at most the events kept (all of them
		// for a file without profiles). Past the budget, the second pass
		// reads the location's trace again.
		records := 2 * enters
		if records == 0 || records > l.Kept() {
			records = l.Kept()
		}
		if keepLog = r.logLeft.Add(-3*int64(min(records, math.MaxInt64/3))) >= 0; keepLog {
			d.log.buf = make([]byte, 0, 3*min(records, most))
		} else {
			d.log.reread = true
		}
	}
	var (
		stack     []frame
		e         tracefile.Event
		inSync    int // synchronisation calls open
		tasks     = -1
		visits    = map[uint32]int{} // barrier visits in the current implicit task
		posted    = map[uint64]int32{}
		collStart = map[uint64]int64{} // non-blocking collectives: request -> start
		collSeq   = map[uint64]uint64{}
		starts    uint64
		ends      endpointCache
	)
	// Only the synchronisation calls and messages need their time on the
	// axis, which is monotonic in the file's ticks: the other events only
	// move the first and last tick.
	var firstTick, lastTick uint64
	started := false
	// A call's records often share its enter's or leave's tick: the
	// last conversion is kept (it costs a floating-point division).
	var (
		atTick uint64
		atNs   int64
		atOK   bool
	)
	clk := r.clockOf(lo.File, f)
	at := func() int64 {
		if !atOK || e.Time != atTick {
			atTick, atNs, atOK = e.Time, clk.nanos(e.Time), true
		}
		return atNs
	}
	it := f.Events(lo.ID)
	for it.Next(&e) {
		if !started {
			firstTick, started = e.Time, true
		}
		lastTick = max(lastTick, e.Time)

		top := func() int32 {
			if len(stack) == 0 || e.Depth != len(stack) {
				return -1
			}
			return stack[len(stack)-1].call
		}
		switch e.Kind {
		case encode.KindEnter:
			if keepLog {
				depth := 0
				if len(stack) < e.Depth-1 {
					depth = e.Depth
				}
				d.log.enter(e.Region, e.Time, depth)
			}
			for len(stack) < e.Depth-1 {
				stack = append(stack, frame{call: -1, path: -1}) // a removed ancestor
			}
			fr := frame{region: e.Region, call: -1, path: -2}
			switch k := r.kind(lo.File, e.Region); k {
			case regionMPI, regionOMPBarrier, regionOMPImplicitBarrier:
				if inSync == 0 || k != regionMPI {
					fr.call = int32(len(d.calls))
					stack = append(stack, fr)
					fr.path = d.pathOf(stack, len(stack)-1)
					stack = stack[:len(stack)-1]
					t := at()
					d.calls = append(d.calls, call{region: e.Region, path: fr.path, enter: t, leave: t})
				}
				inSync++
				if k != regionMPI && tasks >= 0 {
					d.omp = append(d.omp, ompVisit{call: fr.call, implicit: k == regionOMPImplicitBarrier, task: tasks, nth: visits[e.Region]})
					visits[e.Region]++
				}
			case regionOMPImplicitTask:
				tasks++
				clear(visits)
			}
			stack = append(stack, fr)
		case encode.KindLeave:
			if keepLog {
				d.log.leave(e.Time)
			}
			if len(stack) == 0 {
				break
			}
			fr := stack[len(stack)-1]
			if fr.call >= 0 {
				d.calls[fr.call].leave = at()
			}
			if k := r.kind(lo.File, fr.region); fr.region != 0 && (k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier) {
				inSync--
			}
			// Close the region and the removed ancestors right above it, as
			// the reader does.
			n := len(stack) - 1
			for n > 0 && stack[n-1].region == 0 {
				n--
			}
			stack = stack[:n]
		case encode.KindSend, encode.KindIsend:
			c := top()
			if c < 0 {
				break
			}
			peer, comm, ok, err := ends.endpoint(r, lo.File, &e)
			if err != nil {
				return nil, err
			}
			if !ok {
				d.unresolved++
				break
			}
			name := f.RegionName(d.calls[c].region)
			d.sends = append(d.sends, send{call: c, peer: peer, comm: comm, tag: e.Tag, time: at(),
				blocking: e.Kind == encode.KindSend && blockingSend(name)})
		case encode.KindIrecvRequest:
			if c := top(); c >= 0 {
				posted[e.Request] = c
			}
		case encode.KindRecv, encode.KindIrecv:
			c := top()
			if c < 0 {
				break
			}
			peer, comm, ok, err := ends.endpoint(r, lo.File, &e)
			if err != nil {
				return nil, err
			}
			if !ok {
				d.unresolved++
				break
			}
			p := c
			if e.Kind == encode.KindIrecv {
				if q, ok := posted[e.Request]; ok {
					p = q
					delete(posted, e.Request)
				}
			}
			d.recvs = append(d.recvs, recv{call: c, post: p, peer: peer, comm: comm, tag: e.Tag, time: at()})
		case encode.KindCollective:
			c := top()
			if c < 0 {
				break
			}
			comm, ok := r.comms[lo.File][e.Comm]
			if !ok || comm < 0 {
				break
			}
			d.colls = append(d.colls, collOp{call: c, start: d.calls[c].enter, kind: collKindOf(f.RegionName(d.calls[c].region)),
				comm: comm, root: e.Root, recvd: e.Received, seq: starts})
			starts++
		case encode.KindCollRequest:
			if c := top(); c >= 0 {
				collStart[e.Request] = d.calls[c].enter
				collSeq[e.Request] = starts
				starts++
			}
		case encode.KindCollComplete:
			c := top()
			start, ok := collStart[e.Request]
			if c < 0 || !ok {
				break
			}
			delete(collStart, e.Request)
			comm, ok := r.comms[lo.File][e.Comm]
			if !ok || comm < 0 {
				break
			}
			d.colls = append(d.colls, collOp{call: c, start: start, kind: collKindOf(f.RegionName(e.Region)),
				comm: comm, root: e.Root, recvd: e.Received, seq: collSeq[e.Request]})
			delete(collSeq, e.Request)
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	d.first = 0
	if started {
		d.first, d.last = r.nanos(lo.File, f, firstTick), r.nanos(lo.File, f, lastTick)
	}
	d.pathCache = nil // a pass's, not the run's: 4 KB a location
	// Collectives in the order the location started them: what matches
	// them with the other members'.
	slices.SortStableFunc(d.colls, func(a, b collOp) int { return cmp.Compare(a.seq, b.seq) })
	return d, nil
}

// nanos puts a reduced timestamp of file i on the run's axis. In-situ,
// one rank cannot know the axis's origin, which differences between ranks
// do not depend on: its times are on the reference clock when the ranks
// synchronised their clocks (every MPI run), else since 1970 by its
// wall-clock start, as tracefile.Axis places files without sync points.
func (r *run) nanos(i int, f *tracefile.File, reduced uint64) int64 {
	if r.insitu {
		if len(f.Header.ClockSync) == 0 {
			return f.Header.StartWall.UnixNano() + f.Nanos(reduced)
		}
		return f.GlobalNanos(reduced)
	}
	return r.axis.Nanos(i, f, reduced)
}

// endpointCache holds the endpoints a location's messages resolved to
// last: a location talks to few peers, and resolving one costs two map
// lookups and a sync.Once.
type endpointCache [16]struct {
	peer       uint64
	comm       uint32
	byRank, ok bool
	loc, c     int
}

// endpoint is r.endpoint of message e of file, cached.
func (ec *endpointCache) endpoint(r *run, file int, e *tracefile.Event) (peer, comm int, ok bool, err error) {
	h := &ec[(e.Peer*0x9e3779b97f4a7c15+uint64(e.Comm))>>60]
	if h.ok && h.peer == e.Peer && h.comm == e.Comm && h.byRank == e.PeerRank {
		return h.loc, h.c, true, nil
	}
	peer, comm, ok, err = r.endpoint(file, e)
	if ok && err == nil {
		h.peer, h.comm, h.byRank, h.ok, h.loc, h.c = e.Peer, e.Comm, e.PeerRank, true, peer, comm
	}
	return peer, comm, ok, err
}

// endpoint resolves a message's peer to a run-wide location (in-situ: a
// world rank) and its communicator to a run-wide one.
func (r *run) endpoint(file int, e *tracefile.Event) (peer, comm int, ok bool, err error) {
	if r.insitu {
		comm, ok = r.comms[file][e.Comm]
		if !ok {
			comm = r.comms[file][0]
		}
		// A message by location id is between the threads of this
		// process: its peer is threadPeer + the location (insitu.go).
		if !e.PeerRank {
			end, ok, err := r.peers.Resolve(file, e)
			if err != nil || !ok {
				return 0, 0, false, err
			}
			return threadPeer + r.first[end.File] + end.Loc, comm, true, nil
		}
		if e.Peer >= threadPeer {
			return 0, 0, false, nil
		}
		return int(e.Peer), comm, true, nil
	}
	end, ok, err := r.peers.Resolve(file, e)
	if err != nil || !ok {
		return 0, 0, false, err
	}
	comm, ok = r.comms[file][e.Comm]
	if !ok {
		comm = r.comms[file][0]
	}
	return r.first[end.File] + end.Loc, comm, true, nil
}
