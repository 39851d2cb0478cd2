package convert

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Communicators as OTF2 means them, the way MPI measurement systems write
// them (Knüpfer et al. for Score-P): a COMM_LOCATIONS group of the MPI
// paradigm lists one location per world rank, its index being the rank's
// OTF2 rank; every communicator has a COMM_GROUP of such indices, in the
// order of the communicator's ranks; MPI_COMM_SELF has the COMM_SELF group;
// an inter-communicator is an InterComm of its two groups. Events name a
// peer or a root by its rank in the communicator (for an inter-communicator,
// in the group that holds it, as MPI does).
//
// Only the ranks whose file is exported have a location, so the OTF2 ranks
// are the indices of the exported world ranks in increasing order, and the
// groups hold their exported members only: with every rank exported, the
// usual case, OTF2 ranks are world ranks and groups are complete.

// worldName and selfName are the names MPI gives the predefined
// communicators; the exporter uses them whether or not the trace records
// them.
const (
	worldName = "MPI_COMM_WORLD"
	selfName  = "MPI_COMM_SELF"
)

// comm is an exported communicator.
type comm struct {
	ref  otf2.CommRef
	self bool
	// rank maps a world rank to its rank in the communicator: for an
	// inter-communicator, in whichever of its two groups holds it.
	rank   map[int32]uint32
	parent *comm // nil for none
}

// common returns c or its nearest ancestor that has every exported member
// of the inter-communicator's groups, nil if none: the communicator common
// to both groups, as OTF2's InterComm names it. The wrappers record as an
// inter-communicator's parent the local communicator it was made from,
// which differs between the two sides.
func (c *comm) common(rank map[int32]uint32) *comm {
	for ; c != nil; c = c.parent {
		if c.self {
			continue
		}
		all := true
		for r := range rank {
			if _, ok := c.rank[r]; !ok {
				all = false
				break
			}
		}
		if all {
			return c
		}
	}
	return nil
}

// rankOf returns the rank in c of the process of the given world rank, or
// false if it is not an exported member.
func (c *comm) rankOf(world int64, own int) (uint32, bool) {
	if c.self {
		// MPI_COMM_SELF has one rank, the process itself.
		return 0, world == int64(own)
	}
	if world < 0 || world > int64(^uint32(0)>>1) {
		return 0, false
	}
	r, ok := c.rank[int32(world)]
	return r, ok
}

// mpiComms holds the MPI definitions of an export.
type mpiComms struct {
	index map[int32]uint64 // world rank -> its index in COMM_LOCATIONS
	world *comm
	self  *comm
	// byRun are the run's communicators (tracefile.ReadUnified), by
	// unified id - 1; nil for one left out. A file's id is mapped to
	// its unified one through the run's DefinitionMap.
	byRun []*comm
	undef map[[2]uint64]bool // (file, id) of communicators a file does not define, counted once
	// groups are the COMM_GROUPs defined, by their members: communicators
	// with the same members (MPI_COMM_WORLD, its duplicates, a cartesian
	// communicator over every rank) share one, as OTF2 allows. OTF2
	// groups list their members, with no ranges or strides, so one group
	// per distinct list is as compact as the archive gets.
	groups map[string]otf2.GroupRef
	// keys are the memberKeys of the groups the files hold: the reader
	// shares a list between the files that name it (tracefile's COMM
	// RUNS), so each list's key is built once, not once per file.
	keys map[listID]string
	// partial is set when some members of the communicators have no
	// exported file, or some communicators are left out: receives may then
	// be left out.
	partial bool
}

// defineMPI makes the MPI communicators: COMM_LOCATIONS over the exported
// world ranks, MPI_COMM_WORLD, MPI_COMM_SELF and each file's communicators,
// unified across files.
func (x *exporter) defineMPI() error {
	m := &mpiComms{index: map[int32]uint64{}, undef: map[[2]uint64]bool{},
		groups: map[string]otf2.GroupRef{}, keys: map[listID]string{},
		byRun: make([]*comm, len(x.u.Defs.Comms))}
	// The exported world ranks: those of exactly one file, which has a
	// location for them.
	claims := map[int]int{}
	for _, f := range x.files {
		claims[f.Header.Rank]++
	}
	type rankLoc struct {
		rank int32
		loc  otf2.LocationRef
	}
	var present []rankLoc
	for i, f := range x.files {
		r := f.Header.Rank
		if claims[r] != 1 || r < 0 || r > int(^uint32(0)>>1) {
			continue
		}
		end, ok, err := x.peers.Resolve(i, &tracefile.Event{PeerRank: true, Peer: uint64(r)})
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if ok {
			present = append(present, rankLoc{int32(r), x.writers[end.File][end.Loc].Ref()})
		}
	}
	slices.SortFunc(present, func(a, b rankLoc) int { return int(a.rank) - int(b.rank) })
	locs := make([]uint64, len(present))
	all := make([]int32, len(present))
	for k, p := range present {
		m.index[p.rank] = uint64(k)
		locs[k] = uint64(p.loc)
		all[k] = p.rank
	}
	if _, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommLocations, Paradigm: otf2.ParadigmMPI, Members: locs}); err != nil {
		return err
	}
	x.mpi = m
	// MPI_COMM_WORLD: the members a file recorded for it, else the
	// exported ranks.
	worldMembers := all
	for _, c := range x.u.Defs.Comms {
		if isWorld(&c.Comm) {
			worldMembers = c.Members
			break
		}
	}
	var err error
	if m.world, err = x.intraComm(worldName, worldMembers, nil); err != nil {
		return err
	}
	ref, err := x.a.MPICommSelf(selfName)
	if err != nil {
		return err
	}
	m.self = &comm{ref: ref, self: true}
	if err := x.runComms(); err != nil {
		return err
	}
	m.partial = x.st.CommMembersNotExported > 0 || len(x.st.InvalidComms) > 0
	return nil
}

// fileComm returns the exported communicator of id of file i, nil if it
// is not defined, or left out; id 0 is MPI_COMM_WORLD.
func (m *mpiComms) fileComm(u *tracefile.Unified, i int, id uint32) *comm {
	if id == 0 {
		return m.world
	}
	if k := u.Comm(i, id); k > 0 {
		return m.byRun[k-1]
	}
	return nil
}

func isWorld(c *tracefile.Comm) bool {
	return c.Name == worldName && c.Parent == 0 && c.Remote == nil
}

func isSelf(c *tracefile.Comm) bool {
	return c.Name == selfName && c.Parent == 0 && c.Remote == nil
}

// runComms defines the run's communicators (tracefile.ReadUnified), each
// once, in the order of the run's table: the run's tables say which
// communicators of the files are the same one (the same members and
// remote group, the k-th made with them: processes create communicators
// in the same order, as MPI requires of collective creation calls).
func (x *exporter) runComms() error {
	m := x.mpi
	// Where each of the run's communicators is first defined, a file and
	// its id there: what a communicator left out is named by.
	// A file's definition with id 0 (invalid) is the origin only when no
	// file defines the communicator validly.
	type origin struct {
		file      int
		id, local uint32 // its id, its parent's, in the file
		set       bool
	}
	first := make([]origin, len(x.u.Defs.Comms))
	for i, f := range x.files {
		for _, c := range f.Comms {
			if k := x.u.Comm(i, c.ID); k > 0 && (!first[k-1].set || first[k-1].id == 0 && c.ID != 0) {
				first[k-1] = origin{file: i, id: c.ID, local: c.Parent, set: true}
			}
		}
	}
	for k := range x.u.Defs.Comms {
		c := &x.u.Defs.Comms[k].Comm
		at := first[k]
		f := x.files[at.file]
		local := *c
		local.ID, local.Parent = at.id, at.local
		switch {
		case at.set && at.id == 0:
			x.invalidComm(f, local, "id 0 means none")
			continue
		case isWorld(c):
			m.byRun[k] = m.world
			continue
		case isSelf(c):
			m.byRun[k] = m.self
			continue
		}
		if why := checkMembers(c.Members, c.Remote); why != "" {
			x.invalidComm(f, local, why)
			continue
		}
		var parent *comm
		if at.local != 0 || !at.set && c.Parent != 0 {
			// The run's tables leave a parent the file does not define
			// before it at 0. A communicator of the run's tables that
			// no file given defines takes its parent from the tables.
			if c.Parent != 0 {
				parent = m.byRun[c.Parent-1]
			}
			if parent == nil {
				x.invalidComm(f, local, fmt.Sprintf("its parent %d is not defined before it, or not validly", at.local))
				continue
			}
		}
		var u *comm
		var err error
		if c.Remote == nil {
			u, err = x.intraComm(c.Name, c.Members, parent)
		} else {
			u, err = x.interComm(c.Name, c.Members, c.Remote, parent)
		}
		if err != nil {
			return fmt.Errorf("%s: communicator %d %q: %w", f.Path, at.id, c.Name, err)
		}
		m.byRun[k] = u
	}
	return nil
}

// checkMembers says why members and remote cannot be a communicator's
// groups, "" if they can.
func checkMembers(members, remote []int32) string {
	in := make(map[int32]bool, len(members)+len(remote))
	for _, r := range members {
		if in[r] {
			return fmt.Sprintf("world rank %d is a member twice", r)
		}
		in[r] = true
	}
	for _, r := range remote {
		if in[r] {
			return fmt.Sprintf("world rank %d is twice in the remote group or in both groups", r)
		}
		in[r] = true
	}
	return ""
}

// invalidComm leaves out communicator c of file f, saying why; records
// naming it count as naming an undefined communicator.
func (x *exporter) invalidComm(f *tracefile.File, c tracefile.Comm, why string) {
	x.st.InvalidComms = append(x.st.InvalidComms, fmt.Sprintf("%s: communicator %d %q: %s", f.Path, c.ID, c.Name, why))
}

// listID names a list of ranks by where it is: the same list read from
// several files.
type listID struct {
	first *int32
	n     int
}

// ranksKey is ranksKey(rs), remembered for the list rs is.
func (m *mpiComms) ranksKey(rs []int32) string {
	if len(rs) < 16 {
		return ranksKey(rs) // a list this short is each file's own
	}
	id := listID{&rs[0], len(rs)}
	k, ok := m.keys[id]
	if !ok {
		k = ranksKey(rs)
		m.keys[id] = k
	}
	return k
}

func ranksKey(rs []int32) string {
	var s strings.Builder
	for _, r := range rs {
		s.WriteString(strconv.Itoa(int(r)))
		s.WriteByte(',')
	}
	return s.String()
}

// commGroup defines the COMM_GROUP of the exported members (distinct: see
// checkMembers), in order, and returns it with each member's rank in it.
func (x *exporter) commGroup(members []int32) (otf2.GroupRef, map[int32]uint32, error) {
	idx := make([]uint64, 0, len(members))
	rank := make(map[int32]uint32, len(members))
	for _, r := range members {
		k, ok := x.mpi.index[r]
		if !ok {
			x.st.CommMembersNotExported++
			continue
		}
		rank[r] = uint32(len(idx))
		idx = append(idx, k)
	}
	key := indexKey(idx)
	if g, ok := x.mpi.groups[key]; ok {
		return g, rank, nil
	}
	g, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI, Members: idx})
	if err == nil {
		x.mpi.groups[key] = g
	}
	return g, rank, err
}

// indexKey identifies a group's members.
func indexKey(idx []uint64) string {
	b := make([]byte, 0, 3*len(idx))
	for _, k := range idx {
		b = binary.AppendUvarint(b, k)
	}
	return string(b)
}

func (x *exporter) intraComm(name string, members []int32, parent *comm) (*comm, error) {
	g, rank, err := x.commGroup(members)
	if err != nil {
		return nil, err
	}
	ref, err := x.a.Comm(name, g, refOf(parent))
	if err != nil {
		return nil, err
	}
	return &comm{ref: ref, rank: rank, parent: parent}, nil
}

func (x *exporter) interComm(name string, local, remote []int32, parent *comm) (*comm, error) {
	if x.mpi.ranksKey(remote) < x.mpi.ranksKey(local) {
		local, remote = remote, local
	}
	ga, ra, err := x.commGroup(local)
	if err != nil {
		return nil, err
	}
	gb, rb, err := x.commGroup(remote)
	if err != nil {
		return nil, err
	}
	for r, k := range rb { // checkMembers made the groups disjoint
		ra[r] = k
	}
	ref, err := x.a.InterComm(name, ga, gb, refOf(parent.common(ra)))
	if err != nil {
		return nil, err
	}
	return &comm{ref: ref, rank: ra, parent: parent}, nil
}

// refOf is the reference of c, NoComm for nil.
func refOf(c *comm) otf2.CommRef {
	if c == nil {
		return otf2.NoComm
	}
	return c.ref
}

// commOf returns the exported communicator of a record of file i: id 0 is
// MPI_COMM_WORLD (a message of a trace that names no communicator). An id
// the file does not define gives false and is counted once.
func (x *exporter) commOf(i int, id uint32) (*comm, bool, error) {
	if x.mpi == nil {
		var err error
		if x.sh != nil {
			err = x.sh.defineMPI(x)
		} else {
			err = x.defineMPI()
		}
		if err != nil {
			return nil, false, err
		}
	}
	if id == 0 {
		return x.mpi.world, true, nil
	}
	c := x.mpi.fileComm(x.u, i, id)
	ok := c != nil
	if !ok {
		if x.sh != nil {
			// The workers share the set of communicators counted.
			x.sh.mu.Lock()
			defer x.sh.mu.Unlock()
		}
		k := [2]uint64{uint64(i), uint64(id)}
		if !x.mpi.undef[k] {
			x.mpi.undef[k] = true
			x.st.UndefinedComms++
		}
	}
	return c, ok, nil
}
