package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/hmbtrace/hmbtrace/measure"
)

// The Go and the C probe are compared in slices of half a millisecond,
// alternated on one CPU: on this shared VM the whole machine's speed
// changes for milliseconds to seconds at a time (the host's load
// and clock; a chain of multiplies slows by 1.2x, the probes by up to
// 1.7x, RDTSC hardly), so a Go run and a C run timed at different moments
// compared the moments: the ratio of one run ranged from 0.57 to 1.39.
// Alternated slices see the same machine. Both write into a measurement
// of the same size from its start, with the same events, so both take the
// same first-touch page faults of their bins, counted and printed.

// sliceIterations is one slice's iterations of the pattern (4 events
// each): about half a millisecond, shorter than the machine's changes of speed.
const sliceIterations = 5_000

// warmIterations run untimed before each slice, on both sides
// (WARM_ITERATIONS in cslice/probe_slices.c).
const warmIterations = 1000

// sliceResult is one slice: ns per event in the thread's CPU time, and the
// minor page faults it took.
type sliceResult struct {
	ns     float64
	faults int64
}

// probeSlices alternates slices of the Go probe, in this process, and of
// the C probe, in cslice/probe_slices.c, both pinned to one CPU.
type probeSlices struct {
	cpu int

	m     *measure.Measurement
	goIn  chan int
	goOut chan sliceResult

	cmd   *exec.Cmd
	cIn   io.WriteCloser
	cOut  *bufio.Reader
	cpath string
}

// buildProbeSlices compiles the C side against the C shim that cProbes
// built (build/lib, build/include) and returns its path.
func buildProbeSlices(o *options) (string, error) {
	build := filepath.Join(o.root, "build")
	bin := filepath.Join(build, "bench", "probe_slices")
	src := filepath.Join(o.root, "bench", "cslice", "probe_slices.c")
	lib := filepath.Join(build, "lib")
	cmd := exec.Command("gcc", "-O2", "-g", "-Wall", "-Wextra", "-o", bin, src,
		"-I"+filepath.Join(build, "include"), "-L"+lib, "-lhmbtrace", "-Wl,-rpath,"+lib)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", src, err, out)
	}
	return bin, nil
}

// startProbeSlices starts both sides on the CPU the caller runs on, each
// with a measurement of 128 MiB that keeps every event, throttling off.
func startProbeSlices(o *options, cpath string) (*probeSlices, error) {
	runtime.LockOSThread()
	cpu, err := currentCPU()
	runtime.UnlockOSThread()
	if err != nil {
		return nil, err
	}
	s := &probeSlices{cpu: cpu, goIn: make(chan int), goOut: make(chan sliceResult), cpath: cpath}
	s.m, err = measure.Start(measure.Config{IgnoreEnv: true, Output: o.work, Name: "slices", BufferSize: 128 << 20, NoThrottle: true})
	if err != nil {
		return nil, err
	}
	ready := make(chan error)
	go s.goSide(ready)
	if err := <-ready; err != nil {
		s.m.Close()
		return nil, err
	}
	s.cmd = exec.Command(cpath, fmt.Sprint(cpu))
	s.cmd.Dir = o.work
	s.cmd.Env = append(os.Environ(), "HMB_OUTPUT="+o.work, "HMB_C_PROBE=direct", "HMB_THROTTLE=0", "HMB_BUFFER_SIZE=128M")
	s.cmd.Stderr = os.Stderr
	if s.cIn, err = s.cmd.StdinPipe(); err != nil {
		s.stopGo()
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		s.stopGo()
		return nil, err
	}
	s.cOut = bufio.NewReader(out)
	if err := s.cmd.Start(); err != nil {
		s.stopGo()
		return nil, err
	}
	// One slice of each, untimed: the code's first pages, the lazy binding
	// of hmb_enter, the first bins of both.
	if _, err := s.run(sliceIterations); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// goSide runs the Go probe's slices on a goroutine locked to its thread,
// pinned to s.cpu. It returns with the thread still locked, so that the
// runtime ends the pinned thread instead of reusing it.
func (s *probeSlices) goSide(ready chan<- error) {
	if err := pinThread(s.cpu); err != nil {
		ready <- fmt.Errorf("pinning the Go probe's thread: %v", err)
		return
	}
	loc := s.m.Location("bench")
	outer, inner := s.m.Region("outer"), s.m.Region("inner")
	ready <- nil
	for n := range s.goIn {
		s.goOut <- timedSlice(loc, outer, inner, n)
	}
}

// timedSlice runs warmIterations nested pairs untimed, then n timed in the
// thread's CPU time, and returns the cost per event and the page faults.
// The first iterations after the switch from the other side refill the
// caches and TLBs, which costs the C side's larger code (a shared library)
// more: untimed on both sides, they would otherwise favour Go the more,
// the shorter the slice.
func timedSlice(loc *measure.Location, outer, inner measure.Region, n int) sliceResult {
	nestedPairs(loc, outer, inner, warmIterations)
	f0 := minorFaults()
	c0 := threadCPU()
	nestedPairs(loc, outer, inner, n)
	c1 := threadCPU()
	return sliceResult{float64(c1-c0) / float64(4*n), minorFaults() - f0}
}

// pair is one Go slice and one C slice, run back to back.
type pair struct{ goSlice, cSlice sliceResult }

// run runs one Go slice and one C slice of n iterations each.
func (s *probeSlices) run(n int) (pair, error) {
	var p pair
	s.goIn <- n
	p.goSlice = <-s.goOut
	if _, err := fmt.Fprintln(s.cIn, n); err != nil {
		return p, fmt.Errorf("%s: %v", s.cpath, err)
	}
	if _, err := fmt.Fscan(s.cOut, &p.cSlice.ns, &p.cSlice.faults); err != nil {
		return p, fmt.Errorf("%s: reading its answer: %v", s.cpath, err)
	}
	return p, nil
}

// runPairs runs k pairs, the order within a pair alternating (Go first,
// then C first) so that a change of speed during a pair does not always
// favour the same side.
func (s *probeSlices) runPairs(k int) ([]pair, error) {
	var ps []pair
	for i := 0; i < k; i++ {
		var p pair
		var err error
		if i%2 == 0 {
			p, err = s.run(sliceIterations)
		} else {
			p, err = s.runCFirst(sliceIterations)
		}
		if err != nil {
			return ps, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// runCFirst is run with the C slice first.
func (s *probeSlices) runCFirst(n int) (pair, error) {
	var p pair
	if _, err := fmt.Fprintln(s.cIn, n); err != nil {
		return p, fmt.Errorf("%s: %v", s.cpath, err)
	}
	if _, err := fmt.Fscan(s.cOut, &p.cSlice.ns, &p.cSlice.faults); err != nil {
		return p, fmt.Errorf("%s: reading its answer: %v", s.cpath, err)
	}
	s.goIn <- n
	p.goSlice = <-s.goOut
	return p, nil
}

func (s *probeSlices) stopGo() {
	close(s.goIn)
	s.m.Close()
	os.Remove(s.m.Path())
}

// close ends both sides and checks that each kept every event.
func (s *probeSlices) close() error {
	s.stopGo()
	s.cIn.Close()
	err := s.cmd.Wait()
	if st := s.m.Stats(); st.Kept != st.Recorded {
		return fmt.Errorf("the Go side of the slices kept %d of %d events: its buffer is too small", st.Kept, st.Recorded)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", s.cpath, err)
	}
	return nil
}

// sliceStats summarizes pairs: each side's median ns/event, the ratios'
// quartiles, and the faults per 1000 events of each side.
type sliceStats struct {
	goNs, cNs         float64
	ratios            []float64  // Go over C, by pair, sorted
	goFaults, cFaults float64    // per 1000 events
	goSpread, cSpread [2]float64 // min and max of the slices
}

func summarize(ps []pair) sliceStats {
	var st sliceStats
	var gs, cs []float64
	var gf, cf int64
	for _, p := range ps {
		gs = append(gs, p.goSlice.ns)
		cs = append(cs, p.cSlice.ns)
		st.ratios = append(st.ratios, p.goSlice.ns/p.cSlice.ns)
		gf += p.goSlice.faults
		cf += p.cSlice.faults
	}
	slices.Sort(st.ratios)
	st.goNs, st.cNs = median(gs), median(cs)
	st.goSpread = [2]float64{slices.Min(gs), slices.Max(gs)}
	st.cSpread = [2]float64{slices.Min(cs), slices.Max(cs)}
	events := float64(4*sliceIterations*len(ps)) / 1000
	st.goFaults, st.cFaults = float64(gf)/events, float64(cf)/events
	return st
}

// quantile returns the q-quantile of sorted v, by the nearest rank.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(q*float64(len(v))))]
}
