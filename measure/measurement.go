package measure

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/hwcounter"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/fatalsignal"
	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/tracefile"
	"github.com/klauspost/cpuid/v2"
)

// Region identifies a code region of one Measurement: an index into its
// table of regions, from Measurement.Region, RegionAt, RegionParadigm or
// RegionOf; the zero Region is invalid. It is a bare number, the cheapest
// handle a probe can take, and nothing in it says which measurement it
// came from: a Region of another Measurement names whatever region has its
// index in this one, or, past this one's table, is dropped by the probe
// and counted as a usage error (Stats.Usage.UnknownRegion), never written.
// A *Site (NewRegion) is the safe form: it binds to each measurement it is
// used in, and StartRegion and Do take it.
type Region uint32

// regionDef is a region's definition.
type regionDef struct {
	name     string
	file     string
	line     int
	filtered bool // excluded by the filter file
	counted  bool // reads counters
	paradigm tracefile.Paradigm
}

// Measurement is one measured run: its buffer, regions and locations.
type Measurement struct {
	cfg      Config
	pool     *buffer.Pool
	shift    uint8
	clock    clock.Source
	start    clock.Pair
	startTPS float64       // calibrated at Start, for conversions during the run
	runTPS   atomic.Uint64 // float64 bits: the rate over the whole run, set by finalize
	wall     time.Time
	cost     float64 // probe cost in ns/event, measured at Start
	filter   *filter.Filter
	minDur   uint64 // the duration filter's bound in ticks

	metricEvents   []hwcounter.Event // the counters every location reads
	metricsMissing []string          // events asked for that cannot be counted, and why
	metricsPath    string
	metricPatterns filter.Patterns
	metricsDepth   int

	mu        sync.Mutex
	regions   regionTable
	byName    map[string]Region
	locations []*Location
	comms     []tracefile.Comm // index id-1
	rma       rmaDefs          // windows and RMA groups (rma.go)
	annot     annotations      // marks, parameters, channels (mark.go)

	closeOnce sync.Once
	closeErr  error
	// automatic: measure/auto started it (automatic.go); joins counts the
	// program's own Starts that joined it, whose Closes leave it running.
	automatic  atomic.Bool
	joins      atomic.Int32
	path       string
	archive    *archiveSlot // the slot of the run archive Close writes into (archive.go), nil for a file of its own
	runResults []byte       // the run-wide results group 0's archive holds (setRunResults)
	end        clock.Pair
	grace      time.Duration // how long a signal's Close waits for running probes
	dying      atomic.Bool   // a signal's Close runs: the process dies of it next
	closing    atomic.Bool   // Close began: no StartRegion takes a lane any more (lane.go)
	late       atomic.Uint64 // StartRegions after that, which found no lane: probes after Close
	signals    *fatalsignal.Handler

	clockSync      []tracefile.ClockSync
	referenceStart uint64
	early          atomic.Uint64 // the earliest event before start, 0 if none (origin.go)

	phase atomic.Uint32 // the phase region, 0 if none
	live  atomic.Bool   // a live view reads what the locations publish

	minDurLive atomic.Uint64 // the duration filter set while running
	minDurSet  atomic.Bool
	liveServer io.Closer

	surv *survive.Mapping // Config.Survive: the mapping that outlives the process (survive.go)

	suspended suspendedTasks // tasks suspended with regions open (task.go)

	lanes  laneSet    // the locations as lanes: free ones, goroutines' ones (lane.go)
	serial uint32     // names the measurement in a Site's binding (site.go)
	gort   *goRuntime // Config.GoRuntime: the execution tracer's bridge (goruntime.go)

	exit exitState // the last usage error and the run's totals, for the line at exit (exitline.go)
}

// Start begins a measurement with the given configuration, over which the
// HMB_* variables that are set win (see Config). With cfg.Disabled it
// returns a Measurement that records nothing: its Location method returns
// nil, and probes on a nil *Location do nothing.
func Start(cfg Config) (*Measurement, error) {
	if m := joinAutomatic(cfg); m != nil {
		return m, nil
	}
	cfg, err := cfg.withEnv()
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m := &Measurement{cfg: cfg, byName: map[string]Region{}, wall: time.Now(), serial: nextSerial()}
	if cfg.Disabled || !ProbesCompiledIn {
		addRunning(m) // Current: StartRegion records nothing rather than into another
		return m, nil
	}
	if err := checkBufferSize(cfg.BufferSize); err != nil {
		return nil, err
	}
	src := clock.Best()
	if cfg.Clock != "" {
		src, _ = clock.ParseSource(cfg.Clock)
	}
	if err := clock.Use(src); err != nil {
		return nil, fmt.Errorf("hmbtrace: HMB_CLOCK=%s: %v", cfg.Clock, err)
	}
	m.clock = src
	if err := m.setUpCounters(); err != nil {
		return nil, err
	}
	if cfg.FilterFile != "" {
		f, err := filter.ParseFile(cfg.FilterFile)
		if err != nil {
			return nil, fmt.Errorf("hmbtrace: HMB_FILTER_FILE: %v", err)
		}
		m.filter = f
	}
	if cfg.Survive {
		s, err := openMapping(&cfg)
		if err != nil {
			return nil, err
		}
		m.surv = s
	}
	pool, err := newPool(buffer.Config{
		Size:       cfg.BufferSize,
		BinSize:    cfg.BinSize,
		Policy:     cfg.Reduction,
		ClassOrder: cfg.ClassOrder,
		Techniques: encode.All &^ cfg.EncodingOff,
		Mapping:    m.surv,
	})
	if err != nil {
		if m.surv != nil {
			m.surv.Close()
			m.surv.Unmap()
		}
		return nil, fmt.Errorf("hmbtrace: buffer: %v (HMB_BUFFER_SIZE=%s, HMB_BIN_SIZE=%s)", err, formatSize(cfg.BufferSize), formatSize(cfg.BinSize))
	}
	m.pool = pool
	m.startTPS = clock.Calibrate(startCalibration(cfg))
	m.shift = timerShift(cfg.TimerShift, m.startTPS)
	if cfg.MinDuration > 0 {
		m.minDur = uint64(math.Ceil(cfg.MinDuration.Seconds() * m.startTPS))
	}
	m.cost = measureProbeCost(m.shift)
	m.start = clock.ReadPair()
	// The wall time of the start goes with the start's ticks: readers add
	// the measured duration to it to tell when the run ended.
	m.wall = time.Now()
	m.moveEarlierRun(os.Stderr)
	m.surviveHeader()
	if cfg.Signals {
		m.handleSignals()
	}
	if cfg.Phase != "" {
		m.Phase(cfg.Phase)
	}
	if err := m.startLive(); err != nil {
		return nil, err
	}
	if cfg.GoRuntime {
		m.startGoRuntime()
	}
	addRunning(m) // Current, and for Exit
	return m, nil
}

// newPool allocates the buffer. An allocation the runtime refuses with a
// panic (a size beyond what a slice may hold) is an error of the setting.
func newPool(c buffer.Config) (p *buffer.Pool, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("cannot allocate %d bytes: %v", c.Size, r)
		}
	}()
	return buffer.NewPool(c)
}

// timerShift picks the shift: the configured one, or the largest whose tick
// is at most DefaultTimerResolution.
func timerShift(configured int, tps float64) uint8 {
	switch {
	case configured == NoTimerShift:
		return 0
	case configured > 0:
		return uint8(configured)
	}
	ticks := tps * DefaultTimerResolution.Seconds()
	var s uint8
	for float64(uint64(2)<<s) <= ticks {
		s++
	}
	return s
}

// measureProbeCost times enter/leave pairs on a private buffer, so that
// tools can estimate what measuring each region costs (hmbtrace score).
func measureProbeCost(shift uint8) float64 {
	pool, err := buffer.NewPool(buffer.Config{Size: 64 << 10, BinSize: 4 << 10, Techniques: encode.All})
	if err != nil {
		return 0
	}
	m := &Measurement{pool: pool, shift: shift, byName: map[string]Region{}, serial: nextSerial()}
	r := m.Region("probe cost")
	loc := m.Location("probe cost")
	const pairs = 2000
	best := 0.0
	for round := 0; round < 3; round++ {
		t0 := clock.ReadPair()
		for i := 0; i < pairs; i++ {
			loc.Enter(r)
			loc.Leave(r)
		}
		t1 := clock.ReadPair()
		ns := float64(t1.Nanos-t0.Nanos) / (2 * pairs)
		if round == 0 || ns < best {
			best = ns
		}
	}
	return best
}

// Enabled reports whether the measurement records anything.
func (m *Measurement) Enabled() bool { return m != nil && m.pool != nil }

// Region returns the region with the given name, defining it on first use.
// It is safe for concurrent use and idempotent: the same name gives the same
// Region. On a disabled measurement it returns the zero Region.
func (m *Measurement) Region(name string) Region {
	return m.RegionAt(name, "", 0)
}

// RegionAt is Region with the source location of the region's code, which
// is recorded with its first definition.
func (m *Measurement) RegionAt(name, file string, line int) Region {
	return m.define(name, file, line, tracefile.ParadigmUser)
}

// RegionParadigm is Region for a region of paradigm p: the MPI wrappers
// define their calls with tracefile.ParadigmMPI. The enters and leaves of
// MPI and OpenMP regions go to the paradigm event class, which the default
// depth policy sheds only after every compute level it could close (a
// collective's go to the collective class, EnterCollective). A region keeps
// the paradigm of its first definition.
func (m *Measurement) RegionParadigm(name string, p tracefile.Paradigm) Region {
	return m.RegionParadigmAt(name, "", 0, p)
}

// RegionParadigmAt is RegionParadigm with the source location of the
// region's code, as RegionAt.
func (m *Measurement) RegionParadigmAt(name, file string, line int, p tracefile.Paradigm) Region {
	if p >= tracefile.NumParadigms {
		p = tracefile.ParadigmUser
	}
	return m.define(name, file, line, p)
}

func (m *Measurement) define(name, file string, line int, p tracefile.Paradigm) Region {
	if !m.Enabled() {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.byName[name]; ok {
		return r
	}
	excluded := m.filter.Excluded(name, file)
	if excluded && p.Runtime() {
		// MPI and OpenMP regions carry the messages, collectives, waits
		// and team structure the tools read; a filter file naming one
		// (scorep-score -g of other versions, or by hand) would leave
		// their records in the caller and break the nesting.
		fmt.Fprintf(os.Stderr, "hmbtrace: HMB_FILTER_FILE %s excludes %s region %q: kept, as MPI and OpenMP regions are never filtered\n",
			m.cfg.FilterFile, p, name)
		excluded = false
	}
	m.regions.append(regionDef{name: name, file: file, line: line, paradigm: p,
		filtered: excluded || p == tracefile.ParadigmCompiler && outlinedBody(name),
		// The Go runtime's regions are recorded by the converter
		// (goruntime.go), whose thread's counters say nothing of them.
		counted: m.regionCounted(name) && p != tracefile.ParadigmGo})
	r := Region(m.regions.len())
	m.byName[name] = r
	m.surviveRegion(r, m.regions.at(int(r)-1))
	return r
}

// outlinedBody reports whether a compiler-instrumented function is the body
// Clang outlines from an OpenMP construct (".omp_outlined.",
// ".omp_outlined..3", "__omp_outlined__2", ".omp_task_entry."). Clang's
// -finstrument-functions instruments them, GCC's does not instrument its
// "._omp_fn.N". The OpenMP adapter records the construct and its implicit
// or explicit task over the same time, so the body's own region would only
// nest a second region named after no source construct (and, being the
// longest on a worker thread, be chosen as time-dominant): it is filtered,
// counted as such.
func outlinedBody(name string) bool {
	return strings.HasPrefix(name, ".omp_outlined.") || strings.HasPrefix(name, "__omp_outlined__") ||
		strings.HasPrefix(name, ".omp_task_entry.")
}

// Phase declares the progress loop's region, defining it if needed: each
// leave of it, on any location, ends one iteration of that location's
// dynamic phase profile (Config.PhaseSlots samples in constant memory). A
// measurement has one phase region; a later Phase with another name is
// ignored and returns that region.
func (m *Measurement) Phase(name string) Region {
	if !m.Enabled() {
		return 0
	}
	r := m.Region(name)
	if m.phase.CompareAndSwap(0, uint32(r)) {
		m.pool.Notify() // locations pick it up at their next probe
	}
	return Region(m.phase.Load())
}

// SetPhase declares region r as the progress loop, as Phase does by name.
func (m *Measurement) SetPhase(r Region) {
	if !m.Enabled() || r == 0 || int(r) > m.regionCount() {
		return
	}
	if m.phase.CompareAndSwap(0, uint32(r)) {
		m.pool.Notify()
	}
}

// pageDefs copies the definitions of regions first, first+1, ... into dst
// and returns how many of them are defined (ids are dense: a prefix).
func (m *Measurement) pageDefs(first Region, dst []regionDef) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k := range dst {
		id := int(first) + k
		if id == 0 {
			n++ // region 0 is never defined; define skips it
			continue
		}
		if id > m.regions.len() {
			break
		}
		dst[k] = *m.regions.at(id - 1)
		n++
	}
	return n
}

// Reductions returns the reduction steps so far. It is safe to call while
// probes run.
func (m *Measurement) Reductions() []buffer.Reduction {
	if !m.Enabled() {
		return nil
	}
	return m.pool.Reductions()
}

// regionCount returns how many regions are defined.
func (m *Measurement) regionCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.regions.len()
}

// Location returns a location (a lane) for the calling goroutine to record
// into: one that Done gave back at depth 0, if any, else a new one named
// name. A reused lane keeps its first name, and the new holder is a task
// on it (the package's doc says how tasks show in the trace). A Location is
// not safe for concurrent use: call Location at the start of each task's
// goroutine, or once per worker of a pool, and Done at the end. On a
// disabled measurement it returns nil, on which every probe is a no-op.
//
// With counters (Config.Metrics), call Location from the goroutine that
// will record into it: it locks that goroutine to its OS thread, whose
// counters it opens, until the end of the process; such a location is
// never reused.
func (m *Measurement) Location(name string) *Location {
	if !m.Enabled() {
		return nil
	}
	l := m.lanes.location(m, name)
	// Marked as a probe, so that a Close running now either sees the mark
	// and waits for the task's switch, or is seen here: a Location after
	// Close begins records nothing, and its probes are counted.
	l.markProbe()
	if !m.closing.Load() {
		l.beginTask(0, true)
	}
	l.probeDone()
	m.goRuntimeHold(l)
	return l
}

// threadLocation makes the location of a C thread, nil on a disabled
// measurement. Unlike Location's lanes, it is never given back: Done only
// seals its bins.
func (m *Measurement) threadLocation(name string) *Location {
	if !m.Enabled() {
		return nil
	}
	return m.newLocation(name, true)
}

// cachedLevels is the depths whose enter/leave levels a location keeps in
// its cache (probeState.levels), and its stack's first length.
const cachedLevels = 16

// newLocation makes a location named name, with counters if asked and the
// measurement reads them.
func (m *Measurement) newLocation(name string, counters bool) *Location {
	h := m.pool.NewHierarchy()
	l := &Location{probeState: probeState{h: h, pool: m.pool, shift: m.shift, tsc: clock.TSCActive(), minDur: m.minDur},
		counterState: new(counterState), pub: new(published), m: m, name: name, id: uint32(h.ID)}
	if m.cfg.CallPaths || m.cfg.Listen != "" {
		l.cpt = newCallTree()
	}
	// The stack is never shorter than the levels' cache, which keeps its
	// length (growStack only lengthens the stack): the assembly probes
	// test a depth against the cache's length alone (TestProbeAsmLayout).
	l.stack = make([]frame, cachedLevels)
	l.levels = make([]*buffer.Level, cachedLevels)
	l.initOffCache()
	l.thrEarly, l.thrCalls, l.thrTicks = throttleLimits(&m.cfg, m.startTPS)
	if counters {
		l.attachCounters()
	}
	if m.surv != nil {
		m.surviveLocation(l.id, name)
		l.surv = m.surv.Loc(int(l.id))
		h.Publish = l.surviveCounts
	}
	l.sync()
	m.mu.Lock()
	m.locations = append(m.locations, l)
	m.mu.Unlock()
	return l
}

// Now returns the current time in ticks of the measurement's clock, for
// EnterAt and LeaveAt.
func (m *Measurement) Now() uint64 { return clock.Now() }

// Path returns the trace file's path: before Close, the one it will be
// written to, <Output>/<Name>.<Rank>.hmb; after, the one it was written to,
// which differs when that name held the trace of a process that ran at the
// same time (see tracefile.WriteNew).
func (m *Measurement) Path() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.path != "" {
		return m.path
	}
	return filepath.Join(m.cfg.Output, fmt.Sprintf("%s.%d.hmb", m.cfg.Name, m.cfg.Rank))
}

// SetRank sets the process's rank in a parallel run, for the trace file's
// name and header: an MPI wrapper learns it at MPI_Init, after Start.
func (m *Measurement) SetRank(rank int) {
	if !m.Enabled() {
		return
	}
	m.mu.Lock()
	m.cfg.Rank = rank
	m.mu.Unlock()
	m.surviveHeader()
}

// SyncClock records that at local time ticks (of Now) the reference
// process's clock read ticks+offset, and that the reference's measurement
// started at referenceStart in its clock. Readers map this process's
// times onto the reference's with the points given (one at the start and
// one at the end correct drift too).
func (m *Measurement) SyncClock(ticks uint64, offset int64, referenceStart uint64) {
	if !m.Enabled() {
		return
	}
	m.mu.Lock()
	m.clockSync = append(m.clockSync, tracefile.ClockSync{Ticks: ticks, Offset: offset})
	m.referenceStart = referenceStart
	m.mu.Unlock()
	m.surviveHeader()
}

// syncedNanos converts ticks (of Now) to ns since the reference
// process's start on its clock, as readers of the trace file will (its
// SyncClock): the clock-sync points so far, at the run's rate, which it
// fixes (freezeRate), as the collective end of an MPI run does before
// its passes. ok is false without a sync point.
func (m *Measurement) syncedNanos(ticks uint64) (ns int64, ok bool) {
	if !m.Enabled() {
		return 0, false
	}
	m.freezeRate()
	t := &tracefile.Trace{}
	m.mu.Lock()
	t.Header.ClockSync = append([]tracefile.ClockSync(nil), m.clockSync...)
	t.Header.ReferenceStart = m.referenceStart
	m.mu.Unlock()
	t.Header.TicksPerSecond = m.ticksPerSecond()
	c, ok := t.SyncClock()
	if !ok {
		return 0, false
	}
	return c.Nanos(ticks), true
}

// StartTicks returns the clock reading at the start of the measurement, in
// ticks of Now.
func (m *Measurement) StartTicks() uint64 { return m.start.Ticks }

// Close ends the measurement and writes the trace file. Call it after the
// goroutines that record have returned; probes after it are dropped and
// counted (Stats.Usage.AfterClose), and regions still open are left at
// Close's time. A second Close does nothing and returns the first one's
// error.
//
// Close waits for what other goroutines still do:
//
//   - A goroutine's lane (StartRegion) with a region open is waited for,
//     up to 100 ms for all, until that region ends, so that a goroutine whose `defer wg.Done()`
//     runs before its `defer measure.StartRegion(ctx, r).End()` (or the
//     region hmbtrace-go puts first in each function) has its last End
//     recorded, though the Wait before Close returned before it. Idle
//     lanes Close takes at once, so that no goroutine starts a region in
//     them afterwards: a StartRegion after Close begins records nothing
//     and is counted. A lane still active when the wait ends keeps its
//     regions open until the probes stop (below); then they end at
//     Close's time, as every location's do; its later probes are
//     dropped and counted.
//   - Then Close stops the probes and waits for any probe under way on
//     any location to end (a goroutine preempted in the middle of one;
//     a probe never blocks, but with many goroutines runnable its
//     goroutine may wait long to run again), up to 2 s, so that it never
//     reads an event half written nor takes a bin from under a probe. A
//     location still inside a probe then is left as interrupted.
//
// Close never waits when no other goroutine records. A Location's
// goroutine that probes while Close runs is not waited for between its
// probes (Close cannot tell it from one that returned): its probes after
// the freeze touch nothing Close reads, and are dropped and counted, but
// for those of a region throttled on that location, which count as its
// throttled visits (the race detector may report Close's read of them).
//
// A program that panics still writes its trace if it deferred Close; with
// Config.Signals (HMB_SIGNALS=1), SIGINT and SIGTERM write it too.
func (m *Measurement) Close() error {
	if m.leaveJoined() {
		return nil
	}
	removeRunning(m)
	if !m.Enabled() {
		return nil
	}
	m.closeOnce.Do(func() { m.closeErr = m.finalize(false) })
	m.awaitSignalDeath()
	return m.closeErr
}

// CloseAtExit is Close for a process that is exiting with functions still
// running: exit called inside them, as Fortran's STOP and EXIT do in a
// subroutine, or MPI_Abort. The regions still open are where it exited
// from; they are left at Close's time, as by Close, but are no usage
// error.
func (m *Measurement) CloseAtExit() error {
	removeRunning(m)
	if !m.Enabled() {
		return nil
	}
	m.closeOnce.Do(func() { m.closeErr = m.finalize(true) })
	m.awaitSignalDeath()
	return m.closeErr
}

func (m *Measurement) finalize(atExit bool) error {
	m.stopGoRuntime() // its last regions go in before the freeze
	removeRunning(m)
	m.stopSignals()
	if m.liveServer != nil {
		m.liveServer.Close()
	}
	m.closing.Store(true)
	deadline := time.Now().Add(closeWait)
	if m.grace == 0 {
		// A signal's Close does not wait for lanes: the process dies next.
		// Nor does Exit's (measure's froze the probes already: an End
		// cannot make a lane idle any more), nor any at exit: the
		// goroutines end with the process, and their open regions end
		// here.
		d := deadline
		if m.pool.Frozen() || atExit {
			d = time.Now()
		}
		m.lanes.settleLanes(d)
	}
	m.pool.Freeze()
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	m.mu.Unlock()
	if m.grace == 0 {
		// A lane still active (its goroutine outlives Close, or called
		// Exit inside its regions) records nothing once the freeze is
		// seen: after the probes under way ended, its open regions end
		// at Close's time like every other location's. Left open, the
		// flat profile, which adds a call's time at its leave, gave such
		// a region 0 ns under children of milliseconds, while the
		// exports ended it at its last event.
		m.quiesce(locs, time.Now().Add(probeWait))
	} else {
		// Other goroutines go on probing until the signal kills them. A
		// location's state may be read once its probes saw the freeze;
		// those that do not within the grace are taken to be blocked.
		deadline := time.Now().Add(m.grace)
		for _, l := range locs {
			for !l.stopped.Load() && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
	}
	m.end = clock.ReadPair()
	if m.runTPS.Load() == 0 { // the collective end may have fixed it (freezeRate)
		m.runTPS.Store(math.Float64bits(m.rateUntil(m.end)))
	}
	for _, l := range locs {
		if l.interrupted || (m.grace > 0 && !l.stopped.Load()) {
			// Blocked, or stopped in the middle of a probe: its state is
			// not Close's to change. Its open regions stay open.
			l.interrupted = true
			continue
		}
		l.closeOpenRegions(m.end.Ticks, !atExit)
	}
	reportShared(os.Stderr, locs)
	if w := m.phaseWarning(); w != "" {
		fmt.Fprintln(os.Stderr, w)
	}
	m.pool.Finalize()
	for _, l := range locs {
		l.closeCounters()
	}
	if err := os.MkdirAll(m.cfg.Output, 0o755); err != nil {
		return fmt.Errorf("hmbtrace: output directory (HMB_OUTPUT): %v%s", err, m.mappingLeft())
	}
	path := m.Path()
	m.mu.Lock()
	slot := m.archive
	m.mu.Unlock()
	var pl tracefile.Placement
	var err error
	if slot != nil {
		pl, err = m.writeSlot(slot, path) // archive.go
	} else {
		pl, err = m.writeTrace(path)
	}
	if err != nil {
		return fmt.Errorf("hmbtrace: writing %s: %v%s", path, err, m.mappingLeft())
	}
	if err := m.closeMapping(); err != nil {
		fmt.Fprintf(os.Stderr, "hmbtrace: removing the buffer's mapping: %v\n", err)
	}
	m.mu.Lock()
	m.path = pl.Path
	rank := m.cfg.Rank
	m.mu.Unlock()
	reportPlacement(os.Stderr, path, rank, pl)
	m.sayAtExit(os.Stderr, pl.Path, rank)
	// Said by rank 0 only, as the other warnings of a run are; every
	// rank's trace holds its own story (hmbtrace summary).
	if d := m.pool.FirstDry(); d.Starved() && rank == 0 {
		st := m.Stats()
		if w := starvedWarning(d, m.pool.Levels(), m.pool.BinSize(), m.pool.Bins()*m.pool.BinSize(), &st); w != "" {
			fmt.Fprintln(os.Stderr, w)
		}
	}
	return nil
}

// quiesce waits, until deadline, for the probes under way in locs to end:
// after the freeze, a probe that begins returns before it writes anything
// Close reads, but one that began before may have been preempted in the
// middle of its record. A location whose probe is still under way at the
// deadline (a goroutine stopped in a debugger, or that panicked inside a
// probe) is left as interrupted; Pool.Finalize leaves that record's bin
// where its probe writes.
func (m *Measurement) quiesce(locs []*Location, deadline time.Time) {
	pending := slices.Clone(locs)
	for wait := time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		rest := pending[:0]
		for _, l := range pending {
			if l.h.Busy() || atomic.LoadUint32(&l.inProbe) != 0 {
				rest = append(rest, l)
			}
		}
		pending = rest
		if len(pending) == 0 || !time.Now().Before(deadline) {
			break
		}
		time.Sleep(wait)
	}
	for _, l := range pending {
		l.interrupted = true
	}
}

// Calibrating the clock's rate by spinning at Start was 2 ms of a traced
// process's start, more than anything else it did. Start now spins a
// little only, enough for what the rate is needed for during the run (the
// timer shift, the duration filter's and throttling's bounds in ticks, the
// live view); the rate written into the trace is measured over the whole
// run, from Start to Close, which is at least fullCalibration long: a
// shorter run waits out the rest at Close. The mapping of Config.Survive
// keeps the rate of Start for a process that dies, so it gets the full
// calibration there.
const (
	quickCalibration = 250 * time.Microsecond
	fullCalibration  = 2 * time.Millisecond
)

// startCalibration is how long Start calibrates the clock's rate.
func startCalibration(cfg Config) time.Duration {
	if cfg.Survive {
		return fullCalibration
	}
	return quickCalibration
}

// rateUntil returns the clock's rate between Start and to, waiting until
// fullCalibration has passed since Start if to came sooner.
func (m *Measurement) rateUntil(to clock.Pair) float64 {
	if m.clock == clock.SourceMonotonic {
		return 1e9
	}
	if ran := time.Duration(int64(to.Nanos - m.start.Nanos)); ran < fullCalibration {
		time.Sleep(fullCalibration - max(ran, 0))
		to = clock.ReadPair()
	}
	return clock.TicksPerSecond(m.start, to)
}

// freezeRate fixes the run's clock rate over the run so far, the rate
// finalize would otherwise take over the whole run. The collective end of
// an MPI run calls it (through memoryTrace, and syncedNanos for its timing
// line) before its analyses read the trace, so that they and the file written after convert ticks at one
// rate: before, they used the rate calibrated in Start's millisecond,
// which a loaded machine puts 10^-4 off the run's, and the in-situ
// results differed from the post-mortem ones by as much. What the run
// records after it is converted at that rate too, over seconds at most.
func (m *Measurement) freezeRate() {
	if m.runTPS.Load() == 0 {
		m.runTPS.CompareAndSwap(0, math.Float64bits(m.rateUntil(clock.ReadPair())))
	}
}

// ticksPerSecond returns the clock rate calibrated over the whole run once
// it ended, the one calibrated at Start before.
func (m *Measurement) ticksPerSecond() float64 {
	if m.clock == clock.SourceMonotonic {
		return 1e9
	}
	if tps := math.Float64frombits(m.runTPS.Load()); tps > 0 {
		return tps
	}
	return m.startTPS
}

func hostName() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

func cpuName() string {
	if b := strings.TrimSpace(cpuid.CPU.BrandName); b != "" {
		return b
	}
	return runtime.GOARCH
}
