package report

import (
	"strconv"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The profile as Cube shows it: a metric (time, visits, the wait states)
// over the call tree and the system tree. The call tree of a location is
// its exact call-path profile where the measurement kept one
// (HMB_CALLPATHS), else it is made of the calls its trace kept, as they
// stream by in the report's one pass. The locations' trees are merged by
// the run's regions (newRun); each node carries per system unit (a location, or a group
// of them past Options.Rows) its exclusive values, and the page sums them
// into inclusive ones as the user folds the tree.

// maxPathsPerLocation bounds the call paths a location's tree holds: calls
// on paths beyond it are charged to the deepest path it has.
const maxPathsPerLocation = 1 << 14

// pathNode is a call path of one location: region called from parent.
type pathNode struct {
	parent, region int32 // parent -1 at the top; region a page index
	visits         uint64
	incl, excl     int64 // ns
}

type openPath struct {
	node  int32 // -1: a call on no path (its region is unknown)
	start int64
}

// pathTree is one location's call tree, made of its events.
type pathTree struct {
	nodes   []pathNode
	index   map[[2]int32]int32
	stack   []openPath
	omitted uint64 // calls charged to an ancestor's path: no room for theirs
}

func newPathTree() *pathTree { return &pathTree{index: map[[2]int32]int32{}} }

// event takes the location's next event; region maps the file's region id
// to the page's, false for an id the file does not define.
func (t *pathTree) event(e *tracefile.Event, ns int64, region func(uint32) (int, bool)) {
	switch e.Kind {
	case encode.KindEnter:
		parent := int32(-1)
		if n := len(t.stack); n > 0 {
			parent = t.stack[n-1].node
		}
		reg, ok := region(e.Region)
		node := int32(-1)
		if ok && (parent >= 0 || len(t.stack) == 0) {
			key := [2]int32{parent, int32(reg)}
			var have bool
			node, have = t.index[key]
			if !have {
				if len(t.nodes) < maxPathsPerLocation {
					node = int32(len(t.nodes))
					t.nodes = append(t.nodes, pathNode{parent: parent, region: int32(reg)})
					t.index[key] = node
				} else {
					node = parent // charged to its caller's path
					t.omitted++
				}
			}
		}
		t.stack = append(t.stack, openPath{node, ns})
	case encode.KindLeave:
		n := len(t.stack)
		if n == 0 {
			return
		}
		c := t.stack[n-1]
		t.stack = t.stack[:n-1]
		if c.node < 0 {
			return
		}
		nd := &t.nodes[c.node]
		if n >= 2 && t.stack[n-2].node == c.node {
			return // charged to its caller's path, which counts the time itself
		}
		nd.visits++
		nd.incl += ns - c.start
	}
}

// finish computes the exclusive times: inclusive less the children's.
func (t *pathTree) finish() {
	for i := range t.nodes {
		t.nodes[i].excl = t.nodes[i].incl
	}
	for _, nd := range t.nodes {
		if nd.parent >= 0 {
			t.nodes[nd.parent].excl -= nd.incl
		}
	}
	for i := range t.nodes {
		t.nodes[i].excl = max(t.nodes[i].excl, 0)
	}
	t.index, t.stack = nil, nil
}

// exactTree is location l's exact call-path profile as a tree of page
// regions.
func exactTree(r *run, fi int, l *tracefile.Location) *pathTree {
	f := r.files[fi]
	t := &pathTree{}
	for _, c := range l.CallPaths {
		parent := int32(c.Parent) - 1
		if parent >= int32(len(t.nodes)) {
			parent = -1 // not before its child: a damaged file, drawn at the top
		}
		t.nodes = append(t.nodes, pathNode{parent: parent, region: int32(r.region(fi, c.Region)), visits: c.Visits,
			incl: f.TicksToNanos(c.Inclusive), excl: f.TicksToNanos(c.Exclusive)})
	}
	return t
}

// callTree is the run's call tree with its metrics, for the page.
type callTree struct {
	nodes [][2]int32 // parent (-1: top), region
	index map[[2]int32]int32
	// metrics are the metrics' names and parents (an index, -1: top) and
	// whether they count (visits) rather than time.
	metrics []treeMetric
	// values per metric: triples of node, unit (a profile location) and
	// exclusive value.
	values [][]int64
	// exact tells how many locations' trees are their exact call-path
	// profile, of how many.
	exact, locations int
	omitted          uint64
}

type treeMetric struct {
	Name   string `json:"name"`
	Parent int    `json:"parent"`
	Count  bool   `json:"count,omitempty"`
	About  string `json:"about"`
}

const (
	metricTime = iota
	metricVisits
	metricWaits
)

func (ct *callTree) node(parent int32, region int32) int32 {
	key := [2]int32{parent, region}
	if n, ok := ct.index[key]; ok {
		return n
	}
	n := int32(len(ct.nodes))
	ct.nodes = append(ct.nodes, key)
	ct.index[key] = n
	return n
}

// newCallTree merges the locations' trees (per file and location index;
// nil for none) into the run's, each location's values under its profile
// unit (unit), and adds the wait states of w.
func newCallTree(r *run, trees [][]*pathTree, unit func(fi, k int) int, w *waitInfo) *callTree {
	ct := &callTree{index: map[[2]int32]int32{}}
	ct.metrics = []treeMetric{
		{"Time", -1, false, "time in the call path: collapsed, with its callees (inclusive); expanded, its own (exclusive)"},
		{"Visits", -1, true, "calls of the call path"},
	}
	ct.values = make([][]int64, 2)
	for fi, f := range r.files {
		for k := range f.Locations {
			t := trees[fi][k]
			if t == nil {
				continue
			}
			ct.locations++
			if len(f.Locations[k].CallPaths) > 0 {
				ct.exact++
			}
			ct.omitted += t.omitted
			u := int64(unit(fi, k))
			global := make([]int32, len(t.nodes))
			for i, nd := range t.nodes {
				parent := int32(-1)
				if nd.parent >= 0 {
					parent = global[nd.parent]
				}
				g := ct.node(parent, nd.region)
				global[i] = g
				if nd.excl != 0 {
					ct.values[metricTime] = append(ct.values[metricTime], int64(g), u, nd.excl)
				}
				if nd.visits != 0 {
					ct.values[metricVisits] = append(ct.values[metricVisits], int64(g), u, int64(nd.visits))
				}
			}
		}
	}
	if w != nil && w.any {
		ct.addWaits(r, w, unit)
	}
	return ct
}

// addWaits adds the wait-state metrics, Scalasca's tree under one "Wait
// states": each pattern's time on its call path (the waitstate result's
// tree, found in the run's by region names) and location.
func (ct *callTree) addWaits(r *run, w *waitInfo, unit func(fi, k int) int) {
	res := w.res
	// The result names regions by name: the run's region of that name
	// (the first, where regions of different sources share it; the page
	// labels them apart), or a placeholder of the page's.
	byName := map[string]int{}
	for i, name := range r.regions {
		if i < len(r.u.Defs.Regions) {
			name = r.u.Defs.Regions[i].Name
		}
		if _, ok := byName[name]; !ok {
			byName[name] = i
		}
	}
	// The result's paths in the run's tree; parents come before children.
	paths := make([]int32, len(res.Paths))
	for i, p := range res.Paths {
		parent := int32(-1)
		if p.Parent >= 0 {
			parent = paths[p.Parent]
		}
		reg, ok := byName[p.Region]
		if !ok {
			reg = len(r.regions)
			r.regions = append(r.regions, p.Region)
			r.kinds = append(r.kinds, kindOf(p.Region, tracefile.ParadigmUser))
			byName[p.Region] = reg
		}
		paths[i] = ct.node(parent, int32(reg))
	}
	waits := len(ct.metrics)
	ct.metrics = append(ct.metrics, treeMetric{"Wait states", -1, false, "time waiting for another rank or thread, all patterns (their sum, less the parts of a pattern counted in another)"})
	ct.values = append(ct.values, nil)
	of := map[waitstate.Pattern]int{}
	for p := waitstate.Pattern(0); p < waitstate.NumPatterns; p++ {
		if res.Totals[p] == 0 {
			continue
		}
		parent := waits
		if pp, ok := p.Parent(); ok {
			if m, ok := of[pp]; ok {
				parent = m
			}
		}
		of[p] = len(ct.metrics)
		ct.metrics = append(ct.metrics, treeMetric{p.String(), parent, false, "Scalasca's " + p.Metric()})
		ct.values = append(ct.values, nil)
	}
	for _, v := range res.Values {
		m, ok := of[v.Pattern]
		if !ok || v.Path < 0 || v.Path >= len(paths) || v.Loc < 0 || v.Loc >= len(res.Locations) {
			continue
		}
		l := res.Locations[v.Loc]
		u := int64(unit(l.File, l.Loc))
		ct.values[m] = append(ct.values[m], int64(paths[v.Path]), u, v.Time)
		if _, sub := v.Pattern.Parent(); !sub {
			ct.values[waits] = append(ct.values[waits], int64(paths[v.Path]), u, v.Time)
		}
	}
}

// appendJSON appends the tree as the page reads it:
//
//	{"nodes":[parent,region,...],"metrics":[{name,parent,count,about}...],
//	 "values":[[node,unit,value,...],...],"exact":n,"locations":n}
func (ct *callTree) appendJSON(b []byte) []byte {
	b = append(b, `{"nodes":[`...)
	for i, n := range ct.nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n[0]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n[1]), 10)
	}
	b = append(b, `],"metrics":[`...)
	for i, m := range ct.metrics {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, m.Name)
		b = append(b, `,"parent":`...)
		b = strconv.AppendInt(b, int64(m.Parent), 10)
		b = append(b, `,"count":`...)
		b = strconv.AppendBool(b, m.Count)
		b = append(b, `,"about":`...)
		b = appendString(b, m.About)
		b = append(b, '}')
	}
	b = append(b, `],"values":[`...)
	for i, vs := range ct.values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, v := range vs {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	b = append(b, `],"exact":`...)
	b = strconv.AppendInt(b, int64(ct.exact), 10)
	b = append(b, `,"locations":`...)
	b = strconv.AppendInt(b, int64(ct.locations), 10)
	b = append(b, `,"omitted":`...)
	b = strconv.AppendUint(b, ct.omitted, 10)
	return append(b, '}')
}

// appendString appends s as a JSON string safe inside a <script> element.
func appendString(b []byte, s string) []byte {
	j := appendStrings(nil, []string{s})
	return append(b, j[1:len(j)-1]...)
}
