package measure

import (
	"strings"
	"testing"
)

// TestStartRefusesABufferTheMachineCannotGive checks that a buffer larger
// than any memory there is ends Start with an error naming the setting and
// its value, not the runtime's fatal "out of memory".
func TestStartRefusesABufferTheMachineCannotGive(t *testing.T) {
	if !ProbesCompiledIn {
		t.Skip("probes compiled out: Start allocates nothing")
	}
	cfg, err := configFromLookup(func(name string) (string, bool) {
		if name == "HMB_BUFFER_SIZE" {
			return "1048576G", true // 1 PiB
		}
		return "", false
	}, nil, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Output = t.TempDir()
	m, err := Start(cfg)
	if err == nil {
		m.Close()
		t.Fatal("Start with a 1 PiB buffer succeeded")
	}
	if !strings.Contains(err.Error(), "HMB_BUFFER_SIZE=1048576G") {
		t.Errorf("Start: %v; want it to name HMB_BUFFER_SIZE=1048576G", err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[uint64]string{
		64 << 20: "64M", 100 << 30: "100G", 8 << 10: "8K", 1000: "1000", 3<<30 + 1: "3.0G",
	} {
		if got := formatSize64(n); got != want {
			t.Errorf("formatSize64(%d) = %q, want %q", n, got, want)
		}
		if n < 1<<30 {
			if back, err := ParseSize(formatSize64(n)); err != nil || uint64(back) != n {
				t.Errorf("ParseSize(formatSize64(%d)) = %d, %v", n, back, err)
			}
		}
	}
}
