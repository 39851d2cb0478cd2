package tracefile

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// A run's definitions unified across its ranks: every region (with its
// source location and paradigm), communicator, location and metric of any
// rank, once. The ranks of an MPI run unify them at the collective end
// (cshim/mpi: defs_unify), merging their tables two by two up a binomial
// tree, so that no rank holds more than the run's tables; group 0's
// archive keeps the result as the results section ResultDefinitions.
// Readers without it (rank files, archives of older runs) unify the files'
// own tables by the same rule (UnifyDefinitions), so both give the same
// tables in the same order: a definition's unified id is its place in the
// order in which the ranks, lowest first, define it.
//
// The rule, as the OTF2 export applies it: a region is its name, source
// file, line and paradigm; a location its rank and its id there; a metric
// its name; a communicator its members and remote group, and which of the
// rank's communicators with those members it is (the first, the second,
// ...): MPI_COMM_WORLD and a duplicate of it are two. MPI_COMM_SELF is one
// definition for the run, with no members: each rank's is itself.

// ResultDefinitions is the kind of the results section that holds a run's
// unified definitions (RunDefinitions' binary form). Its number leaves
// the small ones to the run-wide analyses' results.
const ResultDefinitions byte = 0x20

// RunDefinitions are a run's definitions unified across its ranks. IDs are
// 1, 2, ... in the order of the slices.
type RunDefinitions struct {
	Regions   []Region
	Comms     []RunComm
	Locations []RunLocation
	Metrics   []string

	// The keys of the definitions, built as they are added.
	regionKeys map[runRegionKey]uint32
	commKeys   map[commSeqKey]uint32
	locKeys    map[RunLocation]uint32
	metricKeys map[string]uint32
	listKeys   map[listID]string
}

// RunComm is a communicator of the run: its unified id, its parent's
// unified id, and which of a rank's communicators with its members it is
// (Seq, from 0).
type RunComm struct {
	Comm
	Seq int
}

// RunLocation is a location of the run: the rank that holds it and its id
// there.
type RunLocation struct {
	Rank int
	ID   uint32
	Name string
}

// commSeqKey is a communicator's key and its place among the rank's
// communicators with the same key: a struct, not their concatenation,
// which copied the key (a long one for an irregular group) per rank.
type commSeqKey struct {
	key string
	seq int
}

type runRegionKey struct {
	name, file string
	line       int
	paradigm   Paradigm
}

// selfKey is MPI_COMM_SELF's key: one definition for the run.
const selfKey = "self"

// commKey is a communicator's key without its place among the rank's
// communicators with the same members: its groups in their compact form
// (COMM RUNS' runs), an inter-communicator's two in a fixed order so that
// both sides find the same.
func (d *RunDefinitions) commKey(c *Comm) string {
	if c.Name == "MPI_COMM_SELF" && c.Remote == nil && len(c.Members) <= 1 {
		return selfKey
	}
	a := d.ranksKey(c.Members)
	if c.Remote == nil {
		return a
	}
	b := d.ranksKey(c.Remote)
	if b < a {
		a, b = b, a
	}
	return "inter" + strconv.Itoa(len(a)) + ":" + a + b
}

// listID names a list of ranks by where it is: the reader shares one list
// between the files that name it (MPI_COMM_WORLD in every rank's), so
// that its key is made once, not once per file.
type listID struct {
	first *int32
	n     int
}

// ranksKey is a group's key: its runs, as COMM RUNS writes them.
func (d *RunDefinitions) ranksKey(rs []int32) string {
	key := func() string {
		var p wirecodec.Writer
		appendRankRuns(&p, rs)
		return string(p)
	}
	if len(rs) < 16 {
		return key()
	}
	id := listID{&rs[0], len(rs)}
	k, ok := d.listKeys[id]
	if !ok {
		k = key()
		d.listKeys[id] = k
	}
	return k
}

func (d *RunDefinitions) init() {
	if d.regionKeys != nil {
		return
	}
	d.regionKeys = make(map[runRegionKey]uint32, len(d.Regions))
	d.commKeys = make(map[commSeqKey]uint32, len(d.Comms))
	d.locKeys = make(map[RunLocation]uint32, len(d.Locations))
	d.metricKeys = make(map[string]uint32, len(d.Metrics))
	d.listKeys = map[listID]string{}
	for i, r := range d.Regions {
		d.regionKeys[runRegionKey{r.Name, r.File, r.Line, r.Paradigm}] = uint32(i + 1)
	}
	for i := range d.Comms {
		d.commKeys[commSeqKey{d.commKey(&d.Comms[i].Comm), d.Comms[i].Seq}] = uint32(i + 1)
	}
	for i, l := range d.Locations {
		d.locKeys[RunLocation{Rank: l.Rank, ID: l.ID}] = uint32(i + 1)
	}
	for i, m := range d.Metrics {
		d.metricKeys[m] = uint32(i + 1)
	}
}

// addRegion returns r's unified id, defining it if it is new.
func (d *RunDefinitions) addRegion(r Region) uint32 {
	k := runRegionKey{r.Name, r.File, r.Line, r.Paradigm}
	if id, ok := d.regionKeys[k]; ok {
		return id
	}
	r.ID = uint32(len(d.Regions) + 1)
	d.Regions = append(d.Regions, r)
	d.regionKeys[k] = r.ID
	return r.ID
}

// addComm returns c's unified id, defining it if it is new; c's Parent is
// already a unified id.
func (d *RunDefinitions) addComm(c Comm, seq int) uint32 {
	key := d.commKey(&c)
	k := commSeqKey{key, seq}
	if id, ok := d.commKeys[k]; ok {
		return id
	}
	if key == selfKey {
		c.Members, c.Parent = nil, 0
	}
	c.ID = uint32(len(d.Comms) + 1)
	d.Comms = append(d.Comms, RunComm{Comm: c, Seq: seq})
	d.commKeys[k] = c.ID
	return c.ID
}

func (d *RunDefinitions) addLocation(l RunLocation) uint32 {
	k := RunLocation{Rank: l.Rank, ID: l.ID}
	if id, ok := d.locKeys[k]; ok {
		return id
	}
	d.Locations = append(d.Locations, l)
	id := uint32(len(d.Locations))
	d.locKeys[k] = id
	return id
}

func (d *RunDefinitions) addMetric(m string) uint32 {
	if id, ok := d.metricKeys[m]; ok {
		return id
	}
	d.Metrics = append(d.Metrics, m)
	id := uint32(len(d.Metrics))
	d.metricKeys[m] = id
	return id
}

// DefinitionMap maps one rank's ids to the run's unified ones.
type DefinitionMap struct {
	Regions map[uint32]uint32 // local region id -> unified id
	Comms   map[uint32]uint32 // local communicator id -> unified id
	Locs    map[uint32]uint32 // local location id -> unified id
	Metrics []uint32          // the rank's metric index -> unified id
}

// Add merges one rank's definitions into d, in the order the rank defined
// them, and returns how its ids map to d's.
func (d *RunDefinitions) Add(t *Trace) DefinitionMap {
	d.init()
	m := DefinitionMap{Regions: map[uint32]uint32{}, Comms: map[uint32]uint32{}, Locs: map[uint32]uint32{}}
	regions := t.Regions
	if t.RegionSeq != nil && regions == nil {
		for r := range t.RegionSeq {
			m.Regions[r.ID] = d.addRegion(r)
		}
	}
	for _, r := range regions {
		m.Regions[r.ID] = d.addRegion(r)
	}
	seen := map[string]int{}
	for _, c := range t.Comms {
		key := d.commKey(&c)
		seq := seen[key]
		seen[key]++
		c.Parent = m.Comms[c.Parent] // 0 stays 0; a parent comes before its children
		m.Comms[c.ID] = d.addComm(c, seq)
	}
	for _, l := range t.Locations {
		m.Locs[l.ID] = d.addLocation(RunLocation{Rank: t.Header.Rank, ID: l.ID, Name: l.Name})
	}
	for _, name := range t.Header.Metrics {
		m.Metrics = append(m.Metrics, d.addMetric(name))
	}
	return m
}

// Merge merges o, another part of the run (ranks after d's), into d: o's
// definitions that d lacks are appended in o's order.
func (d *RunDefinitions) Merge(o *RunDefinitions) {
	d.init()
	for _, r := range o.Regions {
		d.addRegion(r)
	}
	ids := make([]uint32, len(o.Comms)+1)
	for _, c := range o.Comms {
		cc := c.Comm
		cc.Parent = ids[c.Parent] // o's parents come before their children
		ids[c.ID] = d.addComm(cc, c.Seq)
	}
	for _, l := range o.Locations {
		d.addLocation(l)
	}
	for _, m := range o.Metrics {
		d.addMetric(m)
	}
}

// Map returns how t's ids map to d's, for a rank's trace whose
// definitions d holds (it was built from them, or unified with them).
// Definitions d lacks map to 0.
func (d *RunDefinitions) Map(t *Trace) DefinitionMap {
	d.init()
	probe := &RunDefinitions{}
	probe.init()
	probe.listKeys = d.listKeys // a list shared by the files is keyed once
	local := probe.Add(t)
	m := DefinitionMap{Regions: make(map[uint32]uint32, len(local.Regions)), Comms: make(map[uint32]uint32, len(local.Comms)),
		Locs: make(map[uint32]uint32, len(local.Locs))}
	for id, u := range local.Regions {
		r := probe.Regions[u-1]
		m.Regions[id] = d.regionKeys[runRegionKey{r.Name, r.File, r.Line, r.Paradigm}]
	}
	for id, u := range local.Comms {
		c := probe.Comms[u-1]
		m.Comms[id] = d.commKeys[commSeqKey{d.commKey(&c.Comm), c.Seq}]
	}
	for id, u := range local.Locs {
		m.Locs[id] = d.locKeys[RunLocation{Rank: probe.Locations[u-1].Rank, ID: probe.Locations[u-1].ID}]
	}
	for _, u := range local.Metrics {
		m.Metrics = append(m.Metrics, d.metricKeys[probe.Metrics[u-1]])
	}
	return m
}

// UnifyDefinitions unifies the definitions of a run's traces, in the order
// given (a run's files by rank), by the rule the ranks unify them at the
// collective end: the tables the run archive keeps, made from the files.
func UnifyDefinitions(files []*File) *RunDefinitions {
	d := &RunDefinitions{}
	for _, f := range files {
		d.Add(&f.Trace)
	}
	return d
}

// The binary form (ResultDefinitions):
//
//	defs     := version (1) | regions | comms | seqs | locations | metrics
//	regions  := count | (name | file | line | paradigm)*
//	comms    := the COMM RUNS section's payload, with unified ids
//	seqs     := a uvarint per communicator: its Seq
//	locations:= count | (rank | id | name)*
//	metrics  := count | name*
const runDefsVersion = 1

// MarshalBinary encodes d.
func (d *RunDefinitions) MarshalBinary() ([]byte, error) {
	var p wirecodec.Writer
	p.Uvarint(runDefsVersion)
	p.Uvarint(uint64(len(d.Regions)))
	for _, r := range d.Regions {
		p.String(r.Name)
		p.String(r.File)
		p.Varint(int64(r.Line))
		p.U8(uint8(r.Paradigm))
	}
	comms := make([]Comm, len(d.Comms))
	for i, c := range d.Comms {
		comms[i] = c.Comm
	}
	p = append(p, encodeCommRuns(comms)...)
	for _, c := range d.Comms {
		p.Uvarint(uint64(c.Seq))
	}
	p.Uvarint(uint64(len(d.Locations)))
	for _, l := range d.Locations {
		p.Varint(int64(l.Rank))
		p.Uvarint(uint64(l.ID))
		p.String(l.Name)
	}
	p.Strings(d.Metrics)
	return p, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote; a malformed payload is
// an error naming the field, never a panic.
func (d *RunDefinitions) UnmarshalBinary(b []byte) error {
	f := sectionFields(b, 0, "run definitions")
	if v := f.Uvarint("version"); f.OK() && v != runDefsVersion {
		return fmt.Errorf("run definitions: version %d, want %d", v, runDefsVersion)
	}
	*d = RunDefinitions{}
	n := f.Count("regions", 4)
	for i := 0; i < n && f.OK(); i++ {
		r := Region{ID: uint32(i + 1), Name: f.String("region name"), File: f.String("region file"),
			Line: f.Int("region line", -1<<31, 1<<31-1), Paradigm: Paradigm(f.U8("region paradigm"))}
		d.Regions = append(d.Regions, r)
	}
	comms := decodeCommRuns(f)
	for i, c := range comms {
		if f.OK() && c.ID != uint32(i+1) {
			f.Fail("communicator id", fmt.Sprintf("id %d at place %d: unified ids are 1, 2, ...", c.ID, i+1))
		}
		d.Comms = append(d.Comms, RunComm{Comm: c, Seq: int(f.Uvarint("communicator seq"))})
	}
	n = f.Count("locations", 3)
	for i := 0; i < n && f.OK(); i++ {
		l := RunLocation{Rank: f.Int("location rank", -1, maxRank), ID: f.U32("location id"), Name: f.String("location name")}
		d.Locations = append(d.Locations, l)
	}
	d.Metrics = f.Strings("metrics")
	f.Done()
	if !f.OK() {
		*d = RunDefinitions{}
		return f.formatError()
	}
	return nil
}

// Equal reports whether d and o hold the same tables in the same order.
func (d *RunDefinitions) Equal(o *RunDefinitions) bool {
	return slices.Equal(d.Regions, o.Regions) &&
		slices.EqualFunc(d.Comms, o.Comms, func(a, b RunComm) bool {
			return a.ID == b.ID && a.Name == b.Name && a.Parent == b.Parent && a.Seq == b.Seq &&
				slices.Equal(a.Members, b.Members) && slices.Equal(a.Remote, b.Remote) && (a.Remote == nil) == (b.Remote == nil)
		}) &&
		slices.Equal(d.Locations, o.Locations) && slices.Equal(d.Metrics, o.Metrics)
}

// ReadRunDefinitions returns the unified definitions of a run read as
// files (its ranks, any order), as ReadUnified finds them; fromRun says
// whether they are the tables its ranks unified at the collective end.
func ReadRunDefinitions(files []*File) (d *RunDefinitions, fromRun bool, err error) {
	r, err := ReadUnified(files)
	if err != nil {
		return nil, false, err
	}
	return r.Defs, r.FromRun, nil
}

// Unified is a run's definitions as its readers take them: the run's
// unified tables, and how each of its files' ids map to them.
type Unified struct {
	Defs *RunDefinitions
	// FromRun: the tables are those the ranks unified at the collective
	// end, read from group 0's archive; else the files' own, unified by
	// name in rank order.
	FromRun bool
	Maps    []DefinitionMap // Maps[i] maps the ids of the i-th file given
}

// ReadUnified returns the unified definitions of a run read as files (its
// ranks, any order) and each file's map to them. When the files are the
// slots of run archives whose group 0 keeps the run's tables, those are
// the tables, and each rank's ids are mapped into them (RunDefinitions.Map):
// no table is rebuilt. Else (rank files, part of a run, an archive of an
// older run) the files' own tables are unified by name in rank order
// (UnifyDefinitions). This is the one place that decides; both give the
// same tables for the same run. What a rank defined after MPI_Finalize is
// not in the run's tables, and is appended after them, in rank order.
func ReadUnified(files []*File) (*Unified, error) {
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return files[a].Header.Rank - files[b].Header.Rank })
	byRank := make([]*File, len(files))
	for i, k := range order {
		byRank[i] = files[k]
	}
	d, err := archivedDefinitions(byRank)
	if err != nil {
		return nil, err
	}
	run := &Unified{Defs: d, FromRun: d != nil, Maps: make([]DefinitionMap, len(files))}
	if d == nil {
		run.Defs = &RunDefinitions{}
	}
	for _, k := range order {
		t := &files[k].Trace
		if !run.FromRun {
			run.Maps[k] = run.Defs.Add(t)
			continue
		}
		m := run.Defs.Map(t)
		if m.lacks() {
			m = run.Defs.Add(t) // what the rank defined after the run's tables were made
		}
		run.Maps[k] = m
	}
	return run, nil
}

// lacks reports whether a map has an id the run's tables lack (0).
func (m *DefinitionMap) lacks() bool {
	for _, u := range m.Regions {
		if u == 0 {
			return true
		}
	}
	for _, u := range m.Comms {
		if u == 0 {
			return true
		}
	}
	for _, u := range m.Locs {
		if u == 0 {
			return true
		}
	}
	return slices.Contains(m.Metrics, 0)
}

// archivedDefinitions returns the run's tables of group 0's archive, when
// files are every slot of the run's archives; nil without an error when
// they are not (rank files, part of a run, an archive of an older run).
func archivedDefinitions(files []*File) (*RunDefinitions, error) {
	if len(files) == 0 {
		return nil, nil
	}
	path, _, ok := strings.Cut(files[0].Path, ArchiveExt+"#")
	if !ok {
		return nil, nil
	}
	path += ArchiveExt
	for _, f := range files {
		if !strings.Contains(f.Path, ArchiveExt+"#") {
			return nil, nil // a rank's own file beside the archive
		}
	}
	a, err := OpenArchive(path)
	if err != nil {
		return nil, err
	}
	if a.Group != 0 {
		a.Close()
		if a, err = OpenArchive(ArchiveName(filepath.Dir(path), a.Name, 0, a.Groups)); err != nil {
			return nil, err
		}
	}
	defer a.Close()
	if !coversFiles(a, files) {
		return nil, nil
	}
	b, ok, err := a.Result(ResultDefinitions)
	if err != nil || !ok {
		return nil, err
	}
	d := &RunDefinitions{}
	if err := d.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: %w", a.Path, err)
	}
	return d, nil
}

// coversFiles reports whether files are exactly the run's ranks (one each,
// 0 to World-1), so that the run's tables are theirs.
func coversFiles(a *Archive, files []*File) bool {
	if len(files) != a.World {
		return false
	}
	seen := make([]bool, a.World)
	for _, f := range files {
		r := f.Header.Rank
		if r < 0 || r >= a.World || seen[r] {
			return false
		}
		seen[r] = true
	}
	return true
}

// Region returns the run's region that region id of the i-th file given to
// ReadUnified is, with its unified id; nil and 0 when the file does not
// define id (a record may name one: the reader lets it through, and the
// tools call it region#id).
func (u *Unified) Region(i int, id uint32) (*Region, uint32) {
	k := u.Maps[i].Regions[id]
	if k == 0 || int(k) > len(u.Defs.Regions) {
		return nil, 0
	}
	return &u.Defs.Regions[k-1], k
}

// Comm returns the unified id of communicator id of the i-th file given to
// ReadUnified, 0 when the file does not define it.
func (u *Unified) Comm(i int, id uint32) uint32 {
	return u.Maps[i].Comms[id]
}

// Metric returns the name of the k-th metric of the i-th file given to
// ReadUnified, "" when the file has no such metric.
func (u *Unified) Metric(i, k int) string {
	m := u.Maps[i].Metrics
	if k < 0 || k >= len(m) || m[k] == 0 || int(m[k]) > len(u.Defs.Metrics) {
		return ""
	}
	return u.Defs.Metrics[m[k]-1]
}

// RegionLabels returns what the tools call each of the run's regions, by
// unified id - 1: its name, and where two or more of the run's regions
// share the name (two functions of one name in different files), its
// source location after it, "name (file:line)", so that no two are
// printed alike for different regions.
func (d *RunDefinitions) RegionLabels() []string {
	named := make(map[string]int, len(d.Regions))
	for i := range d.Regions {
		named[d.Regions[i].Name]++
	}
	out := make([]string, len(d.Regions))
	for i := range d.Regions {
		r := &d.Regions[i]
		out[i] = r.Name
		if named[r.Name] > 1 {
			out[i] += " (" + r.Source() + ")"
		}
	}
	return out
}

// Source says where a region is defined: its file and line, its file,
// else its paradigm.
func (r *Region) Source() string {
	switch {
	case r.File != "" && r.Line > 0:
		return r.File + ":" + strconv.Itoa(r.Line)
	case r.File != "":
		return r.File
	}
	return r.Paradigm.String()
}
