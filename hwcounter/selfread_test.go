package hwcounter

import (
	"math/big"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// fakeCounters stands in for RDPMC and RDTSC. The counter value lives in an
// atomic so that a concurrent "kernel" goroutine can change it.
type fakeCounters struct {
	pmc      *atomic.Uint64
	cyc      uint64
	counters *[]uint32 // counter numbers RDPMC was asked for
	onRDPMC  func()    // runs inside the seqlock window, after RDPMC
}

func (f fakeCounters) rdpmc(counter uint32) uint64 {
	if f.counters != nil {
		*f.counters = append(*f.counters, counter)
	}
	if f.onRDPMC != nil {
		f.onRDPMC()
	}
	return f.pmc.Load()
}

func (f fakeCounters) rdtsc() uint64 { return f.cyc }

func packWidthShiftMult(width, shift uint16, mult uint32) uint64 {
	return uint64(width) | uint64(shift)<<16 | uint64(mult)<<32
}

const rdpmcCaps = capBit0IsDeprecated | capUserRDPMC

func TestMmapPageSize(t *testing.T) {
	// The kernel's struct is 96 bytes up to __reserved; the Linux test checks
	// each field's offset against golang.org/x/sys/unix.
	if got := unsafe.Sizeof(mmapPage{}); got != 96 {
		t.Fatalf("mmapPage is %d bytes, perf_event_mmap_page's head is 96", got)
	}
}

func TestSignExtend(t *testing.T) {
	cases := []struct {
		pmc   uint64
		width uint16
		want  int64
	}{
		{0x0000_FFFF_FFFF_FFFF, 48, -1},
		{0xABCD_FFFF_FFFF_FC18, 48, -1000}, // bits above the width are garbage
		{0x0000_7FFF_FFFF_FFFF, 48, 1<<47 - 1},
		{0x0000_8000_0000_0000, 48, -1 << 47},
		{0x0000_0000_0000_1234, 48, 0x1234},
		{0xFFFF_FFFF, 32, -1},
		{0xFFFF_FFFF_FFFF_FFFF, 64, -1},
		{0x8000_0000_0000_0000, 64, -1 << 63},
		{0xFFFF_FFFF_FFFF_FFFF, 0, -1},  // no width: taken as is
		{0x0000_0000_0000_0005, 200, 5}, // nonsense width: taken as is
		{0x1, 1, -1},
	}
	for _, c := range cases {
		if got := signExtend(c.pmc, c.width); got != c.want {
			t.Errorf("signExtend(%#x, %d) = %d, want %d", c.pmc, c.width, got, c.want)
		}
	}
}

func TestCyclesToNanos(t *testing.T) {
	// 3 GHz TSC: mult/2^shift = 1/3 ns per cycle.
	if got := cyclesToNanos(3_000_000_000, 31, 715827883); got != 1_000_000_000 {
		t.Errorf("1 s of a 3 GHz TSC = %d ns, want 1e9", got)
	}
	// Against arbitrary precision for many values: floor(cyc*mult / 2^shift),
	// where the result fits in 64 bits.
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		shift := uint16(r.IntN(32))
		mult := r.Uint32()
		cyc := r.Uint64() >> r.IntN(64)
		want := new(big.Int).Mul(new(big.Int).SetUint64(cyc), new(big.Int).SetUint64(uint64(mult)))
		want.Rsh(want, uint(shift))
		if !want.IsUint64() {
			continue
		}
		if got := cyclesToNanos(cyc, shift, mult); got != want.Uint64() {
			t.Fatalf("cyclesToNanos(%d, %d, %d) = %d, want %d", cyc, shift, mult, got, want)
		}
	}
	if got := cyclesToNanos(12345, 64, 7); got != 0 {
		t.Errorf("a shift of 64 (never written by a kernel) gave %d, want 0 and no panic", got)
	}
}

func TestSnapshotValues(t *testing.T) {
	// Counter at -1000 in 48 bits with garbage above, offset 10000: 9000.
	s := pageSnapshot{index: 3, offset: 10000, enabled: 500, running: 400, caps: rdpmcCaps,
		pmcWidth: 48, pmc: 0xABCD_FFFF_FFFF_FC18}
	if c, e, r := s.values(); c != 9000 || e != 500 || r != 400 {
		t.Errorf("without cap_user_time: %d %d %d, want 9000 500 400", c, e, r)
	}

	// With cap_user_time: delta = time_offset + cyc*mult>>shift is added to
	// both times while the event is on a counter. time_offset is negative in
	// practice (stored as u64): 2000 cycles at 1/2 ns each = 1000 ns, offset -300.
	s.caps |= capUserTime
	s.cyc, s.timeShift, s.timeMult = 2000, 1, 1
	minus300 := int64(-300)
	s.timeOffset = uint64(minus300)
	if c, e, r := s.values(); c != 9000 || e != 500+700 || r != 400+700 {
		t.Errorf("with cap_user_time: %d %d %d, want 9000 1200 1100", c, e, r)
	}

	// Off the PMU (index 0): only enabled advances.
	s.index = 0
	if _, e, r := s.values(); e != 1200 || r != 400 {
		t.Errorf("index 0: enabled %d running %d, want 1200 400", e, r)
	}

	// cap_user_time_short: a 16-bit TSC that wrapped since time_cycles=1000.
	// Raw 0x1_0000_0005 - 1000 masked to 16 bits is 64541, so cyc = 65541.
	s.index = 1
	s.caps |= capUserTimeShort
	s.cyc, s.timeCycles, s.timeMask = 0x1_0000_0005, 1000, 0xFFFF
	s.timeOffset, s.timeShift, s.timeMult = 0, 0, 1
	if _, e, _ := s.values(); e != 500+65541 {
		t.Errorf("cap_user_time_short: enabled %d, want %d", e, 500+65541)
	}
}

func TestReadPage(t *testing.T) {
	var pmc atomic.Uint64
	pmc.Store(0xFFFF_FFFF_FC18) // -1000 in 48 bits
	var asked []uint32
	hw := fakeCounters{pmc: &pmc, cyc: 4000, counters: &asked}
	pg := &mmapPage{lock: 2, index: 5, offset: 10000, timeEnabled: 100, timeRunning: 50,
		capabilities: rdpmcCaps | capUserTime, widthShiftMult: packWidthShiftMult(48, 2, 1), timeOffset: 0}

	s, ok := readPage(pg, hw)
	if !ok {
		t.Fatal("readPage refused a page that grants rdpmc")
	}
	if len(asked) != 1 || asked[0] != 4 {
		t.Errorf("RDPMC asked for counters %v, want [4] (index-1)", asked)
	}
	c, e, r := s.values()
	if c != 9000 || e != 100+1000 || r != 50+1000 {
		t.Errorf("values = %d %d %d, want 9000 1100 1050", c, e, r)
	}
	if got := scaleCount(c, e, r); got != 9000*1100/1050 {
		t.Errorf("scaled = %d, want %d", got, 9000*1100/1050)
	}

	for name, mutate := range map[string]func(p *mmapPage){
		"no cap_user_rdpmc":        func(p *mmapPage) { p.capabilities = capBit0IsDeprecated | capUserTime },
		"pre-3.12 capability bits": func(p *mmapPage) { p.capabilities = capUserRDPMC | capUserTime },
		"index 0 (off the PMU)":    func(p *mmapPage) { p.index = 0 },
		"kernel stuck mid-update":  func(p *mmapPage) { p.lock = 7 },
	} {
		p := *pg
		mutate(&p)
		asked = asked[:0]
		if _, ok := readPage(&p, hw); ok {
			t.Errorf("%s: readPage reported success", name)
		}
		if len(asked) != 0 {
			t.Errorf("%s: RDPMC was executed (%v); it would fault or read a foreign counter", name, asked)
		}
	}

	// A page that changes inside every window is given up on, not spun on.
	p := *pg
	churn := fakeCounters{pmc: &pmc, onRDPMC: func() { atomic.AddUint32(&p.lock, 2) }}
	if _, ok := readPage(&p, churn); ok {
		t.Error("readPage accepted a snapshot although the lock changed in every window")
	}
	if got := atomic.LoadUint32(&p.lock); got != 2+2*maxSeqlockRetries {
		t.Errorf("readPage tried %d times, want %d", (got-2)/2, maxSeqlockRetries)
	}
}

// TestReadPageSeqlock lets a writer update a page the way the kernel does
// (lock odd, fields one by one, lock even) while readers check that every
// snapshot they accept is consistent: generation g has offset+counter =
// 1000*g, enabled = 10*g and running = 5*g.
func TestReadPageSeqlock(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Log("one CPU: the writer and the reader interleave only at preemption points")
	}
	pg := &mmapPage{capabilities: rdpmcCaps, widthShiftMult: packWidthShiftMult(48, 0, 0), index: 1}
	var pmc atomic.Uint64
	set := func(g uint64) {
		atomic.AddUint32(&pg.lock, 1)
		counter := (g * 7919) & (1<<48 - 1) // some 48-bit hardware value
		atomic.StoreUint64(&pg.timeEnabled, 10*g)
		pmc.Store(counter | 0xDEAD<<48)
		atomic.StoreInt64(&pg.offset, int64(1000*g)-signExtend(counter, 48))
		atomic.StoreUint64(&pg.timeRunning, 5*g)
		atomic.AddUint32(&pg.lock, 1)
	}
	set(1)
	const generations = 50000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := uint64(2); g <= generations; g++ {
			set(g)
		}
	}()
	hw := fakeCounters{pmc: &pmc}
	accepted, refused := 0, 0
	for done := false; !done; {
		done = atomic.LoadUint64(&pg.timeEnabled) == 10*generations
		s, ok := readPage(pg, hw)
		if !ok {
			refused++
			continue
		}
		accepted++
		c, e, r := s.values()
		g := e / 10
		if e != 10*g || r != 5*g || c != 1000*g {
			t.Fatalf("torn snapshot accepted: count %d enabled %d running %d", c, e, r)
		}
	}
	wg.Wait()
	t.Logf("%d consistent snapshots, %d reads gave up after %d retries", accepted, refused, maxSeqlockRetries)
	if accepted == 0 {
		t.Error("no snapshot was ever accepted")
	}
}
