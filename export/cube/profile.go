// Package cube writes and reads CUBE4 profiles (.cubex), the format of
// Scalasca, Score-P and CubeGUI: a tar archive of an XML anchor (the
// metric tree, the regions and call tree, the system tree) and, per metric,
// a binary index and data file of values over (call path × location).
//
// A Profile is built in memory (by hand, or from hmbtrace traces by
// FromFiles), then written once by Write. Read reads back what Write wrote,
// and what cubelib's writers write uncompressed and dense, so tests can
// compare an archive with what the real cube tools printed for it.
//
// Values are stored as CUBE4 stores them: exclusive along the call tree
// (a call path's own time, not its callees') and inclusive along the
// metric tree (Time holds all the time, MPI the part of it in MPI calls,
// Late Sender the part of that spent waiting). cube tools derive a
// metric's own share as its value less its sub-metrics'; Write refuses a
// profile whose sub-metrics exceed their parent anywhere, which
// cube_sanity would report as a negative exclusive value.
package cube

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// DType is the type of a metric's values in the data files.
type DType uint8

// The value types: DOUBLE (times, in seconds) and UINT64 (counts).
const (
	Double DType = iota
	Uint64
)

func (t DType) String() string {
	if t == Uint64 {
		return "UINT64"
	}
	return "DOUBLE"
}

// Profile is a CUBE4 profile under construction.
type Profile struct {
	// Attrs are the anchor's key/value attributes (creator, trace paths).
	Attrs [][2]string
	// Time dates the archive's members (the run's start); the zero time
	// dates them at the Unix epoch, so that one profile always makes the
	// same bytes.
	Time time.Time

	metrics  []*Metric // roots
	byUniq   map[string]*Metric
	regions  []*Region
	regionBy map[regionKey]*Region
	roots    []*Cnode
	top      *Cnode // holds the roots' index by region
	machines []*Machine

	nlocs int // locations so far, numbered in the order they were added
	// fileLocs are FromFiles's locations: by file, by the file's location
	// index.
	fileLocs [][]*Location
	ncn      int
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{byUniq: map[string]*Metric{}, regionBy: map[regionKey]*Region{}}
}

// Metric is a node of the metric tree. Its values, per (call path,
// location), include its sub-metrics'.
type Metric struct {
	Uniq     string // unique name: "time", "visits", "mpi_latesender"
	Display  string // shown name: "Time", "Late Sender"
	Unit     string // "sec", "occ", "bytes"
	Type     DType
	Descr    string
	URL      string
	Parent   *Metric
	Children []*Metric

	vals map[cell]float64
}

type cell struct{ cnode, loc int32 }

// Region is a code region: a function, an MPI call, an OpenMP construct.
type Region struct {
	Name     string
	Mod      string // source file, or the paradigm's name when none is known
	Begin    int    // first line, 0 if unknown
	End      int
	Paradigm string // "user", "compiler", "mpi", "openmp", ...
	Role     string // "function", "barrier", ...
	id       int
}

type regionKey struct{ name, mod string }

// Cnode is a call path: its parent's path extended by a call of Region.
type Cnode struct {
	Region   *Region
	Parent   *Cnode
	Children []*Cnode
	id       int // order of creation: the key of its values
	byRegion map[*Region]*Cnode
}

// Machine, Node, Process and Location make the system tree.
type Machine struct {
	Name  string
	Nodes []*Node
}

// Node is a host of a machine.
type Node struct {
	Name      string
	Processes []*Process
}

// Process is a rank (a CUBE location group of type process).
type Process struct {
	Name      string
	Rank      int
	Locations []*Location
}

// Location is a thread of a process: the column of every metric's values.
type Location struct {
	Name string
	Rank int // the thread's number in its process
	id   int // order of creation: the key of its values
}

// AddMetric adds a metric under parent (nil: a root of the metric tree).
// Unique names must be unique over the tree.
func (p *Profile) AddMetric(parent *Metric, uniq, display, unit string, t DType, descr string) (*Metric, error) {
	if uniq == "" {
		return nil, errors.New("cube: a metric needs a unique name")
	}
	if p.byUniq[uniq] != nil {
		return nil, fmt.Errorf("cube: metric %q added twice", uniq)
	}
	m := &Metric{Uniq: uniq, Display: display, Unit: unit, Type: t, Descr: descr, Parent: parent, vals: map[cell]float64{}}
	if parent == nil {
		p.metrics = append(p.metrics, m)
	} else {
		parent.Children = append(parent.Children, m)
	}
	p.byUniq[uniq] = m
	return m, nil
}

// Metric returns the metric of unique name uniq, nil if there is none.
func (p *Profile) Metric(uniq string) *Metric { return p.byUniq[uniq] }

// Metrics returns the roots of the metric tree.
func (p *Profile) Metrics() []*Metric { return p.metrics }

// MetricPath returns the metric at the end of a path of display names such
// as "Time > MPI > Communication > Point-to-point > Late Sender", adding
// the metrics it lacks as DOUBLE seconds (a wait-state tree) under the
// existing ones. A metric it adds in the middle of the path holds no
// values: the values added below it must be added to it too. Their unique names are their display names, lower case,
// with spaces and punctuation as underscores, unless taken.
func (p *Profile) MetricPath(path string) (*Metric, error) {
	var parent *Metric
	var sofar []string
	for _, name := range strings.Split(path, ">") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("cube: metric path %q has an empty name", path)
		}
		sofar = append(sofar, name)
		list := p.metrics
		if parent != nil {
			list = parent.Children
		}
		var found *Metric
		for _, m := range list {
			if m.Display == name {
				found = m
				break
			}
		}
		if found == nil {
			base := scalascaNames[strings.Join(sofar, " > ")]
			if base == "" {
				base = uniqName(name)
			}
			uniq := base
			for n := 2; p.byUniq[uniq] != nil; n++ {
				uniq = fmt.Sprintf("%s_%d", base, n)
			}
			unit, t := "sec", Double
			if parent != nil {
				unit, t = parent.Unit, parent.Type
			}
			var err error
			if found, err = p.AddMetric(parent, uniq, name, unit, t, strings.Join(sofar, " > ")); err != nil {
				return nil, err
			}
		}
		parent = found
	}
	return parent, nil
}

// scalascaNames are the unique names Scalasca gives the metrics of its
// tree, which scripts and tools (cube_dump -m, Extra-P) select by.
var scalascaNames = map[string]string{
	"Time > MPI":                                                  "mpi",
	"Time > MPI > Communication":                                  "comm",
	"Time > MPI > Communication > Point-to-point":                 "mpi_point2point",
	"Time > MPI > Communication > Collective":                     "mpi_collective",
	"Time > MPI > Synchronization":                                "mpi_synchronization",
	"Time > MPI > Synchronization > Collective":                   "mpi_sync_collective",
	"Time > OpenMP":                                               "omp_time",
	"Time > OpenMP > Synchronization":                             "omp_synchronization",
	"Time > OpenMP > Synchronization > Barrier":                   "omp_barrier",
	"Time > MPI > Communication > Point-to-point > Late Sender":   "mpi_latesender",
	"Time > MPI > Communication > Point-to-point > Late Receiver": "mpi_latereceiver",
	"Time > MPI > Communication > Point-to-point > Late Sender > Messages in Wrong Order": "mpi_latesender_wo",
	"Time > MPI > Communication > Collective > Wait at N x N":                             "mpi_wait_nxn",
	"Time > MPI > Communication > Collective > Late Broadcast":                            "mpi_latebroadcast",
	"Time > MPI > Communication > Collective > Early Reduce":                              "mpi_earlyreduce",
	"Time > MPI > Synchronization > Collective > Wait at Barrier":                         "mpi_barrier_wait",
	"Time > OpenMP > Synchronization > Barrier > Wait at Barrier":                         "omp_barrier_wait",
	// The critical path and the delay costs (Böhme et al.), roots of
	// their own.
	"Critical path": "critical_path",
	"Critical path > Critical-path imbalance": "critical_path_imbalance",
	"Delay costs":                                                     "delay",
	"Delay costs > MPI":                                               "delay_mpi",
	"Delay costs > MPI > Point-to-point":                              "delay_p2p",
	"Delay costs > MPI > Point-to-point > Late Sender":                "delay_latesender_aggregate",
	"Delay costs > MPI > Point-to-point > Late Sender > Short-term":   "delay_latesender",
	"Delay costs > MPI > Point-to-point > Late Sender > Long-term":    "delay_latesender_longterm",
	"Delay costs > MPI > Point-to-point > Late Receiver":              "delay_latereceiver_aggregate",
	"Delay costs > MPI > Point-to-point > Late Receiver > Short-term": "delay_latereceiver",
	"Delay costs > MPI > Point-to-point > Late Receiver > Long-term":  "delay_latereceiver_longterm",
	"Delay costs > MPI > Collective":                                  "delay_collective",
	"Delay costs > MPI > Collective > Barrier":                        "delay_barrier_aggregate",
	"Delay costs > MPI > Collective > Barrier > Short-term":           "delay_barrier",
	"Delay costs > MPI > Collective > Barrier > Long-term":            "delay_barrier_longterm",
	"Delay costs > MPI > Collective > N x N":                          "delay_n2n_aggregate",
	"Delay costs > MPI > Collective > N x N > Short-term":             "delay_n2n",
	"Delay costs > MPI > Collective > N x N > Long-term":              "delay_n2n_longterm",
	"Delay costs > MPI > Collective > 1 x N":                          "delay_12n_aggregate",
	"Delay costs > MPI > Collective > 1 x N > Short-term":             "delay_12n",
	"Delay costs > MPI > Collective > 1 x N > Long-term":              "delay_12n_longterm",
	"Delay costs > MPI > Collective > N x 1":                          "delay_n21_aggregate",
	"Delay costs > MPI > Collective > N x 1 > Short-term":             "delay_n21",
	"Delay costs > MPI > Collective > N x 1 > Long-term":              "delay_n21_longterm",
	"Delay costs > OpenMP":                                            "delay_omp",
	"Delay costs > OpenMP > Barrier":                                  "delay_ompbarrier_aggregate",
	"Delay costs > OpenMP > Barrier > Short-term":                     "delay_ompbarrier",
	"Delay costs > OpenMP > Barrier > Long-term":                      "delay_ompbarrier_longterm",
}

func uniqName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Add adds v to m's value at call path c and location l.
func (m *Metric) Add(c *Cnode, l *Location, v float64) {
	m.vals[cell{int32(c.id), int32(l.id)}] += v
}

// Value returns m's value at call path c and location l (its sub-metrics'
// included).
func (m *Metric) Value(c *Cnode, l *Location) float64 {
	return m.vals[cell{int32(c.id), int32(l.id)}]
}

// Region returns the region named name in file mod, added with the other
// fields on first use.
func (p *Profile) Region(name, mod string, begin, end int, paradigm, role string) *Region {
	k := regionKey{name, mod}
	if r := p.regionBy[k]; r != nil {
		return r
	}
	r := &Region{Name: name, Mod: mod, Begin: begin, End: end, Paradigm: paradigm, Role: role, id: len(p.regions)}
	p.regions = append(p.regions, r)
	p.regionBy[k] = r
	return r
}

// Regions returns the regions in the order they were added.
func (p *Profile) Regions() []*Region { return p.regions }

// Call returns the call path parent → r (parent nil: a root of the call
// tree), added on first use.
func (p *Profile) Call(parent *Cnode, r *Region) *Cnode {
	// The roots are the children of a Cnode of no region.
	if p.top == nil {
		p.top = &Cnode{}
	}
	up := parent
	if up == nil {
		up = p.top
	}
	if c := up.byRegion[r]; c != nil {
		return c
	}
	c := &Cnode{Region: r, Parent: parent, id: p.ncn}
	p.ncn++
	if up.byRegion == nil {
		up.byRegion = map[*Region]*Cnode{}
	}
	up.byRegion[r] = c
	if parent == nil {
		p.roots = append(p.roots, c)
	} else {
		parent.Children = append(parent.Children, c)
	}
	return c
}

// FindCall returns the call path of the regions named names, outermost
// first, nil if the profile has none (of two regions of one name in
// different files, the first added is taken).
func (p *Profile) FindCall(names ...string) *Cnode {
	var c *Cnode
	list := p.roots
	for _, n := range names {
		var next *Cnode
		for _, k := range list {
			if k.Region.Name == n {
				next = k
				break
			}
		}
		if next == nil {
			return nil
		}
		c, list = next, next.Children
	}
	return c
}

// FileLocation returns the location FromFiles made for the location of
// index loc (in Locations) of file number file (in the files given), nil
// if there is none: where an analysis of the same files books its values.
func (p *Profile) FileLocation(file, loc int) *Location {
	if file < 0 || file >= len(p.fileLocs) || loc < 0 || loc >= len(p.fileLocs[file]) {
		return nil
	}
	return p.fileLocs[file][loc]
}

// Roots returns the roots of the call tree.
func (p *Profile) Roots() []*Cnode { return p.roots }

// CnodesOf returns the call paths that end in a call of r, in preorder:
// where a per-region value can be booked.
func (p *Profile) CnodesOf(r *Region) []*Cnode {
	var out []*Cnode
	p.walk(func(c *Cnode) {
		if c.Region == r {
			out = append(out, c)
		}
	})
	return out
}

func (p *Profile) walk(f func(*Cnode)) {
	var visit func(c *Cnode)
	visit = func(c *Cnode) {
		f(c)
		for _, k := range c.Children {
			visit(k)
		}
	}
	for _, c := range p.roots {
		visit(c)
	}
}

// AddMachine adds a machine, the root of a system tree.
func (p *Profile) AddMachine(name string) *Machine {
	m := &Machine{Name: name}
	p.machines = append(p.machines, m)
	return m
}

// Machines returns the roots of the system tree.
func (p *Profile) Machines() []*Machine { return p.machines }

// Node returns the node named name, added on first use.
func (m *Machine) Node(name string) *Node {
	for _, n := range m.Nodes {
		if n.Name == name {
			return n
		}
	}
	n := &Node{Name: name}
	m.Nodes = append(m.Nodes, n)
	return n
}

// AddProcess adds a process (rank) to the node.
func (n *Node) AddProcess(name string, rank int) *Process {
	pr := &Process{Name: name, Rank: rank}
	n.Processes = append(n.Processes, pr)
	return pr
}

// AddLocation adds a thread of the process.
func (p *Profile) AddLocation(pr *Process, name string, rank int) *Location {
	l := &Location{Name: name, Rank: rank, id: p.nlocs}
	p.nlocs++
	pr.Locations = append(pr.Locations, l)
	return l
}

// Locations returns the locations in system-tree order, the order of the
// values in every row of a data file.
func (p *Profile) Locations() []*Location {
	var out []*Location
	for _, m := range p.machines {
		for _, n := range m.Nodes {
			for _, pr := range n.Processes {
				out = append(out, pr.Locations...)
			}
		}
	}
	return out
}

// Cnodes returns the call paths in preorder, the order of a data file's
// rows for an exclusive metric.
func (p *Profile) Cnodes() []*Cnode {
	var out []*Cnode
	p.walk(func(c *Cnode) { out = append(out, c) })
	return out
}

// MetricList returns the metrics in preorder, the order of their ids.
func (p *Profile) MetricList() []*Metric {
	var out []*Metric
	var visit func(m *Metric)
	visit = func(m *Metric) {
		out = append(out, m)
		for _, c := range m.Children {
			visit(c)
		}
	}
	for _, m := range p.metrics {
		visit(m)
	}
	return out
}

// check says what in the profile CUBE cannot hold.
func (p *Profile) check() error {
	if len(p.metrics) == 0 {
		return errors.New("cube: the profile has no metric")
	}
	if len(p.roots) == 0 {
		return errors.New("cube: the profile has no call path")
	}
	if len(p.Locations()) == 0 {
		return errors.New("cube: the profile has no location")
	}
	for _, m := range p.MetricList() {
		if err := p.checkChildren(m); err != nil {
			return err
		}
		for k, v := range m.vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("cube: metric %s has value %g at call path %s, location %s", m.Uniq, v, p.cnodeName(k.cnode), p.locationName(k.loc))
			}
			if m.Type == Uint64 && (v < 0 || v != math.Trunc(v)) {
				return fmt.Errorf("cube: UINT64 metric %s has value %g at call path %s, location %s: want a whole number ≥ 0", m.Uniq, v, p.cnodeName(k.cnode), p.locationName(k.loc))
			}
		}
	}
	return nil
}

// checkChildren reports a call path and location where m's sub-metrics
// add up to more than m: CUBE would show a negative share of m there.
func (p *Profile) checkChildren(m *Metric) error {
	if len(m.Children) == 0 {
		return nil
	}
	sum := map[cell]float64{}
	for _, c := range m.Children {
		for k, v := range c.vals {
			sum[k] += v
		}
	}
	for k, v := range sum {
		if have := m.vals[k]; v > have+1e-9*max(have, v) {
			return fmt.Errorf("cube: the sub-metrics of %s add up to %g at call path %s, location %s, where %s holds %g: a metric's value must include its sub-metrics'",
				m.Uniq, v, p.cnodeName(k.cnode), p.locationName(k.loc), m.Uniq, have)
		}
	}
	return nil
}

// cnodeName names the call path of creation id id: its regions, outermost
// first.
func (p *Profile) cnodeName(id int32) string {
	name := fmt.Sprintf("#%d", id)
	p.walk(func(c *Cnode) {
		if c.id == int(id) {
			name = c.Region.Name
			for a := c.Parent; a != nil; a = a.Parent {
				name = a.Region.Name + "/" + name
			}
		}
	})
	return name
}

// locationName names the location of creation id id: its process and
// thread.
func (p *Profile) locationName(id int32) string {
	for _, m := range p.machines {
		for _, n := range m.Nodes {
			for _, pr := range n.Processes {
				for _, l := range pr.Locations {
					if l.id == int(id) {
						return fmt.Sprintf("%q of %q", l.Name, pr.Name)
					}
				}
			}
		}
	}
	return fmt.Sprintf("#%d", id)
}
