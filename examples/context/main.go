// Context instruments a small pipeline through a call chain the Go way: the
// regions are package-level measure.Sites, each function opens its own with
// `defer measure.StartRegion(ctx, site).End()` or measure.Do, and the only
// thing passed down is the context.Context the code passes anyway. No
// signature names a *measure.Location or a region table; goroutines started
// along the way record on lanes of their own, found from the goroutine.
//
//	go run ./examples/context [-jobs 64] [-n 200000]
//
// The measurement is the one measure.Start made (measure.Current); one
// carried by the context (measure.NewContext) would take precedence. The
// HMB_* environment variables configure it.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"sync"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var (
	regionPipeline = measure.NewRegion("pipeline")
	regionGenerate = measure.NewRegion("generate")
	regionProcess  = measure.NewRegion("process")
	regionSort     = measure.NewRegion("sort")
	regionStats    = measure.NewRegion("stats")
	regionMerge    = measure.NewRegion("merge")
)

func main() {
	jobs := flag.Int("jobs", 64, "jobs, one goroutine each")
	n := flag.Int("n", 200000, "values per job")
	flag.Parse()
	if err := run(*jobs, *n); err != nil {
		fmt.Fprintln(os.Stderr, "context:", err)
		os.Exit(1)
	}
}

func run(jobs, n int) error {
	cfg, err := measure.ConfigFromEnv()
	if err != nil {
		return err
	}
	if cfg.Name == "" {
		cfg.Name = "context"
	}
	m, err := measure.Start(cfg)
	if err != nil {
		return err
	}
	defer m.Close()

	// A context with a deadline, as a server's request would have: the
	// regions need nothing from it, the code below passes it on anyway.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mean := pipeline(ctx, jobs, n)
	if err := m.Close(); err != nil {
		return err
	}
	st := m.Stats()
	fmt.Printf("mean of the medians %.4f; %d lanes, %d events recorded, %d kept\n", mean, len(st.Locations), st.Recorded, st.Kept)
	fmt.Printf("trace: %s\n\n", m.Path())
	f, err := tracefile.Open(m.Path())
	if err != nil {
		return err
	}
	defer f.Close()
	return summary.Write(os.Stdout, []*tracefile.File{f})
}

// pipeline runs the jobs, a goroutine each, and merges their results.
func pipeline(ctx context.Context, jobs, n int) float64 {
	defer measure.StartRegion(ctx, regionPipeline).End()
	medians := make([]float64, jobs)
	var wg sync.WaitGroup
	for j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			medians[j] = process(ctx, j, n)
		}()
	}
	wg.Wait()
	var mean float64
	measure.Do(ctx, regionMerge, func(context.Context) {
		for _, v := range medians {
			mean += v
		}
		mean /= float64(len(medians))
	})
	return mean
}

// process is one job: generate, sort, and take the median.
func process(ctx context.Context, job, n int) float64 {
	defer measure.StartRegion(ctx, regionProcess).End()
	xs := generate(ctx, job, n)
	measure.Do(ctx, regionSort, func(context.Context) { sort.Float64s(xs) })
	return median(ctx, xs)
}

func generate(ctx context.Context, job, n int) []float64 {
	defer measure.StartRegion(ctx, regionGenerate).End()
	xs := make([]float64, n)
	x := uint64(job)*0x9e3779b97f4a7c15 + 1
	for i := range xs {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		xs[i] = math.Sqrt(float64(x>>11) / (1 << 53))
	}
	return xs
}

func median(ctx context.Context, sorted []float64) float64 {
	defer measure.StartRegion(ctx, regionStats).End()
	return sorted[len(sorted)/2]
}
