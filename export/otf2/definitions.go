package otf2

import (
	"fmt"
	"math"
	"strings"
)

// Definition references. OTF2 requires those of each kind to be dense,
// 0..N-1 in the order they are defined, which is how this writer assigns
// them.
type (
	SystemTreeNodeRef uint32
	LocationGroupRef  uint32
	LocationRef       uint64
	RegionRef         uint32
	GroupRef          uint32
	CommRef           uint32
	MetricMemberRef   uint32
	MetricRef         uint32
	stringRef         uint32
)

// undefined is OTF2's UNDEFINED reference (all ones).
const undefined = math.MaxUint32

// NoParent is the parent of a root system tree node.
const NoParent SystemTreeNodeRef = undefined

// NoComm is the parent of a communicator that has none.
const NoComm CommRef = undefined

// Global definition record ids (OTF2_GLOBAL_DEF_*) and local ones.
const (
	defClockProperties = 5
	defString          = 10
	defSystemTreeNode  = 12
	defLocationGroup   = 13
	defLocation        = 14
	defRegion          = 15
	defGroup           = 18
	defMetricMember    = 19
	defMetricClass     = 20
	defComm            = 22
	defInterComm       = 43

	localDefClockOffset = 6
)

// Upper bounds of the payloads of definitions whose size grows with their
// input, used to reject at once a definition that could not fit in a chunk.
func stringEstimate(s string) int   { return maxCU32 + len(s) + 1 }
func groupEstimate(members int) int { return 4*maxCU32 + 3 + members*maxCU64 }

// recordBound is the size of a record with a payload of n bytes: id, length
// (one byte, or FF and a full uint64 from 255 on) and payload. For events,
// libotf2 uses it with an upper bound of the payload to switch chunks and
// pick the length form; for definitions with the exact payload size.
func recordBound(n int) int {
	if n >= 255 {
		return 1 + 9 + n
	}
	return 1 + 1 + n
}

type systemTreeNodeDef struct {
	name, class stringRef
	parent      SystemTreeNodeRef
}

type locationGroupDef struct {
	name   stringRef
	parent SystemTreeNodeRef
}

type locationDef struct {
	name   stringRef
	label  string // for error messages
	group  LocationGroupRef
	events uint64
	writer *EventWriter // nil once closed
	// clockOffsets are the encoded payloads of the location's ClockOffset
	// records, written to its local definition file.
	clockOffsets [][]byte
}

// RegionDef describes a code region. Empty strings are written as references
// to the empty string, as libotf2-based measurement systems do.
type RegionDef struct {
	Name string
	// CanonicalName is the mangled or otherwise unique name; "" means Name.
	CanonicalName string
	Description   string
	File          string
	// BeginLine and EndLine are source lines; 0 means unknown.
	BeginLine, EndLine uint32
	// Role and Paradigm default to OTF2's UNKNOWN (0); a user function is
	// RoleFunction with ParadigmUser, a compiler-instrumented one RoleFunction
	// with ParadigmCompiler.
	Role     RegionRole
	Paradigm Paradigm
	Flags    RegionFlags
}

type regionDef struct {
	name, canonical, description, file stringRef
	begin, end                         uint32
	role                               RegionRole
	paradigm                           Paradigm
	flags                              RegionFlags
}

// GroupDef describes a group of locations, regions, metrics or ranks.
type GroupDef struct {
	Name     string
	Type     GroupType
	Paradigm Paradigm
	Flags    GroupFlags
	// Members are location, region or metric references, or ranks, depending
	// on Type.
	Members []uint64
}

type groupDef struct {
	name     stringRef
	typ      GroupType
	paradigm Paradigm
	flags    GroupFlags
	members  []uint64
}

// commDef is a Comm or, with inter set, an InterComm: both kinds share one
// reference space, so they are kept in one list and written in its order.
type commDef struct {
	name   stringRef
	group  GroupRef // an InterComm's group A
	parent CommRef  // an InterComm's common communicator
	flags  CommFlags
	inter  bool
	groupB GroupRef
}

// MetricMemberDef describes one metric, for instance a hardware counter.
type MetricMemberDef struct {
	Name        string
	Description string
	// Unit is the unit's name, e.g. "#" for counts or "s" for seconds.
	Unit      string
	Type      MetricType
	Mode      MetricMode
	ValueType ValueType
	// Base and Exponent scale the unit: value × Base^Exponent.
	Base     MetricBase
	Exponent int64
}

type metricMemberDef struct {
	name, description, unit stringRef
	typ                     MetricType
	mode                    MetricMode
	valueType               ValueType
	base                    MetricBase
	exponent                int64
}

type metricClassDef struct {
	members    []MetricMemberRef
	types      []ValueType // value types of the members, in order
	occurrence MetricOccurrence
	recorder   RecorderKind
}

type clockProperties struct {
	ticksPerSecond, globalOffset, traceLength uint64
}

// checkString rejects strings that OTF2 cannot store: a NUL byte would end
// the string early, and a string must fit in one definition chunk.
func (a *Archive) checkString(what, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Errorf("otf2: %s %q contains a NUL byte at offset %d", what, s, i)
	}
	if b := recordBound(stringEstimate(s)); b >= a.defCapacity() {
		return fmt.Errorf("otf2: %s of %d bytes does not fit in a definition chunk of %d bytes", what, len(s), a.defChunkSize)
	}
	return nil
}

// intern returns the reference of s, defining it on first use. Strings are
// numbered in order of first use and all written before the definitions
// that refer to them (otf2-print crashes on forward string references).
func (a *Archive) intern(s string) stringRef {
	if r, ok := a.stringIndex[s]; ok {
		return r
	}
	r := stringRef(len(a.strings))
	a.strings = append(a.strings, s)
	a.stringIndex[s] = r
	return r
}

// defCapacity is the free space of an empty definition chunk: a record's
// bound must be below it.
func (a *Archive) defCapacity() int { return a.defChunkSize - chunkHeaderLen }

// SystemTreeNode defines a node of the system tree (machine, node, ...);
// class names its level, e.g. "machine" or "node". parent is NoParent for a
// root.
func (a *Archive) SystemTreeNode(name, class string, parent SystemTreeNodeRef) (SystemTreeNodeRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if parent != NoParent && int(parent) >= len(a.systemTreeNodes) {
		return 0, fmt.Errorf("otf2: system tree node %q: parent %d is not defined (%d nodes so far)", name, parent, len(a.systemTreeNodes))
	}
	if err := a.checkStrings("system tree node name", name, "system tree node class", class); err != nil {
		return 0, err
	}
	a.systemTreeNodes = append(a.systemTreeNodes, systemTreeNodeDef{name: a.intern(name), class: a.intern(class), parent: parent})
	return SystemTreeNodeRef(len(a.systemTreeNodes) - 1), nil
}

// LocationGroup defines a process (OTF2 location group of type PROCESS)
// placed under the system tree node parent.
func (a *Archive) LocationGroup(name string, parent SystemTreeNodeRef) (LocationGroupRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if int(parent) >= len(a.systemTreeNodes) {
		return 0, fmt.Errorf("otf2: location group %q: system tree node %d is not defined (%d nodes so far)", name, parent, len(a.systemTreeNodes))
	}
	if err := a.checkStrings("location group name", name); err != nil {
		return 0, err
	}
	a.locationGroups = append(a.locationGroups, locationGroupDef{name: a.intern(name), parent: parent})
	return LocationGroupRef(len(a.locationGroups) - 1), nil
}

// Region defines a code region that Enter and Leave events refer to.
func (a *Archive) Region(r RegionDef) (RegionRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	canonical := r.CanonicalName
	if canonical == "" {
		canonical = r.Name
	}
	if err := a.checkStrings("region name", r.Name, "region canonical name", canonical,
		"region description", r.Description, "region file", r.File); err != nil {
		return 0, err
	}
	if uint64(len(a.regions)) == undefined {
		return 0, fmt.Errorf("otf2: region %q: too many regions", r.Name)
	}
	a.regions = append(a.regions, regionDef{
		name:        a.intern(r.Name),
		canonical:   a.intern(canonical),
		description: a.intern(r.Description),
		file:        a.intern(r.File),
		begin:       r.BeginLine,
		end:         r.EndLine,
		role:        r.Role,
		paradigm:    r.Paradigm,
		flags:       r.Flags,
	})
	a.regionCount.Store(uint32(len(a.regions)))
	return RegionRef(len(a.regions) - 1), nil
}

// Group defines a group. Communicators need one of type
// GroupTypeCommGroup; see MPICommWorld for the usual MPI setup.
func (a *Archive) Group(g GroupDef) (GroupRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	return a.group(g)
}

func (a *Archive) group(g GroupDef) (GroupRef, error) {
	if uint64(len(g.Members)) > math.MaxUint32-1 {
		return 0, fmt.Errorf("otf2: group %q: %d members, more than OTF2 can count", g.Name, len(g.Members))
	}
	if b := recordBound(groupEstimate(len(g.Members))); b >= a.defCapacity() {
		return 0, fmt.Errorf("otf2: group %q: %d members need up to %d bytes, more than a definition chunk of %d bytes holds", g.Name, len(g.Members), b, a.defChunkSize)
	}
	if err := a.checkStrings("group name", g.Name); err != nil {
		return 0, err
	}
	if g.Type == GroupTypeCommGroup && !a.hasGroup(GroupTypeCommLocations, g.Paradigm) {
		return 0, fmt.Errorf("otf2: group %q: a CommGroup needs the CommLocations group of paradigm %d to be defined first", g.Name, g.Paradigm)
	}
	if g.Type == GroupTypeCommLocations || g.Type == GroupTypeCommSelf {
		// Readers (otf2-print) reject a second one for the same paradigm.
		for i, o := range a.groups {
			if o.typ == g.Type && o.paradigm == g.Paradigm {
				return 0, fmt.Errorf("otf2: group %q: group %d already has type %d for paradigm %d; OTF2 allows one", g.Name, i, g.Type, g.Paradigm)
			}
		}
	}
	a.groups = append(a.groups, groupDef{
		name:     a.intern(g.Name),
		typ:      g.Type,
		paradigm: g.Paradigm,
		flags:    g.Flags,
		members:  append([]uint64(nil), g.Members...),
	})
	return GroupRef(len(a.groups) - 1), nil
}

func (a *Archive) hasGroup(t GroupType, p Paradigm) bool {
	for _, g := range a.groups {
		if g.typ == t && g.paradigm == p {
			return true
		}
	}
	return false
}

// Comm defines a communicator whose ranks are the members of group (of type
// GroupTypeCommGroup). parent is NoComm for MPI_COMM_WORLD.
func (a *Archive) Comm(name string, group GroupRef, parent CommRef) (CommRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	return a.comm(name, group, parent)
}

func (a *Archive) comm(name string, group GroupRef, parent CommRef) (CommRef, error) {
	if err := a.checkCommGroup(name, group); err != nil {
		return 0, err
	}
	return a.addComm(name, commDef{group: group, parent: parent})
}

// checkCommGroup checks that group may describe the ranks of a
// communicator.
func (a *Archive) checkCommGroup(name string, group GroupRef) error {
	if int(group) >= len(a.groups) {
		return fmt.Errorf("otf2: communicator %q: group %d is not defined (%d groups so far)", name, group, len(a.groups))
	}
	if t := a.groups[group].typ; t != GroupTypeCommGroup && t != GroupTypeCommSelf {
		return fmt.Errorf("otf2: communicator %q: group %d has type %d, want GroupTypeCommGroup or GroupTypeCommSelf", name, group, t)
	}
	return nil
}

func (a *Archive) addComm(name string, c commDef) (CommRef, error) {
	if c.parent != NoComm && int(c.parent) >= len(a.comms) {
		return 0, fmt.Errorf("otf2: communicator %q: parent communicator %d is not defined (%d so far)", name, c.parent, len(a.comms))
	}
	if err := a.checkStrings("communicator name", name); err != nil {
		return 0, err
	}
	if uint64(len(a.comms)) == undefined {
		return 0, fmt.Errorf("otf2: communicator %q: too many communicators", name)
	}
	c.name = a.intern(name)
	a.comms = append(a.comms, c)
	a.commCount.Store(uint32(len(a.comms)))
	return CommRef(len(a.comms) - 1), nil
}

// InterComm defines an inter-communicator between the process groups a and
// b (each of type GroupTypeCommGroup or GroupTypeCommSelf), made through the
// communicator common (NoComm if none). It shares the references of Comm:
// events name it as any communicator. A peer's rank in its events is its
// rank in the other group, as MPI numbers it.
func (a *Archive) InterComm(name string, groupA, groupB GroupRef, common CommRef) (CommRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if err := a.checkCommGroup(name, groupA); err != nil {
		return 0, err
	}
	if err := a.checkCommGroup(name, groupB); err != nil {
		return 0, err
	}
	return a.addComm(name, commDef{group: groupA, groupB: groupB, parent: common, inter: true})
}

// MPICommSelf defines the communicator name (usually "MPI_COMM_SELF") that
// every location has with itself, as MPI measurement systems do: a group of
// type GroupTypeCommSelf without members, which readers take as each
// location alone. OTF2 allows one such group per paradigm, so it may be
// called once per archive.
func (a *Archive) MPICommSelf(name string) (CommRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	before := len(a.groups)
	g, err := a.group(GroupDef{Type: GroupTypeCommSelf, Paradigm: ParadigmMPI})
	if err != nil {
		return 0, err
	}
	c, err := a.comm(name, g, NoComm)
	if err != nil {
		a.groups = a.groups[:before]
		return 0, err
	}
	return c, nil
}

// MPICommWorld defines the communicator name (usually "MPI_COMM_WORLD") over
// the given locations, rank i being ranks[i], the way MPI measurement systems
// do: a CommLocations group of the locations, a CommGroup of the ranks
// 0..n-1, and the communicator on it. MpiSend and MpiRecv events then name
// peers by their rank. It may be called once per archive, because OTF2
// allows one CommLocations group per paradigm; define further communicators
// with Group (GroupTypeCommGroup, ParadigmMPI, ranks as members) and Comm.
func (a *Archive) MPICommWorld(name string, ranks []LocationRef) (CommRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	locations := make([]uint64, len(ranks))
	indices := make([]uint64, len(ranks))
	for i, l := range ranks {
		if l >= LocationRef(len(a.locations)) {
			return 0, fmt.Errorf("otf2: communicator %q: rank %d is location %d, which is not defined (%d locations so far)", name, i, l, len(a.locations))
		}
		locations[i] = uint64(l)
		indices[i] = uint64(i)
	}
	before := len(a.groups)
	if _, err := a.group(GroupDef{Type: GroupTypeCommLocations, Paradigm: ParadigmMPI, Members: locations}); err != nil {
		return 0, err
	}
	rankGroup, err := a.group(GroupDef{Type: GroupTypeCommGroup, Paradigm: ParadigmMPI, Members: indices})
	if err != nil {
		a.groups = a.groups[:before]
		return 0, err
	}
	c, err := a.comm(name, rankGroup, NoComm)
	if err != nil {
		a.groups = a.groups[:before]
		return 0, err
	}
	return c, nil
}

// MetricMember defines one metric; metric events carry values of metric
// classes, which group members.
func (a *Archive) MetricMember(m MetricMemberDef) (MetricMemberRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if !m.ValueType.valid() {
		return 0, fmt.Errorf("otf2: metric member %q: value type %d is not TypeUint64, TypeInt64 or TypeDouble", m.Name, m.ValueType)
	}
	if err := a.checkStrings("metric name", m.Name, "metric description", m.Description, "metric unit", m.Unit); err != nil {
		return 0, err
	}
	a.metricMembers = append(a.metricMembers, metricMemberDef{
		name:        a.intern(m.Name),
		description: a.intern(m.Description),
		unit:        a.intern(m.Unit),
		typ:         m.Type,
		mode:        m.Mode,
		valueType:   m.ValueType,
		base:        m.Base,
		exponent:    m.Exponent,
	})
	return MetricMemberRef(len(a.metricMembers) - 1), nil
}

// MetricClass defines a set of metric members recorded together: a Metric
// event of the class carries one value per member, in this order. A class
// has 1 to 255 members.
func (a *Archive) MetricClass(members []MetricMemberRef, occurrence MetricOccurrence, recorder RecorderKind) (MetricRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if len(members) == 0 || len(members) > math.MaxUint8 {
		return 0, fmt.Errorf("otf2: metric class %d: %d members, want 1 to 255", len(a.metricClasses), len(members))
	}
	types := make([]ValueType, len(members))
	for i, m := range members {
		if int(m) >= len(a.metricMembers) {
			return 0, fmt.Errorf("otf2: metric class %d: member %d is not defined (%d metric members so far)", len(a.metricClasses), m, len(a.metricMembers))
		}
		types[i] = a.metricMembers[m].valueType
	}
	a.metricClasses = append(a.metricClasses, metricClassDef{
		members:    append([]MetricMemberRef(nil), members...),
		types:      types,
		occurrence: occurrence,
		recorder:   recorder,
	})
	a.metricCount.Store(uint32(len(a.metricClasses)))
	return MetricRef(len(a.metricClasses) - 1), nil
}

// ClockProperties sets the timer: ticks per second, the time of the first
// event (globalOffset, at most the earliest timestamp) and the length of the
// trace in ticks (at least latest minus earliest timestamp). It is required
// before Close; TimeRange gives the event range once the event writers are
// closed.
func (a *Archive) ClockProperties(ticksPerSecond, globalOffset, traceLength uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return err
	}
	if ticksPerSecond == 0 {
		return fmt.Errorf("otf2: clock properties: 0 ticks per second")
	}
	a.clock = &clockProperties{ticksPerSecond: ticksPerSecond, globalOffset: globalOffset, traceLength: traceLength}
	return nil
}

// ClockOffset records that at local time t the clock of location loc was
// offset ticks off the global clock (with the given standard deviation), as
// MPI measurement systems do to align ranks' clocks. Readers interpolate
// between a location's offsets; they go to the location's local definitions.
func (a *Archive) ClockOffset(loc LocationRef, t uint64, offset int64, stddev float64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return err
	}
	if loc >= LocationRef(len(a.locations)) {
		return fmt.Errorf("otf2: clock offset: location %d is not defined (%d locations so far)", loc, len(a.locations))
	}
	l := a.locations[loc]
	p := make([]byte, 0, 8+maxCU64+8)
	p = appendU64(p, t)
	p = appendCI64(p, offset)
	p = appendU64(p, math.Float64bits(stddev))
	l.clockOffsets = append(l.clockOffsets, p)
	return nil
}

// checkStrings checks (what, value) pairs with checkString.
func (a *Archive) checkStrings(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := a.checkString(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}
