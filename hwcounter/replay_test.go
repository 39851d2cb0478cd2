package hwcounter

import (
	"errors"
	"strings"
	"testing"
)

func TestReplay(t *testing.T) {
	evs, err := ParseList("cycles,page-faults")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReplay(evs, []ReplaySample{
		{Values: []uint64{100, 1}, Scaling: Scaling{Enabled: 10, Running: 10}},
		{Values: []uint64{250, 3}, Scaling: Scaling{Enabled: 20, Running: 15}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var src Source = r
	if got := src.Events(); len(got) != 2 || got[0].Name != "cycles" {
		t.Fatalf("Events = %v", got)
	}
	dst := make([]uint64, 2)
	if s, err := src.Read(dst); err != nil || dst[0] != 100 || dst[1] != 1 || s.Multiplexed() {
		t.Errorf("first Read: %v %v %v", dst, s, err)
	}
	if allocs := testing.AllocsPerRun(1, func() {
		if r.Remaining() > 0 {
			_, _ = r.Read(dst)
		}
	}); allocs != 0 {
		t.Errorf("Replay.Read allocates %.0f times", allocs)
	}
	if dst[0] != 250 || dst[1] != 3 || r.Remaining() != 0 {
		t.Errorf("second Read: %v, remaining %d", dst, r.Remaining())
	}
	if _, err := src.Read(dst); !errors.Is(err, ErrReplayExhausted) {
		t.Errorf("Read past the end: %v", err)
	}
	if _, err := NewReplay(evs, []ReplaySample{{Values: []uint64{1}}}); err == nil || !strings.Contains(err.Error(), "sample 0 has 1 values for 2 events") {
		t.Errorf("short sample: %v", err)
	}
	r2, _ := NewReplay(evs, []ReplaySample{{Values: []uint64{1, 2}}})
	if _, err := r2.Read(dst[:1]); err == nil || r2.Remaining() != 1 {
		t.Errorf("short dst: %v, remaining %d", err, r2.Remaining())
	}
}
