// Package fatalsignal runs an action when SIGINT or SIGTERM arrives and then
// lets the process die of that signal, as it would have without the
// handler: how a measurement writes its trace when a run is interrupted,
// for Go programs (measure) and C programs (cshim) alike.
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

// Handle installs a handler that calls action on the first SIGINT or
// SIGTERM, restores the signal's default action and raises it again.
func Handle(action func()) *Handler {
	h := &Handler{ch: make(chan os.Signal, 1)}
	signal.Notify(h.ch, syscall.SIGINT, syscall.SIGTERM)
	go func(ch chan os.Signal) {
		sig, ok := <-ch
		if !ok {
			return
		}
		action()
		signal.Reset(sig)
		s := sig.(syscall.Signal)
		syscall.Kill(os.Getpid(), s)
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
