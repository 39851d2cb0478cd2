//go:build linux && amd64

package hwcounter

// rdpmcArch says that this architecture has the rdpmc read path.
const rdpmcArch = true

// rdpmc executes RDPMC: the value of performance counter number counter (ECX),
// as the kernel numbers it in perf_event_mmap_page.index - 1. It faults unless
// the kernel has enabled user-space RDPMC (CR4.PCE) for this process, which it
// does while an event whose page says cap_user_rdpmc is mapped.
func rdpmc(counter uint32) uint64

// rdtsc executes RDTSC: the time-stamp counter, which the page's
// time_mult/time_shift/time_offset convert to nanoseconds.
func rdtsc() uint64

// cpuCounters is the real hardware behind readPage.
type cpuCounters struct{}

func (cpuCounters) rdpmc(counter uint32) uint64 { return rdpmc(counter) }
func (cpuCounters) rdtsc() uint64               { return rdtsc() }

func readPageCPU(pg *mmapPage) (pageSnapshot, bool) { return readPage(pg, cpuCounters{}) }
