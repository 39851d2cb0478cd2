package measure

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"runtime"
	"strings"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// snapshot builds the trace's definitions and statistics. Call it after
// the pool was finalized.
func (m *Measurement) snapshot() *tracefile.Trace {
	m.mu.Lock()
	// Definitions are appended and never changed: the prefix is a
	// consistent view without a copy, which at 10^6 regions is 50 MB.
	regions := m.regions.view()
	locs := append([]*Location(nil), m.locations...)
	rank, sync, ref := m.cfg.Rank, append([]tracefile.ClockSync(nil), m.clockSync...), m.referenceStart
	m.mu.Unlock()

	t := &tracefile.Trace{}
	classes := m.cfg.ClassOrder
	if classes == nil {
		classes = buffer.DefaultClassOrder
	}
	order := make([]string, 0, len(classes))
	for _, c := range classes {
		order = append(order, c.String())
	}
	tps := m.ticksPerSecond()
	startTicks, startWall := m.origin(tps)
	t.Header = tracefile.Header{
		Name:           m.cfg.Name,
		Host:           hostName(),
		PID:            os.Getpid(),
		Rank:           rank,
		Program:        strings.Join(os.Args, " "),
		StartWall:      startWall,
		GoVersion:      runtime.Version(),
		CPU:            cpuName(),
		Clock:          m.clock.String(),
		TicksPerSecond: tps,
		TimerShift:     m.shift,
		StartTicks:     startTicks,
		EndTicks:       m.end.Ticks,
		ProbeCost:      m.cost,
		Techniques:     m.pool.Techniques(),
		BufferSize:     uint64(m.pool.Bins() * m.pool.BinSize()),
		BinSize:        uint64(m.pool.BinSize()),
		Policy:         m.pool.Policy().String(),
		ClassOrder:     order,
		ClockSync:      sync,
		ReferenceStart: ref,
		MinDuration:    m.cfg.MinDuration.Nanoseconds(),
		FilterFile:     m.cfg.FilterFile,
		MetricsMissing: m.metricsMissing,
		MetricsPath:    m.metricsPath,
	}
	for _, e := range m.metricEvents {
		t.Header.Metrics = append(t.Header.Metrics, e.Name)
	}
	// The regions and profiles go to the writer as sequences over the
	// measurement's own tables: copied, they doubled the memory of a run
	// with 10^6 regions at its end.
	t.NumRegions = regions.len()
	t.RegionSeq = func(yield func(tracefile.Region) bool) {
		for i := 0; i < regions.len(); i++ {
			r := regions.at(i)
			if !yield(tracefile.Region{ID: uint32(i + 1), Name: r.name, File: r.file, Line: r.line, Paradigm: r.paradigm}) {
				return
			}
		}
	}
	for _, l := range locs {
		t.Locations = append(t.Locations, l.snapshot())
	}
	if early, calls, ticks := throttleLimits(&m.cfg, m.startTPS); early != math.MaxUint64 {
		t.ThrottleRule = &tracefile.ThrottleRule{LongTicks: ticks, Early: early, Calls: calls,
			EarlyShift: throttleEarlyShift, LateShift: throttleLateShift}
	}
	t.Comms = m.commDefs()
	m.rmaTrace(t)
	m.annotationsTrace(t)
	for _, r := range m.pool.Reductions() {
		t.Reductions = append(t.Reductions, tracefile.Reduction{
			Reason: r.Reason, Depth: r.Depth, Class: r.Class,
			Time: r.Time, Bins: r.Bins, Records: r.Records, Steps: r.Steps,
		})
	}
	return t
}

func (l *Location) snapshot() tracefile.Location {
	tl := tracefile.Location{ID: l.id, Name: l.Name(), Recorded: l.recorded, Usage: l.usage,
		FilteredName: l.filteredName, FilteredDuration: l.filteredDuration, Interrupted: l.interrupted,
		Multiplexed: l.multiplexed, CountersMissing: l.countersGone}
	if len(l.m.metricEvents) > 0 && l.src == nil && tl.CountersMissing == "" {
		tl.CountersMissing = "not opened"
	}
	tl.Usage.AfterClose = l.afterClose.Load()
	tl.ProfileSeq, tl.NumProfile = l.profileSeq()
	if l.cpt != nil {
		tl.CallPaths = l.cpt.export()
	}
	l.h.Levels(func(lv *buffer.Level) {
		by, closed := lv.Closed()
		s := tracefile.LevelStats{
			Depth: lv.Depth(), Class: lv.Class(),
			Written: lv.Written(), Closed: closed, By: by,
			Revoked: lv.Revoked(), Dropped: lv.Dropped,
		}
		tl.Levels = append(tl.Levels, s)
	})
	tl.WindowTime, tl.WindowSeq, tl.Windowed = l.h.Window()
	tl.Comm = l.commMatrix()
	tl.Team = l.teamPlace()
	if ps := l.phase; ps != nil && ps.iters > 0 {
		tl.Phase = ps.export(l.nmet)
	}
	return tl
}

// profileSeq returns the location's flat profile as a sequence, and its
// length. The location must not record any more.
func (l *Location) profileSeq() (iter.Seq[tracefile.ProfileEntry], int) {
	n := 0
	l.forEachEntry(func(_ uint32, p *profEntry) {
		if p.visits != 0 || p.off == offThrottled {
			n++
		}
	})
	return func(yield func(tracefile.ProfileEntry) bool) {
		more := true
		l.forEachEntry(func(id uint32, p *profEntry) {
			if more && (p.visits != 0 || p.off == offThrottled) {
				more = yield(l.profileEntry(id, p))
			}
		})
	}, n
}

// profileEntry returns region id's line of the profile, entry p.
func (l *Location) profileEntry(id uint32, p *profEntry) tracefile.ProfileEntry {
	n := l.nmet
	e := tracefile.ProfileEntry{Region: id, Visits: p.visits, Inclusive: p.incl, Exclusive: p.excl, LongCalls: p.longCalls}
	if p.off == offThrottled {
		e.Throttled, e.ThrottledAt, e.VisitsAfter = true, p.throttledAt, p.after+l.offCount(id)
	}
	if p.counted && l.src != nil {
		sums := l.sums(id)
		e.CounterInclusive = append([]uint64(nil), sums[:n]...)
		e.CounterExclusive = append([]uint64(nil), sums[n:2*n]...)
	}
	return e
}

// profileEntries appends the location's flat profile to dst.
func (l *Location) profileEntries(dst []tracefile.ProfileEntry) []tracefile.ProfileEntry {
	l.forEachEntry(func(id uint32, p *profEntry) {
		if p.visits != 0 || p.off == offThrottled {
			dst = append(dst, l.profileEntry(id, p))
		}
	})
	return dst
}

// writeTrace writes the trace file at path, or at a distinct name next to
// it when path holds the trace of a process that ran at the same time
// (tracefile.WriteNew).
func (m *Measurement) writeTrace(path string) (tracefile.Placement, error) {
	t := m.snapshot()
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	m.mu.Unlock()
	return tracefile.WriteNew(path, t, m.traceBins(locs, false))
}

// memoryTrace returns the trace as it stands, events too, those of the
// current bins included: written into memory as writeTrace writes the
// file, and read back. It costs a copy of the bins in use (at most the
// buffer), for as long as the caller keeps it. The locations are expected
// to be still (the collective end of an MPI run calls it from inside
// MPI_Finalize): a record being written is left out, and a bin sealed
// meanwhile would be read twice.
func (m *Measurement) memoryTrace() (*tracefile.File, error) {
	m.freezeRate()
	t := m.snapshot()
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	m.mu.Unlock()
	// The current bins hold the latest records: they go last in their
	// levels (copied now, before the statistics are written), and their
	// records count as written.
	at := make(map[uint32]int, len(t.Locations))
	for i := range t.Locations {
		at[t.Locations[i].ID] = i
	}
	cur := map[*buffer.Level]tracefile.Bin{}
	for _, l := range locs {
		i, ok := at[l.id]
		if !ok {
			continue
		}
		l.h.Levels(func(lv *buffer.Level) {
			lv.Current(func(data []byte, records uint32) {
				for k, s := range t.Locations[i].Levels {
					if s.Depth == lv.Depth() && s.Class == lv.Class() {
						t.Locations[i].Levels[k].Written += uint64(records)
						cur[lv] = tracefile.Bin{Location: l.id, Depth: lv.Depth(), Class: lv.Class(), Records: records,
							Data: append([]byte(nil), data...)}
						return
					}
				}
			})
		})
	}
	bins := func(put func(tracefile.Bin) error) error {
		var err error
		for _, l := range locs {
			l.h.Levels(func(lv *buffer.Level) {
				lv.Bins(func(data []byte, records uint32) {
					if err == nil && len(data) > 0 {
						err = put(tracefile.Bin{Location: l.id, Depth: lv.Depth(), Class: lv.Class(), Records: records, Data: data})
					}
				})
				if c, ok := cur[lv]; ok && err == nil {
					err = put(c)
				}
			})
		}
		return err
	}
	var b bytes.Buffer
	if err := tracefile.Write(&b, t, bins); err != nil {
		return nil, fmt.Errorf("hmbtrace: the trace in memory: %v", err)
	}
	f, err := tracefile.Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		return nil, fmt.Errorf("hmbtrace: the trace in memory: %v", err)
	}
	return f, nil
}

// reportPlacement says in one line on w why the trace of this process,
// of the given rank, is not at the path asked for, or whose trace it had
// to move.
func reportPlacement(w io.Writer, want string, rank int, pl tracefile.Placement) {
	if pl.Kept && pl.Path != want {
		who := "another process"
		if h := pl.KeptHeader; h != nil {
			who = fmt.Sprintf("pid %d on %s", h.PID, h.Host)
		}
		fmt.Fprintf(w, "hmbtrace: %s holds the trace of %s, also rank %d and running at the same time; this trace is %s (give each process its rank: HMB_RANK, or a launcher such as mpirun or srun)\n",
			want, who, rank, pl.Path)
	}
	if pl.Displaced != "" {
		fmt.Fprintf(w, "hmbtrace: the trace of a process that ran at the same time arrived at %s while a stale file there was replaced; it is now %s\n", pl.Path, pl.Displaced)
	}
}
