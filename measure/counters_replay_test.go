package measure

import (
	"runtime"
	"testing"

	"github.com/hmbtrace/hmbtrace/hwcounter"
)

// withReplay makes new locations read scripted counter values.
func withReplay(t *testing.T, samples ...[]uint64) {
	t.Helper()
	old := openCounters
	t.Cleanup(func() { openCounters = old })
	openCounters = func(events []hwcounter.Event) (hwcounter.Source, error) {
		var ss []hwcounter.ReplaySample
		for _, v := range samples {
			ss = append(ss, hwcounter.ReplaySample{Values: v})
		}
		return hwcounter.NewReplay(events, ss)
	}
}

// needCounters skips a test of counters off Linux: a measurement opens
// its events there first, with perf, and records without those it cannot.
func needCounters(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("counters are perf events, which need Linux (this is %s)", runtime.GOOS)
	}
}
