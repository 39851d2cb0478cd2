package tracefile

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"
	"weak"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// The COMM RUNS section (0x26) holds the communicators as the COMMS
// section (0x22) did, with their members as runs of world ranks, so that a
// communicator's bytes grow with the runs of its members, not with their
// count: MPI_COMM_WORLD is one run whatever its size, a row or column of a
// cartesian grid one run with a stride, and a communicator with its
// parent's members (MPI_Comm_dup, MPI_Cart_create) none at all. At 10^4
// ranks the member lists were 89 % of a halo code's files; each file
// lists world again, so the run's bytes grew as ranks squared.
//
//	comms  := count | comm*
//	comm   := id | name | parent | flags | [ranks (members)] | [ranks (remote)]
//	flags  := bit 0: inter-communicator, a remote group follows;
//	          bit 1: the members are the parent's, none follow
//	ranks  := total | runs | run*
//	run    := first (varint, the difference to the last rank of the run
//	          before, or to 0) | count-1 | [stride (varint), if count > 1]
//
// Writers put COMM RUNS, never COMMS; this reader reads both. A reader
// that predates COMM RUNS skips it as a section it does not know and sees
// a file without communicators: its exports count the records that name
// one as naming an undefined communicator and leave them out, as they do
// for any file that defines none; its profiles, matrices and timelines do
// not use the definitions. The version stays as it was, so that such
// readers still read the rest.
const secCommRuns = 0x26

// Bits of a communicator's flags in COMM RUNS.
const (
	commInter         = 1 << 0
	commParentMembers = 1 << 1
	commFlagsKnown    = commInter | commParentMembers
)

// maxRank is the largest world rank (an int32); maxGroup bounds a group
// read, above any MPI run's size, so that a corrupt count of a run cannot
// make the reader allocate gigabytes from a few bytes.
const (
	maxRank  = 1<<31 - 1
	maxGroup = 1 << 26
)

func encodeCommRuns(cs []Comm) []byte {
	p, _ := encodeCommGroups(cs, false)
	return p
}

// encodeCommGroups writes cs as COMM RUNS does; with refs, a group whose runs
// take more than a reference does is written as a reference to the run's
// unified definitions (COMM REFS), and refd says whether any was.
func encodeCommGroups(cs []Comm, refs bool) (_ []byte, refd bool) {
	var p wirecodec.Writer
	p.Uvarint(uint64(len(cs)))
	byID := make(map[uint32]int, len(cs))
	for i, c := range cs {
		p.Uvarint(uint64(c.ID))
		p.String(c.Name)
		p.Uvarint(uint64(c.Parent))
		var flags uint64
		if c.Remote != nil {
			// An intra-communicator (nil) and an inter-communicator with
			// an empty remote group are told apart.
			flags |= commInter
		}
		if k, ok := byID[c.Parent]; ok && c.Parent != 0 && len(c.Members) > 0 && slices.Equal(c.Members, cs[k].Members) {
			flags |= commParentMembers
		}
		var members, remote []byte
		if flags&commParentMembers == 0 {
			members, flags = groupOrRef(c.Members, refs, flags, commMembersRef)
		}
		if c.Remote != nil {
			remote, flags = groupOrRef(c.Remote, refs, flags, commRemoteRef)
		}
		refd = refd || flags&(commMembersRef|commRemoteRef) != 0
		p.Uvarint(flags)
		p = append(append(p, members...), remote...)
		if _, dup := byID[c.ID]; !dup {
			byID[c.ID] = i
		}
	}
	return p, refd
}

// appendRankRuns writes rs as runs of equal strides, each taken as long as
// it goes: a list without any is a run per rank, a byte or two more per
// rank than COMMS spent.
func appendRankRuns(p *wirecodec.Writer, rs []int32) {
	p.Uvarint(uint64(len(rs)))
	var runs uint64
	for i := 0; i < len(rs); i += runLen(rs[i:]) {
		runs++
	}
	p.Uvarint(runs)
	last := int64(0)
	for i := 0; i < len(rs); {
		n := runLen(rs[i:])
		p.Varint(int64(rs[i]) - last)
		p.Uvarint(uint64(n - 1))
		if n > 1 {
			p.Varint(int64(rs[i+1]) - int64(rs[i]))
		}
		last = int64(rs[i+n-1])
		i += n
	}
}

// runLen returns the length of the run rs starts with: the ranks as long
// as each is the one before plus the stride of the first two.
func runLen(rs []int32) int {
	if len(rs) < 2 {
		return len(rs)
	}
	stride := int64(rs[1]) - int64(rs[0])
	n := 2
	for n < len(rs) && int64(rs[n])-int64(rs[n-1]) == stride {
		n++
	}
	return n
}

func decodeCommRuns(f *fields) []Comm {
	cs, _ := decodeCommGroups(f, false)
	return cs
}

// decodeCommGroups reads COMM RUNS, or with refs COMM REFS, whose groups may be
// references to the run's definitions: those are returned, for the
// archive to resolve, and their communicators have no members yet.
func decodeCommGroups(f *fields, refs bool) ([]Comm, []commRef) {
	known := uint64(commFlagsKnown)
	if refs {
		known |= commMembersRef | commRemoteRef
	}
	var pending []commRef
	refd := map[int]bool{} // the communicators (by index) waiting for members
	n := f.Count("communicators", 4)
	cs := make([]Comm, 0, n)
	ids := make(map[uint32]int, n)
	for i := 0; i < n && f.OK(); i++ {
		c := Comm{ID: f.U32("communicator id"), Name: f.String("communicator name"), Parent: f.U32("communicator parent")}
		flags := f.Uvarint("communicator flags")
		switch {
		case !f.OK():
		case c.ID == 0:
			f.Fail("communicator id", "0 is not a valid communicator id")
		case ids[c.ID] != 0:
			f.Fail("communicator id", fmt.Sprintf("id %d defined twice", c.ID))
		case c.Parent != 0 && ids[c.Parent] == 0:
			// A communicator is made from one that exists, so its parent
			// comes before it.
			f.Fail("communicator parent", fmt.Sprintf("communicator %d names parent %d, which is not defined before it", c.ID, c.Parent))
		case flags&^known != 0:
			f.Fail("communicator flags", fmt.Sprintf("communicator %d: unknown flags %#x", c.ID, flags))
		case flags&commParentMembers != 0 && c.Parent == 0:
			f.Fail("communicator flags", fmt.Sprintf("communicator %d has its parent's members but no parent", c.ID))
		case flags&commParentMembers != 0 && flags&commMembersRef != 0:
			f.Fail("communicator flags", fmt.Sprintf("communicator %d has its parent's members and a reference to them", c.ID))
		case flags&commInter == 0 && flags&commRemoteRef != 0:
			f.Fail("communicator flags", fmt.Sprintf("communicator %d refers to a remote group but is no inter-communicator", c.ID))
		}
		if !f.OK() {
			break
		}
		ref := commRef{comm: len(cs)}
		switch {
		case flags&commParentMembers != 0:
			parent := ids[c.Parent] - 1
			c.Members = cs[parent].Members
			// A parent whose members are a reference passes them on when
			// they are resolved.
			if refd[parent] {
				ref.parent = parent + 1
			}
		case flags&commMembersRef != 0:
			ref.members = decodeGroupRef(f, "communicator members")
		default:
			c.Members = decodeRankRuns(f, "communicator members")
		}
		if flags&commInter != 0 {
			if flags&commRemoteRef != 0 {
				ref.remote = decodeGroupRef(f, "communicator remote group")
			} else if c.Remote = decodeRankRuns(f, "communicator remote group"); c.Remote == nil {
				c.Remote = []int32{}
			}
		}
		if ref.members.total != 0 || ref.remote.total != 0 || ref.parent != 0 {
			pending = append(pending, ref)
			refd[len(cs)] = true
		}
		cs = append(cs, c)
		ids[c.ID] = len(cs) // index+1, so that 0 is "not defined"
	}
	return cs, pending
}

// decodeRankRuns reads a group written by appendRankRuns. Groups read
// before with the same encoding, in any file, give the same slice: a run's
// ten thousand files that each name MPI_COMM_WORLD hold one list of it.
func decodeRankRuns(f *fields, what string) []int32 {
	start := f.Off()
	total := f.Uvarint(what + ": ranks")
	runs := f.Uvarint(what + ": runs")
	if !f.OK() {
		return nil
	}
	// A run takes at least two bytes.
	if total > maxGroup || runs > total || runs > uint64(f.Len())/2 {
		f.Fail(what, fmt.Sprintf("%d ranks in %d runs do not fit the section or exceed %d", total, runs, maxGroup))
		return nil
	}
	if total == 0 {
		return nil
	}
	// The runs are read once to find where they end, which gives the key
	// of the list, and again only if it was not seen before.
	body := f.Off()
	if decodeRuns(f, what, total, runs, nil); !f.OK() {
		return nil
	}
	return rankLists.get(f.Bytes()[start:f.Off()], int(total), func() []int32 {
		rs := make([]int32, 0, total)
		g := fields{Reader: wirecodec.MakeReader(f.Bytes()[:f.Off()], body), base: f.base, sec: f.sec}
		return decodeRuns(&g, what, total, runs, rs)
	})
}

// decodeRuns reads runs runs of total ranks in all, checking each rank,
// and appends them to rs when rs is not nil.
func decodeRuns(f *fields, what string, total, runs uint64, rs []int32) []int32 {
	last := int64(0)
	var got uint64
	for k := uint64(0); k < runs && f.OK(); k++ {
		first := last + int64(f.Int(what+": first rank", -maxRank, maxRank))
		n := f.Uvarint(what+": run length") + 1
		stride := int64(0)
		if n > 1 {
			stride = int64(f.Int(what+": stride", -maxRank, maxRank))
		}
		if !f.OK() {
			break
		}
		if n > total-got {
			f.Fail(what, fmt.Sprintf("runs hold more than the %d ranks said", total))
			break
		}
		// Both ends in range and a run is linear, so every rank is.
		end := first + int64(n-1)*stride
		if first < 0 || first > maxRank || end < 0 || end > maxRank {
			f.Fail(what, fmt.Sprintf("a run of %d ranks from %d by %d leaves 0..%d", n, first, stride, maxRank))
			break
		}
		if rs != nil {
			for r, j := first, uint64(0); j < n; r, j = r+stride, j+1 {
				rs = append(rs, int32(r))
			}
		}
		got += n
		last = end
	}
	if f.OK() && got != total {
		f.Fail(what, fmt.Sprintf("runs hold %d ranks, not the %d said", got, total))
	}
	return rs
}

// rankLists shares the groups of communicators between the files a
// process reads, keyed by their encoding in COMM RUNS; rankListsV1 those
// of COMMS, whose encoding differs. They hold them weakly: a list no file
// uses any more is collected, and its entry with it.
var (
	rankLists   = rankInterner{m: map[string]weak.Pointer[int32]{}}
	rankListsV1 = rankInterner{m: map[string]weak.Pointer[int32]{}}
)

// minShared is the smallest group shared: a shorter one costs about what
// its entry in rankLists would, and would come from the tiny allocator,
// whose blocks weak pointers and cleanups do not track one by one.
const minShared = 16

type rankInterner struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[int32] // encoding -> the list's first element
}

// get returns the list of n ranks encoded as key, built by build when no
// list of that key is alive. Callers must not modify the list: other files
// hold it too.
func (t *rankInterner) get(key []byte, n int, build func() []int32) []int32 {
	if n < minShared {
		return build()
	}
	t.mu.Lock()
	if wp, ok := t.m[string(key)]; ok {
		if p := wp.Value(); p != nil {
			t.mu.Unlock()
			return unsafe.Slice(p, n)
		}
	}
	t.mu.Unlock()
	rs := build()
	if len(rs) != n {
		return rs // an error in the runs: the caller fails
	}
	rs = rs[:n:n]
	k := string(key)
	t.mu.Lock()
	defer t.mu.Unlock()
	if wp, ok := t.m[k]; ok {
		if p := wp.Value(); p != nil {
			return unsafe.Slice(p, n) // another reader built it meanwhile
		}
	}
	t.m[k] = weak.Make(&rs[0])
	runtime.AddCleanup(&rs[0], t.forget, k)
	return rs
}

// forget drops the entry of a collected list, unless a new list took its
// key since.
func (t *rankInterner) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if wp, ok := t.m[key]; ok && wp.Value() == nil {
		delete(t.m, key)
	}
}
