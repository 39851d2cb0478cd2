package fatalsignal

import (
	"os/signal"
	"syscall"
	"testing"
)

// TestIgnoredSignalStaysIgnored checks that Handle leaves a signal the
// process ignores ignored (a background job's SIGINT), and handles the others.
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	signal.Ignore(syscall.SIGINT)
	defer signal.Reset(syscall.SIGINT)
	if !Ignored(syscall.SIGINT) {
		t.Fatal("after signal.Ignore, Ignored(SIGINT) = false")
	}
	if Ignored(syscall.SIGTERM) {
		t.Fatal("Ignored(SIGTERM) = true in a test that does not ignore it")
	}
	h := Handle(func(syscall.Signal) { t.Error("the action ran") })
	defer h.Stop()
	if !Ignored(syscall.SIGINT) {
		t.Error("Handle made an ignored SIGINT handled: it would kill a background job")
	}
	if !signal.Ignored(syscall.SIGINT) {
		t.Error("the Go runtime no longer takes SIGINT as ignored")
	}
}
