// Package fatalsignal runs an action when SIGINT or SIGTERM arrives and then
// lets the process die of that signal, as it would have without the
// handler: how a measurement writes its trace when a run is interrupted,
// for Go programs (measure) and C programs (cshim) alike.
//
// It works wherever Go's os/signal does. What differs by system is how a
// signal's disposition is read (disposition_linux.go asks the kernel, which
// a C program needs; elsewhere the Go runtime's view serves) and how the
// process then dies of it (raise_unix.go, raise_windows.go).
package fatalsignal

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Handler is an installed handler.
type Handler struct {
	ch chan os.Signal
}

// Handle installs a handler that calls action with the signal on the first
// SIGINT or SIGTERM, restores the signal's default action and raises it again.
//
// A signal the process ignores (a background job's SIGINT, nohup's SIGHUP
// and what the program itself set to SIG_IGN) is left ignored, as
// well-behaved libraries do: handling it would turn it into a death. The
// Go runtime installs its handlers with SA_RESTART, so the calls of a C
// program that SA_RESTART restarts (read, write, wait) are not cut short
// by a handled signal; sleep and nanosleep return early under any handler.
func Handle(action func(sig syscall.Signal)) *Handler {
	h := &Handler{ch: make(chan os.Signal, 1)}
	var sigs []os.Signal
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if !Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		return h
	}
	signal.Notify(h.ch, sigs...)
	go func(ch chan os.Signal) {
		sig, ok := <-ch
		if !ok {
			return
		}
		s := sig.(syscall.Signal)
		action(s)
		signal.Reset(sig)
		raise(s)
		// The default action ends the process; should the signal be
		// blocked, exit with the status a shell gives to its death.
		time.Sleep(time.Second)
		os.Exit(128 + int(s))
	}(h.ch)
	return h
}

// Stop removes the handler; the action will not run. Stop on a nil
// Handler does nothing, and a second Stop neither.
func (h *Handler) Stop() {
	if h == nil || h.ch == nil {
		return
	}
	signal.Stop(h.ch)
	close(h.ch)
	h.ch = nil
}
