package measure

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/fatalsignal"
)

// signalGrace is how long Close, called for a signal, waits for the
// goroutines that record to see that the measurement is closing. One that
// was in a probe when the signal came may wait for a CPU for a few
// scheduler slices; one that sleeps never sees it, and costs the whole wait.
const signalGrace = 250 * time.Millisecond

// handleSignals makes SIGINT and SIGTERM write the trace, then die of the
// signal as the process would have without the handler.
func (m *Measurement) handleSignals() {
	m.signals = fatalsignal.Handle(func(sig syscall.Signal) {
		m.caughtSignal(int(sig))
		m.grace = signalGrace
		m.dying.Store(true)
		m.closeOnce.Do(func() { m.closeErr = m.finalize(false) })
		if m.closeErr != nil {
			fmt.Fprintln(os.Stderr, m.closeErr)
		}
	})
}

// caughtSignal stores in the surviving mapping that a handler caught sig,
// before the trace is written: should the process die before the file is
// complete, recover tells a caught signal from a death no handler saw.
func (m *Measurement) caughtSignal(sig int) {
	if m.surv != nil {
		m.surv.Signaled(sig)
	}
}

// awaitSignalDeath stops a Close that ran while a signal's Close wrote the
// trace. The process is about to die of that signal; were this Close to
// return, the program's end (main returning, os.Exit(0)) could win the race
// and report success for a killed job.
func (m *Measurement) awaitSignalDeath() {
	if m.dying.Load() {
		select {}
	}
}

// stopSignals removes the handler when Close runs for any other reason.
func (m *Measurement) stopSignals() { m.signals.Stop() }
