package tracetest

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Shape is the structure of a planted MPI program, as the analyses that
// choose a time-dominant region meet it in real codes (issue 33).
type Shape uint8

const (
	// ShapeCG is a conjugate-gradient benchmark: a setup routine
	// (sprnvc_, about 1 % of the run) called 4 times per rank, then
	// conj_grad_ once per iteration, its computation inlined, waiting
	// about 70 % of its time in two MPI_Allreduce.
	ShapeCG Shape = iota
	// ShapeOpenMP is an MPI+OpenMP solver: an assembly kernel called 20
	// times per thread (about 5 % of the run), impose_dirichlet 4 times in
	// all, and a solve whose work is all inside "!$omp parallel" and
	// "!$omp for" constructs, with an MPI_Allreduce per iteration on the
	// master thread.
	ShapeOpenMP
	// ShapeInlined is a C MPI code whose computation is inlined into
	// main: init called twice per rank, then per iteration a halo
	// exchange (MPI_Isend, MPI_Irecv, MPI_Waitall) and one MPI_Allreduce.
	ShapeInlined
	// ShapeExchange is a C++ MPI code shaped as LULESH is: its solver
	// inlined into main, each iteration three calls of an exchange
	// routine (CommSend) that packs a little and then waits long in a
	// nested MPI_Waitall, the computation between them, and one
	// MPI_Allreduce for the time step.
	ShapeExchange
	// ShapeHybrid is an MPI+OpenMP code shaped as LULESH's MPI+OpenMP
	// build is: its compute inlined into main, each iteration twelve
	// small parallel loops ("!$omp parallel" around "!$omp for" and its
	// implicit barrier, each a few percent of the run) and a serial step
	// on the master thread, then one MPI_Allreduce that only the master
	// thread of each rank calls. The worker threads hold only the
	// parallel loops.
	ShapeHybrid
)

// String names the shape for test names.
func (s Shape) String() string {
	switch s {
	case ShapeCG:
		return "cg"
	case ShapeOpenMP:
		return "openmp"
	case ShapeInlined:
		return "inlined"
	case ShapeExchange:
		return "exchange"
	case ShapeHybrid:
		return "hybrid"
	}
	return fmt.Sprintf("shape %d", uint8(s))
}

// ShapeRun is one run of a Shape. Times are in WeberUnit steps.
type ShapeRun struct {
	Shape      Shape
	Ranks      int
	Threads    int // per rank, ShapeOpenMP only (1 if 0)
	Iterations int
	// Load perturbs the timings as a loaded machine does: each
	// computation takes up to Load × 20 % more or less, each wait in a
	// collective up to 1 + 3 × Load times as long, drawn from Seed.
	Load float64
	Seed uint64
	// Slow plants a computation 3× as long at (location index, iteration);
	// {-1, -1} for none.
	Slow [2]int
	// Skew is how much later the last rank leaves MPI_Init than the
	// others, as on a loaded machine: the others wait it out in an
	// MPI_Barrier after their setup, the first synchronizing call.
	Skew uint64
}

// SolverRegion is the region that carries a shape's iterations, and
// whether the iterations are cut between its calls (a collective).
func (s Shape) SolverRegion() (name string, between bool) {
	switch s {
	case ShapeCG:
		return "conj_grad_", false
	case ShapeOpenMP:
		return "!$omp parallel @solve.c:10", false
	}
	return "MPI_Allreduce", true
}

// threads returns the threads per rank.
func (r ShapeRun) threads() int {
	if (r.Shape == ShapeOpenMP || r.Shape == ShapeHybrid) && r.Threads > 0 {
		return r.Threads
	}
	return 1
}

// Calls returns the calls of every location of the run and the locations'
// names in order ("rank r" or "rank r thread t").
func (r ShapeRun) Calls() (map[string][]Call, []string) {
	seed := r.Seed*0x9E3779B97F4A7C15 + 1
	rnd := func() float64 { // uniform in [0, 1)
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed%(1<<20)) / (1 << 20)
	}
	work := func(d uint64) uint64 { return uint64(float64(d) * (1 + r.Load*0.2*(2*rnd()-1))) }
	wait := func(d uint64) uint64 { return uint64(float64(d) * (1 + 3*r.Load*rnd())) }
	threads := r.threads()
	p := r.Ranks * threads
	names := make([]string, p)
	for l := range names {
		names[l] = fmt.Sprintf("rank %d", l/threads)
		if r.Shape == ShapeOpenMP || r.Shape == ShapeHybrid {
			names[l] += fmt.Sprintf(" thread %d", l%threads)
		}
	}
	if r.Shape == ShapeHybrid {
		return r.hybridCalls(names, work, wait), names
	}
	// Every location starts MPI and sets up; the iterations start
	// together after the slowest setup.
	top := make([][]Call, p) // calls directly in main
	var start uint64
	late := func(l int) bool { return l/threads == r.Ranks-1 }
	for l := range top {
		at := uint64(0)
		init := uint64(50)
		if late(l) {
			init += r.Skew
		}
		if l%threads == 0 {
			top[l] = append(top[l], C("MPI_Init", at, at+init))
		}
		at += init + 1
		switch r.Shape {
		case ShapeCG:
			for k := 0; k < 4; k++ {
				d := work(25)
				top[l] = append(top[l], C("sprnvc_", at, at+d))
				at += d + 1
			}
		case ShapeOpenMP:
			for k := 0; k < 20; k++ {
				d := work(15)
				top[l] = append(top[l], C("assemble", at, at+d))
				at += d + 1
			}
			if l == 0 {
				for k := 0; k < 4; k++ {
					top[l] = append(top[l], C("impose_dirichlet", at, at+3))
					at += 4
				}
			}
		case ShapeInlined, ShapeExchange:
			for k := 0; k < 2; k++ {
				top[l] = append(top[l], C("init", at, at+1))
				at += 2
			}
		}
		start = max(start, at)
	}
	if r.Skew > 0 {
		// Every rank's master enters the barrier after its setup and
		// leaves it when the late rank is there.
		for l := range top {
			if l%threads != 0 {
				continue
			}
			setupEnd := uint64(0)
			if n := len(top[l]); n > 0 {
				setupEnd = top[l][n-1].End
			}
			top[l] = append(top[l], C("MPI_Barrier", setupEnd+1, start+2))
		}
		start += 3
	}
	solve := make([][]Call, p) // calls of the solver
	t := start + 1
	for it := 0; it < r.Iterations; it++ {
		comp := make([]uint64, p)
		for l := range comp {
			base := uint64(100)
			if r.Shape == ShapeCG {
				base = 70
			}
			comp[l] = work(base)
			if r.Slow == [2]int{l, it} {
				comp[l] *= 3
			}
		}
		switch r.Shape {
		case ShapeCG:
			// compute, allreduce, compute 30, allreduce: the waits
			// take about 70 % of the iteration on a quiet machine.
			ready := uint64(0)
			for l := range comp {
				ready = max(ready, comp[l])
			}
			end1 := t + 1 + ready + wait(110)
			tail := make([]uint64, p)
			ready2 := uint64(0)
			for l := range tail {
				tail[l] = work(30)
				ready2 = max(ready2, tail[l])
			}
			end2 := end1 + ready2 + wait(110)
			for l := range comp {
				solve[l] = append(solve[l], C("conj_grad_", t, end2+1,
					C("MPI_Allreduce", t+1+comp[l], end1),
					C("MPI_Allreduce", end1+tail[l], end2)))
			}
			t = end2 + 2
		case ShapeOpenMP:
			end := uint64(0)
			for rank := 0; rank < r.Ranks; rank++ {
				ready := uint64(0)
				for k := 0; k < threads; k++ {
					ready = max(ready, comp[rank*threads+k])
				}
				for k := 0; k < threads; k++ {
					l := rank*threads + k
					solve[l] = append(solve[l], C("!$omp parallel @solve.c:10", t, t+ready+3,
						C("!$omp for @solve.c:12", t+1, t+ready+2,
							C("!$omp implicit barrier @solve.c:12", t+1+comp[l], t+ready+2))))
				}
				end = max(end, t+ready+3)
			}
			end += wait(40)
			for rank := 0; rank < r.Ranks; rank++ {
				l := rank * threads
				parEnd := solve[l][len(solve[l])-1].End
				solve[l] = append(solve[l], C("MPI_Allreduce", parEnd+1, end))
			}
			t = end + 1
		case ShapeInlined:
			ready := uint64(0)
			for l := range comp {
				ready = max(ready, comp[l]+4)
			}
			end := t + ready + wait(20)
			for l := range comp {
				at := t + comp[l]
				solve[l] = append(solve[l], C("MPI_Isend", at, at+1), C("MPI_Irecv", at+1, at+2),
					C("MPI_Waitall", at+2, at+4), C("MPI_Allreduce", at+4, end))
			}
			t = end + 1
		case ShapeExchange:
			// Three exchanges, each followed by a third of the
			// computation, then the time step's MPI_Allreduce.
			cur := make([]uint64, p)
			for l := range cur {
				cur[l] = t
			}
			for x := 0; x < 3; x++ {
				pack := make([]uint64, p)
				ready := uint64(0)
				for l := range pack {
					pack[l] = work(6)
					ready = max(ready, cur[l]+pack[l])
				}
				end := ready + wait(60)
				for l := range cur {
					solve[l] = append(solve[l], C("CommSend", cur[l], end+1,
						C("MPI_Waitall", cur[l]+pack[l], end)))
					cur[l] = end + 2 + comp[l]/3
				}
			}
			ready := uint64(0)
			for l := range cur {
				ready = max(ready, cur[l])
			}
			end := ready + wait(20)
			for l := range cur {
				solve[l] = append(solve[l], C("MPI_Allreduce", cur[l], end))
			}
			t = end + 1
		}
	}
	locs := map[string][]Call{}
	for l, name := range names {
		calls := top[l]
		if r.Shape == ShapeInlined || r.Shape == ShapeExchange {
			calls = append(calls, solve[l]...)
		} else {
			calls = append(calls, C("solve", start, t, solve[l]...))
		}
		end := t + 1
		if l%threads == 0 {
			calls = append(calls, C("MPI_Finalize", t+1, t+20))
			end = t + 21
		}
		locs[name] = []Call{C("main", 0, end, calls...)}
	}
	return locs, names
}

// hybridLoops is the number of parallel loops per iteration of
// ShapeHybrid.
const hybridLoops = 12

// hybridCalls returns the calls of ShapeHybrid's locations, names in
// location order; work and wait perturb a computation's and a wait's
// length.
func (r ShapeRun) hybridCalls(names []string, work, wait func(uint64) uint64) map[string][]Call {
	threads := r.threads()
	top := make([][]Call, len(names))
	late := func(rank int) uint64 {
		if rank == r.Ranks-1 {
			return r.Skew
		}
		return 0
	}
	// The masters start MPI and set up; the iterations start together
	// after the slowest.
	start := uint64(0)
	for rank := 0; rank < r.Ranks; rank++ {
		l := rank * threads
		at := 50 + late(rank)
		top[l] = append(top[l], C("MPI_Init", 0, at), C("init", at+1, at+2), C("init", at+3, at+4))
		start = max(start, at+5)
	}
	if r.Skew > 0 {
		for rank := 0; rank < r.Ranks; rank++ {
			l := rank * threads
			top[l] = append(top[l], C("MPI_Barrier", top[l][len(top[l])-1].End+1, start+2))
		}
		start += 3
	}
	t := start + 1
	for it := 0; it < r.Iterations; it++ {
		end := uint64(0)
		for rank := 0; rank < r.Ranks; rank++ {
			at := t
			for k := 0; k < hybridLoops; k++ {
				loop := fmt.Sprintf("!$omp parallel @lulesh.cc:%d", 100+10*k)
				body := fmt.Sprintf("!$omp for @lulesh.cc:%d", 101+10*k)
				barrier := fmt.Sprintf("!$omp implicit barrier @lulesh.cc:%d", 101+10*k)
				comp := make([]uint64, threads)
				ready := uint64(0)
				for th := range comp {
					comp[th] = work(8)
					if r.Slow == [2]int{rank*threads + th, it} {
						comp[th] *= 3
					}
					ready = max(ready, comp[th])
				}
				for th := range comp {
					l := rank*threads + th
					top[l] = append(top[l], C(loop, at, at+ready+3,
						C(body, at+1, at+ready+2, C(barrier, at+1+comp[th], at+ready+2))))
				}
				// A serial step of the master, inlined into main.
				at += ready + 4 + work(2)
			}
			end = max(end, at)
		}
		end += wait(20)
		for rank := 0; rank < r.Ranks; rank++ {
			l := rank * threads
			last := top[l][len(top[l])-1].End
			top[l] = append(top[l], C("MPI_Allreduce", last+1, end))
		}
		t = end + 1
	}
	locs := map[string][]Call{}
	for l, name := range names {
		if l%threads != 0 {
			locs[name] = top[l] // a worker: its parallel loops only
			continue
		}
		locs[name] = []Call{C("main", 0, t+21, append(top[l], C("MPI_Finalize", t+1, t+20))...)}
	}
	return locs
}

// Record writes the run's trace as RecordCalls does, one file, and opens it.
func (r ShapeRun) Record(t testing.TB) *tracefile.File {
	locs, order := r.Calls()
	return RecordCalls(t, measure.Config{}, WeberUnit, locs, order...)
}
