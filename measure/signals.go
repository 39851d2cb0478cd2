package measure

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long Close, called for a signal, waits for the
// goroutines that record to see that the measurement is closing. One that
// was in a probe when the signal came may wait for a CPU for a few
// scheduler slices; one that sleeps never sees it, and costs the whole wait.
const signalGrace = 250 * time.Millisecond

// handleSignals makes SIGINT and SIGTERM write the trace, then die of the
// signal as the process would have without the handler.
func (m *Measurement) handleSignals() {
	m.signals = make(chan os.Signal, 1)
	signal.Notify(m.signals, syscall.SIGINT, syscall.SIGTERM)
	go func(ch chan os.Signal) {
		sig, ok := <-ch
		if !ok {
			return
		}
		m.grace = signalGrace
		if err := m.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		// Die of the signal: restore its default action and raise it again.
		signal.Reset(sig)
		s := sig.(syscall.Signal)
		syscall.Kill(os.Getpid(), s)
		time.Sleep(time.Second)
		os.Exit(128 + int(s))
	}(m.signals)
}

// stopSignals removes the handler when Close runs for any other reason.
func (m *Measurement) stopSignals() {
	if m.signals != nil {
		signal.Stop(m.signals)
		close(m.signals)
	}
}
