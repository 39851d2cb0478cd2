package cube

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The metrics FromFiles fills. Time holds all the time; its sub-metrics
// (Scalasca's names) the part of it in the calls of a paradigm, by class,
// so that a wait state plugs in below the class of the call it waits in:
// MetricPath("Time > MPI > Communication > Point-to-point > Late Sender"),
// then Add.
const (
	TimeMetric   = "time"
	VisitsMetric = "visits"
)

// The metric paths of the runtime's calls, under Time.
const (
	PathMPI           = "Time > MPI"
	PathP2P           = "Time > MPI > Communication > Point-to-point"
	PathCollective    = "Time > MPI > Communication > Collective"
	PathMPIBarrier    = "Time > MPI > Synchronization > Collective"
	PathOpenMP        = "Time > OpenMP"
	PathOpenMPBarrier = "Time > OpenMP > Synchronization > Barrier"
)

// mpiClass is the metric path of the MPI call named name (as the wrappers
// name it, "MPI_Recv"): point-to-point calls and the Wait and Test calls
// that complete requests, collectives, barriers; other calls (Init,
// Finalize, communicator management) count as MPI only.
func mpiClass(name string) string {
	n := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(name, "MPI_"), "mpi_"))
	switch {
	case n == "barrier" || n == "ibarrier":
		return PathMPIBarrier
	case strings.Contains(n, "send") || strings.Contains(n, "recv") || strings.HasPrefix(n, "wait") ||
		strings.HasPrefix(n, "test") || strings.Contains(n, "probe") || n == "start" || n == "startall":
		return PathP2P
	}
	for _, c := range []string{"allreduce", "reduce", "bcast", "gather", "scatter", "alltoall", "scan", "neighbor_"} {
		if strings.Contains(n, c) {
			return PathCollective
		}
	}
	return PathMPI
}

// classify books the time of the calls of MPI and OpenMP regions under
// Time's sub-metrics, each path's metrics holding what lies below them.
// Only the paths the trace has calls for are made.
func classify(p *Profile) error {
	time := p.Metric(TimeMetric)
	locs := p.Locations()
	for _, c := range p.Cnodes() {
		var path string
		switch c.Region.Paradigm {
		case tracefile.ParadigmMPI.String():
			path = mpiClass(c.Region.Name)
		case tracefile.ParadigmOpenMP.String():
			path = PathOpenMP
			if strings.Contains(strings.ToLower(c.Region.Name), "barrier") {
				path = PathOpenMPBarrier
			}
		default:
			continue
		}
		m, err := p.MetricPath(path)
		if err != nil {
			return err
		}
		for _, l := range locs {
			if v := time.Value(c, l); v > 0 {
				for a := m; a != time; a = a.Parent {
					a.Add(c, l, v)
				}
			}
		}
	}
	return nil
}

// FromFiles builds the call-path profile of the files: Time (exclusive
// seconds; under it the time of MPI and OpenMP calls by class, as
// Scalasca's metric tree has it), Visits and each counter the files name
// (exclusive counts) per call path and location, over a system tree of one
// machine, a node per host, a process per file (its rank) and a thread per
// location. A location's call paths come from its exact call-path profile
// when the measurement kept one (HMB_CALLPATHS), else from the events the
// trace kept. Locations are walked by procs workers; the profile is the
// same for any number.
func FromFiles(files []*tracefile.File, procs int) (*Profile, error) {
	if len(files) == 0 {
		return nil, errors.New("cube export: no trace files")
	}
	if procs < 1 {
		procs = 1
	}
	type where struct{ file, loc int }
	var locs []where
	for i, f := range files {
		for k := range f.Locations {
			locs = append(locs, where{i, k})
		}
	}
	// The run's regions and metrics (tracefile.ReadUnified): a counter is
	// the run's metric of its name.
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return nil, fmt.Errorf("cube export: %w", err)
	}
	counters := u.Defs.Metrics
	cmaps := make([][]int, len(files)) // per file: its counter index -> profile counter
	for i := range files {
		for _, g := range u.Maps[i].Metrics {
			cmaps[i] = append(cmaps[i], int(g)-1)
		}
	}
	trees := make([][]lnode, len(locs))
	err = parallel.Do(procs, len(locs), func(n int) error {
		f := files[locs[n].file]
		l := &f.Locations[locs[n].loc]
		var err error
		if len(l.CallPaths) > 0 {
			trees[n], err = exactTree(f, l)
		} else {
			trees[n], err = walkTree(f, l, cmaps[locs[n].file], len(counters), procs > len(locs))
		}
		if err != nil {
			return fmt.Errorf("cube export: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	p := NewProfile()
	time, _ := p.AddMetric(nil, TimeMetric, "Time", "sec", Double, "Time spent in the call path itself, not in its callees")
	visits, _ := p.AddMetric(nil, VisitsMetric, "Visits", "occ", Uint64, "Number of times the call path was entered")
	time.URL = "https://github.com/hmbtrace/hmbtrace/blob/main/docs/guide.md"
	visits.URL = time.URL
	cmetrics := make([]*Metric, len(counters))
	for k, c := range counters {
		uniq := c
		for n := 2; p.Metric(uniq) != nil; n++ {
			uniq = fmt.Sprintf("%s_%d", c, n)
		}
		var err error
		if cmetrics[k], err = p.AddMetric(nil, uniq, c, "occ", Uint64, "Counter "+c+" in the call path itself, not in its callees"); err != nil {
			return nil, fmt.Errorf("cube export: %w", err)
		}
		cmetrics[k].URL = time.URL
	}
	// CUBE keeps attributes in a map: one key for all the files.
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f.Path)
		if p.Time.IsZero() || f.Header.StartWall.Before(p.Time) {
			p.Time = f.Header.StartWall
		}
	}
	p.Attrs = append(p.Attrs, [2]string{"hmbtrace traces", strings.Join(names, ", ")})
	if note := coverage(files); note != "" {
		p.Attrs = append(p.Attrs, [2]string{NoteAttr, note})
	}
	p.Attrs = append(p.Attrs, [2]string{"Creator", "hmbtrace export -format cube"})
	machine := p.AddMachine(machineName(files))
	procOf := make([]*Process, len(files))
	for i, f := range files {
		host := f.Header.Host
		if host == "" {
			host = "unknown host"
		}
		procOf[i] = machine.Node(host).AddProcess(fmt.Sprintf("rank %d", f.Header.Rank), max(f.Header.Rank, 0))
	}
	// The CUBE region of each of the run's regions, by unified id - 1; of
	// an id a file does not define, by file.
	regionOf := make([]*Region, len(u.Defs.Regions))
	undefined := make([]map[uint32]*Region, len(files))
	p.fileLocs = make([][]*Location, len(files))
	for n, w := range locs {
		f := files[w.file]
		pr := procOf[w.file]
		loc := p.AddLocation(pr, f.Locations[w.loc].Name, len(pr.Locations))
		p.fileLocs[w.file] = append(p.fileLocs[w.file], loc)
		tree := trees[n]
		cn := make([]*Cnode, len(tree))
		for i, ln := range tree {
			var r *Region
			if def, k := u.Region(w.file, ln.region); def != nil {
				if r = regionOf[k-1]; r == nil {
					r = cubeRegion(p, def)
					regionOf[k-1] = r
				}
			} else {
				if undefined[w.file] == nil {
					undefined[w.file] = map[uint32]*Region{}
				}
				if r = undefined[w.file][ln.region]; r == nil {
					// Named as the tools name it, region#id, of no source.
					r = cubeRegion(p, &tracefile.Region{ID: ln.region, Name: f.RegionName(ln.region)})
					undefined[w.file][ln.region] = r
				}
			}
			var parent *Cnode
			if ln.parent >= 0 {
				parent = cn[ln.parent]
			}
			cn[i] = p.Call(parent, r)
			if ln.visits > 0 {
				visits.Add(cn[i], loc, float64(ln.visits))
			}
			if ln.ticks > 0 {
				time.Add(cn[i], loc, float64(f.TicksToNanos(ln.ticks))/1e9)
			}
			for k, v := range ln.counts {
				if v > 0 {
					cmetrics[k].Add(cn[i], loc, float64(v))
				}
			}
		}
	}
	if len(p.roots) == 0 {
		return nil, errors.New("cube export: the files hold no region calls")
	}
	if err := classify(p); err != nil {
		return nil, fmt.Errorf("cube export: %w", err)
	}
	return p, nil
}

// NoteAttr is the anchor attribute that says where the profile is not all
// that happened; FromFiles sets it only then.
const NoteAttr = "hmbtrace note"

// coverage says which files' call paths cover only the events the trace
// kept: locations without an exact call-path profile whose buffer or
// duration filter removed events.
func coverage(files []*tracefile.File) string {
	var notes []string
	for _, f := range files {
		var removed uint64
		windowed := false
		for i := range f.Locations {
			l := &f.Locations[i]
			if len(l.CallPaths) > 0 {
				continue
			}
			for _, v := range l.Removed() {
				removed += v
			}
			removed += l.FilteredDuration
			windowed = windowed || l.Windowed
		}
		if removed > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d events were removed (buffer reductions, duration filter): its call paths cover the kept events only; `hmbtrace summary` has the exact flat profile, HMB_CALLPATHS=1 keeps exact call paths", filepath.Base(f.Path), removed))
		}
		if windowed {
			notes = append(notes, fmt.Sprintf("%s: keep-last window: calls open at its start count from there, and their visits are not counted", filepath.Base(f.Path)))
		}
	}
	return strings.Join(notes, "; ")
}

// machineName is the run's name, the first file's trace name.
func machineName(files []*tracefile.File) string {
	if n := files[0].Header.Name; n != "" {
		return n
	}
	return "hmbtrace run"
}

// cubeRegion adds region def of the run to p: a CUBE region is its name
// and module, so regions of the run that share both are one there.
// cube_sanity wants a module name for every region: a region without a
// source file gets its paradigm's name.
func cubeRegion(p *Profile, def *tracefile.Region) *Region {
	mod := def.File
	if mod == "" {
		mod = strings.ToUpper(def.Paradigm.String()[:1]) + def.Paradigm.String()[1:]
		switch def.Paradigm {
		case tracefile.ParadigmMPI:
			mod = "MPI"
		case tracefile.ParadigmOpenMP:
			mod = "OpenMP"
		}
	}
	line := max(def.Line, 0)
	return p.Region(def.Name, mod, line, line, def.Paradigm.String(), "function")
}

// lnode is a call path of one location: parent is an index into the same
// list (-1: a root), parents before children.
type lnode struct {
	parent   int
	region   uint32
	visits   uint64
	ticks    uint64   // exclusive, in clock ticks
	counts   []uint64 // exclusive, by profile counter; nil if none
	children map[uint32]int
}

// exactTree is the location's exact call-path profile.
func exactTree(f *tracefile.File, l *tracefile.Location) ([]lnode, error) {
	out := make([]lnode, len(l.CallPaths))
	for i, c := range l.CallPaths {
		parent := int(c.Parent) - 1
		if parent >= i {
			return nil, fmt.Errorf("%s: location %q: call path %d names a later parent %d", f.Path, l.Name, i, parent)
		}
		out[i] = lnode{parent: parent, region: c.Region, visits: c.Visits, ticks: c.Exclusive}
	}
	return out, nil
}

// frame is an open call of the location being walked. Counters: counted
// is set when a metric record followed the enter; start holds its values,
// childCounts what the counted calls inside it counted, so that a call
// path's counts are exclusive as its time is.
type frame struct {
	node         int
	enter, child uint64
	counted      bool
	start        []uint64
	childCounts  []uint64
}

// walkTree builds the location's call paths from its events. Regions still
// open at the end are left at the location's last event; a truncated enter
// (a call begun before a keep-last window) counts its time, not its visit.
// cmap maps the file's counters to the profile's.
func walkTree(f *tracefile.File, l *tracefile.Location, cmap []int, counters int, ahead bool) ([]lnode, error) {
	var (
		tree  []lnode
		roots = map[uint32]int{}
		stack []frame
		last  uint64
		e     tracefile.Event
	)
	shift := f.Header.TimerShift
	leave := func(t uint64) {
		top := &stack[len(stack)-1]
		dur := t - min(t, top.enter)
		if len(stack) > 1 {
			stack[len(stack)-2].child += dur
		}
		tree[top.node].ticks += (dur - min(dur, top.child)) << shift
	}
	// finish books the counters of the frame just left, given the values
	// read at its leave (nil if none were), and pops it.
	finish := func(end []uint64) {
		fr := &stack[len(stack)-1]
		defer func() { stack = stack[:len(stack)-1] }()
		if !fr.counted {
			return
		}
		var up []uint64 // the enclosing counted frame's child counts
		for d := len(stack) - 2; d >= 0; d-- {
			if stack[d].counted {
				up = stack[d].childCounts
				break
			}
		}
		if end == nil {
			// Counted at the enter only: what the calls inside counted
			// goes to the enclosing count.
			for k, v := range fr.childCounts {
				if up != nil {
					up[k] += v
				}
			}
			return
		}
		n := &tree[fr.node]
		if n.counts == nil {
			n.counts = make([]uint64, counters)
		}
		for k, v := range end {
			delta := v - min(v, fr.start[k])
			n.counts[cmap[k]] += delta - min(delta, fr.childCounts[k])
			if up != nil {
				up[k] += delta
			}
		}
	}
	// pending is set after a leave: its frame waits for the metric record
	// that may follow it. entered is set after an enter.
	pending, entered := false, false
	it := f.EventsWith(l.ID, ahead)
	defer it.Close()
	for it.Next(&e) {
		last = e.Time
		if pending && (e.Kind != encode.KindMetric || e.Depth != len(stack)) {
			finish(nil)
			pending = false
		}
		switch e.Kind {
		case encode.KindEnter:
			kids, parent := roots, -1
			if len(stack) > 0 {
				parent = stack[len(stack)-1].node
				if tree[parent].children == nil {
					tree[parent].children = map[uint32]int{}
				}
				kids = tree[parent].children
			}
			n, ok := kids[e.Region]
			if !ok {
				n = len(tree)
				tree = append(tree, lnode{parent: parent, region: e.Region})
				kids[e.Region] = n
			}
			if !e.Truncated {
				tree[n].visits++
			}
			stack = append(stack, frame{node: n, enter: e.Time, childCounts: make([]uint64, len(cmap))})
		case encode.KindLeave:
			if len(stack) == 0 {
				return nil, fmt.Errorf("%s: location %q: leave at time %d with no region open", f.Path, l.Name, e.Time)
			}
			leave(e.Time)
			pending = true
		case encode.KindMetric:
			if len(e.Values) != len(cmap) {
				return nil, fmt.Errorf("%s: location %q: metric record at time %d with %d values, the header names %d counters",
					f.Path, l.Name, e.Time, len(e.Values), len(cmap))
			}
			switch {
			case pending:
				finish(e.Values)
				pending = false
			case entered && e.Depth == len(stack):
				fr := &stack[len(stack)-1]
				fr.counted = true
				fr.start = append(fr.start[:0], e.Values...)
			}
		}
		entered = e.Kind == encode.KindEnter
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if pending {
		finish(nil)
	}
	for len(stack) > 0 {
		leave(last)
		finish(nil)
	}
	return tree, nil
}

// FromFilesAnalysed is FromFiles with the results of the wait-state
// replay (analysis/waitstate) booked as Scalasca's metrics: the wait
// states, the critical path and the delay costs. What the profile cannot
// hold is said in Attrs under names that start with NoteAttr.
func FromFilesAnalysed(files []*tracefile.File, procs int) (*Profile, error) {
	p, err := FromFiles(files, procs)
	if err != nil {
		return nil, err
	}
	if err := exportWaitStates(p, files, procs); err != nil {
		return nil, err
	}
	return p, nil
}

// ExportProcs writes the call-path profile of the files with the
// wait-state metrics (FromFilesAnalysed) to w as a .cubex archive.
func ExportProcs(w io.Writer, files []*tracefile.File, procs int) error {
	p, err := FromFilesAnalysed(files, procs)
	if err != nil {
		return err
	}
	return p.Write(w)
}
