package measure

import (
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/loopback"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var (
	liveMu    sync.Mutex
	liveStart func(m *Measurement, addr string) (io.Closer, error)
)

// registerLive is how package measure/live offers Start its server for
// Config.Listen (HMB_LISTEN), through internal/measureinternal; importing
// that package registers it.
func registerLive(start func(m *Measurement, addr string) (io.Closer, error)) {
	liveMu.Lock()
	liveStart = start
	liveMu.Unlock()
}

func (m *Measurement) startLive() error {
	if m.cfg.Listen == "" {
		return nil
	}
	liveMu.Lock()
	start := liveStart
	liveMu.Unlock()
	if start == nil {
		return fmt.Errorf(`hmbtrace: HMB_LISTEN=%s: the live view is not linked in: import _ "github.com/hmbtrace/hmbtrace/measure/live"`, m.cfg.Listen)
	}
	addr, err := ListenAddress(m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("hmbtrace: HMB_LISTEN=%s: %v", m.cfg.Listen, err)
	}
	if host, _, _ := net.SplitHostPort(addr); !loopback.Host(host) {
		if !m.cfg.ListenPublic {
			return fmt.Errorf("hmbtrace: HMB_LISTEN=%s: serves other hosts than this one, and the view can change the measurement: set HMB_LISTEN_PUBLIC=1 to allow it (requests then need the token printed at start)", m.cfg.Listen)
		}
		fmt.Fprintf(os.Stderr, "hmbtrace: warning: HMB_LISTEN=%s serves other hosts (HMB_LISTEN_PUBLIC=1): requests need the token in the URL below\n", m.cfg.Listen)
	}
	srv, err := start(m, addr)
	if err != nil {
		return fmt.Errorf("hmbtrace: HMB_LISTEN=%s: %v", m.cfg.Listen, err)
	}
	m.liveServer = srv
	return nil
}

// Live returns the measurement as it stands, for a view that runs while it
// records: it asks every location to publish its counters, profile, call
// paths and phase series at its next probe, and waits at most wait for
// them. A location that does not probe meanwhile (it waits, or it is done)
// shows what it published last. Events and bins are not included. The
// probes never wait for Live.
func (m *Measurement) Live(wait time.Duration) *tracefile.Trace {
	if !m.Enabled() {
		return &tracefile.Trace{}
	}
	m.live.Store(true)
	target := m.pool.Epoch() + 1
	m.pool.Notify()
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	regions := m.regions.view()
	rank := m.cfg.Rank
	m.mu.Unlock()
	deadline := time.Now().Add(wait)
	for _, l := range locs {
		for time.Now().Before(deadline) {
			l.pub.mu.Lock()
			g := l.pub.generation
			l.pub.mu.Unlock()
			if g >= target {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	now := clock.ReadPair()
	startTicks, startWall := m.origin(m.startTPS)
	t := &tracefile.Trace{Header: tracefile.Header{
		Name: m.cfg.Name, Rank: rank, StartWall: startWall, Clock: m.clock.String(),
		TicksPerSecond: m.startTPS, TimerShift: m.shift, StartTicks: startTicks, EndTicks: now.Ticks,
		ProbeCost: m.cost, Policy: m.pool.Policy().String(), BufferSize: uint64(m.pool.Bins() * m.pool.BinSize()),
		BinSize: uint64(m.pool.BinSize()), MinDuration: int64(m.LiveMinDuration()),
	}}
	for _, e := range m.metricEvents {
		t.Header.Metrics = append(t.Header.Metrics, e.Name)
	}
	t.Regions = make([]tracefile.Region, regions.len())
	for i := range t.Regions {
		r := regions.at(i)
		t.Regions[i] = tracefile.Region{ID: uint32(i + 1), Name: r.name, File: r.file, Line: r.line, Paradigm: r.paradigm}
	}
	for _, l := range locs {
		l.pub.mu.Lock()
		tl := tracefile.Location{ID: l.id, Name: l.Name(), Recorded: l.pub.recorded, FilteredName: l.pub.filtered,
			Profile: append([]tracefile.ProfileEntry(nil), l.pub.profile...), CallPaths: append([]tracefile.CallPath(nil), l.pub.paths...)}
		l.pub.mu.Unlock()
		if l.phase != nil {
			if s, ok := l.phase.snapshot(); ok {
				tl.Phase = s.export(l.nmet)
			}
		}
		t.Locations = append(t.Locations, tl)
	}
	for _, r := range m.pool.Reductions() {
		t.Reductions = append(t.Reductions, tracefile.Reduction{Reason: r.Reason, Depth: r.Depth,
			Class: r.Class, Time: r.Time, Bins: r.Bins, Records: r.Records, Steps: r.Steps})
	}
	return t
}

// BinsInUse reports the bins in use now and at the most, safe while probes
// run.
func (m *Measurement) BinsInUse() (used, peak, total int) {
	if !m.Enabled() {
		return 0, 0, 0
	}
	used, peak = m.pool.Usage()
	return used, peak, m.pool.Bins()
}

// SetMinDuration changes the duration filter while the measurement runs;
// locations take it at their next probe. 0 turns it off.
func (m *Measurement) SetMinDuration(d time.Duration) error {
	if !m.Enabled() {
		return nil
	}
	if d < 0 {
		return fmt.Errorf("negative duration %v", d)
	}
	ticks := uint64(0)
	if d > 0 {
		ticks = uint64(math.Ceil(d.Seconds() * m.startTPS))
	}
	m.minDurLive.Store(ticks)
	m.minDurSet.Store(true)
	m.pool.Notify()
	return nil
}

// LiveMinDuration returns the duration filter's bound in force.
func (m *Measurement) LiveMinDuration() time.Duration {
	ticks := m.minDur
	if m.minDurSet.Load() {
		ticks = m.minDurLive.Load()
	}
	if m.startTPS <= 0 {
		return 0
	}
	return time.Duration(float64(ticks) / m.startTPS * 1e9)
}

// CloseDepth closes calling depth d and every deeper one now, as the depth
// policy would, revoking their bins. Depth 1 cannot be closed.
func (m *Measurement) CloseDepth(d int) error {
	if !m.Enabled() {
		return nil
	}
	if d < 2 {
		return fmt.Errorf("depth %d: only depths from 2 on can be closed", d)
	}
	m.pool.CloseFrom(d, clock.Now()>>m.shift)
	return nil
}
