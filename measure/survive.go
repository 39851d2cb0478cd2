package measure

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// With Config.Survive the pool's bins live in a file mapping (package
// internal/survive) and the measurement adds to it what a trace needs
// besides the bins: the header, every region and location as it is
// defined, the communicators, and each location's counts when it syncs.
// Close removes the mapping once the trace file is written; after any
// other end of the process `hmbtrace recover` reads it.

// openMapping makes the mapping for a buffer of cfg's sizes. Off Linux
// there is none: it says so once on stderr and returns nil, and the buffer
// lives in the heap, so a job script that sets HMB_SURVIVE=1 still traces
// on a laptop.
func openMapping(cfg *Config) (*survive.Mapping, error) {
	if !survive.Supported {
		fmt.Fprintf(os.Stderr, "hmbtrace: warning: HMB_SURVIVE=1: the surviving mapping needs Linux (this is %s); the trace is written at Close only\n", runtime.GOOS)
		return nil, nil
	}
	dir := cfg.SurviveDir
	if dir == "" {
		dir = survive.DefaultDir
	}
	bins := cfg.BufferSize / cfg.BinSize
	m, err := survive.Create(dir, cfg.Name, cfg.Rank, survive.DefaultLayout(bins, cfg.BinSize))
	if err != nil {
		return nil, fmt.Errorf("hmbtrace: HMB_SURVIVE: %v", err)
	}
	return m, nil
}

// surviveHeader writes the trace header into the mapping, again whenever
// it changes (a rank, a clock synchronisation): the last one counts. The
// end of the run is not known yet; recover takes the last event's time.
func (m *Measurement) surviveHeader() {
	if m.surv == nil {
		return
	}
	m.mu.Lock()
	h := tracefile.Header{
		Name: m.cfg.Name, Host: hostName(), PID: os.Getpid(), Rank: m.cfg.Rank,
		Program: strings.Join(os.Args, " "), StartWall: m.wall, GoVersion: runtime.Version(), CPU: cpuName(),
		Clock: m.clock.String(), TicksPerSecond: m.startTPS, TimerShift: m.shift, StartTicks: m.start.Ticks,
		ProbeCost: m.cost, Techniques: m.pool.Techniques(),
		BufferSize: uint64(m.pool.Bins() * m.pool.BinSize()), BinSize: uint64(m.pool.BinSize()),
		Policy: m.pool.Policy().String(), MinDuration: m.cfg.MinDuration.Nanoseconds(), FilterFile: m.cfg.FilterFile,
		MetricsMissing: m.metricsMissing, MetricsPath: m.metricsPath,
		ClockSync: append([]tracefile.ClockSync(nil), m.clockSync...), ReferenceStart: m.referenceStart,
	}
	m.mu.Unlock()
	classes := m.cfg.ClassOrder
	if classes == nil {
		classes = buffer.DefaultClassOrder
	}
	for _, c := range classes {
		h.ClassOrder = append(h.ClassOrder, c.String())
	}
	for _, e := range m.metricEvents {
		h.Metrics = append(h.Metrics, e.Name)
	}
	if b, err := json.Marshal(tracefile.MappingHeader{Header: h, Output: m.cfg.Output}); err == nil {
		m.surv.Append(survive.DefHeader, b)
	}
}

// surviveRegion adds region r's definition to the mapping. The caller
// holds m.mu, which orders the records as the ids.
func (m *Measurement) surviveRegion(r Region, d *regionDef) {
	if m.surv == nil {
		return
	}
	b := make([]byte, 0, 16+len(d.name)+len(d.file))
	b = binary.AppendUvarint(b, uint64(r))
	b = binary.AppendUvarint(b, uint64(max(d.line, 0)))
	b = binary.AppendUvarint(b, uint64(d.paradigm))
	b = binary.AppendUvarint(b, uint64(len(d.name)))
	b = append(b, d.name...)
	b = binary.AppendUvarint(b, uint64(len(d.file)))
	b = append(b, d.file...)
	m.surv.Append(survive.DefRegion, b)
}

// surviveLocation adds a location's id and name to the mapping.
func (m *Measurement) surviveLocation(id uint32, name string) {
	if m.surv == nil {
		return
	}
	b := binary.AppendUvarint(make([]byte, 0, 8+len(name)), uint64(id))
	m.surv.Append(survive.DefLocation, append(b, name...))
}

// surviveComm adds a communicator's definition to the mapping.
func (m *Measurement) surviveComm(c tracefile.Comm) { m.surviveJSON(survive.DefComm, c) }

// surviveWin adds an RMA window's definition (or its new name) to the
// mapping; surviveRmaGroup an RMA group's.
func (m *Measurement) surviveWin(w tracefile.Win)           { m.surviveJSON(survive.DefWin, w) }
func (m *Measurement) surviveRmaGroup(g tracefile.RmaGroup) { m.surviveJSON(survive.DefRmaGroup, g) }

// surviveJSON adds a definition of the given kind (a communicator, an RMA
// window or group) to the mapping, as JSON. The caller holds m.mu, which
// orders the records as the ids.
func (m *Measurement) surviveJSON(kind byte, v any) {
	if m.surv == nil {
		return
	}
	if b, err := json.Marshal(v); err == nil {
		m.surv.Append(kind, b)
	}
}

// surviveCounts copies the location's counts into its entry of the
// mapping: called from its writer's slow paths, so they are exact then
// and lower bounds at death.
func (l *Location) surviveCounts() {
	if l.surv == nil {
		return
	}
	e := l.surv
	e.Recorded, e.FilteredName, e.FilteredDuration = l.recorded, l.filteredName, l.filteredDuration
	e.Published = 1
}

// mappingLeft marks a surviving buffer's mapping final, for an error of
// Close, and says where it stays: the trace can still be made from it.
func (m *Measurement) mappingLeft() string {
	if m.surv == nil {
		return ""
	}
	m.surv.Leave()
	return fmt.Sprintf(" (the buffer is left in %s: hmbtrace recover makes the trace from it)", m.surv.Path())
}

// closeMapping removes the mapping's file once the trace file is written.
// When it could not be, Close leaves the file for recover.
func (m *Measurement) closeMapping() error {
	if m.surv == nil {
		return nil
	}
	return m.surv.Close()
}
