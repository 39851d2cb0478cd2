//go:build !linux

package survive

import (
	"runtime"
	"strings"
	"testing"
)

// TestCreateNeedsLinux checks that Create off Linux says what is missing
// and where, rather than making a file no probe could keep.
func TestCreateNeedsLinux(t *testing.T) {
	m, err := Create(t.TempDir(), "x", 0, DefaultLayout(4, 4096))
	if m != nil || err == nil || !strings.Contains(err.Error(), "needs Linux (this is "+runtime.GOOS+")") {
		t.Fatalf("Create = %v, %v; want an error naming Linux and %s", m, err, runtime.GOOS)
	}
	if Supported {
		t.Error("Supported is true off Linux")
	}
}
