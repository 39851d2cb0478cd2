package measure

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/hwcounter"
)

// openCounters opens the counters of a new location on the calling thread.
// Tests replace it with a scripted source.
var openCounters = func(events []hwcounter.Event) (hwcounter.Source, error) {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.Name
	}
	return hwcounter.Open(names)
}

// setUpCounters decides at Start which of the configured events this
// machine can count, on the calling thread, and says once which it cannot.
func (m *Measurement) setUpCounters() error {
	cfg := &m.cfg
	if len(cfg.Metrics) == 0 {
		return nil
	}
	events, err := hwcounter.ParseEvents(cfg.Metrics)
	if err != nil {
		return fmt.Errorf("hmbtrace: HMB_METRICS: %v", err)
	}
	m.metricPatterns, err = filter.ParsePatternList(cfg.MetricsRegions)
	if err != nil {
		return fmt.Errorf("hmbtrace: HMB_METRICS_REGIONS: %v", err)
	}
	m.metricsDepth = cfg.MetricsDepth
	if m.metricsDepth == 0 {
		m.metricsDepth = maxInt
	}
	runtime.LockOSThread()
	g, missing, err := hwcounter.OpenAvailable(cfg.Metrics)
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("hmbtrace: HMB_METRICS: %v", err)
	}
	if g != nil {
		m.metricsPath = string(g.ReadPath())
		if r := g.ReadPathReason(); r != "" {
			m.metricsPath += " (" + r + ")"
		}
		g.Close()
	}
	gone := map[string]bool{}
	for _, e := range missing {
		if cfg.MetricsStrict {
			return fmt.Errorf("hmbtrace: HMB_METRICS_STRICT: %v", e)
		}
		m.metricsMissing = append(m.metricsMissing, e.Error())
		if runtime.GOOS == "linux" {
			fmt.Fprintf(os.Stderr, "hmbtrace: recording without %s: %s\n", e.Event, e.Reason)
		}
		if ev, err := hwcounter.ParseEvent(e.Event); err == nil {
			gone[ev.Name] = true
		}
	}
	if runtime.GOOS != "linux" && len(missing) > 0 {
		// Every event is missing for the same reason: one line says it.
		fmt.Fprintf(os.Stderr, "hmbtrace: warning: HMB_METRICS=%s: perf events need Linux (this is %s); recording without them\n",
			strings.Join(cfg.Metrics, ","), runtime.GOOS)
	}
	for _, e := range events {
		if !gone[e.Name] {
			m.metricEvents = append(m.metricEvents, e)
		}
	}
	return nil
}

// regionCounted reports whether region name reads counters.
func (m *Measurement) regionCounted(name string) bool {
	return len(m.metricEvents) > 0 && (m.cfg.MetricsRegions == "" || m.metricPatterns.Match(name))
}

// attachCounters opens a new location's counters on the calling thread,
// which stays locked to its goroutine: counters follow the OS thread.
func (l *Location) attachCounters() {
	m := l.m
	if len(m.metricEvents) == 0 {
		return
	}
	runtime.LockOSThread()
	src, err := openCounters(m.metricEvents)
	if err != nil {
		runtime.UnlockOSThread()
		l.countersGone = strings.ReplaceAll(err.Error(), "\n", "; ")
		return
	}
	n := len(m.metricEvents)
	l.src, l.nmet, l.mdepth, l.tid = src, n, m.metricsDepth, osThreadID()
	l.mvals = make([]uint64, n)
	l.mstart = make([]uint64, len(l.stack)*n)
	l.mchild = make([]uint64, len(l.stack)*n)
}

// onItsThread checks, once, that the location records on the OS thread
// whose counters it opened; if not, its counters would be another thread's,
// and it reads none.
func (l *Location) onItsThread() bool {
	tid := l.tid
	l.tid = 0
	if osThreadID() == tid {
		return true
	}
	l.countersGone = "recorded on another OS thread than the one that called Measurement.Location; call it from the recording goroutine"
	l.closeCounters()
	l.src = nil
	return false
}

// readCounters reads the counters into dst, keeping its old values if the
// read fails (a zero count rather than garbage).
func (l *Location) readCounters(dst []uint64) {
	s, err := l.src.Read(dst)
	if err == nil && s.Multiplexed() {
		l.multiplexed = true
	}
}

// enterCounters reads the counters at the enter of frame f at depth d and
// reserves the place of its metric record, right after the enter.
func (l *Location) enterCounters(f *frame, d int, t uint64) {
	if l.tid != 0 && !l.onItsThread() {
		return
	}
	n := l.nmet
	l.readCounters(l.mstart[d*n : (d+1)*n])
	clear(l.mchild[d*n : (d+1)*n])
	_, _, f.mseq = l.stamp(t)
	l.recorded++
	f.counted, f.mprev, l.mtop = true, l.mtop, d
}

// leaveCounters reads the counters at the leave of f, adds the call's
// counts to the profile and to the enclosing counting frame, and returns
// the sequence number of the metric record after the leave. outermost is
// false for a recursive call inside another of the same region, whose
// inclusive counts the outer one holds.
func (l *Location) leaveCounters(f *frame, d int, t uint64, outermost bool) uint32 {
	n := l.nmet
	l.readCounters(l.mvals)
	start, child := l.mstart[d*n:(d+1)*n], l.mchild[d*n:(d+1)*n]
	sums := l.sums(f.region)
	incl, excl := sums[:n], sums[n:2*n]
	for k, v := range l.mvals {
		delta := v - start[k]
		if v < start[k] {
			delta = 0
		}
		if outermost {
			incl[k] += delta
		}
		excl[k] += delta - min(delta, child[k])
		if f.mprev > 0 {
			l.mchild[f.mprev*n+k] += delta
		}
	}
	l.mtop = f.mprev
	_, _, seq := l.stamp(t)
	l.recorded++
	return seq
}

// putMetric writes a metric record after the enter or leave of region at
// depth d, or counts it dropped.
func (l *Location) putMetric(d int, tr uint64, seq, region uint32, vals []uint64) {
	if d >= l.limit || l.h.ClassClosed&(1<<buffer.ClassMetric) != 0 {
		l.drop(d, buffer.ClassMetric)
		return
	}
	l.metLevel(d).Metric(tr, seq, region, vals)
}

// metLevel returns the metric level at depth d.
func (l *Location) metLevel(d int) *buffer.Level {
	if d < len(l.metLevels) && l.metLevels[d] != nil {
		return l.metLevels[d]
	}
	return l.newLevel(d, buffer.ClassMetric)
}

// closeCounters releases the location's counters.
func (l *Location) closeCounters() {
	if c, ok := l.src.(io.Closer); ok {
		c.Close()
	}
}

// counterState is a location's counters, the cold part of its state that
// only regions reading counters touch.
type counterState struct {
	// src is nil if the location reads none. mstart and mchild hold, per
	// depth, the values read at the enter of a counting frame and the
	// counts of the counting frames inside it; mtop is the depth of the
	// innermost counting frame.
	src          hwcounter.Source
	nmet         int
	mdepth       int // deepest depth that reads counters
	mvals        []uint64
	mstart       []uint64
	mchild       []uint64
	mtop         int
	metLevels    []*buffer.Level
	multiplexed  bool
	countersGone string // why this location reads no counters
	tid          int    // the OS thread whose counters src reads; 0 once checked
}
