package clock

import (
	"testing"
	"time"
)

func TestNowIsMonotonic(t *testing.T) {
	for _, src := range []Source{SourceMonotonic, Best()} {
		if err := Use(src); err != nil {
			t.Fatal(err)
		}
		prev := Now()
		for i := 0; i < 100000; i++ {
			n := Now()
			if n < prev {
				t.Fatalf("%s went backwards: %d after %d", src, n, prev)
			}
			prev = n
		}
	}
	_ = Use(Best())
}

func TestCalibrationIsPlausible(t *testing.T) {
	_ = Use(Best())
	tps := Calibrate(5 * time.Millisecond)
	t.Logf("%s: %.0f ticks/s", Active(), tps)
	if Active() == SourceMonotonic && tps != 1e9 {
		t.Errorf("monotonic rate %v, want 1e9", tps)
	}
	// Any real TSC runs between 100 MHz and 10 GHz.
	if tps < 1e8 || tps > 1e10 {
		t.Errorf("rate %.0f ticks/s is implausible", tps)
	}
}

func TestParseSource(t *testing.T) {
	for _, s := range []string{"tsc", "monotonic"} {
		src, err := ParseSource(s)
		if err != nil || src.String() != s {
			t.Errorf("ParseSource(%q) = %v, %v", s, src, err)
		}
	}
	if _, err := ParseSource("hpet"); err == nil {
		t.Error("ParseSource(hpet) accepted")
	}
}

func BenchmarkNow(b *testing.B) {
	for _, src := range []Source{SourceMonotonic, SourceTSC} {
		if src == SourceTSC && !InvariantTSC() {
			continue
		}
		b.Run(src.String(), func(b *testing.B) {
			_ = Use(src)
			var s uint64
			for i := 0; i < b.N; i++ {
				s += Now()
			}
			_ = s
		})
	}
	_ = Use(Best())
}
