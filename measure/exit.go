package measure

import (
	"fmt"
	"log"
	"os"
	"slices"
	"sync"
)

// os.Exit ends the process without running deferred calls, so a program
// that leaves through it, or through log.Fatal, which calls it, loses the
// trace its `defer m.Close()` would have written. Exit is the way out that
// writes it. The measurements it closes are those Start made and Close has
// not ended yet: Start adds each to running, finalize takes it out.

var running struct {
	mu sync.Mutex
	ms []*Measurement
}

// addRunning records that m runs until it is closed: it is Current.
func addRunning(m *Measurement) {
	running.mu.Lock()
	running.ms = append(running.ms, m)
	setCurrent(m)
	running.mu.Unlock()
}

// removeRunning records that m is closing: Current is the newest of those
// still running, or nil.
func removeRunning(m *Measurement) {
	running.mu.Lock()
	running.ms = slices.DeleteFunc(running.ms, func(x *Measurement) bool { return x == m })
	var last *Measurement
	if n := len(running.ms); n > 0 {
		last = running.ms[n-1]
	}
	setCurrent(last)
	running.mu.Unlock()
}

// Exit writes the trace of every measurement still running, then ends the
// process with os.Exit(code). Use it wherever the program would call
// os.Exit: deferred functions do not run either way, so `defer m.Close()`
// does not; Exit closes each measurement as Measurement.CloseAtExit does,
// the newest first. The regions still open are where the program exited
// from: they end at Exit's time and are no usage error. With no
// measurement running, Exit is os.Exit.
//
// Other goroutines may still be recording: each stops at its next probe
// (Close waits for the probes under way), its regions end at the
// exit too, and what it records after that is dropped and counted as
// probes after Close. A trace that cannot be written is an error on
// stderr; the exit code is still code, the program's. Code built by
// hmbtrace-go has its os.Exit and log.Fatal calls routed here.
func Exit(code int) {
	closeRunning()
	os.Exit(code)
}

// closeRunning closes every measurement still running, the newest first.
func closeRunning() {
	running.mu.Lock()
	ms := slices.Clone(running.ms)
	running.mu.Unlock()
	// Frozen first, all of them: a goroutine still recording stops at its
	// next probe, touching nothing more, while the others close; each
	// Close then waits for the probes under way in its own (quiesce).
	for _, m := range ms {
		m.pool.Freeze()
	}
	for _, m := range slices.Backward(ms) {
		if err := m.CloseAtExit(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// Fatal is log.Fatal for a measured program: it logs its arguments with
// the standard logger, as log.Print does, then calls Exit(1), which writes
// the traces before the process ends.
func Fatal(v ...any) {
	log.Output(2, fmt.Sprint(v...))
	Exit(1)
}

// Fatalf is log.Fatalf for a measured program, as Fatal.
func Fatalf(format string, v ...any) {
	log.Output(2, fmt.Sprintf(format, v...))
	Exit(1)
}

// Fatalln is log.Fatalln for a measured program, as Fatal.
func Fatalln(v ...any) {
	log.Output(2, fmt.Sprintln(v...))
	Exit(1)
}
