// Package pprof exports hmbtrace traces as call-path profiles in the format
// of github.com/google/pprof, which `go tool pprof` reads: one sample per
// call path, with the calls, the exclusive time and the exclusive counts of
// its innermost region. A region's flat values are then its exclusive
// totals and its cum values its inclusive ones.
//
// The call paths come from the events the trace kept. When the buffer shed
// events, the profile says so in its comments: the exact flat profile is
// the one `hmbtrace summary` prints.
package pprof

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The sample types: calls and exclusive time come first, then one per
// counter. Time is the default (`-sample_index=calls` picks the calls).
const (
	CallsType = "calls"
	TimeType  = "time"
)

// Export writes the call-path profile of the files to w as `go tool pprof`
// reads it (gzipped protocol buffer). The locations are read by
// HMB_TOOL_PROCS or GOMAXPROCS workers.
func Export(w io.Writer, files []*tracefile.File) error {
	procs, err := parallel.Procs(0)
	if err != nil {
		return fmt.Errorf("pprof export: %w", err)
	}
	return ExportProcs(w, files, procs)
}

// ExportProcs is Export with procs workers; the profile is the same for
// any number.
func ExportProcs(w io.Writer, files []*tracefile.File, procs int) error {
	p, err := BuildProcs(files, procs)
	if err != nil {
		return err
	}
	if err := p.Write(w); err != nil {
		return fmt.Errorf("pprof export: %w", err)
	}
	return nil
}

// Build returns the call-path profile of the files' events, merged over
// their locations. A function is a region of the run (tracefile.
// ReadUnified: its name, source location and paradigm), whichever ranks
// defined it; counters with the same name are one sample type.
func Build(files []*tracefile.File) (*profile.Profile, error) {
	procs, err := parallel.Procs(0)
	if err != nil {
		return nil, fmt.Errorf("pprof export: %w", err)
	}
	return BuildProcs(files, procs)
}

// BuildProcs is Build with procs workers, each walking one location's
// events into the location's own call tree. The trees are then numbered
// in the order of the locations, functions by their first call, so the
// profile is the same for any number of workers.
func BuildProcs(files []*tracefile.File, procs int) (*profile.Profile, error) {
	if len(files) == 0 {
		return nil, errors.New("pprof export: no trace files")
	}
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return nil, fmt.Errorf("pprof export: %w", err)
	}
	b := &builder{funcIdx: map[funcKey]int{}}
	// The counters are the run's metrics, in the order of its table.
	b.counters = u.Defs.Metrics
	cmaps := make([][]int, len(files)) // per file: its counter index -> profile counter index
	for i := range files {
		for _, g := range u.Maps[i].Metrics {
			cmaps[i] = append(cmaps[i], int(g)-1)
		}
	}
	type where struct{ file, loc int }
	var locs []where
	for i, f := range files {
		for k := range f.Locations {
			locs = append(locs, where{i, k})
		}
	}
	b.roots = make([]*root, len(locs))
	funcs := make([][]localFunc, len(locs))
	err = parallel.Do(procs, len(locs), func(n int) error {
		f := files[locs[n].file]
		l := &f.Locations[locs[n].loc]
		w := &walker{f: f, u: u, fi: locs[n].file, shift: f.Header.TimerShift, cmap: cmaps[locs[n].file], counters: len(b.counters),
			fnOf: map[uint32]int{}, funcIdx: map[funcKey]int{}, gen: 1, ahead: procs > len(locs),
			root: &root{rank: f.Header.Rank, location: l.Name, host: f.Header.Host}}
		if err := w.location(l); err != nil {
			return fmt.Errorf("pprof export: %w", err)
		}
		w.flush()
		b.roots[n], funcs[n] = w.root, w.funcs
		return nil
	})
	if err != nil {
		return nil, err
	}
	for n, r := range b.roots {
		b.number(&r.node, funcs[n])
	}
	return b.profile(files), nil
}

// funcKey is a function: the run's region (its unified id), or for a
// region id its file does not define, the name the tools give it
// (region#id).
type funcKey struct {
	region uint32
	name   string
}

// localFunc is a function as one location's walk first calls it.
type localFunc struct {
	key        funcKey
	name, file string
	line       int
}

// builder holds the call trees and the functions of the profile.
type builder struct {
	roots    []*root // one per location, in the files' order
	funcs    []*profile.Function
	funcIdx  map[funcKey]int
	counters []string
}

// number gives the functions of a location's tree, numbered by the
// location's walk, the profile's function indices: a function new to the
// profile is numbered next, in the order the location first called it.
func (b *builder) number(top *node, local []localFunc) {
	global := make([]int, len(local))
	for k, lf := range local {
		fn, ok := b.funcIdx[lf.key]
		if !ok {
			fn = len(b.funcs)
			b.funcs = append(b.funcs, &profile.Function{ID: uint64(fn + 1), Name: lf.name, SystemName: lf.name,
				Filename: lf.file, StartLine: int64(lf.line)})
			b.funcIdx[lf.key] = fn
		}
		global[k] = fn
	}
	var renumber func(n *node)
	renumber = func(n *node) {
		if len(n.children) == 0 {
			return
		}
		children := make(map[int]*node, len(n.children))
		for _, c := range n.children {
			c.fn = global[c.fn]
			children[c.fn] = c
			renumber(c)
		}
		n.children = children
	}
	renumber(top)
}

// function returns the location's function index of region id of the
// walker's file.
func (w *walker) function(id uint32) int {
	if fn, ok := w.fnOf[id]; ok {
		return fn
	}
	lf := localFunc{name: w.f.RegionName(id)}
	if r, k := w.u.Region(w.fi, id); r != nil {
		lf.key.region, lf.file, lf.line = k, r.File, r.Line
	} else {
		lf.key.name = lf.name
	}
	key := lf.key
	fn, ok := w.funcIdx[key]
	if !ok {
		fn = len(w.funcs)
		w.funcs = append(w.funcs, lf)
		w.funcIdx[key] = fn
	}
	w.fnOf[id] = fn
	return fn
}

// profile assembles the profile from the call tree.
func (b *builder) profile(files []*tracefile.File) *profile.Profile {
	origin := files[0].Header.StartWall
	for _, f := range files {
		if f.Header.StartWall.Before(origin) {
			origin = f.Header.StartWall
		}
	}
	var duration int64
	for _, f := range files {
		duration = max(duration, f.Header.StartWall.Sub(origin).Nanoseconds()+f.Duration())
	}
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: CallsType, Unit: "count"}, {Type: TimeType, Unit: "nanoseconds"}},
		DefaultSampleType: TimeType,
		PeriodType:        &profile.ValueType{Type: TimeType, Unit: "nanoseconds"},
		Period:            1,
		TimeNanos:         origin.UnixNano(),
		DurationNanos:     duration,
		Comments:          comments(files),
		// The regions are named already: the mapping says so, and pprof
		// does not try to symbolize. Its file is what pprof shows as the
		// profile's File.
		Mapping:  []*profile.Mapping{{ID: 1, File: program(files), HasFunctions: true, HasFilenames: true, HasLineNumbers: true}},
		Function: b.funcs,
	}
	for _, c := range b.counters {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: c, Unit: "count"})
	}
	locs := make([]*profile.Location, len(b.funcs))
	for i, fn := range b.funcs {
		locs[i] = &profile.Location{ID: uint64(i + 1), Mapping: p.Mapping[0], Line: []profile.Line{{Function: fn, Line: fn.StartLine}}}
	}
	p.Location = locs
	var (
		top    *node
		labels map[string][]string
		nums   map[string][]int64
		units  map[string][]string
	)
	var visit func(n *node)
	visit = func(n *node) {
		if n != top && (n.calls > 0 || n.ns > 0 || slices.ContainsFunc(n.counts, func(v uint64) bool { return v > 0 })) {
			s := &profile.Sample{Value: make([]int64, len(p.SampleType)), Label: labels, NumLabel: nums, NumUnit: units}
			s.Value[0], s.Value[1] = clamp(n.calls), n.ns
			for k, v := range n.counts {
				s.Value[2+k] = clamp(v)
			}
			for a := n; a != top; a = a.parent {
				s.Location = append(s.Location, locs[a.fn])
			}
			p.Sample = append(p.Sample, s)
		}
		keys := make([]int, 0, len(n.children))
		for fn := range n.children {
			keys = append(keys, fn)
		}
		slices.Sort(keys)
		for _, fn := range keys {
			visit(n.children[fn])
		}
	}
	for _, r := range b.roots {
		// The rank is a number so that -tagfocus rank=2 matches rank 2
		// only, not 12 as a string's pattern would; samples of one
		// location share its label maps, as pprof's own parser does. It
		// has a unit because pprof's decoder drops a numeric label whose
		// value and unit are both zero, which would lose rank 0.
		top = &r.node
		labels = map[string][]string{"location": {r.location}, "host": {r.host}}
		nums = map[string][]int64{"rank": {int64(r.rank)}}
		units = map[string][]string{"rank": {"rank"}}
		visit(top)
	}
	return p
}

// program returns the traced program as the profile names it: the first
// file's executable (its command line's first word), else its run name.
func program(files []*tracefile.File) string {
	h := &files[0].Header
	if f := strings.Fields(h.Program); len(f) > 0 {
		return f[0]
	}
	if h.Name != "" {
		return h.Name
	}
	return "hmbtrace"
}

func clamp(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

// comments say what the profile covers: the traces, and where the events
// it is built from are not all that happened. Each is said once for all
// the traces it holds for: a run of 256 ranks made 257 lines, one per rank
// and the list of all of them.
func comments(files []*tracefile.File) []string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	out := []string{"hmbtrace call-path profile of " + traces(paths)}
	var removed, most uint64
	var removedIn, windowedIn []string
	mostIn := ""
	shifted := map[string][]string{} // the resolution's words: the traces
	var shifts []string
	for _, f := range files {
		var n uint64
		windowed := false
		for i := range f.Locations {
			l := &f.Locations[i]
			n += l.Removed().Total() + l.FilteredDuration
			windowed = windowed || l.Windowed
		}
		if n > 0 {
			removed += n
			removedIn = append(removedIn, f.Path)
			if n > most {
				most, mostIn = n, f.Path
			}
		}
		if windowed {
			windowedIn = append(windowedIn, f.Path)
		}
		if f.Header.TimerShift > 0 {
			k := fmt.Sprintf("timestamps kept to %.3g ns (timer shift %d)", f.Resolution(), f.Header.TimerShift)
			if shifted[k] == nil {
				shifts = append(shifts, k)
			}
			shifted[k] = append(shifted[k], f.Path)
		}
	}
	if removed > 0 {
		p := fmt.Sprintf("%d events were removed (buffer reductions, duration filter)%s", removed, where(removedIn, len(files)))
		if len(removedIn) > 1 {
			p += fmt.Sprintf(", the most, %d, in %s", most, mostIn)
		}
		out = append(out, p+": the call paths cover the kept events only; `hmbtrace summary` has the exact flat profile")
	}
	if len(windowedIn) > 0 {
		out = append(out, "keep-last window"+where(windowedIn, len(files))+": calls open at its start count from there, and their calls are not counted")
	}
	for _, k := range shifts {
		out = append(out, k+where(shifted[k], len(files))+": times are exact to that resolution")
	}
	return out
}

// traces names the traces of paths: all of them when a few, else the
// first three and how many more (of a run archive, its ranks: path#rank).
func traces(paths []string) string {
	if len(paths) <= 4 {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s, and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
}

// where says which of the profile's all traces the traces of paths are,
// after a space: nothing when the profile has one.
func where(paths []string, all int) string {
	switch {
	case all == 1:
		return ""
	case len(paths) == all:
		return fmt.Sprintf(" in all %d traces", all)
	}
	return fmt.Sprintf(" in %d of %d traces (%s)", len(paths), all, traces(paths))
}
