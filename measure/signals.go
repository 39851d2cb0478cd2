package measure

import (
	"fmt"
	"os"
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
	m.signals = fatalsignal.Handle(func() {
		m.grace = signalGrace
		if err := m.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	})
}

// stopSignals removes the handler when Close runs for any other reason.
func (m *Measurement) stopSignals() { m.signals.Stop() }
