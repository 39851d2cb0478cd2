package measure

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"strconv"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/goruntime"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Go's runtime in the trace (Config.GoRuntime, HMB_GORUNTIME=1).
//
// Start runs the execution tracer (runtime/trace) into a pipe for the
// whole measurement; one goroutine parses the stream as it comes, a
// generation (about a second) behind the run, and turns it into regions of
// paradigm go, recorded through the ordinary probes (EnterAt, LeaveAt) on
// locations that only it writes:
//
//   - "Go GC": each GC cycle ("Go GC", from the first of its
//     sweep-termination pause and its mark phase to the last of its mark
//     phase and its mark-termination pause), with its stop-the-world
//     pauses nested ("Go stop-the-world: GC sweep termination", ...); other
//     pauses at the top.
//   - "<lane> (Go)", one per location that a goroutine held: while it held
//     it, that goroutine's waits, named by the runtime's reason ("Go wait:
//     chan receive", "Go wait: select", "Go wait: sync" for a Mutex or
//     WaitGroup, "Go wait: sync.(*Cond).Wait", "Go wait: sleep", ...), its
//     time runnable but not running ("Go runnable": woken, preempted, or
//     back from a syscall without a P), its syscalls ("Go syscall") and GC
//     mark assists ("Go GC mark assist").
//
// Which goroutine holds which location the tracer learns from the
// goroutine itself: taking a location logs "+<id>" under category
// hmbtrace.lane (trace.Log, which carries the goroutine id and the time),
// giving it back "-<id>" (goRuntimeHold, goRuntimeRelease). Goroutines that
// hold no location cost the converter nothing.
//
// The tracer's times are CLOCK_MONOTONIC (read against the trace clock at
// each generation's clock snapshot); they become the probes' ticks by
// linear interpolation between (ticks, monotonic) pairs read at each
// generation, so they fall where the probes' own events of the same
// moment do, to the pairs' precision (tens of ns).
//
// Close stops the tracer and waits for the converter to read the rest
// before the buffer is frozen. The execution tracer is process-wide: a
// program that calls trace.Start itself while the measurement runs gets an
// error from it, and a measurement started while it traces gets a warning
// and no runtime regions (a flight recorder, trace.FlightRecorder, may run
// beside it).
type goRuntime struct {
	m    *Measurement
	pw   *io.PipeWriter
	done chan struct{}
	err  error // the converter's, read after done
	conv *goruntime.Converter

	// The converter goroutine's own state.
	tracks  map[int64]*Location
	regions []Region     // by goruntime.Name, 0 until defined
	pairs   []clock.Pair // newest last, at most maxPairs
	mono    bool         // the probes read CLOCK_MONOTONIC: ticks are nanoseconds
	maxLag  time.Duration
	behind  bool // the converter fell too far behind and stopped the tracer

	halted sync.Once
	closed sync.Once

	mu   sync.Mutex
	msgs [][2]string // by location id: hold and release messages, made once
}

// maxPairs bounds the clock pairs kept for interpolation: events come in
// time order a generation behind, so only the newest few are ever used.
const maxPairs = 16

// goRuntimeSignalWait bounds how long a signal's Close waits for the
// converter after the tracer stopped: the process must die of its signal
// soon. Close waits until the converter has read everything.
const goRuntimeSignalWait = 2 * time.Second

// goRuntimeMaxLag is how far the converter may fall behind the run before
// it stops the tracer: behind it, the runtime's trace buffers pile up in
// memory. A program that blocks and wakes goroutines more often than the
// converter can follow (a few hundred thousand times a second) gets its
// runtime regions up to there, and a line on stderr. A variable for the
// tests; the converter reads it at Start.
var goRuntimeMaxLag = 5 * time.Second

// startGoRuntime starts the tracer and its converter, or says on stderr
// why it cannot.
func (m *Measurement) startGoRuntime() {
	pr, pw := io.Pipe()
	if err := trace.Start(pw); err != nil {
		fmt.Fprintf(os.Stderr, "hmbtrace: HMB_GORUNTIME: runtime/trace: %v: Go's runtime is not in this trace\n", err)
		return
	}
	g := &goRuntime{m: m, pw: pw, done: make(chan struct{}),
		tracks: map[int64]*Location{}, maxLag: goRuntimeMaxLag,
		pairs: []clock.Pair{m.start}, mono: m.clock == clock.SourceMonotonic}
	g.conv = goruntime.NewConverter(g)
	m.gort = g
	go g.run(pr)
}

func (g *goRuntime) run(pr *io.PipeReader) {
	defer close(g.done)
	g.err = g.conv.Run(pr)
	// After an error the tracer still writes until Close stops it: drain
	// the pipe, or the runtime's trace buffers would pile up.
	io.Copy(io.Discard, pr)
}

// halt stops the tracer; the converter reads what it wrote, then the end.
func (g *goRuntime) halt() {
	g.halted.Do(func() {
		trace.Stop() // returns once the tracer wrote everything into the pipe
		g.pw.Close()
	})
}

// stopGoRuntime stops the tracer and waits for the converter to record the
// rest: Close calls it before it freezes the buffer.
func (m *Measurement) stopGoRuntime() {
	g := m.gort
	if g == nil {
		return
	}
	g.closed.Do(func() {
		g.halt()
		if m.grace > 0 {
			select {
			case <-g.done:
			case <-time.After(goRuntimeSignalWait):
				fmt.Fprintf(os.Stderr, "hmbtrace: HMB_GORUNTIME: the rest of the execution trace was not read within %v of the signal: the runtime's regions end early\n", goRuntimeSignalWait)
				return
			}
		}
		<-g.done
		if g.err != nil {
			fmt.Fprintf(os.Stderr, "hmbtrace: HMB_GORUNTIME: %v: the runtime's regions stop there\n", g.err)
		}
	})
}

// goRuntimeHold tells the tracer that the calling goroutine holds l from
// now on: call it from the goroutine that takes the location.
func (m *Measurement) goRuntimeHold(l *Location) {
	if g := m.gort; g != nil && l != nil {
		trace.Log(context.Background(), goruntime.LaneCategory, g.message(l.id, 0))
	}
}

// goRuntimeRelease tells the tracer that the calling goroutine gave l back.
func (m *Measurement) goRuntimeRelease(l *Location) {
	if g := m.gort; g != nil && l != nil {
		trace.Log(context.Background(), goruntime.LaneCategory, g.message(l.id, 1))
	}
}

// message returns the hold (k 0) or release (k 1) message of location id,
// made on first use so that holding a location allocates nothing.
func (g *goRuntime) message(id uint32, k int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if int(id) >= len(g.msgs) {
		g.msgs = append(g.msgs, make([][2]string, int(id)+1-len(g.msgs))...)
	}
	if g.msgs[id][0] == "" {
		g.msgs[id] = [2]string{goruntime.HoldMessage(id), goruntime.ReleaseMessage(id)}
	}
	return g.msgs[id][k]
}

// Enter records an enter of the runtime's region name on track at
// monotonic time ns (goruntime.Sink).
func (g *goRuntime) Enter(track int64, name goruntime.Name, ns int64) {
	if l := g.track(track); l != nil {
		l.EnterAt(g.region(name), g.ticks(ns))
	}
}

// Leave records the leave that matches an Enter (goruntime.Sink).
func (g *goRuntime) Leave(track int64, name goruntime.Name, ns int64) {
	if l := g.track(track); l != nil {
		l.LeaveAt(g.region(name), g.ticks(ns))
	}
}

// Sync reads a clock pair at each of the tracer's generations, and stops
// the tracer if the generation began too long ago (goruntime.Sink).
func (g *goRuntime) Sync(mono int64) {
	if now := int64(clock.Monotonic()); mono > 0 && !g.behind && time.Duration(now-mono) > g.maxLag {
		g.behind = true
		fmt.Fprintf(os.Stderr, "hmbtrace: HMB_GORUNTIME: reading the execution trace fell %v behind the run (goroutines block and wake more often than it can follow): the runtime's regions end %.3f s into the run\n",
			time.Duration(now-mono).Round(time.Millisecond), float64(mono-int64(g.m.start.Nanos))/1e9)
		go g.halt() // not here: Stop waits for this goroutine to read the rest
	}
	if g.mono {
		return
	}
	if len(g.pairs) == maxPairs {
		copy(g.pairs, g.pairs[1:])
		g.pairs = g.pairs[:maxPairs-1]
	}
	g.pairs = append(g.pairs, clock.ReadPair())
}

// ticks maps a monotonic time onto the probes' clock: between the two
// pairs around it, or along the nearest two when it lies outside them.
func (g *goRuntime) ticks(ns int64) uint64 {
	if g.mono {
		return uint64(max(ns, 1))
	}
	p := g.pairs
	n := uint64(max(ns, 0))
	if len(p) < 2 {
		// One pair, the start's: along the rate calibrated at Start.
		return addTicks(p[0], n, g.m.startTPS)
	}
	i := len(p) - 2
	for i > 0 && n < p[i].Nanos {
		i--
	}
	if tps := clock.TicksPerSecond(p[i], p[i+1]); tps > 0 {
		return addTicks(p[i], n, tps)
	}
	return addTicks(p[i], n, g.m.startTPS)
}

// addTicks returns the ticks at monotonic time n along rate tps from p.
func addTicks(p clock.Pair, n uint64, tps float64) uint64 {
	d := (float64(n) - float64(p.Nanos)) * tps / 1e9
	t := float64(p.Ticks) + d
	if t < 1 {
		return 1
	}
	return uint64(t)
}

// track returns the location of a converter track, made on first use.
func (g *goRuntime) track(track int64) *Location {
	if l, ok := g.tracks[track]; ok {
		return l
	}
	name := "Go GC"
	if track != goruntime.GCTrack {
		name = "location " + strconv.FormatInt(track, 10) + " (Go)"
		g.m.mu.Lock()
		for _, l := range g.m.locations {
			if int64(l.id) == track {
				name = l.name + " (Go)"
				break
			}
		}
		g.m.mu.Unlock()
	}
	// A location of its own, not a lane: a lane given back would carry
	// its first holder's name, and these are the converter's alone (it
	// holds none, so the tracer sees no worker's waits in its reads).
	l := g.m.newLocation(name, false)
	g.tracks[track] = l
	return l
}

// region returns the runtime's region of name, defined on first use.
func (g *goRuntime) region(name goruntime.Name) Region {
	if int(name) >= len(g.regions) {
		g.regions = append(g.regions, make([]Region, int(name)+1-len(g.regions))...)
	}
	r := g.regions[name]
	if r == 0 {
		r = g.m.RegionParadigm(g.conv.Name(name), tracefile.ParadigmGo)
		g.regions[name] = r
	}
	return r
}
