//go:build !linux

package measure

import (
	"strings"
	"testing"
)

// TestSurviveOffLinuxStillTraces checks that HMB_SURVIVE=1 off Linux, where
// there is no surviving mapping, leaves the buffer in the heap and the run
// traced, rather than failing Start.
func TestSurviveOffLinuxStillTraces(t *testing.T) {
	if !ProbesCompiledIn {
		t.Skip("probes compiled out")
	}
	m := startTest(t, Config{Survive: true, BufferSize: 1 << 20, BinSize: 4096})
	if m.surv != nil {
		t.Fatal("a surviving mapping off Linux")
	}
	r := m.Region("r")
	loc := m.Location("main")
	loc.Enter(r)
	loc.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openTrace(t, m).Location(0).Kept(); n != 2 {
		t.Errorf("%d records kept, want the enter and the leave", n)
	}
}

// TestMetricsOffLinux checks that HMB_METRICS off Linux, where there are
// no perf events, records without them, and that HMB_METRICS_STRICT=1
// makes that an error naming the platform.
func TestMetricsOffLinux(t *testing.T) {
	if !ProbesCompiledIn {
		t.Skip("probes compiled out")
	}
	m := startTest(t, Config{Metrics: []string{"cycles"}})
	if len(m.metricEvents) != 0 || len(m.metricsMissing) != 1 {
		t.Errorf("events %v, missing %q: want none counted and cycles missing", m.metricEvents, m.metricsMissing)
	}
	m.Close()
	_, err := Start(Config{Metrics: []string{"cycles"}, MetricsStrict: true, Output: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "HMB_METRICS_STRICT") || !strings.Contains(err.Error(), "need Linux") {
		t.Errorf("Start with HMB_METRICS_STRICT=1 off Linux: %v; want an error naming the setting and Linux", err)
	}
}
