//go:build !linux

package measure

import "testing"

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
