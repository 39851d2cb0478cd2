package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/bench/internal/cputime"
	"github.com/hmbtrace/hmbtrace/export/chrome"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/convert"
	"github.com/hmbtrace/hmbtrace/export/pprof"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// runTools times the tools that read a trace on 1 worker and on as many as
// the machine has (GOMAXPROCS, at most 2 here: the machine's cores), on the
// trace of 2 ranks × 4 locations with 10⁷ events (10⁶ with -quick). Each
// tool and worker count alternate within a round. It prints the events per
// second of wall time, the events per CPU-second (what one core does; the
// CPU time is the process's, from getrusage) and the speedup. dynamics,
// whose analysis of the series costs more than reading them, reads a
// trace of a tenth of the events.
func runTools(o *options, r *report) error {
	events := 10_000_000
	if o.quick {
		events = 1_000_000
	}
	paths, err := toolsTrace(o, events, 2, 4)
	if err != nil {
		return err
	}
	var files []*tracefile.File
	for _, p := range paths {
		f, err := tracefile.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		files = append(files, f)
	}
	// dynamics analyses a series per location over the iterations, which
	// costs more than reading them: it gets a tenth of the events.
	smallPaths, err := toolsTrace(o, events/10, 2, 4)
	if err != nil {
		return err
	}
	var small []*tracefile.File
	for _, p := range smallPaths {
		f, err := tracefile.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		small = append(small, f)
	}
	var kept, keptSmall uint64
	for _, f := range files {
		kept += f.Story().Kept
	}
	for _, f := range small {
		keptSmall += f.Story().Kept
	}
	many := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	if many < 2 {
		r.skip("2 workers", fmt.Sprintf("GOMAXPROCS is %d", runtime.GOMAXPROCS(0)))
	}
	tools := []struct {
		name   string
		run    func(procs int) error
		events uint64 // of the trace it reads, if not the large one
	}{
		{"export otf2", func(procs int) error {
			dir := filepath.Join(o.work, "archive")
			defer os.RemoveAll(dir)
			_, err := convert.ExportProcs(dir, files, otf2.Options{}, procs)
			return err
		}, 0},
		{"export chrome", func(procs int) error {
			return toFile(filepath.Join(o.work, "trace.json"), func(w io.Writer) error { return chrome.ExportProcs(w, files, procs) })
		}, 0},
		{"export pprof", func(procs int) error {
			return toFile(filepath.Join(o.work, "trace.pprof"), func(w io.Writer) error { return pprof.ExportProcs(w, files, procs) })
		}, 0},
		{"variation", func(procs int) error {
			_, err := variation.Analyze(files, variation.Options{Procs: procs})
			return err
		}, 0},
		{"dynamics", func(procs int) error {
			_, err := trend.Analyze(small, trend.Options{Procs: procs})
			return err
		}, keptSmall},
		{"comm", func(procs int) error {
			_, err := comm.FromFilesProcs(files, procs)
			return err
		}, 0},
		// summary reads no events: its work is opening the files, which
		// checks their checksums, and the flat profiles.
		{"summary", func(procs int) error {
			fs := make([]*tracefile.File, len(paths))
			err := parallel.Do(procs, len(paths), func(i int) (err error) {
				fs[i], err = tracefile.Open(paths[i])
				return err
			})
			for _, f := range fs {
				if f != nil {
					defer f.Close()
				}
			}
			if err != nil {
				return err
			}
			return summary.Write(io.Discard, fs)
		}, 0},
	}
	counts := []int{1}
	if many >= 2 {
		counts = append(counts, many)
	}
	for round := 0; round < o.rounds; round++ {
		for _, tool := range tools {
			var wall [2]float64
			for k, procs := range counts {
				runtime.GC()
				cpu0 := cpuSeconds()
				start := time.Now()
				if err := tool.run(procs); err != nil {
					return fmt.Errorf("%s with %d workers: %w", tool.name, procs, err)
				}
				wall[k] = time.Since(start).Seconds()
				cpu := cpuSeconds() - cpu0
				n := kept
				if tool.events > 0 {
					n = tool.events
				}
				r.add(tool.name, fmt.Sprintf("Mevents/s, %d worker(s)", procs), float64(n)/wall[k]/1e6)
				r.add(tool.name, fmt.Sprintf("Mevents/CPU-s, %d worker(s)", procs), float64(n)/cpu/1e6)
			}
			if len(counts) > 1 {
				r.add(tool.name, fmt.Sprintf("speedup %d vs 1 worker", counts[1]), wall[0]/wall[1])
			}
		}
	}
	r.note("the trace: %d files (ranks) × 4 locations, %s events kept (dynamics: %s); a solver loop over 4 calling depths with messages between locations and ranks", len(files), fmtCount(kept), fmtCount(keptSmall))
	r.note("wall time on a machine shared with other work is noisy; Mevents/CPU-s is what one core does, from getrusage, and falls when workers wait")
	return nil
}

// toFile writes path through a buffer, as hmbtrace export does.
func toFile(path string, write func(io.Writer) error) error {
	defer os.Remove(path)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuSeconds is the user and system time of the process so far.
func cpuSeconds() float64 { return cputime.Process().Seconds() }

func fmtCount(n uint64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.3g M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.3g k", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// toolsTrace records the trace of ranks processes with locs locations each,
// events in all: the calls of a solver loop (as bigTrace's), a message to
// the next location of the process and, on the first location, to the
// next rank, each location and rank at its own pace so that the analyses
// find something. It returns the files.
func toolsTrace(o *options, events, ranks, locs int) ([]string, error) {
	var paths []string
	for rank := 0; rank < ranks; rank++ {
		m, err := measure.Start(measure.Config{IgnoreEnv: true, Output: o.work, Name: "tools-bench", Rank: rank, BufferSize: 512 << 20, Clock: "monotonic", NoThrottle: true})
		if err != nil {
			return nil, err
		}
		var rg []measure.Region
		for _, n := range []string{"main", "timestep", "exchange", "compute", "kernel", "MPI_Allreduce"} {
			rg = append(rg, m.Region(n))
		}
		ls := make([]*measure.Location, locs)
		for i := range ls {
			ls[i] = m.Location(fmt.Sprintf("worker %d", i))
		}
		now := m.Now()
		per := events / ranks / locs
		for li, l := range ls {
			t := now
			n := 0
			put := func(enter bool, r measure.Region, dt uint64) {
				t += dt
				if enter {
					l.EnterAt(r, t)
				} else {
					l.LeaveAt(r, t)
				}
				n++
			}
			message := func(msg measure.Message, dt uint64) {
				t += dt
				l.MessageAt(msg, t)
				n++
			}
			put(true, rg[0], 10)
			for i := 0; n < per-2; i++ {
				put(true, rg[1], 50)
				put(true, rg[2], 20)
				message(measure.Message{Peer: uint64(ls[(li+1)%locs].ID()), Tag: 1, Bytes: 4096}, 30)
				message(measure.Message{Recv: true, Peer: uint64(ls[(li+locs-1)%locs].ID()), Tag: 1, Bytes: 4096}, 300)
				if li == 0 && ranks > 1 {
					message(measure.Message{Peer: uint64((rank + 1) % ranks), PeerIsRank: true, Tag: 2, Bytes: 1 << 16}, 20)
					message(measure.Message{Recv: true, Peer: uint64((rank + ranks - 1) % ranks), PeerIsRank: true, Tag: 2, Bytes: 1 << 16}, 400)
				}
				put(false, rg[2], 100)
				put(true, rg[3], 20)
				for k := 0; k < 8; k++ {
					put(true, rg[4], 15)
					d := 400 + uint64((i*7+k+li*3+rank*5)%50)
					if i%97 == 13 {
						d *= 2
					}
					put(false, rg[4], d)
				}
				put(false, rg[3], 10)
				put(true, rg[5], 30)
				put(false, rg[5], 200+uint64((i+li)%70))
				put(false, rg[1], 10)
			}
			put(false, rg[0], 10)
		}
		if err := m.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, m.Path())
	}
	return paths, nil
}
