package auto

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/internal/measureinternal"
	"github.com/hmbtrace/hmbtrace/measure"
)

// mi is measure's operations for this module's packages: auto marks and
// closes the measurement it started through them.
var mi = measureinternal.Of[*measure.Location, *measure.Measurement]()

// NewSite declares the region of an instrumented function: its full name
// as pprof prints it and the file and line of its declaration.
func NewSite(name, file string, line int) *measure.Site {
	return measure.NewRegionAt(name, file, line)
}

var (
	// started is set once the first probe has tried to start a
	// measurement, so that later probes pay one atomic load for it.
	started   atomic.Bool
	startOnce sync.Once
	// own is the measurement Enter started, nil if none or if the program
	// started its own first.
	own atomic.Pointer[measure.Measurement]
)

// Enter enters site's region on the calling goroutine's lane, starting the
// measurement from the environment at the program's first probe if none
// runs. The returned Span's End leaves it.
func Enter(site *measure.Site) measure.Span {
	if !started.Load() {
		start()
	}
	// Background carries no measurement: StartRegion records into
	// Current without looking into it.
	return measure.StartRegion(context.Background(), site)
}

// start starts the measurement at the first probe. An error in the
// environment is reported once, and the program runs untraced: a wrong
// HMB_* variable must not stop a program the user did not change.
func start() {
	startOnce.Do(func() {
		defer started.Store(true)
		if measure.Current() != nil {
			return // the program started one itself
		}
		cfg, err := measure.ConfigFromEnv()
		if err == nil {
			var m *measure.Measurement
			m, err = measure.Start(cfg)
			if err == nil {
				mi.MarkAutomatic(m)
				own.Store(m)
				return
			}
		}
		fmt.Fprintf(os.Stderr, "%v (automatic instrumentation: the program runs untraced)\n", err)
	})
}

// Close ends the running measurement and writes its trace; the rewrite
// defers it first in main.main, so that it runs when main returns, after
// main's own region ended. An error is reported on stderr. A probe's End runs
// after the function's own deferred calls, so a goroutine main waited for
// through a deferred wg.Done may still be leaving its outermost region.
func Close() {
	closeCurrent(false)
}

// closeCurrent closes the measurement Enter started and, if the program
// started one and did not close it, that one: the process ends after this.
func closeCurrent(atExit bool) {
	for i, m := range []*measure.Measurement{own.Swap(nil), measure.Current()} {
		if m == nil {
			continue
		}
		if i == 0 {
			mi.EndJoins(m) // the program's own Starts joined it: this Close ends it
		}
		var err error
		if atExit {
			err = m.CloseAtExit()
		} else {
			err = m.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// Exit writes the trace, then ends the process with os.Exit(code). Regions
// still open, the functions it exits from, are left at its time, as
// measure's CloseAtExit says. Other goroutines are not stopped: those
// still recording lose their events after the freeze.
func Exit(code int) {
	closeCurrent(true)
	os.Exit(code)
}

// Fatal is log.Fatal that writes the trace before the process exits.
func Fatal(v ...any) {
	log.Default().Output(2, fmt.Sprint(v...))
	Exit(1)
}

// Fatalf is log.Fatalf that writes the trace before the process exits.
func Fatalf(format string, v ...any) {
	log.Default().Output(2, fmt.Sprintf(format, v...))
	Exit(1)
}

// Fatalln is log.Fatalln that writes the trace before the process exits.
func Fatalln(v ...any) {
	log.Default().Output(2, fmt.Sprintln(v...))
	Exit(1)
}
