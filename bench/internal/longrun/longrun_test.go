package longrun

import "testing"

func TestLongRunKeepsTheProfileExact(t *testing.T) {
	r, err := Run(Options{Events: 3e6, Goroutines: 2, BufferSize: 1 << 20, Output: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !r.ProfileExact {
		t.Fatalf("flat profile differs from the reference: %v", r.ProfileIssues)
	}
	if r.Reductions == 0 || r.Kept == 0 || r.Kept >= r.Events {
		t.Fatalf("%d reductions, %d of %d events kept: the buffer did not fill", r.Reductions, r.Kept, r.Events)
	}
	if r.Events < 3e6 {
		t.Errorf("%d events recorded, want at least 3e6", r.Events)
	}
	if r.Ratio() < 10 || r.PeakRSS <= 0 {
		t.Errorf("ratio %.1f, peak RSS %d", r.Ratio(), r.PeakRSS)
	}
	t.Logf("%d events, ratio %.0fx, depths closed %v, peak RSS %.1f MiB", r.Events, r.Ratio(), r.DepthsClosed, float64(r.PeakRSS)/(1<<20))
}
