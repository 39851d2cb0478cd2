package cshim_test

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestSignalStorm runs testdata/c/signal_storm.c: a handler on the alternate
// signal stack probes until its thread's bins and staging array are full,
// while a second signal keeps arriving. Its slow path called into Go there,
// and a second signal meanwhile overwrote its frames: most runs died
// ("morestack on g0") or hung (sigstack.c). Now the process must finish,
// the trace read back whole, every probe made be in it or counted as
// dropped, and some of the handler's probes be kept (replayed by the main
// thread's next probe).
func TestSignalStorm(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "signal_storm", nil, filepath.Join(root, "cshim", "testdata", "c", "signal_storm.c"))
	for _, mode := range []string{"direct", "staged"} {
		t.Run(mode, func(t *testing.T) {
			// Three runs each: a run died with a chance of about one in two before.
			for run := range 3 {
				q := p
				q.out = filepath.Join(t.TempDir(), "hmb-out")
				// Unthrottled: the test counts every probe into the trace.
				out, _ := q.run(t, []string{"HMB_C_PROBE=" + mode, "HMB_THROTTLE=0"})
				var probes, handler, dropped, poked uint64
				if _, err := fmt.Sscanf(out, "probes %d handler %d dropped %d poked %d", &probes, &handler, &dropped, &poked); err != nil {
					t.Fatalf("run %d: output %q: %v", run, out, err)
				}
				l := wholeLocation(t, filepath.Join(q.out, "signal_storm.0.hmb"))
				made, seen := probes+handler, l.Recorded+dropped
				t.Logf("run %d: %d probes made (%d by the handler, %d second signals), %d recorded, %d dropped",
					run, made, handler, poked, l.Recorded, dropped)
				if off, bound := handlerLoss(mode, made, seen); off > bound {
					t.Errorf("run %d: %d probes made, %d in the trace or dropped: off by %.2g", run, made, seen, off)
				}
				if l.Recorded <= probes {
					t.Errorf("run %d: %d events recorded, none of the handler's (the main thread made %d)", run, l.Recorded, probes)
				}
			}
		})
	}
}
