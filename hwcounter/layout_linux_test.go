//go:build linux

package hwcounter

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestConstantsMatchKernelABI(t *testing.T) {
	if TypeHardware != unix.PERF_TYPE_HARDWARE || TypeSoftware != unix.PERF_TYPE_SOFTWARE || TypeRaw != unix.PERF_TYPE_RAW {
		t.Error("perf type constants differ from golang.org/x/sys/unix")
	}
	want := map[string]uint64{
		"cycles": unix.PERF_COUNT_HW_CPU_CYCLES, "instructions": unix.PERF_COUNT_HW_INSTRUCTIONS,
		"cache-references": unix.PERF_COUNT_HW_CACHE_REFERENCES, "cache-misses": unix.PERF_COUNT_HW_CACHE_MISSES,
		"branch-instructions": unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branch-misses": unix.PERF_COUNT_HW_BRANCH_MISSES,
		"bus-cycles": unix.PERF_COUNT_HW_BUS_CYCLES, "stalled-cycles-frontend": unix.PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
		"stalled-cycles-backend": unix.PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "ref-cycles": unix.PERF_COUNT_HW_REF_CPU_CYCLES,
		"cpu-clock": unix.PERF_COUNT_SW_CPU_CLOCK, "task-clock": unix.PERF_COUNT_SW_TASK_CLOCK,
		"page-faults": unix.PERF_COUNT_SW_PAGE_FAULTS, "context-switches": unix.PERF_COUNT_SW_CONTEXT_SWITCHES,
		"cpu-migrations": unix.PERF_COUNT_SW_CPU_MIGRATIONS, "minor-faults": unix.PERF_COUNT_SW_PAGE_FAULTS_MIN,
		"major-faults": unix.PERF_COUNT_SW_PAGE_FAULTS_MAJ, "alignment-faults": unix.PERF_COUNT_SW_ALIGNMENT_FAULTS,
		"emulation-faults": unix.PERF_COUNT_SW_EMULATION_FAULTS,
	}
	for _, n := range namedEvents {
		if c, ok := want[n.event.Name]; !ok || c != n.event.Config {
			t.Errorf("%s: config %d, kernel ABI %d (known: %v)", n.event.Name, n.event.Config, c, ok)
		}
	}
}

func TestMmapPageLayoutMatchesKernel(t *testing.T) {
	var k unix.PerfEventMmapPage
	var p mmapPage
	for _, f := range []struct {
		name       string
		ours, want uintptr
	}{
		{"lock", unsafe.Offsetof(p.lock), unsafe.Offsetof(k.Lock)},
		{"index", unsafe.Offsetof(p.index), unsafe.Offsetof(k.Index)},
		{"offset", unsafe.Offsetof(p.offset), unsafe.Offsetof(k.Offset)},
		{"time_enabled", unsafe.Offsetof(p.timeEnabled), unsafe.Offsetof(k.Time_enabled)},
		{"time_running", unsafe.Offsetof(p.timeRunning), unsafe.Offsetof(k.Time_running)},
		{"capabilities", unsafe.Offsetof(p.capabilities), unsafe.Offsetof(k.Capabilities)},
		{"pmc_width", unsafe.Offsetof(p.widthShiftMult), unsafe.Offsetof(k.Pmc_width)},
		{"time_shift", unsafe.Offsetof(p.widthShiftMult) + 2, unsafe.Offsetof(k.Time_shift)},
		{"time_mult", unsafe.Offsetof(p.widthShiftMult) + 4, unsafe.Offsetof(k.Time_mult)},
		{"time_offset", unsafe.Offsetof(p.timeOffset), unsafe.Offsetof(k.Time_offset)},
		{"time_cycles", unsafe.Offsetof(p.timeCycles), unsafe.Offsetof(k.Time_cycles)},
		{"time_mask", unsafe.Offsetof(p.timeMask), unsafe.Offsetof(k.Time_mask)},
		{"end of head", unsafe.Sizeof(p), unsafe.Offsetof(k.Time_mask) + 8},
	} {
		if f.ours != f.want {
			t.Errorf("%s at offset %d, perf_event_mmap_page has it at %d", f.name, f.ours, f.want)
		}
	}
	// The packed word splits the way a little-endian kernel lays it out.
	k.Pmc_width, k.Time_shift, k.Time_mult = 48, 31, 0x12345678
	wsm := *(*uint64)(unsafe.Pointer(&k.Pmc_width))
	if uint16(wsm) != 48 || uint16(wsm>>16) != 31 || uint32(wsm>>32) != 0x12345678 {
		t.Errorf("pmc_width/time_shift/time_mult word %#x does not split as readPage expects", wsm)
	}
}

// TestRealPageOfSoftwareEvent maps the page the kernel keeps for a software
// event, which exists on any machine: the kernel must report the modern
// capability layout, refuse rdpmc (no hardware counter), and readPage must
// give up without executing RDPMC.
func TestRealPageOfSoftwareEvent(t *testing.T) {
	fd, err := perfEventOpen(Event{"task-clock", TypeSoftware, swTaskClock}, -1, true)
	if err != nil {
		t.Fatal(explainOpenError("task-clock", Event{"task-clock", TypeSoftware, swTaskClock}, err, true))
	}
	defer unix.Close(fd)
	m, err := unix.Mmap(fd, 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	pg := (*mmapPage)(unsafe.Pointer(&m[0]))
	kernel := (*unix.PerfEventMmapPage)(unsafe.Pointer(&m[0]))
	caps := pageCapabilities(pg)
	t.Logf("software event page: version %d, size %d, lock %d, index %d, capabilities %#x", kernel.Version, kernel.Size, kernel.Lock, kernel.Index, caps)
	if kernel.Size != 0 && uintptr(kernel.Size) < unsafe.Sizeof(mmapPage{}) {
		t.Errorf("kernel fills %d bytes of the page head, this package reads %d", kernel.Size, unsafe.Sizeof(mmapPage{}))
	}
	if caps&capBit0IsDeprecated == 0 {
		t.Errorf("capabilities %#x lack cap_bit0_is_deprecated (Linux >= 3.12 sets it)", caps)
	}
	if rdpmcGranted(caps) || kernel.Index != 0 {
		t.Errorf("a software event must not be readable with rdpmc: capabilities %#x, index %d", caps, kernel.Index)
	}
	var asked []uint32
	if _, ok := readPage(pg, fakeCounters{counters: &asked}); ok || len(asked) != 0 {
		t.Errorf("readPage on a software event's page: ok=%v, RDPMC asked %v", ok, asked)
	}
}
