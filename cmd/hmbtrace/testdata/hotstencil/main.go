// Hotstencil is a Jacobi stencil like examples/heat whose row update calls a
// deliberately tiny, hot helper region, "clamp", once per grid point: the
// kind of region whose probes cost more than its work. hmbtrace score -g
// must exclude it and nothing else; the tests of cmd/hmbtrace build and run
// it, then run it again with the generated filter file.
//
//	go run ./cmd/hmbtrace/testdata/hotstencil [-n 2048] [-rows 16] [-iters 10] [-workers 2]
//
// HMB_* variables configure the measurement (HMB_FILTER_FILE, HMB_OUTPUT).
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
)

func main() {
	n := flag.Int("n", 2048, "points per row")
	rows := flag.Int("rows", 16, "rows per worker")
	iters := flag.Int("iters", 10, "iterations")
	workers := flag.Int("workers", 2, "worker goroutines")
	flag.Parse()
	if *n < 3 || *rows < 1 || *iters < 1 || *workers < 1 {
		fmt.Fprintln(os.Stderr, "hotstencil: need n >= 3 and positive rows, iters, workers")
		os.Exit(2)
	}
	if err := run(*n, *rows, *iters, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "hotstencil:", err)
		os.Exit(1)
	}
}

func run(n, rows, iters, workers int) error {
	cfg, err := measure.ConfigFromEnv()
	if err != nil {
		return err
	}
	if cfg.Name == "" {
		cfg.Name = "hotstencil"
	}
	start := time.Now()
	m, err := measure.Start(cfg)
	if err != nil {
		return err
	}
	main, solve, worker := m.Region("main"), m.Region("solve"), m.Region("worker")
	iteration, compute, row := m.Region("iteration"), m.Region("compute"), m.Region("update row")
	clamp, wait := m.Region("clamp"), m.Region("barrier wait")
	loc := m.Location("main")
	loc.Enter(main)
	loc.Enter(solve)

	var barrier sync.WaitGroup
	var done sync.WaitGroup
	phase := make([]sync.WaitGroup, iters)
	for i := range phase {
		phase[i].Add(workers)
	}
	sums := make([]float64, workers)
	for w := 0; w < workers; w++ {
		done.Add(1)
		l := m.Location(fmt.Sprintf("worker %d", w))
		go func(w int, l *measure.Location) {
			defer done.Done()
			cur, nxt := grid(rows+2, n, float64(w)), grid(rows+2, n, 0)
			l.Enter(worker)
			for it := 0; it < iters; it++ {
				l.Enter(iteration)
				l.Enter(compute)
				for i := 1; i <= rows; i++ {
					l.Enter(row)
					up, mid, down, out := cur[i-1], cur[i], cur[i+1], nxt[i]
					for j := 1; j < n-1; j++ {
						v := 0.25 * (up[j] + down[j] + mid[j-1] + mid[j+1])
						l.Enter(clamp)
						v = min(max(v, 0), 1)
						l.Leave(clamp)
						out[j] = v
						sums[w] += v
					}
					l.Leave(row)
				}
				l.Leave(compute)
				cur, nxt = nxt, cur
				l.Enter(wait)
				phase[it].Done()
				phase[it].Wait()
				l.Leave(wait)
				l.Leave(iteration)
			}
			l.Leave(worker)
		}(w, l)
	}
	done.Wait()
	barrier.Wait()
	loc.Leave(solve)
	loc.Leave(main)
	if err := m.Close(); err != nil {
		return err
	}
	var sum float64
	for _, s := range sums {
		sum += s
	}
	fmt.Printf("hotstencil: %d workers × %d rows × %d points, %d iterations in %v, checksum %.6g\n", workers, rows, n, iters, time.Since(start).Round(time.Microsecond), sum)
	fmt.Printf("trace: %s\n", m.Path())
	return nil
}

func grid(rows, cols int, v float64) [][]float64 {
	g := make([][]float64, rows)
	for i := range g {
		g[i] = make([]float64, cols)
		for j := range g[i] {
			g[i][j] = v / float64(1+i+j)
		}
	}
	return g
}
