package measure

// The run archive: at the collective end of an MPI run (cshim/mpi), the
// ranks of each aggregator group agree on one file, <Output>/<Name>.hmbrun,
// that the group's first rank creates with a slot for every rank's trace;
// each rank writes its trace into its slot at Close, after MPI_Finalize, so
// that what runs after it is in the trace. A trace that outgrew its slot is
// written to the rank's own file beside the archive, and the slot says so.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The layouts of an MPI run's output (Config.OutputLayout).
const (
	LayoutArchive   = "archive"
	LayoutRankFiles = "rank-files"
)

// DefaultAggregate is how many ranks share one archive file by default: a
// run of 10^5 ranks makes 98 files.
const DefaultAggregate = 1024

// DefaultCollectiveTimeout bounds each wait of the collective end by
// default: long enough for ranks that reach MPI_Finalize at different
// times, short enough that a job whose rank died ends.
const DefaultCollectiveTimeout = 2 * time.Minute

func (c Config) validateOutput() error {
	if c.OutputLayout != "" && c.OutputLayout != LayoutArchive && c.OutputLayout != LayoutRankFiles {
		return fmt.Errorf("hmbtrace: OutputLayout %q: want %q or %q", c.OutputLayout, LayoutArchive, LayoutRankFiles)
	}
	if c.Aggregate < 0 {
		return fmt.Errorf("hmbtrace: Aggregate %d: want 1 or more ranks per file (0: %d)", c.Aggregate, DefaultAggregate)
	}
	if c.CollectiveTimeout < 0 {
		return fmt.Errorf("hmbtrace: negative CollectiveTimeout %v", c.CollectiveTimeout)
	}
	return nil
}

// runEnd is what the collective end of an MPI run takes from the
// configuration: whether the ranks write an archive, how many ranks share
// one file, and how long it waits for the others at each step.
func (m *Measurement) runEnd() (archive bool, aggregate int, timeout time.Duration) {
	c := m.cfg
	aggregate, timeout = c.Aggregate, c.CollectiveTimeout
	if aggregate == 0 {
		aggregate = DefaultAggregate
	}
	if timeout == 0 {
		timeout = DefaultCollectiveTimeout
	}
	return m.Enabled() && c.OutputLayout != LayoutRankFiles, aggregate, timeout
}

// archiveSlot is where this rank's trace goes: the slot at off, of
// capacity bytes, of the archive at path; nowhere when resultsOnly.
type archiveSlot struct {
	path          string
	off, capacity int64
	world, groups int // for the one line rank 0 says at exit
	// resultsOnly: the archive holds the run's results, no rank's trace
	// (HMB_OUTPUT_EVENTS=none), and Close writes nothing.
	resultsOnly bool
}

// traceSize returns an upper bound of the bytes Close would write now for
// world ranks, without reading what the probes of other threads may be
// changing: the bins in use, whole; the definitions as they are; and per
// location a profile entry for each region, a matrix line for each rank
// and room for its levels and phase profile. A trace that still outgrows
// its slot by Close (the margin of tracefile.SlotCapacity is for what runs
// after MPI_Finalize) goes to its own file.
func (m *Measurement) traceSize(world int) int64 {
	if !m.Enabled() {
		return 0
	}
	m.mu.Lock()
	regions := m.regions.view()
	nloc := int64(len(m.locations))
	m.mu.Unlock()
	n := int64(64 << 10) // magic, header, statistics, reductions, annotations
	nreg := int64(regions.len())
	for i := 0; i < regions.len(); i++ {
		r := regions.at(i)
		n += int64(len(r.name)+len(r.file)) + 24
	}
	for _, c := range m.commDefs() {
		n += int64(len(c.Name)) + 5*int64(len(c.Members)+len(c.Remote)) + 24
	}
	slots := int64(m.cfg.PhaseSlots)
	if slots == 0 {
		slots = DefaultPhaseSlots
	}
	// Levels: a depth of 64 in every class is deep for a real code.
	perLoc := 1024 + 64*nreg + 48*int64(max(world, 1)) + 64*int64(tracefile.NumClasses)*64
	if m.phase.Load() != 0 {
		perLoc += 96 * slots
	}
	n += nloc * perLoc
	if !m.cfg.NoEvents {
		used, _ := m.pool.Usage()
		n += int64(used) * int64(m.pool.BinSize()+32)
	}
	return n
}

// createArchive creates group's archive file for the ranks given, each
// asking for the capacity given, and returns their slot offsets in order.
func (m *Measurement) createArchive(group, groups, world int, ranks []int, capacity []int64) (string, []int64, error) {
	if err := os.MkdirAll(m.cfg.Output, 0o755); err != nil {
		return "", nil, fmt.Errorf("hmbtrace: output directory (HMB_OUTPUT): %v", err)
	}
	path := tracefile.ArchiveName(m.cfg.Output, m.cfg.Name, group, groups)
	var results []byte
	if group == 0 {
		m.mu.Lock()
		results = m.runResults
		m.mu.Unlock()
	}
	off, err := tracefile.CreateArchive(path, tracefile.ArchivePlan{
		Name: m.cfg.Name, World: world, Group: group, Groups: groups,
		Ranks: ranks, Capacity: capacity, EventsNone: m.cfg.NoEvents, Start: m.wall,
		Results: results,
	})
	if err != nil {
		return path, nil, fmt.Errorf("hmbtrace: creating the run archive %s: %v", path, err)
	}
	return path, off, nil
}

// setRunResults sets the run-wide results (tracefile's results sections)
// that the ranks reduced at the collective end, for group 0's archive,
// which this process creates when it is rank 0. Each call replaces the
// last: the caller (cshim's setResult) holds every section of the run.
func (m *Measurement) setRunResults(results []byte) {
	m.mu.Lock()
	m.runResults = results
	m.mu.Unlock()
}

// setArchiveSlot makes Close write the trace into the slot at off, of
// capacity bytes, of group's archive file.
func (m *Measurement) setArchiveSlot(group, groups, world int, off, capacity int64) {
	if !m.Enabled() {
		return
	}
	path := tracefile.ArchiveName(m.cfg.Output, m.cfg.Name, group, groups)
	m.mu.Lock()
	m.archive = &archiveSlot{path: path, off: off, capacity: capacity, world: world, groups: groups}
	m.mu.Unlock()
}

// resultsOnly reports whether the collective end of this MPI run writes
// only the run's results (HMB_OUTPUT_EVENTS=none, the archive layout).
func (m *Measurement) resultsOnly() bool {
	archive, _, _ := m.runEnd()
	return archive && m.cfg.NoEvents
}

// setResultsWritten makes Close write nothing: rank 0 created the run's
// archive of results at the collective end, the ranks of a run of world.
func (m *Measurement) setResultsWritten(world int) {
	if !m.Enabled() {
		return
	}
	path := tracefile.ArchiveName(m.cfg.Output, m.cfg.Name, 0, 1)
	m.mu.Lock()
	m.archive = &archiveSlot{path: path, world: world, groups: 1, resultsOnly: true}
	m.mu.Unlock()
}

// traceBins returns the writer's bins of the trace: every location's
// levels, or none. Only a slot of a run archive goes without them (its
// prelude says so to readers); a trace file of its own keeps its events,
// which its reader checks against the statistics.
func (m *Measurement) traceBins(locs []*Location, none bool) func(put func(tracefile.Bin) error) error {
	return func(put func(tracefile.Bin) error) error {
		if none {
			return nil
		}
		var err error
		for _, l := range locs {
			l.h.Levels(func(lv *buffer.Level) {
				lv.Bins(func(data []byte, records uint32) {
					if err == nil && len(data) > 0 {
						err = put(tracefile.Bin{Location: l.id, Depth: lv.Depth(), Class: lv.Class(), Records: records, Data: data})
					}
				})
			})
		}
		return err
	}
}

// writeSlot writes the trace into its slot of the run archive, or, when
// it does not fit, to path, the rank's own file beside the archive, and
// records that in the slot. Rank 0 names the archive in one line.
func (m *Measurement) writeSlot(s *archiveSlot, path string) (tracefile.Placement, error) {
	if s.resultsOnly {
		if m.cfg.Rank == 0 {
			fmt.Fprintf(os.Stderr, "hmbtrace: %d ranks wrote %s: the run's results only, no events (HMB_OUTPUT_EVENTS=none); what ran after MPI_Finalize is not in it\n", s.world, s.path)
		}
		return tracefile.Placement{Path: s.path}, nil
	}
	t := m.snapshot()
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	rank := m.cfg.Rank
	m.mu.Unlock()
	err := tracefile.WriteSlot(s.path, s.off, s.capacity, rank, func(w io.Writer) error {
		wr, err := tracefile.NewWriter(w, t)
		if err != nil {
			return err
		}
		if err := m.traceBins(locs, m.cfg.NoEvents)(wr.Bin); err != nil {
			return err
		}
		return wr.Close()
	})
	if errors.Is(err, tracefile.ErrSlotFull) {
		pl, err := m.writeTrace(path)
		if err != nil {
			return pl, err
		}
		if err := tracefile.MarkSlotMoved(s.path, s.off, rank, filepath.Base(pl.Path)); err != nil {
			return pl, fmt.Errorf("%s (its trace is %s)", err, pl.Path)
		}
		fmt.Fprintf(os.Stderr, "hmbtrace: rank %d: the trace outgrew its slot of %s (%d bytes, reserved at MPI_Finalize): written to %s\n",
			rank, s.path, s.capacity, pl.Path)
		return pl, nil
	}
	if err != nil {
		return tracefile.Placement{}, err
	}
	if rank == 0 {
		size := "?"
		if fi, err := os.Stat(s.path); err == nil {
			// The file's size: the slots with their margins, which take no
			// disk blocks where the file system keeps files sparse.
			size = fmt.Sprintf("%.1f MB reserved", float64(fi.Size())/1e6)
		}
		what := s.path
		if s.groups > 1 {
			// Rank 0 knows its own group's file only.
			what = fmt.Sprintf("%d files %s", s.groups, filepath.Join(filepath.Dir(s.path), m.cfg.Name+".*"+tracefile.ArchiveExt))
			size = "the first: " + size
		}
		ranks := "ranks"
		if s.world == 1 {
			ranks = "rank"
		}
		fmt.Fprintf(os.Stderr, "hmbtrace: %d %s wrote %s (%s)\n", s.world, ranks, what, size)
	}
	return tracefile.Placement{Path: s.path}, nil
}
