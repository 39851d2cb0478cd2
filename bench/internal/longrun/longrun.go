// Package longrun drives a long, realistic run of events through a small
// fixed buffer: the experiment behind Wagner's claim that a whole run
// fits in a buffer three orders of magnitude smaller than its trace. It
// checks that the flat profile survives the reductions exactly.
package longrun

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/bench/internal/cputime"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Options configure a run.
type Options struct {
	Events     int64  // events in all, over all goroutines
	Goroutines int    // locations recording at once
	BufferSize int    // bytes
	Output     string // directory of the trace
}

// BasicRecordSize is the size of an enter or leave as Wagner's figure 1
// stores it, like OTF2: a 1-byte token, an 8-byte timestamp and a 4-byte
// region. A message adds the peer, tag and length instead of the region.
const (
	BasicRecordSize        = 1 + 8 + 4
	BasicMessageRecordSize = 1 + 8 + 4 + 4 + 8
)

// Result is what a run measured.
type Result struct {
	Events, Kept  uint64
	BasicBytes    uint64 // bytes the basic record stream would need
	BufferSize    int
	PeakRSS       int64         // VmHWM, bytes
	NsBefore      float64       // ns/event before the first reduction, driver included (thread CPU time)
	NsAfter       float64       // after the last one
	NsDriver      float64       // ns/event of the driver alone (probes on a nil location)
	DepthsClosed  []int         // by the reductions, in order
	Reductions    int           //
	Wall          time.Duration // of the recording
	ProfileExact  bool          // the file's flat profile equals the reference
	ProfileIssues []string
	Path          string
}

// Ratio returns how many times the basic record stream exceeds the buffer.
func (r *Result) Ratio() float64 { return float64(r.BasicBytes) / float64(r.BufferSize) }

// regions of the call tree, outermost first.
var regionNames = []string{"main", "timestep", "exchange", "pack", "compute", "kernel", "flux", "limiter", "reduce"}

// profile is a reference flat profile kept by the driver from the same
// timestamps it hands the probes: the profile of an unreduced run.
type profile struct {
	visits, incl, excl []uint64
	active             []int
	stack              []frame
}

type frame struct {
	region       int
	start, child uint64
}

func newProfile() *profile {
	n := len(regionNames) + 1
	return &profile{visits: make([]uint64, n), incl: make([]uint64, n), excl: make([]uint64, n), active: make([]int, n)}
}

func (p *profile) enter(r int, t uint64) {
	p.visits[r]++
	p.active[r]++
	p.stack = append(p.stack, frame{region: r, start: t})
}

func (p *profile) leave(t uint64) {
	f := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	d := t - f.start
	p.active[f.region]--
	if p.active[f.region] == 0 {
		p.incl[f.region] += d
	}
	p.excl[f.region] += d - f.child
	if n := len(p.stack); n > 0 {
		p.stack[n-1].child += d
	}
}

// driver records one goroutine's share of the call tree.
type driver struct {
	loc     *measure.Location
	peer    *measure.Location
	m       *measure.Measurement
	regions []measure.Region
	ref     *profile
	last    uint64
	events  int64
	basic   uint64
	rng     uint64
	// timing windows
	blocks []block
}

type block struct {
	events     int64
	ns         int64 // CPU time of the driver's thread
	reductions int
}

func (d *driver) now() uint64 {
	t := d.m.Now()
	if t < d.last {
		t = d.last
	}
	d.last = t
	return t
}

// threadCPU returns the CPU time of the calling OS thread, in ns. The
// drivers time their blocks with it, locked to their threads: on a shared
// machine the wall time of a block counts the time the thread waited for a
// CPU, which made the probe look five times dearer after the reductions
// than before on a loaded run and says nothing about the probe.
func threadCPU() int64 { return cputime.Thread() }

// calibrate times the driver alone: the same call tree recorded into a nil
// location, whose probes return at once.
func (d *driver) calibrate(events int64) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	loc := d.loc
	d.loc = nil
	defer func() { d.loc, d.events, d.basic, d.ref = loc, 0, 0, newProfile() }()
	start := threadCPU()
	d.enter(0)
	for d.events < events {
		d.timestep()
	}
	d.leave()
	return float64(threadCPU()-start) / float64(d.events)
}

func (d *driver) enter(r int) {
	t := d.now()
	d.loc.EnterAt(d.regions[r], t)
	d.ref.enter(r, t)
	d.events++
	d.basic += BasicRecordSize
}

func (d *driver) leave() {
	t := d.now()
	f := d.ref.stack[len(d.ref.stack)-1]
	d.loc.LeaveAt(d.regions[f.region], t)
	d.ref.leave(t)
	d.events++
	d.basic += BasicRecordSize
}

func (d *driver) message(recv bool) {
	t := d.now()
	d.loc.MessageAt(measure.Message{Recv: recv, Peer: uint64(d.peer.ID()), Tag: 7, Bytes: 4096}, t)
	d.events++
	d.basic += BasicMessageRecordSize
}

// next is xorshift64*: the call tree's shape varies, deterministically.
func (d *driver) next(n uint64) uint64 {
	d.rng ^= d.rng >> 12
	d.rng ^= d.rng << 25
	d.rng ^= d.rng >> 27
	return (d.rng * 0x2545F4914F6CDD1D) % n
}

// timestep records one iteration of a solver: exchange, compute with deep
// kernels, reduce. About a thousand events.
func (d *driver) timestep() {
	const (
		timestep = 1 + iota
		exchange
		pack
		compute
		kernel
		flux
		limiter
		reduce
	)
	d.enter(timestep)
	d.enter(exchange)
	for i := 0; i < 2; i++ {
		d.enter(pack)
		d.leave()
		d.message(false)
		d.message(true)
	}
	d.leave()
	d.enter(compute)
	cells := 40 + int(d.next(40))
	for c := 0; c < cells; c++ {
		d.enter(kernel)
		for k := 0; k < 4; k++ {
			d.enter(flux)
			if d.next(4) == 0 {
				d.enter(limiter)
				d.leave()
			}
			d.leave()
		}
		d.leave()
	}
	d.leave()
	d.enter(reduce)
	d.leave()
	d.leave()
}

func (d *driver) run(quota int64, reductions func() int) {
	runtime.LockOSThread() // for threadCPU
	defer runtime.UnlockOSThread()
	d.enter(0) // main
	const blockEvents = 1 << 20
	for d.events < quota {
		start := threadCPU()
		first := d.events
		for d.events-first < blockEvents && d.events < quota {
			d.timestep()
		}
		d.blocks = append(d.blocks, block{events: d.events - first, ns: threadCPU() - start, reductions: reductions()})
	}
	d.leave()
}

// Run drives the events and checks the trace.
func Run(o Options) (*Result, error) {
	if o.Goroutines < 1 {
		o.Goroutines = 2
	}
	m, err := measure.Start(measure.Config{IgnoreEnv: true, Name: "longrun", Output: o.Output, BufferSize: o.BufferSize, NoThrottle: true})
	if err != nil {
		return nil, err
	}
	regions := []measure.Region{}
	for _, n := range regionNames {
		regions = append(regions, m.Region(n))
	}
	drivers := make([]*driver, o.Goroutines)
	for i := range drivers {
		drivers[i] = &driver{loc: m.Location(fmt.Sprintf("rank-like %d", i)), m: m, regions: regions, ref: newProfile(), rng: 0x9E3779B97F4A7C15 + uint64(i)}
	}
	for i, d := range drivers {
		d.peer = drivers[(i+1)%len(drivers)].loc
	}
	reductions := func() int { return len(m.Reductions()) }
	var calib float64
	for _, d := range drivers {
		calib += d.calibrate(min(o.Events/int64(len(drivers))/10, 4<<20)) / float64(len(drivers))
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, d := range drivers {
		wg.Add(1)
		go func(d *driver) {
			defer wg.Done()
			d.run(o.Events/int64(len(drivers)), reductions)
		}(d)
	}
	wg.Wait()
	res := &Result{BufferSize: o.BufferSize, Wall: time.Since(start), NsDriver: calib}
	if err := m.Close(); err != nil {
		return nil, err
	}
	res.Path = m.Path()
	st := m.Stats()
	res.Events, res.Kept = st.Recorded, st.Kept
	res.Reductions = len(st.Reductions)
	for _, r := range st.Reductions {
		res.DepthsClosed = append(res.DepthsClosed, r.Depth)
	}
	res.PeakRSS = peakRSS()
	var before, after [2]float64
	last := res.Reductions
	for _, d := range drivers {
		res.BasicBytes += d.basic
		for i, b := range d.blocks {
			switch {
			case b.reductions == 0 && i > 0: // the first block warms up
				before[0] += float64(b.ns)
				before[1] += float64(b.events)
			case b.reductions == last && i > 0 && d.blocks[i-1].reductions == last:
				after[0] += float64(b.ns)
				after[1] += float64(b.events)
			}
		}
	}
	if before[1] > 0 {
		res.NsBefore = before[0] / before[1]
	}
	if after[1] > 0 {
		res.NsAfter = after[0] / after[1]
	}
	res.ProfileIssues, err = compareProfiles(res.Path, drivers)
	if err != nil {
		return nil, err
	}
	res.ProfileExact = len(res.ProfileIssues) == 0
	return res, nil
}

// compareProfiles checks the file's flat profile against the drivers'.
func compareProfiles(path string, drivers []*driver) ([]string, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var issues []string
	for i, d := range drivers {
		l := f.Location(uint32(i))
		got := map[string]tracefile.ProfileEntry{}
		for _, p := range l.Profile {
			got[f.RegionName(p.Region)] = p
		}
		for r, name := range regionNames {
			g := got[name]
			want := tracefile.ProfileEntry{Region: g.Region, Visits: d.ref.visits[r], Inclusive: d.ref.incl[r], Exclusive: d.ref.excl[r]}
			if g.Visits != want.Visits || g.Inclusive != want.Inclusive || g.Exclusive != want.Exclusive {
				issues = append(issues, fmt.Sprintf("%s %s: file %+v, reference %+v", l.Name, name, g, want))
			}
		}
	}
	return issues, nil
}

// peakRSS reads VmHWM from /proc/self/status, in bytes (0 if unknown).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
