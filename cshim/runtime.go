package cshim

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/fatalsignal"
	"github.com/hmbtrace/hmbtrace/internal/measureinternal"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// mi are the operations of package measure that only the C shim calls.
var mi = measureinternal.Of[*measure.Location, *measure.Measurement]()

// Runtime is the measurement behind the C ABI: started by hmb_init, with
// one Thread per C thread, closed by hmb_finalize. The zero value is ready
// to Start. Its methods are safe for concurrent use, except that each
// Thread's Replay has one caller at a time.
type Runtime struct {
	// OnSignal is what SIGINT and SIGTERM run under HMB_SIGNALS=1 before
	// the process dies of them: the C side's hmb_finalize, which takes the
	// records the threads staged, then calls Close. Nil means Close.
	OnSignal func()

	mu      sync.Mutex
	m       *measure.Measurement
	closed  bool
	threads []*Thread
	funcs   map[uint64]measure.Region // function address -> region
	sym     *Symbolizer
	signals *fatalsignal.Handler
	probe   ProbeMode
	early   bool // HMB_SURVIVE: LocateEarly
}

// ProbeMode is how the C probes record (HMB_C_PROBE).
type ProbeMode int

const (
	// ProbeDirect: a C probe writes its event (an enter or leave of a
	// region, a message, a collective) into its thread's location itself,
	// in C, in the common case (a known region and depth, room in the
	// level's bin); the others are staged and replayed in Go at once.
	// Without a duration filter, call paths or the live view.
	ProbeDirect ProbeMode = iota
	// ProbeStaged: a C probe stages its record; a full staging array is
	// replayed into the location in Go.
	ProbeStaged
)

func (p ProbeMode) String() string {
	if p == ProbeStaged {
		return "staged"
	}
	return "direct"
}

// probeModeFromEnv reads HMB_C_PROBE: "direct" (the default) or "staged".
func probeModeFromEnv() (ProbeMode, error) {
	v, _ := os.LookupEnv("HMB_C_PROBE")
	switch v = strings.TrimSpace(v); v {
	case "", "direct":
		return ProbeDirect, nil
	case "staged":
		return ProbeStaged, nil
	}
	return 0, fmt.Errorf("hmbtrace: HMB_C_PROBE=%q: want direct or staged", v)
}

// ProbeMode returns how the C probes record: direct where the
// configuration allows it (no duration filter, no call paths, every
// encoding technique on), as HMB_C_PROBE asked otherwise.
func (rt *Runtime) ProbeMode() ProbeMode {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.probe
}

// LocateEarly reports whether every C thread makes its location at its
// first probe: under HMB_SURVIVE, whose mapping must hold the events as
// they come. Otherwise a thread's location waits for its first replay,
// and its records for it in C (cshim/lib/runtime.c, hmb_locate), so that
// a thread's registration needs no call into Go.
func (rt *Runtime) LocateEarly() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.early
}

// Start starts the measurement from the HMB_* variables env ("NAME=value",
// the C environment's, which may differ from the copy the Go runtime took
// at load time) with the clock the C probes read: "tsc" or "monotonic". It
// reports whether the measurement records (false for HMB_ENABLE=0). A
// failed Start may be retried; a successful one may not.
func (rt *Runtime) Start(env []string, clockName string) (enabled bool, err error) {
	return rt.StartFrom(env, clockName, 0)
}

// StartFrom is Start for the probe of a -finstrument-functions hook that
// enters the function at address fn (0: not such a probe): the symbols of
// the object that holds fn are read now, before the probe's timestamp.
// Without fn, those of the executable are, if it calls the hooks.
func (rt *Runtime) StartFrom(env []string, clockName string, fn uint64) (enabled bool, err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.m != nil || rt.closed {
		return false, errors.New("hmbtrace: the measurement was started already")
	}
	syncEnv(env)
	cfg, err := measure.ConfigFromEnv()
	if err != nil {
		return false, err
	}
	probe, err := probeModeFromEnv()
	if err != nil {
		return false, err
	}
	if cfg.MinDuration > 0 || cfg.CallPaths || cfg.Listen != "" || cfg.EncodingOff != 0 {
		// Kept for the Go probes: a C probe would hand every event to them.
		probe = ProbeStaged
	}
	// The C probes read the clock the C side chose the way measure does;
	// passing it on makes sure both sides agree.
	cfg.Clock = clockName
	if len(cfg.Metrics) > 0 {
		// Counters are read when a probe reaches its location, which for
		// a C probe is the replay, long after the event: they would count
		// the wrong code.
		fmt.Fprintf(os.Stderr, "hmbtrace: HMB_METRICS ignored: C probes do not read counters\n")
		cfg.Metrics = nil
	}
	// measure's own signal handler would write the trace without the
	// records the C threads staged: the Runtime handles the signals itself.
	signals := cfg.Signals
	cfg.Signals = false
	m, err := measure.Start(cfg)
	if err != nil {
		return false, err
	}
	if m.Enabled() && clock.Active().String() != clockName {
		m.Close()
		return false, fmt.Errorf("hmbtrace: the Go side reads the %v clock, the C probes %s", clock.Active(), clockName)
	}
	rt.m = m
	rt.probe = probe
	rt.early = cfg.Survive
	rt.funcs = map[uint64]measure.Region{}
	rt.sym = NewSymbolizer()
	if m.Enabled() {
		// instrumented.go says why. A shared object's constructor may be
		// what starts: the executable is then checked as well.
		read := ""
		if fn != 0 {
			read = rt.sym.PreloadAt(fn)
		}
		if exe, err := os.Executable(); err == nil && exe != read && callsHooks(exe) {
			rt.sym.Preload(exe)
		}
	}
	if signals && m.Enabled() {
		rt.handleSignals()
	}
	return m.Enabled(), nil
}

// handleSignals makes SIGINT and SIGTERM write the trace through OnSignal,
// then die of the signal as the process would have without the handler.
func (rt *Runtime) handleSignals() {
	rt.signals = fatalsignal.Handle(func(sig syscall.Signal) {
		rt.mu.Lock()
		m := rt.m
		rt.mu.Unlock()
		if m != nil {
			mi.CaughtSignal(m, int(sig))
		}
		if rt.OnSignal != nil {
			rt.OnSignal()
		} else if err := rt.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	})
}

// syncEnv makes the process's HMB_* variables those of env.
func syncEnv(env []string) {
	want := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "HMB_") {
			want[k] = v
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := want[k]; strings.HasPrefix(k, "HMB_") && !ok {
			os.Unsetenv(k)
		}
	}
	for k, v := range want {
		if cur, ok := os.LookupEnv(k); !ok || cur != v {
			os.Setenv(k, v)
		}
	}
}

// Measurement returns the measurement, nil before Start.
func (rt *Runtime) Measurement() *measure.Measurement {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.m
}

// Region returns the region of the given name, defining it with its source
// location on first use; 0 when the measurement does not record.
func (rt *Runtime) Region(name, file string, line int) uint32 {
	return rt.RegionParadigm(name, file, line, tracefile.ParadigmUser)
}

// RegionParadigm is Region for a region of paradigm p: the MPI wrappers'
// calls (tracefile.ParadigmMPI) go to the paradigm event class, as
// measure's RegionParadigm says.
func (rt *Runtime) RegionParadigm(name, file string, line int, p tracefile.Paradigm) uint32 {
	rt.mu.Lock()
	m := rt.m
	rt.mu.Unlock()
	if m == nil {
		return 0
	}
	return uint32(m.RegionParadigmAt(name, file, line, p))
}

// DefineWin defines an MPI window on communicator comm (hmb_win_define)
// and returns the id RMA records name it by; 0 when there is no
// measurement to record into.
func (rt *Runtime) DefineWin(comm measure.CommID) (uint32, error) {
	return mi.DefineWin(rt.Measurement(), uint32(comm))
}

// NameWin names window win (hmb_win_name); the last name given is kept.
func (rt *Runtime) NameWin(win uint32, name string) error {
	return mi.NameWin(rt.Measurement(), win, name)
}

// DefineRmaGroup returns the id of the RMA group of the given world ranks
// (hmb_rma_group_define); the same members give the same id.
func (rt *Runtime) DefineRmaGroup(members []int32) (uint32, error) {
	return mi.DefineRmaGroup(rt.Measurement(), members)
}

// NoThread is NewThread's answer when there is no measurement to record into.
const NoThread = ^uint32(0)

// NewThread creates the location of a C thread and returns its index for
// Thread. The location is named name, or "thread <tid>" if name is empty.
func (rt *Runtime) NewThread(tid int64, name string) uint32 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.m == nil || !rt.m.Enabled() || rt.closed {
		return NoThread
	}
	if name == "" {
		name = fmt.Sprintf("thread %d", tid)
	}
	rt.threads = append(rt.threads, &Thread{rt: rt, loc: mi.NewThread(rt.m, name)})
	return uint32(len(rt.threads) - 1)
}

// PinForC pins thread i's location for its C probes to write in place and
// returns it and the pool's epoch word; nil if the probes are not direct.
// busy is the thread's in_direct mark (cshim/lib/direct.h), by which the
// buffer reclaims its bins while it is not in a probe; nil: never. The
// pins hold until Close.
func (rt *Runtime) PinForC(i uint32, busy *int32) (loc, epoch unsafe.Pointer) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.probe != ProbeDirect || rt.closed || int64(i) >= int64(len(rt.threads)) {
		return nil, nil
	}
	return mi.PinForC(rt.threads[i].loc, busy)
}

// Interrupt marks thread i's location as stopped in the middle of a probe,
// for Close to leave alone.
func (rt *Runtime) Interrupt(i uint32) {
	if t := rt.Thread(i); t != nil {
		mi.Interrupt(t.loc)
	}
}

// Thread returns the thread of index i, or nil.
func (rt *Runtime) Thread(i uint32) *Thread {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if int64(i) >= int64(len(rt.threads)) {
		return nil
	}
	return rt.threads[i]
}

// funcRegion returns the region of the function at addr: named by the symbol
// that contains it, or 0x<addr> when none does.
func (rt *Runtime) funcRegion(addr uint64) measure.Region {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if r, ok := rt.funcs[addr]; ok {
		return r
	}
	if rt.m == nil {
		return 0
	}
	var r measure.Region
	if s, ok := rt.sym.Lookup(addr); ok {
		r = rt.m.RegionParadigmAt(s.Name, s.File, s.Line, tracefile.ParadigmCompiler)
	} else {
		r = rt.m.Region(fmt.Sprintf("0x%x", addr))
	}
	rt.funcs[addr] = r
	return r
}

// Close ends the measurement and writes the trace file. The C side calls
// it after it replayed every thread's records.
func (rt *Runtime) Close() error { return rt.CloseAt(false) }

// CloseAt is Close; atExit says that the process is exiting with functions
// still running (hmb_exiting), whose open regions are then no usage error
// (measure's CloseAtExit).
func (rt *Runtime) CloseAt(atExit bool) error {
	rt.mu.Lock()
	m := rt.m
	rt.closed = true
	rt.sym.Close()
	rt.signals.Stop()
	rt.signals = nil
	rt.mu.Unlock()
	if m == nil {
		return nil
	}
	var err error
	if atExit {
		err = m.CloseAtExit()
	} else {
		err = m.Close()
	}
	// The C side stopped its probes before it called Close.
	rt.mu.Lock()
	for _, t := range rt.threads {
		mi.UnpinC(t.loc)
	}
	rt.mu.Unlock()
	return err
}
