package score

import (
	"fmt"
	"math"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Property is the overhead property of Oleynik (chapter 4.3) that flags a
// region.
//
// hmbtrace's probes read the clock first, so an enter's cost falls inside
// the region's measured time and a leave's cost after it, in the enclosing
// region. Nothing is compensated, so of the seed's two overhead parts only
// the one that lands in the region's own measurement is told apart.
type Property int

const (
	// TotalOverhead is the Excessive Total Relative Overhead property
	// (TOR strategy): everything the region's probes add to the run, two
	// events per visit, relative to the region's pure time. It limits how
	// much measuring the region slows the run down.
	TotalOverhead Property = iota
	// PrologOverhead is the Excessive Prolog Overhead property (POR
	// strategy): the part of the probes that the region's own measured
	// time absorbs, one event per visit, relative to its pure time. It
	// keeps more regions: those whose measurement stays accurate though
	// they slow the run.
	PrologOverhead
)

func (p Property) String() string {
	switch p {
	case TotalOverhead:
		return "total"
	case PrologOverhead:
		return "prolog"
	}
	return fmt.Sprintf("Property(%d)", int(p))
}

// ParseProperty reads "total" or "prolog".
func ParseProperty(s string) (Property, error) {
	switch s {
	case "total":
		return TotalOverhead, nil
	case "prolog":
		return PrologOverhead, nil
	}
	return 0, fmt.Errorf("analysis: unknown overhead property %q (want total or prolog)", s)
}

// Defaults of Options.
const (
	DefaultThreshold = 0.05 // Oleynik's threshold: 5 % of the pure time
	DefaultMinShare  = 0.01 // scorep-score -g's default: 1 % of the trace
)

// Options say which regions Score flags.
type Options struct {
	Property Property
	// Threshold is the relative overhead above which a region is flagged,
	// as a fraction; 0 means DefaultThreshold.
	Threshold float64
	// MinShare is the share of all probe events (and so of the trace and of
	// the overhead) a region must contribute to be flagged, as a fraction:
	// filtering a rare region saves nothing. 0 means DefaultMinShare; a
	// negative value flags on the relative overhead alone.
	MinShare float64
}

// RegionScore is one region's line of the score, over all files.
type RegionScore struct {
	Name string
	// Visits are all its calls, from the exact flat profile; VisitsAfter
	// of them came after the probes throttled it (HMB_THROTTLE), counted
	// but not timed.
	Visits, VisitsAfter uint64
	// Inclusive and Exclusive are the times of the timed visits,
	// Visits-VisitsAfter, from the exact flat profile.
	Inclusive int64 // ns
	Exclusive int64 // ns
	// Nested counts the calls of other regions entered inside its calls,
	// from the kept events (fewer than made when the buffer shed deeper
	// levels).
	Nested uint64
	// Overhead is what its probes cost in this run: its timed visits'
	// 2 events at Score.ProbeCost, and those counted after a throttle at
	// ThrottledProbeCost, as the throttled probe only tests a flag and
	// counts. Untimed is that second part.
	Overhead, Untimed float64
	// FullOverhead is what its probes cost with every visit measured,
	// 2 × Visits × Score.ProbeCost: the relative overheads and the flag
	// use it, since a filter decides for a run that measures the region.
	FullOverhead float64
	// Pure is its inclusive time without the probe costs inside it: less
	// one probe per timed visit (its enters) and two per nested call; for a
	// throttled region scaled from the timed visits to all.
	Pure float64
	// RelTotal and RelProlog are the overheads of the two properties
	// relative to Pure: FullOverhead/Pure and FullOverhead/2/Pure; +Inf when the
	// probes account for all of its time.
	RelTotal, RelProlog float64
	// Share is its part of all probe events: its visits over all visits.
	Share float64
	// KeptEvents are its enter and leave records in the files; KeptBytes
	// their encoded size (estimated: re-encoded), with the messages and
	// metrics recorded while it was the innermost region. FullBytes
	// estimates the bytes of all its visits, had none been removed.
	KeptEvents           uint64
	KeptBytes, FullBytes float64
	// Sync says it is a synchronization region (DefaultSync: MPI waits and
	// collectives, OpenMP barriers and waits). It is never flagged:
	// variation subtracts its time from the segments, which a filtered
	// region would no longer do.
	Sync bool
	// Paradigm says it is an MPI or OpenMP region (its paradigm in any
	// file). It is never flagged: the run-time filter keeps such regions
	// whatever the filter file says, since their records carry the
	// messages, collectives and waits the tools read (Score-P's
	// scorep-score -g likewise filters user and compiler regions only).
	Paradigm bool
	Flagged  bool
}

// Relative returns the region's relative overhead of property p.
func (r *RegionScore) Relative(p Property) float64 {
	if p == PrologOverhead {
		return r.RelProlog
	}
	return r.RelTotal
}

// FileScore is what one file's buffer held and would have needed.
type FileScore struct {
	Path      string
	ProbeCost float64 // ns per event, measured at Start; 0 if not measured
	BinSize   uint64
	Buffer    uint64 // the buffer the run had
	Recorded  uint64 // events the probes accepted
	Kept      uint64 // events in the file
	Filtered  uint64 // events the name and duration filters left out
	Removed   uint64 // events the buffer removed
	// FileBytes and FileBins are what the file's bins hold; Reencoded and
	// HeaderBytes what re-encoding the kept events gives (records and BIN
	// records), to show how close the estimates are.
	FileBytes, Reencoded, HeaderBytes int64
	FileBins                          int
	// Unreduced estimates the buffer that would have kept every recorded
	// event (the filters left as they were): the kept bytes plus each
	// removed event at the bytes per record of its level, in bins filled
	// no fuller than package buffer fills them, one chain per level.
	UnreducedBytes float64
	UnreducedBins  uint64
}

// UnreducedBuffer is the buffer size, whole bins, that would have kept the
// run unreduced (an estimate).
func (f *FileScore) UnreducedBuffer() uint64 { return f.UnreducedBins * f.BinSize }

// Score is the measurement score of a run (Oleynik, chapter 4; Score-P's
// scorep-score): per region its visits, time, trace bytes and estimated
// measurement overhead, and the regions whose overhead is excessive.
type Score struct {
	Options      Options
	Locations    int
	LocationTime int64         // ns: each location counts its file's whole run
	Regions      []RegionScore // by FullBytes, largest first, then name
	Files        []FileScore
	// ProbeCost is the ns per event every region's overhead is estimated
	// with: the least of the files' measurements at Start. The files of one
	// run probe with the same library on the same kind of machine, and a
	// rank that was preempted while it measured (oversubscribed, or sharing
	// a core with its OpenMP threads) measures several times the cost: one
	// run's ranks measured 21.7 and 166.5 ns.
	ProbeCost float64
	Overhead  float64 // ns, all regions
	// ThrottledVisits are the visits counted after a throttle, whose
	// overhead is estimated at ThrottledProbeCost per event, not
	// ProbeCost; Untimed is that overhead (part of Overhead).
	ThrottledVisits uint64
	Untimed         float64
	// UnattributedBytes are records outside any region (messages at depth
	// 0), estimated like KeptBytes.
	UnattributedBytes float64
	// ShedLevels is set when a buffer removed events: Nested then misses
	// calls, Pure is too large and the relative overheads of the regions
	// above the removed levels too small.
	ShedLevels bool
	// NoProbeCost lists files that carry no probe cost: their regions'
	// overheads use ProbeCost, the other files' least, or count as zero when
	// no file has one.
	NoProbeCost []string
	// Throttled lists the regions the probes switched off during the run,
	// merged by name over the files.
	Throttled []tracefile.ThrottledRegion

	paradigm map[string]bool // names of MPI and OpenMP regions (Filterable)
}

// ThrottledProbeCost is the ns per event a throttled region's probe costs:
// it tests one flag before the clock and counts the visit. The files do
// not record it; the guide measures 0.6 ns (Go, C hmb_enter) to 1.6 ns
// (C -finstrument-functions hooks) on this machine. A file whose probe
// cost is lower still uses that.
const ThrottledProbeCost = 1.0

// Compute scores the regions of files, by name (a filter file's unit), reading every
// kept event once, the locations on HMB_TOOL_PROCS or GOMAXPROCS workers.
func Compute(files []*tracefile.File, opt Options) (*Score, error) {
	procs, err := parallel.Procs(0)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	return ComputeProcs(files, opt, procs)
}

// ComputeProcs is Compute with procs workers; the score is the same for
// any number.
func ComputeProcs(files []*tracefile.File, opt Options, procs int) (*Score, error) {
	if opt.Threshold == 0 {
		opt.Threshold = DefaultThreshold
	}
	if opt.MinShare == 0 {
		opt.MinShare = DefaultMinShare
	}
	if opt.Property != TotalOverhead && opt.Property != PrologOverhead {
		return nil, fmt.Errorf("analysis: unknown overhead property %d", int(opt.Property))
	}
	s := &Score{Options: opt}
	byName := map[string]*RegionScore{}
	var allVisits uint64
	walks, err := walkFiles(files, procs)
	if err != nil {
		return nil, err
	}
	for fi, f := range files {
		fs := scoreFile(f, walks[fi])
		s.Files = append(s.Files, fs)
		if c := fs.ProbeCost; c > 0 && (s.ProbeCost == 0 || c < s.ProbeCost) {
			s.ProbeCost = c
		}
	}
	for fi, f := range files {
		w, fs := walks[fi], &s.Files[fi]
		s.Locations += len(f.Locations)
		s.LocationTime += f.Duration() * int64(len(f.Locations))
		if fs.Removed > 0 {
			s.ShedLevels = true
		}
		cost := s.ProbeCost
		if fs.ProbeCost == 0 {
			s.NoProbeCost = append(s.NoProbeCost, f.Path)
		}
		fallback := fallbackBytesPerEvent(f, w)

		// The flat profile, per region id of this file.
		type prof struct {
			visits, after uint64 // all visits; those of them counted after a throttle
			incl, excl    int64
		}
		profs := make([]prof, len(f.Regions)+1)
		for i := range f.Locations {
			for _, p := range f.Locations[i].Profile {
				if int(p.Region) < len(profs) && p.Region > 0 {
					q := &profs[p.Region]
					q.visits += p.Visits
					if p.Throttled {
						// Counted, not timed: they are visits all the
						// same, which an unfiltered run measures and
						// writes.
						q.visits += p.VisitsAfter
						q.after += p.VisitsAfter
					}
					q.incl += f.TicksToNanos(p.Inclusive)
					q.excl += f.TicksToNanos(p.Exclusive)
				}
			}
		}
		s.UnattributedBytes += float64(w.regions[0].bytes)
		for id := 1; id < len(profs); id++ {
			p, rw := profs[id], w.regions[id]
			if p.visits == 0 && rw.events == 0 {
				continue
			}
			name := f.RegionName(uint32(id))
			r := byName[name]
			if r == nil {
				r = &RegionScore{Name: name, Sync: analysis.SyncMatcher{}.Match(name)}
				byName[name] = r
			}
			r.Visits += p.visits
			r.VisitsAfter += p.after
			r.Inclusive += p.incl
			r.Exclusive += p.excl
			r.Nested += rw.nested
			untimed := 2 * float64(p.after) * min(ThrottledProbeCost, cost)
			r.Overhead += 2*float64(p.visits-p.after)*cost + untimed
			r.Untimed += untimed
			r.FullOverhead += 2 * float64(p.visits) * cost
			pure := float64(p.incl) - float64(p.visits-p.after)*cost - 2*float64(rw.nested)*cost
			if timed := p.visits - p.after; p.after > 0 && timed > 0 {
				// The untimed visits are taken to last as long as the
				// timed ones, so the relative overhead is the timed
				// visits' and the overhead that of all.
				pure *= float64(p.visits) / float64(timed)
			}
			r.Pure += pure
			r.KeptEvents += rw.events
			r.KeptBytes += float64(rw.bytes)
			perEvent := fallback
			if rw.events > 0 {
				perEvent = float64(rw.bytes) / float64(rw.events)
			}
			missing := 0.0
			if 2*p.visits > rw.events {
				missing = float64(2*p.visits - rw.events)
			}
			r.FullBytes += float64(rw.bytes) + missing*perEvent
			allVisits += p.visits
		}
	}
	// A region's paradigm comes from the run's definitions
	// (tracefile.ReadUnified), also of ranks where it made no visit. The
	// rows stay one per name: a filter file, which the score is for,
	// excludes names, so regions of one name in different sources are
	// filtered together and scored together.
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	s.paradigm = map[string]bool{}
	for _, def := range u.Defs.Regions {
		if def.Paradigm.Runtime() {
			s.paradigm[def.Name] = true
		}
	}
	for _, r := range byName {
		r.Paradigm = s.paradigm[r.Name]
		r.RelTotal, r.RelProlog = Ratio(r.FullOverhead, r.Pure), Ratio(r.FullOverhead/2, r.Pure)
		if allVisits > 0 {
			r.Share = float64(r.Visits) / float64(allVisits)
		}
		r.Flagged = !r.Sync && !r.Paradigm && r.FullOverhead > 0 && r.Relative(opt.Property) > opt.Threshold && r.Share >= opt.MinShare
		s.Regions = append(s.Regions, *r)
	}
	sort.Slice(s.Regions, func(i, j int) bool {
		a, b := &s.Regions[i], &s.Regions[j]
		if a.FullBytes != b.FullBytes {
			return a.FullBytes > b.FullBytes
		}
		return a.Name < b.Name
	})
	// Summed in the regions' order, not the map's: a float sum depends
	// on its order in the last digits.
	for _, r := range s.Regions {
		s.Overhead += r.Overhead
		s.Untimed += r.Untimed
		s.ThrottledVisits += r.VisitsAfter
	}
	s.Throttled = mergeThrottled(files)
	return s, nil
}

// Filterable reports whether a filter file generated from the score may
// exclude the region name: not an MPI or OpenMP region, which the
// run-time filter would keep anyway.
func (s *Score) Filterable(name string) bool { return !s.paradigm[name] }

// mergeThrottled merges the files' throttled regions by name.
func mergeThrottled(files []*tracefile.File) []tracefile.ThrottledRegion {
	var out []tracefile.ThrottledRegion
	idx := map[string]int{}
	for _, f := range files {
		for _, r := range f.Throttled() {
			i, ok := idx[r.Name]
			if !ok {
				idx[r.Name] = len(out)
				out = append(out, r)
				continue
			}
			o := &out[i]
			o.Locations += r.Locations
			o.FirstAt = min(o.FirstAt, r.FirstAt)
			o.Visits += r.Visits
			o.VisitsAfter += r.VisitsAfter
		}
	}
	return out
}

// Ratio is part/whole, +Inf when whole is not positive.
func Ratio(part, whole float64) float64 {
	if whole <= 0 {
		if part <= 0 {
			return 0
		}
		return math.Inf(1)
	}
	return part / whole
}

// Flagged returns the names of the flagged regions, in the order of
// Regions.
func (s *Score) Flagged() []string {
	var names []string
	for _, r := range s.Regions {
		if r.Flagged {
			names = append(names, r.Name)
		}
	}
	return names
}

// scoreFile sums up one file's buffer and estimates the unreduced one.
func scoreFile(f *tracefile.File, w *fileWalk) FileScore {
	fs := FileScore{Path: f.Path, BinSize: f.Header.BinSize, Buffer: f.Header.BufferSize,
		Reencoded: w.bytes, HeaderBytes: w.headerBytes}
	if c := f.Header.ProbeCost; c > 0 && !math.IsInf(c, 0) {
		fs.ProbeCost = c
	}
	fs.FileBins, fs.FileBytes = f.Bins()
	usable := float64(f.Header.BinSize) - encode.MaxBinHeaderSize - 2*encode.MaxEnterLeaveSize
	fallback := fallbackBytesPerEvent(f, w)
	for i := range f.Locations {
		l := &f.Locations[i]
		fs.Recorded += l.Recorded
		fs.Kept += l.Kept()
		fs.Filtered += l.FilteredName + l.FilteredDuration
		for _, lv := range l.Levels {
			var removed uint64
			for _, n := range lv.Removed() {
				removed += n
			}
			fs.Removed += removed
			key := levelKey{l.ID, lv.Depth, lv.Class}
			var kept float64
			var records uint64
			if k := w.levels[key]; k != nil {
				kept, records = float64(k.bytes), k.records
			}
			perEvent := fallback
			if records > 0 {
				perEvent = kept / float64(records)
			}
			bytes := kept + float64(removed)*perEvent
			fs.UnreducedBytes += bytes
			if bytes > 0 {
				if usable <= 0 {
					fs.UnreducedBins += uint64(records + removed)
				} else {
					fs.UnreducedBins += uint64(math.Ceil(bytes / usable))
				}
			}
		}
	}
	return fs
}

// fallbackBytesPerEvent is the bytes per record for events of a level that
// kept none: those of the deepest calling depth that kept records, whose
// calls are the shortest and most like the removed ones; with nothing kept,
// the largest enter or leave record.
func fallbackBytesPerEvent(f *tracefile.File, w *fileWalk) float64 {
	deepest := -1
	var bytes, records float64
	for key, lv := range w.levels {
		if lv.records == 0 || key.class != tracefile.ClassRegion {
			continue
		}
		switch {
		case key.depth > deepest:
			deepest, bytes, records = key.depth, float64(lv.bytes), float64(lv.records)
		case key.depth == deepest:
			bytes += float64(lv.bytes)
			records += float64(lv.records)
		}
	}
	if records == 0 {
		return encode.MaxEnterLeaveSize
	}
	return bytes / records
}
