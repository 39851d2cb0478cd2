package cshim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestSignalOnGoThread: a signal whose handler probes, delivered to the
// threads of the library's Go runtime, drops and counts their probes; it
// crashed the process in runtime.cgocallback before (gothreads.c).
func TestSignalOnGoThread(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "gothread_signal", nil, filepath.Join(root, "cshim", "testdata", "c", "gothread_signal.c"))
	for run := 0; run < 3; run++ {
		out, _ := p.run(t, nil)
		var sent, handled int
		var dropped uint64
		if _, err := fmt.Sscanf(out, "sent %d handled %d dropped %d", &sent, &handled, &dropped); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		if sent == 0 || handled == 0 {
			t.Fatalf("sent %d signals to other threads, %d handled: the test exercises nothing", sent, handled)
		}
		if dropped != uint64(2*handled) {
			t.Errorf("%d probes dropped, want the %d of the %d handlers on Go threads", dropped, 2*handled, handled)
		}
		n := regionEvents(t, p, "in signal")
		if n != 2 {
			t.Errorf("%d events of the main thread's handler, want 2", n)
		}
	}
}

// TestSignalInGoCall: a handler's probe that interrupts the thread's own
// call into Go (hmb_region) is dropped, not made a second call into Go, which
// aborted the process; the handler's probes elsewhere are recorded.
func TestSignalInGoCall(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "signal_in_go", nil, filepath.Join(root, "cshim", "testdata", "c", "signal_in_go.c"))
	out, _ := p.run(t, nil)
	if !strings.HasPrefix(out, "done ") {
		t.Fatalf("output %q", out)
	}
	n := regionEvents(t, p, "in signal")
	if n < 2 {
		t.Errorf("%d events of region in signal, want the main thread's 2 at least", n)
	}
}
