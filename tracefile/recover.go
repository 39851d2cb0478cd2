package tracefile

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/survive"
)

// Recovery is the trace made from the mapping a process left behind
// (HMB_SURVIVE=1, package internal/survive): the bins' complete records,
// the definitions and the statistics as far as the process stored them.
//
// What is exact and what is a lower bound: the records in the bins are
// exactly those the buffer held at death, each level up to its last
// complete record; the regions, locations, communicators and reductions
// are all those defined before death (a definition being written at that
// moment excepted); the records revoked by reductions and the levels'
// closures are exact, being stored as they happen. The records dropped at
// the probes, the events recorded and filtered per location are the
// values of the location's last slow path (a new bin, a sync, Done):
// lower bounds. Recorded is raised to what the other counts account for.
// The flat profile is not in the mapping: Recover derives it from the
// kept events (calls open at death end at their location's last event).
// Its visits and times are exact for the regions whose levels were kept
// whole, lower bounds for the others (a reduction removed calls), and the
// exclusive times of calls whose children were removed include theirs.
type Recovery struct {
	Trace *Trace
	Bins  []Bin

	Output string // the directory the process would have written its trace to (HMB_OUTPUT)
	PID    int
	Alive  bool   // the process still ran (read with force)
	Closed bool   // the process had written its trace file: this mapping is left over
	Cause  string // what is known of the end, in words

	// Records counts the records kept; Cut the bins whose bytes stopped
	// decoding before their fill mark (a damaged file, or a live
	// process's bin read while it was written), cut at their last complete
	// record; Orphans the bins whose level had no entry.
	Records uint64
	// Unaccounted counts the events the locations had recorded when they
	// last published their counts, beyond what the mapping accounts for
	// (kept, removed, filtered): dropped at the probe after the last
	// publication, held by the duration filter, or under way at death.
	// Recorded in the trace is what is accounted for.
	Unaccounted uint64
	Cut         int
	Orphans     int
	// Lost counts what did not fit the mapping's tables: definitions and
	// levels (their records are missing).
	LostDefs, LostLevels uint64
}

// MappingHeader is the trace header as a process stores it in its
// mapping, with its output directory.
type MappingHeader struct {
	Header
	Output string
}

// ErrAlive is returned for the mapping of a process that still runs.
var ErrAlive = errors.New("the process is still running")

// IsMapping reports whether the file at path is a mapping a process left
// (HMB_SURVIVE=1) rather than a trace file.
func IsMapping(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8]byte
	n, _ := f.ReadAt(head[:], 0)
	return n == 8 && string(head[:]) == survive.Magic
}

// Recover reads the mapping file at path. The mapping of a process that
// still runs is refused (ErrAlive) unless force is set; then its records
// are read as they stand, each bin up to the fill mark seen.
func Recover(path string, force bool) (*Recovery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		return nil, fmt.Errorf("%s: a mapping file of %d bytes", path, st.Size())
	}
	// Mapped, not read: the definition log's unused room is sparse and
	// stays untouched. The bins' bytes are copied out before they are
	// decoded, so that a live process's stores (force) cannot change
	// them between the two.
	b, release, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	defer release()
	r, err := recoverMapping(b, force, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// RecoverBytes is Recover for a mapping file's bytes, which the Recovery
// keeps.
func RecoverBytes(b []byte, force bool) (*Recovery, error) {
	return recoverMapping(b, force, false)
}

func recoverMapping(b []byte, force, copyBins bool) (*Recovery, error) {
	v, err := survive.Read(b)
	if err != nil {
		return nil, err
	}
	h := &v.Header
	rec := &Recovery{PID: int(h.PID), Alive: h.State == survive.StateRunning && h.Alive(), Closed: h.State == survive.StateClosed,
		LostDefs: h.DefLost, LostLevels: h.LevelLost}
	if rec.Alive && !force {
		return nil, fmt.Errorf("pid %d: %w (recover -force reads its buffer as it stands)", h.PID, ErrAlive)
	}
	// What ended the run: the handler of HMB_SIGNALS stores the signal
	// before it writes the trace, so a mapping still running without it
	// died of what no handler sees.
	end := &Recovered{End: EndUnknown, LostDefs: h.DefLost, LostLevels: h.LevelLost}
	if h.Signal > 0 && h.Signal < 1<<10 {
		end.Signal = int(h.Signal)
	}
	switch {
	case rec.Alive:
		end.End = EndRunning
	case rec.Closed:
		end.End = EndClosed
	case h.State == survive.StateLeft:
		end.End = EndLeft
	case end.Signal > 0:
		end.End = EndSignal
	}
	rec.Cause = end.EndText()
	t := &Trace{Recovered: end}
	rec.Trace = t
	regions := map[uint32]Region{}
	names := map[uint32]string{}
	var reductions []Reduction
	wins := map[uint32]Win{}
	err = v.Definitions(func(d survive.Def) error {
		p := d.Payload
		switch d.Kind {
		case survive.DefHeader:
			var hd MappingHeader
			if err := json.Unmarshal(p, &hd); err != nil {
				return fmt.Errorf("the trace header in the mapping: %v", err)
			}
			t.Header, rec.Output = hd.Header, hd.Output
		case survive.DefRegion:
			var f [5]uint64
			var s [2]string
			if !uvarints(&p, f[:3]) || !lenString(&p, &s[0]) || !lenString(&p, &s[1]) {
				return errors.New("a region definition cut short")
			}
			regions[uint32(f[0])] = Region{ID: uint32(f[0]), Line: int(f[1]), Paradigm: Paradigm(f[2]), Name: s[0], File: s[1]}
		case survive.DefLocation:
			var id [1]uint64
			if !uvarints(&p, id[:]) {
				return errors.New("a location definition cut short")
			}
			names[uint32(id[0])] = string(p)
		case survive.DefReduction:
			var f [8]uint64
			if !uvarints(&p, f[:]) {
				return errors.New("a reduction cut short")
			}
			r := Reduction{Reason: Reason(f[1]), Depth: int(f[2]), Class: Class(f[3]), Time: f[4], Bins: int(f[5]), Records: f[6], Steps: int(f[7])}
			if i := int(f[0]); i < len(reductions) {
				reductions[i] = r
			} else if i == len(reductions) {
				reductions = append(reductions, r)
			}
		case survive.DefComm:
			var c Comm
			if err := json.Unmarshal(p, &c); err != nil {
				return fmt.Errorf("a communicator in the mapping: %v", err)
			}
			t.Comms = append(t.Comms, c)
		case survive.DefWin:
			var w Win
			if err := json.Unmarshal(p, &w); err != nil {
				return fmt.Errorf("an RMA window in the mapping: %v", err)
			}
			wins[w.ID] = w // a later record names it
		case survive.DefRmaGroup:
			var g RmaGroup
			if err := json.Unmarshal(p, &g); err != nil {
				return fmt.Errorf("an RMA group in the mapping: %v", err)
			}
			t.RmaGroups = append(t.RmaGroups, g)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if t.Header.Name == "" {
		return nil, errors.New("the mapping holds no trace header: the process died as it started")
	}
	// Region ids are dense; one whose definition was lost keeps its id.
	maxID := uint32(0)
	for id := range regions {
		maxID = max(maxID, id)
	}
	t.Regions = make([]Region, maxID)
	for i := range t.Regions {
		id := uint32(i + 1)
		r, ok := regions[id]
		if !ok {
			r = Region{ID: id, Name: fmt.Sprintf("region %d (definition lost)", id)}
		}
		t.Regions[i] = r
	}
	t.Reductions = reductions
	for _, w := range wins {
		t.Wins = append(t.Wins, w)
	}
	slices.SortFunc(t.Wins, func(a, b Win) int { return cmp.Compare(a.ID, b.ID) })

	// The bins, by level, in chain order, each up to its last complete
	// record.
	byLevel := make([][]keptBin, len(v.Levels))
	dec := encode.NewDecoder(t.Header.Techniques)
	var r encode.Record
	last := t.Header.StartTicks >> t.Header.TimerShift
	for i := range v.Descs {
		data, lv, ok := v.Bin(i)
		if !ok {
			if v.Descs[i].Level != 0 {
				rec.Orphans++
			}
			continue
		}
		if copyBins {
			data = append([]byte(nil), data...)
		}
		if len(data) == 0 || dec.Reset(data) != nil {
			continue // taken, its header not complete yet
		}
		n, end := uint32(0), dec.Offset()
		for dec.Next(&r) {
			n++
			end = dec.Offset()
			last = max(last, r.Time)
			// The mapping keeps no definitions of annotations, but the
			// file must still be one older readers refuse at its header.
			t.annotated = t.annotated || r.Kind.IsAnnotation()
		}
		if dec.Err() != nil {
			rec.Cut++
			data = data[:end]
		}
		if n == 0 {
			continue
		}
		byLevel[lv] = append(byLevel[lv], keptBin{v.Descs[i].Ord, data, n})
	}
	// The run lasted at least to its last record and its last reduction
	// (whose trigger may be in a level removed since).
	for _, r := range reductions {
		last = max(last, r.Time)
	}
	t.Header.EndTicks = max(t.Header.EndTicks, last<<t.Header.TimerShift)

	locs := map[uint32]*Location{}
	location := func(id uint32) *Location {
		if l := locs[id]; l != nil {
			return l
		}
		name, ok := names[id]
		if !ok {
			name = fmt.Sprintf("location %d", id)
		}
		l := &Location{ID: id, Name: name, Interrupted: h.State == survive.StateRunning}
		if int(id) < len(v.Locs) {
			e := v.Locs[id]
			l.Recorded, l.FilteredName, l.FilteredDuration = e.Recorded, e.FilteredName, e.FilteredDuration
			if e.Windowed != 0 {
				l.Windowed, l.WindowTime, l.WindowSeq = true, e.WindowTime, uint32(e.WindowSeq)
			}
		}
		locs[id] = l
		return l
	}
	for id := range names {
		location(id)
	}
	// A reduction stores a level's closure before it revokes the level's
	// bins, one level after the other, and the current bins of closed
	// levels stay with their owners until they sync. So a process that
	// died during a reduction, or before its writers synced, left bins of
	// closed levels, and of deeper levels the reduction had not reached:
	// they go as the reduction would have taken them, which keeps every
	// location's events nested.
	type groupKey struct {
		loc   uint32
		group int
	}
	// The bookkeeping is the dead process's memory, which it may have
	// scribbled on before it died: an index out of its range is an error
	// naming the level, never a panic.
	for i, e := range v.Levels {
		if e.Closed != 0 && int(e.ClosedBy) >= survive.NumReasons {
			return nil, fmt.Errorf("level %d (location %d, depth %d): closed by reason %d, not one of the %d known", i, e.Loc, e.Depth, e.ClosedBy, survive.NumReasons)
		}
		if Class(e.Class) >= NumClasses {
			return nil, fmt.Errorf("level %d (location %d, depth %d): event class %d, not one of the %d known", i, e.Loc, e.Depth, e.Class, NumClasses)
		}
		if e.Depth > maxDepth {
			return nil, fmt.Errorf("level %d (location %d): depth %d, deeper than the %d a trace file holds", i, e.Loc, e.Depth, maxDepth)
		}
	}
	depthLimit := map[groupKey]uint32{}
	classClosed := map[[2]uint32]bool{}
	for _, e := range v.Levels {
		if e.Closed == 0 {
			continue
		}
		switch Reason(e.ClosedBy) {
		case ByDepth:
			k := groupKey{e.Loc, classGroup(Class(e.Class))}
			if d, ok := depthLimit[k]; !ok || e.Depth < d {
				depthLimit[k] = e.Depth
			}
		case ByClass:
			classClosed[[2]uint32{e.Loc, uint32(e.Class)}] = true
		}
	}
	for i, e := range v.Levels {
		l := location(e.Loc)
		chain := byLevel[i]
		gone, by := e.Closed != 0, Reason(e.ClosedBy)
		if d, ok := depthLimit[groupKey{e.Loc, classGroup(Class(e.Class))}]; ok && e.Depth >= d && !gone {
			gone, by = true, ByDepth
		}
		if classClosed[[2]uint32{e.Loc, uint32(e.Class)}] && !gone {
			gone, by = true, ByClass
		}
		if gone && len(chain) > 0 {
			for _, k := range chain {
				e.Revoked[by] += uint64(k.records)
			}
			chain = nil
		}
		if gone {
			e.Closed, e.ClosedBy = 1, uint8(by)
		}
		slices.SortFunc(chain, func(a, b keptBin) int { return cmp.Compare(a.ord, b.ord) })
		st := LevelStats{Depth: int(e.Depth), Class: Class(e.Class), Closed: e.Closed != 0, By: Reason(e.ClosedBy)}
		for k := range st.Revoked {
			st.Revoked[k] = e.Revoked[k]
			st.Dropped[k] = e.Dropped[k]
		}
		var n uint64
		for _, k := range chain {
			n += uint64(k.records)
			rec.Bins = append(rec.Bins, Bin{Location: e.Loc, Depth: int(e.Depth), Class: Class(e.Class), Records: k.records, Data: k.data})
		}
		st.Written = n + st.Revoked.Total()
		if l.Windowed {
			// As Finalize does: records up to the window may have lost
			// their neighbours in other levels; readers skip them.
			st.Revoked[ByLast] += beforeWindow(dec, chain, l.WindowTime, l.WindowSeq)
		}
		rec.Records += n
		l.Levels = append(l.Levels, st)
	}
	for _, l := range locs {
		// The events recorded since the location last published whose
		// fate is not in the mapping (dropped at a closed level, held by
		// the duration filter, the one under way at death): the counts
		// keep what is known, and the recovery says how many are not.
		if a := l.Accounted(); l.Recorded > a {
			rec.Unaccounted += l.Recorded - a
		}
		l.Recorded = l.Accounted()
		t.Locations = append(t.Locations, *l)
	}
	slices.SortFunc(t.Locations, func(a, b Location) int { return cmp.Compare(a.ID, b.ID) })
	end.Unaccounted, end.Cut, end.Orphans = rec.Unaccounted, rec.Cut, rec.Orphans
	if err := rec.deriveProfiles(); err != nil {
		return nil, err
	}
	return rec, nil
}

// deriveProfiles sets each location's flat profile from its events, read
// back from the recovered trace.
func (r *Recovery) deriveProfiles() error {
	b, err := r.Bytes()
	if err != nil {
		return err
	}
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("the recovered trace does not read: %v", err)
	}
	shift := f.Header.TimerShift & 63
	for i := range r.Trace.Locations {
		l := &r.Trace.Locations[i]
		type open struct {
			region      uint32
			start, kids uint64
		}
		var stack []open
		byRegion := map[uint32]*ProfileEntry{}
		active := map[uint32]int{}
		entry := func(id uint32) *ProfileEntry {
			p := byRegion[id]
			if p == nil {
				p = &ProfileEntry{Region: id}
				byRegion[id] = p
			}
			return p
		}
		leave := func(t uint64) {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			d := t - min(o.start, t)
			p := entry(o.region)
			p.Exclusive += d - min(o.kids, d)
			if active[o.region]--; active[o.region] == 0 {
				p.Inclusive += d // recursion counted once
			}
			if len(stack) > 0 {
				stack[len(stack)-1].kids += d
			}
		}
		it := f.Events(l.ID)
		var e Event
		last := uint64(0)
		for it.Next(&e) {
			t := e.Time << shift
			last = max(last, t)
			switch {
			case e.Kind == encode.KindEnter && !e.Truncated:
				entry(e.Region).Visits++
				active[e.Region]++
				stack = append(stack, open{region: e.Region, start: t})
			case e.Kind == encode.KindEnter:
				active[e.Region]++
				stack = append(stack, open{region: e.Region, start: t})
			case e.Kind == encode.KindLeave && len(stack) > 0:
				leave(t)
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("the recovered trace's location %d: %v", l.ID, err)
		}
		for len(stack) > 0 {
			leave(last) // open at death: to the location's last event
		}
		l.Profile = l.Profile[:0]
		for _, p := range byRegion {
			l.Profile = append(l.Profile, *p)
		}
		slices.SortFunc(l.Profile, func(a, b ProfileEntry) int { return cmp.Compare(a.Region, b.Region) })
	}
	return nil
}

// keptBin is a bin of a recovered level: its position in the chain, its
// complete records.
type keptBin struct {
	ord     uint32
	data    []byte
	records uint32
}

// beforeWindow counts the records of a level's bins whose key is not after
// the window's.
func beforeWindow(dec *encode.Decoder, bins []keptBin, wt uint64, ws uint32) (n uint64) {
	var r encode.Record
	for _, b := range bins {
		if dec.Reset(b.data) != nil {
			return n
		}
		for dec.Next(&r) {
			if r.Time > wt || (r.Time == wt && r.Seq > ws) {
				return n
			}
			n++
		}
	}
	return n
}

// classGroup is buffer's grouping of the classes for the depth policy:
// compute (enter/leave, metric) is 0, communication (message, collective,
// paradigm) 1. Each group has its own depth limit.
func classGroup(c Class) int {
	if c == ClassMessage || c == ClassCollective || c == ClassParadigm {
		return 1
	}
	return 0
}

func uvarints(p *[]byte, dst []uint64) bool {
	for i := range dst {
		v, n := binary.Uvarint(*p)
		if n <= 0 {
			return false
		}
		dst[i] = v
		*p = (*p)[n:]
	}
	return true
}

func lenString(p *[]byte, s *string) bool {
	var n [1]uint64
	if !uvarints(p, n[:]) || n[0] > uint64(len(*p)) {
		return false
	}
	*s = string((*p)[:n[0]])
	*p = (*p)[n[0]:]
	return true
}

// Write writes the recovered trace as a trace file at path (or a distinct
// name next to it, as WriteNew does).
func (r *Recovery) Write(path string) (Placement, error) {
	return WriteNew(path, r.Trace, r.put)
}

func (r *Recovery) put(put func(Bin) error) error {
	for _, b := range r.Bins {
		if err := put(b); err != nil {
			return err
		}
	}
	return nil
}

// Bytes returns the recovered trace as the bytes of a trace file.
func (r *Recovery) Bytes() ([]byte, error) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, r.Trace)
	if err != nil {
		return nil, err
	}
	if err := r.put(w.Bin); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// openMapping opens a mapping file as a trace: what Open does when it
// finds one. A live process's mapping is refused.
func openMapping(path string) (*File, error) {
	r, err := Recover(path, false)
	if err != nil {
		return nil, err
	}
	b, err := r.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%s (recovered): %v", path, err)
	}
	f.Path = path
	return f, nil
}
