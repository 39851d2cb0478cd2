// Heat solves 2-D heat diffusion with a Jacobi stencil, the way an HPC code
// does it: the grid is cut into stripes of rows, one goroutine per stripe,
// halo rows are exchanged with the neighbours over channels, and every
// iteration ends with a reduction of the residual. Every phase is
// instrumented with hmbtrace; at the end the trace is written and its
// summary printed.
//
//	go run ./examples/heat [-n 2048] [-iters 400] [-workers GOMAXPROCS]
//
// The HMB_* environment variables configure the measurement, e.g.
// HMB_BUFFER_SIZE=1M to watch the buffer shed its deepest levels, or
// HMB_LISTEN=7070 to watch it live (go tool pprof
// http://127.0.0.1:7070/debug/hmb/profile).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/hmbtrace/hmbtrace/measure"
	_ "github.com/hmbtrace/hmbtrace/measure/live" // HMB_LISTEN serves the live view
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// regions of the solver, defined once.
type regions struct {
	main, setup, solve, worker, iteration, exchange, send, haloWait, compute, row, residual, allreduce, reduce measure.Region
	// The main goroutine's waits: for the workers' shares of the residual,
	// and for the workers to end.
	gather, join measure.Region
	helper       measure.Region // 0 unless -helper
}

func defineRegions(m *measure.Measurement) regions {
	return regions{
		main: m.Region("main"), setup: m.Region("setup"), solve: m.Region("solve"),
		worker: m.Region("worker"), iteration: m.Phase("iteration"), // the progress loop
		exchange: m.Region("exchange"), send: m.Region("send halo"), haloWait: m.Region("halo wait"),
		compute: m.Region("compute"), row: m.Region("update row"),
		residual: m.Region("residual"), allreduce: m.Region("allreduce wait"), reduce: m.Region("reduce"),
		gather: m.Region("gather wait"), join: m.Region("join wait"),
	}
}

// stripe is one worker's rows of the grid, with a halo row above and below.
type stripe struct {
	id       int
	loc      *measure.Location // this stripe's goroutine
	up, down *stripe
	n        int         // columns
	rows     int         // own rows
	cur, nxt [][]float64 // rows+2 rows each
	// Halo exchange: buffers flow to a neighbour and come back empty.
	toUp, toDown     chan []float64 // this stripe's boundary rows, out
	fromUp, fromDown chan []float64 // the neighbours' boundary rows, in
	retUp, retDown   chan []float64 // empty buffers going back to the neighbours
	freeUp, freeDown chan []float64 // empty buffers this stripe may fill
}

func main() {
	n := flag.Int("n", 2048, "grid size (n × n points)")
	iters := flag.Int("iters", 400, "iterations")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "worker goroutines, one stripe each")
	quiet := flag.Bool("quiet", false, "do not print the summary")
	helper := flag.Bool("helper", false, "call a tiny instrumented helper for every point: a region too hot to measure, for hmbtrace score to find")
	flag.Parse()
	if *n < 4 || *iters < 1 || *workers < 1 || *workers > *n-2 {
		fmt.Fprintln(os.Stderr, "heat: need n >= 4, iters >= 1, 1 <= workers <= n-2")
		os.Exit(2)
	}
	if err := run(*n, *iters, *workers, *quiet, *helper); err != nil {
		fmt.Fprintln(os.Stderr, "heat:", err)
		os.Exit(1)
	}
}

func run(n, iters, workers int, quiet, helper bool) error {
	cfg, err := measure.ConfigFromEnv()
	if err != nil {
		return err
	}
	if cfg.Name == "" {
		cfg.Name = "heat"
	}
	m, err := measure.Start(cfg)
	if err != nil {
		return err
	}
	r := defineRegions(m)
	if helper {
		r.helper = m.Region("clamp")
	}
	loc := m.Location("main")
	loc.Enter(r.main)

	loc.Enter(r.setup)
	stripes := split(n, workers)
	loc.Leave(r.setup)

	loc.Enter(r.solve)
	partial := make(chan float64, workers)
	global := make([]chan float64, workers)
	for i := range global {
		global[i] = make(chan float64, 1)
	}
	var wg, ready sync.WaitGroup
	ready.Add(len(stripes))
	for _, s := range stripes {
		wg.Add(1)
		go func(s *stripe) {
			defer wg.Done()
			// Each goroutine makes its own location (with counters, they
			// are its OS thread's), then waits for all of them, so that it
			// can name its neighbours as the peers of its messages.
			s.loc = m.Location(fmt.Sprintf("worker %d", s.id))
			ready.Done()
			ready.Wait()
			s.solve(r, iters, partial, global[s.id])
		}(s)
	}
	var res float64
	for it := 0; it < iters; it++ {
		// The reduction: collect every stripe's share, hand back the sum.
		// The main goroutine waits for the slowest stripe here: in a
		// region of its own, so that the wait is not solve's own time.
		loc.Enter(r.gather)
		sum := 0.0
		for range stripes {
			sum += <-partial
		}
		loc.Leave(r.gather)
		loc.Enter(r.reduce)
		res = math.Sqrt(sum)
		for _, g := range global {
			g <- res
		}
		loc.Leave(r.reduce)
	}
	loc.Enter(r.join)
	wg.Wait()
	loc.Leave(r.join)
	loc.Leave(r.solve)
	loc.Leave(r.main)

	if err := m.Close(); err != nil {
		return err
	}
	if !m.Enabled() {
		fmt.Printf("heat: %d×%d grid, %d iterations, %d workers, residual %.6g (measurement disabled)\n", n, n, iters, workers, res)
		return nil
	}
	fmt.Printf("heat: %d×%d grid, %d iterations, %d workers, residual %.6g\n", n, n, iters, workers, res)
	fmt.Printf("trace: %s\n\n", m.Path())
	if quiet {
		return nil
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		return err
	}
	defer f.Close()
	return summary.Write(os.Stdout, []*tracefile.File{f})
}

// split cuts the n×n grid into stripes and wires their halo channels.
func split(n, workers int) []*stripe {
	inner := n - 2 // the first and last rows are fixed boundaries
	stripes := make([]*stripe, workers)
	for w := range stripes {
		rows := inner / workers
		if w < inner%workers {
			rows++
		}
		s := &stripe{id: w, n: n, rows: rows}
		s.cur, s.nxt = grid(rows+2, n), grid(rows+2, n)
		stripes[w] = s
	}
	// The hot top edge: row 0 of the whole grid.
	for _, g := range [][][]float64{stripes[0].cur, stripes[0].nxt} {
		for j := range g[0] {
			g[0][j] = 1
		}
	}
	for w := 0; w+1 < workers; w++ {
		up, down := stripes[w], stripes[w+1]
		up.down, down.up = down, up
		// up's last row goes down; down's first row goes up.
		up.toDown, down.fromUp = pipe()
		down.toUp, up.fromDown = pipe()
		down.retUp, up.freeDown = pipe()
		up.retDown, down.freeUp = pipe()
		for i := 0; i < 2; i++ {
			up.freeDown <- make([]float64, n)
			down.freeUp <- make([]float64, n)
		}
	}
	return stripes
}

func pipe() (chan []float64, chan []float64) {
	c := make(chan []float64, 2)
	return c, c
}

func grid(rows, cols int) [][]float64 {
	g := make([][]float64, rows)
	for i := range g {
		g[i] = make([]float64, cols)
	}
	return g
}

func (s *stripe) solve(r regions, iters int, partial chan<- float64, global <-chan float64) {
	loc := s.loc
	loc.Enter(r.worker)
	for it := 0; it < iters; it++ {
		loc.Enter(r.iteration)

		loc.Enter(r.exchange)
		s.sendHalos(loc, r)
		s.receiveHalos(loc, r)
		loc.Leave(r.exchange)

		loc.Enter(r.compute)
		var sum float64
		for i := 1; i <= s.rows; i++ {
			loc.Enter(r.row)
			if r.helper != 0 {
				sum += s.updateRowWithHelper(i, loc, r.helper)
			} else {
				sum += s.updateRow(i)
			}
			loc.Leave(r.row)
		}
		loc.Leave(r.compute)

		loc.Enter(r.residual)
		partial <- sum
		loc.Enter(r.allreduce)
		<-global
		loc.Leave(r.allreduce)
		loc.Leave(r.residual)

		s.cur, s.nxt = s.nxt, s.cur
		loc.Leave(r.iteration)
	}
	loc.Leave(r.worker)
}

// Message tags: the direction a halo row travels.
const (
	tagUp   = 1
	tagDown = 2
)

func (s *stripe) sendHalos(loc *measure.Location, r regions) {
	bytes := uint64(8 * s.n)
	if s.toUp != nil {
		loc.Enter(r.send)
		buf := <-s.freeUp
		copy(buf, s.cur[1])
		s.toUp <- buf
		loc.Send(s.up.loc, tagUp, bytes)
		loc.Leave(r.send)
	}
	if s.toDown != nil {
		loc.Enter(r.send)
		buf := <-s.freeDown
		copy(buf, s.cur[s.rows])
		s.toDown <- buf
		loc.Send(s.down.loc, tagDown, bytes)
		loc.Leave(r.send)
	}
}

// receiveHalos waits for the neighbours' boundary rows: the halo wait is
// where an imbalance between the stripes shows.
func (s *stripe) receiveHalos(loc *measure.Location, r regions) {
	bytes := uint64(8 * s.n)
	if s.fromUp != nil {
		loc.Enter(r.haloWait)
		buf := <-s.fromUp
		loc.Recv(s.up.loc, tagDown, bytes)
		copy(s.cur[0], buf)
		s.retUp <- buf
		loc.Leave(r.haloWait)
	}
	if s.fromDown != nil {
		loc.Enter(r.haloWait)
		buf := <-s.fromDown
		loc.Recv(s.down.loc, tagUp, bytes)
		copy(s.cur[s.rows+1], buf)
		s.retDown <- buf
		loc.Leave(r.haloWait)
	}
}

// updateRow applies the 5-point stencil to row i and returns the sum of
// squared changes.
func (s *stripe) updateRow(i int) float64 {
	up, mid, down, out := s.cur[i-1], s.cur[i], s.cur[i+1], s.nxt[i]
	out[0], out[s.n-1] = mid[0], mid[s.n-1]
	var sum float64
	for j := 1; j < s.n-1; j++ {
		v := 0.25 * (up[j] + down[j] + mid[j-1] + mid[j+1])
		d := v - mid[j]
		sum += d * d
		out[j] = v
	}
	return sum
}

// updateRowWithHelper is updateRow with a tiny helper function per point,
// instrumented: the kind of region whose probes cost more than its work.
func (s *stripe) updateRowWithHelper(i int, loc *measure.Location, helper measure.Region) float64 {
	up, mid, down, out := s.cur[i-1], s.cur[i], s.cur[i+1], s.nxt[i]
	out[0], out[s.n-1] = mid[0], mid[s.n-1]
	var sum float64
	for j := 1; j < s.n-1; j++ {
		loc.Enter(helper)
		v := clamp(0.25*(up[j]+down[j]+mid[j-1]+mid[j+1]), 0, 1)
		loc.Leave(helper)
		d := v - mid[j]
		sum += d * d
		out[j] = v
	}
	return sum
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
