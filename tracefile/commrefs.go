package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// The COMM REFS section (0x28) is COMM RUNS as a rank writes it into its
// slot of a run archive whose group 0 holds the run's unified definitions
// (ResultDefinitions): a group of ranks that COMM RUNS would spend more
// than a reference on (one that forms no runs, as an irregular
// MPI_Comm_split makes) is a reference to the run's table instead, its
// size and a digest of its runs, so that a slot's bytes do not grow with
// the run's ranks: the run's table holds each group once. World, a row or
// a column of a grid stay as they are, a run or two.
//
//	comm  := as in COMM RUNS, with two more flags:
//	         bit 2: the members are a reference; bit 3: the remote group is
//	ref   := total (uvarint) | digest (uvarint: FNV-1a 64 of the group's
//	         encoding in COMM RUNS)
//
// Only Archive.OpenRank resolves the references, from the run's table; a
// trace with COMM REFS read alone is an error that says so. A reader that
// predates the section skips it and reads the slot without communicators,
// as it reads a file without COMM RUNS. A slot whose groups are all cheap
// gets COMM RUNS, as a file of its own does.
const secCommRefs = 0x28

// Flags of a communicator in COMM REFS.
const (
	commMembersRef = 1 << 2
	commRemoteRef  = 1 << 3
)

// refCost is the bytes of a group's runs above which COMM REFS refers to
// it: about what a reference takes.
const refCost = 12

// groupRef names a group of the run's definitions.
type groupRef struct {
	total  uint64 // ranks in the group; 0: no reference
	digest uint64
}

// commRef is a communicator of a trace read from COMM REFS whose groups
// are still to be taken from the run's definitions.
type commRef struct {
	comm            int // its index in Trace.Comms
	members, remote groupRef
	parent          int // index+1 of the parent whose members it has, when those are a reference
}

// groupDigest returns the reference to a group encoded (as COMM RUNS'
// ranks) as enc.
func groupDigest(enc []byte, total int) groupRef {
	h := fnv.New64a()
	h.Write(enc)
	return groupRef{total: uint64(total), digest: h.Sum64()}
}

// groupOrRef encodes a group for COMM RUNS, or for COMM REFS a reference
// to it when that is shorter (setting bit in flags).
func groupOrRef(rs []int32, refs bool, flags, bit uint64) ([]byte, uint64) {
	var p wirecodec.Writer
	appendRankRuns(&p, rs)
	if !refs || len(p) <= refCost {
		return p, flags
	}
	g := groupDigest(p, len(rs))
	var q wirecodec.Writer
	q.Uvarint(g.total)
	q.Uvarint(g.digest)
	return q, flags | bit
}

func decodeGroupRef(f *fields, what string) groupRef {
	g := groupRef{total: f.Uvarint(what + ": ranks"), digest: f.Uvarint(what + ": digest")}
	if f.OK() && (g.total == 0 || g.total > maxGroup) {
		f.Fail(what, fmt.Sprintf("a reference to a group of %d ranks", g.total))
	}
	return g
}

// errCommRefs is the error of a trace whose communicators refer to a run
// archive's definitions, read without the archive.
var errCommRefs = errors.New("its communicators refer to the unified definitions of the run archive it was written into (COMM REFS): read it through the archive")

// runGroups is the groups of a run's unified communicators by reference.
type runGroups struct {
	byRef map[groupRef][]int32
}

func newRunGroups(d *RunDefinitions) *runGroups {
	g := &runGroups{byRef: map[groupRef][]int32{}}
	add := func(rs []int32) {
		if len(rs) == 0 {
			return
		}
		var p wirecodec.Writer
		appendRankRuns(&p, rs)
		if len(p) > refCost {
			g.byRef[groupDigest(p, len(rs))] = rs
		}
	}
	for _, c := range d.Comms {
		add(c.Members)
		add(c.Remote)
	}
	return g
}

// resolve gives t's communicators the groups their references name.
func (g *runGroups) resolve(t *Trace, refs []commRef) error {
	take := func(r groupRef, c *Comm, what string) ([]int32, error) {
		rs, ok := g.byRef[r]
		if !ok {
			return nil, fmt.Errorf("communicator %d: its %s (%d ranks, digest %016x) are not among the run's unified communicators", c.ID, what, r.total, r.digest)
		}
		return rs, nil
	}
	var err error
	for _, r := range refs {
		c := &t.Comms[r.comm]
		switch {
		case r.parent != 0:
			c.Members = t.Comms[r.parent-1].Members
		case r.members.total != 0:
			if c.Members, err = take(r.members, c, "members"); err != nil {
				return err
			}
		}
		if r.remote.total != 0 {
			if c.Remote, err = take(r.remote, c, "remote group"); err != nil {
				return err
			}
		}
	}
	return nil
}

// runGroupsCache holds the groups of the runs whose archives this process
// read, by group 0's file: a run of many groups loads its table once.
var runGroupsCache struct {
	mu sync.Mutex
	m  map[runFileKey]*runGroupsEntry
}

type runFileKey struct {
	path  string
	size  int64
	mtime time.Time
}

type runGroupsEntry struct {
	once sync.Once
	g    *runGroups
	err  error
}

// groupZero returns the path of the archive file of a's run that holds
// its results (group 0).
func (a *Archive) groupZero() string {
	if a.Group == 0 {
		return a.Path
	}
	return ArchiveName(filepath.Dir(a.Path), a.Name, 0, a.Groups)
}

// runGroups returns the groups of a's run's unified communicators, from
// group 0's results (ResultDefinitions).
func (a *Archive) runGroups() (*runGroups, error) {
	path := a.groupZero()
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("the run's definitions are in group 0's archive: %w", err)
	}
	k := runFileKey{path, st.Size(), st.ModTime()}
	runGroupsCache.mu.Lock()
	if runGroupsCache.m == nil {
		runGroupsCache.m = map[runFileKey]*runGroupsEntry{}
	}
	e := runGroupsCache.m[k]
	if e == nil {
		e = &runGroupsEntry{}
		runGroupsCache.m[k] = e
	}
	runGroupsCache.mu.Unlock()
	e.once.Do(func() { e.g, e.err = loadRunGroups(a, path) })
	return e.g, e.err
}

func loadRunGroups(a *Archive, path string) (*runGroups, error) {
	z := a
	if path != a.Path {
		var err error
		if z, err = OpenArchive(path); err != nil {
			return nil, err
		}
		defer z.Close()
		if z.Name != a.Name || z.World != a.World || z.Groups != a.Groups {
			return nil, fmt.Errorf("%s is of another run (%q, %d ranks in %d files) than %s (%q, %d ranks in %d files)",
				path, z.Name, z.World, z.Groups, a.Path, a.Name, a.World, a.Groups)
		}
	}
	b, ok, err := z.Result(ResultDefinitions)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s holds no unified definitions (results section 0x%02x)", path, ResultDefinitions)
	}
	var d RunDefinitions
	if err := d.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return newRunGroups(&d), nil
}

// hasRunDefinitions reports whether the archive file at path (of group
// group of groups, named name) belongs to a run whose group 0 holds the
// unified definitions: then a slot's communicators may refer to them.
// Every rank asks as it writes its slot, so it reads only group 0's
// prelude and the heads of its results sections, a few dozen bytes.
func hasRunDefinitions(path, name string, group, groups int) bool {
	if group != 0 {
		path = ArchiveName(filepath.Dir(path), name, 0, groups)
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var pre [preludeSize]byte
	if n, _ := f.ReadAt(pre[:], 0); n < preludeSize || string(pre[:8]) != archiveMagic {
		return false
	}
	le := binary.LittleEndian
	if le.Uint32(pre[8:]) != archiveVersion || le.Uint32(pre[20:]) != 0 || le.Uint32(pre[24:]) != uint32(groups) {
		return false
	}
	resOff, resLen := int64(le.Uint64(pre[48:])), int64(le.Uint64(pre[56:]))
	if resOff < preludeSize || resLen < 4 || resLen > 1<<40 {
		return false
	}
	// The sections: kind, uvarint length, payload; the checksum last.
	var head [1 + binary.MaxVarintLen64]byte
	for off, end := resOff, resOff+resLen-4; off < end; {
		n, err := f.ReadAt(head[:], off)
		if n < 2 && err != nil {
			return false
		}
		l, k := binary.Uvarint(head[1:n])
		if k <= 0 || l > uint64(end-off) {
			return false
		}
		if head[0] == ResultDefinitions {
			return true
		}
		off += 1 + int64(k) + int64(l)
	}
	return false
}

// resolveComms gives the communicators of a rank read from a (COMM REFS)
// the groups they refer to, from the run's definitions.
func (a *Archive) resolveComms(f *File) error {
	g, err := a.runGroups()
	if err != nil {
		return fmt.Errorf("%w: %v", errCommRefs, err)
	}
	if err := g.resolve(&f.Trace, f.commRefs); err != nil {
		return err
	}
	f.commRefs = nil
	return nil
}
