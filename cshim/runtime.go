package cshim

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/fatalsignal"
	"github.com/hmbtrace/hmbtrace/measure"
)

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
}

// Start starts the measurement from the HMB_* variables env ("NAME=value",
// the C environment's, which may differ from the copy the Go runtime took
// at load time) with the clock the C probes read: "tsc" or "monotonic". It
// reports whether the measurement records (false for HMB_ENABLE=0). A
// failed Start may be retried; a successful one may not.
func (rt *Runtime) Start(env []string, clockName string) (enabled bool, err error) {
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
	rt.funcs = map[uint64]measure.Region{}
	rt.sym = NewSymbolizer()
	if signals && m.Enabled() {
		rt.handleSignals()
	}
	return m.Enabled(), nil
}

// handleSignals makes SIGINT and SIGTERM write the trace through OnSignal,
// then die of the signal as the process would have without the handler.
func (rt *Runtime) handleSignals() {
	rt.signals = fatalsignal.Handle(func() {
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
	rt.mu.Lock()
	m := rt.m
	rt.mu.Unlock()
	if m == nil {
		return 0
	}
	return uint32(m.RegionAt(name, file, line))
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
	rt.threads = append(rt.threads, &Thread{rt: rt, loc: rt.m.Location(name)})
	return uint32(len(rt.threads) - 1)
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
		r = rt.m.RegionAt(s.Name, s.File, s.Line)
	} else {
		r = rt.m.Region(fmt.Sprintf("0x%x", addr))
	}
	rt.funcs[addr] = r
	return r
}

// Close ends the measurement and writes the trace file. The C side calls
// it after it replayed every thread's records.
func (rt *Runtime) Close() error {
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
	return m.Close()
}
