//go:build linux

package survive

import (
	"syscall"
	"testing"
)

// A full tmpfs fails every reservation; the definitions are lost and
// counted, but the file system is not asked once per definition (issue 37,
// S14: 3·10⁵ definitions took 46× as long on a nearly full tmpfs).
func TestReserveBackoff(t *testing.T) {
	m, err := Create(t.TempDir(), "full", 0, DefaultLayout(64, 1024))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	calls, full := 0, true
	fallocate = func(fd int, mode uint32, off, n int64) error {
		calls++
		if full {
			return syscall.ENOSPC
		}
		return syscall.Fallocate(fd, mode, off, n)
	}
	defer func() { fallocate = syscall.Fallocate }()

	const defs = 300000
	payload := make([]byte, 40)
	for i := 0; i < defs; i++ {
		if m.Append(DefRegion, payload) {
			t.Fatalf("definition %d went into a log the file system refused to reserve", i)
		}
	}
	if m.hdr.DefLost != defs {
		t.Errorf("DefLost = %d, want %d", m.hdr.DefLost, defs)
	}
	// One call, then skips of 1, 2, 4, ... 1024, then one per 1025.
	if max := 11 + defs/(maxReserveBackoff+1) + 1; calls > max {
		t.Errorf("%d failing reservations for %d definitions; want at most %d", calls, defs, max)
	}

	// Once the file system has room again, definitions are kept within
	// maxReserveBackoff+1 attempts.
	full = false
	kept := -1
	for i := 0; i <= maxReserveBackoff+1; i++ {
		if m.Append(DefRegion, payload) {
			kept = i
			break
		}
	}
	if kept < 0 {
		t.Fatalf("no definition kept within %d appends after the file system had room again", maxReserveBackoff+2)
	}
}
