package hwcounter

import "sync/atomic"

// This file holds the user-space read of one counter through the page the
// kernel maps for it (struct perf_event_mmap_page), following the protocol
// documented in include/uapi/linux/perf_event.h. It is architecture-neutral
// and has no Linux dependency, so every step can be tested on hand-built pages;
// only the two instructions (RDPMC, RDTSC) come from the architecture.

// mmapPage mirrors the head of struct perf_event_mmap_page (the fields up to
// __reserved; a Linux test checks the offsets against unix.PerfEventMmapPage).
// The kernel writes it concurrently under the seqlock in lock, so every field
// is read with an atomic load: on amd64 that is a plain MOV, and it keeps the
// compiler from moving a read out of the seqlock window. pmc_width (u16),
// time_shift (u16) and time_mult (u32) share one 64-bit word so that they too
// can be loaded atomically; the split below is for little-endian machines,
// the only ones that take the rdpmc path.
type mmapPage struct {
	_              uint32 // version
	_              uint32 // compat_version
	lock           uint32 // seqlock: odd while the kernel updates the page
	index          uint32 // hardware counter + 1 (0: not on a counter now)
	offset         int64  // add to the counter value
	timeEnabled    uint64
	timeRunning    uint64
	capabilities   uint64
	widthShiftMult uint64 // pmc_width | time_shift<<16 | time_mult<<32
	timeOffset     uint64
	_              uint64 // time_zero
	_              uint32 // size
	_              uint32
	timeCycles     uint64
	timeMask       uint64
}

// Bits of perf_event_mmap_page.capabilities.
const (
	capBit0IsDeprecated = 1 << 1 // set by kernels whose cap bits below are trustworthy (3.12+)
	capUserRDPMC        = 1 << 2 // RDPMC may be used to read the counter
	capUserTime         = 1 << 3 // time_shift, time_mult, time_offset are valid
	capUserTimeShort    = 1 << 5 // time_cycles, time_mask are valid: the TSC is narrower than 64 bits
)

// rdpmcGranted reports whether capabilities allow reading with RDPMC. Before
// Linux 3.12 bit 0 meant both rdpmc and time, so the bits are trusted only
// when the kernel says it has moved to the new layout.
func rdpmcGranted(caps uint64) bool {
	return caps&capBit0IsDeprecated != 0 && caps&capUserRDPMC != 0
}

// pageSnapshot is one consistent view of a page plus the hardware values read
// inside the same seqlock window.
type pageSnapshot struct {
	index      uint32
	offset     int64
	enabled    uint64
	running    uint64
	caps       uint64
	pmcWidth   uint16
	timeShift  uint16
	timeMult   uint32
	timeOffset uint64
	timeCycles uint64
	timeMask   uint64
	pmc        uint64 // RDPMC result, raw (width bits, upper bits undefined)
	cyc        uint64 // RDTSC result, when cap_user_time
}

// counterHardware is what the seqlock loop needs from the CPU. The production
// implementation executes RDPMC and RDTSC; tests substitute values.
type counterHardware interface {
	rdpmc(counter uint32) uint64
	rdtsc() uint64
}

// maxSeqlockRetries bounds the loop: the kernel holds the seqlock for a few
// instructions, so a page that keeps changing means something is wrong, and
// the caller falls back to read() rather than spin.
const maxSeqlockRetries = 1000

// readPage takes one consistent snapshot of pg, executing RDPMC and RDTSC
// inside the seqlock window as the kernel's protocol requires. It reports
// false when the counter cannot be read from user space right now: the kernel
// withdrew cap_user_rdpmc, the event is not on a hardware counter (index 0,
// e.g. multiplexed out), or the page never became stable. The caller then
// reads the group with read(), which is always correct.
func readPage[H counterHardware](pg *mmapPage, hw H) (pageSnapshot, bool) {
	for try := 0; try < maxSeqlockRetries; try++ {
		seq := atomic.LoadUint32(&pg.lock)
		if seq&1 != 0 { // the kernel is half way through an update
			continue
		}
		var s pageSnapshot
		s.caps = atomic.LoadUint64(&pg.capabilities)
		s.enabled = atomic.LoadUint64(&pg.timeEnabled)
		s.running = atomic.LoadUint64(&pg.timeRunning)
		if s.caps&capUserTime != 0 {
			s.cyc = hw.rdtsc()
			s.timeOffset = atomic.LoadUint64(&pg.timeOffset)
			if s.caps&capUserTimeShort != 0 {
				s.timeCycles = atomic.LoadUint64(&pg.timeCycles)
				s.timeMask = atomic.LoadUint64(&pg.timeMask)
			}
		}
		wsm := atomic.LoadUint64(&pg.widthShiftMult)
		s.pmcWidth, s.timeShift, s.timeMult = uint16(wsm), uint16(wsm>>16), uint32(wsm>>32)
		s.index = atomic.LoadUint32(&pg.index)
		s.offset = atomic.LoadInt64(&pg.offset)
		if !rdpmcGranted(s.caps) || s.index == 0 {
			return pageSnapshot{}, false
		}
		s.pmc = hw.rdpmc(s.index - 1)
		if atomic.LoadUint32(&pg.lock) == seq {
			return s, true
		}
	}
	return pageSnapshot{}, false
}

// values turns a snapshot into the event's count and its enabled and running
// times, as the kernel documents: the counter is sign-extended from pmc_width
// bits and added to offset; the time elapsed since the kernel last updated
// the page is computed from the TSC with time_mult/time_shift/time_offset
// (corrected for a short TSC when cap_user_time_short) and added to enabled,
// and to running when the event is on a counter.
func (s *pageSnapshot) values() (count, enabled, running uint64) {
	count = uint64(s.offset + signExtend(s.pmc, s.pmcWidth))
	enabled, running = s.enabled, s.running
	if s.caps&capUserTime != 0 {
		cyc := s.cyc
		if s.caps&capUserTimeShort != 0 {
			cyc = s.timeCycles + ((cyc - s.timeCycles) & s.timeMask)
		}
		delta := s.timeOffset + cyclesToNanos(cyc, s.timeShift, s.timeMult)
		enabled += delta
		if s.index != 0 {
			running += delta
		}
	}
	return count, enabled, running
}

// signExtend interprets the low width bits of pmc as a two's-complement value:
// a PMU counter is narrower than 64 bits (48 on most x86), the kernel starts
// it at a negative value, and the bits above width are undefined. A width of
// 0 or above 64 (never written by a sane kernel) leaves pmc as it is.
func signExtend(pmc uint64, width uint16) int64 {
	if width == 0 || width >= 64 {
		return int64(pmc)
	}
	shift := 64 - uint(width)
	return int64(pmc<<shift) >> shift
}

// cyclesToNanos converts TSC cycles to nanoseconds the way the kernel
// documents it, (cyc * mult) >> shift computed without overflowing 64 bits:
//
//	quot = cyc >> shift; rem = cyc & (1<<shift - 1)
//	ns = quot*mult + (rem*mult)>>shift
//
// (time_offset is added by the caller).
func cyclesToNanos(cyc uint64, shift uint16, mult uint32) uint64 {
	quot := cyc >> shift
	rem := cyc & (1<<shift - 1)
	return quot*uint64(mult) + (rem*uint64(mult))>>shift
}
