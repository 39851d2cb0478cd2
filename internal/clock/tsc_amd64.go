package clock

// rdtsc reads the time-stamp counter.
func rdtsc() uint64

func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// InvariantTSC reports whether the CPU's TSC runs at a constant rate in all
// power states (CPUID leaf 0x80000007, EDX bit 8), so that it can serve as
// a clock across cores.
func InvariantTSC() bool {
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if maxExt < 0x80000007 {
		return false
	}
	_, _, _, d := cpuid(0x80000007, 0)
	return d&(1<<8) != 0
}
