//go:build !amd64

package clock

func rdtsc() uint64 { return 0 }

// InvariantTSC reports false: the TSC is read only on amd64.
func InvariantTSC() bool { return false }
