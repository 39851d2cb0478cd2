package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// runReport times `hmbtrace report` as a child process on traces of 10⁷
// and 10⁸ events (10⁶ with -quick), on every core and on one, and takes
// the child's peak resident memory from the kernel: the report's memory
// is bounded by its budgets, not by the events, and its locations are
// read in parallel.
func runReport(o *options, r *report) error {
	sizes := []int{10_000_000, 100_000_000}
	if o.quick {
		sizes = []int{1_000_000}
	}
	bin, err := buildHmbtrace(o, "hmbtrace-report")
	if err != nil {
		return err
	}
	cores := runtime.NumCPU()
	for _, size := range sizes {
		dir := filepath.Join(o.work, fmt.Sprintf("report-%d", size))
		path, err := bigTrace(dir, size)
		if err != nil {
			return err
		}
		events, err := keptEvents(path)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%.0e events", float64(size))
		rounds := min(o.rounds, 2)
		if size >= 100_000_000 {
			rounds = 1 // a minute of CPU per run
		}
		for round := 0; round < rounds; round++ {
			for _, procs := range []int{cores, 1} {
				if procs == 1 && cores == 1 && round == 0 {
					r.note("one CPU: no speedup to measure")
				}
				if procs == 1 && cores == 1 {
					continue
				}
				subject := "hmbtrace report"
				if procs == 1 && cores > 1 {
					subject = "hmbtrace report, 1 core"
				}
				run, err := reportChild(bin, path, filepath.Join(dir, "report.html"), procs)
				if err != nil {
					return err
				}
				r.add(subject, "seconds for "+label, run.wall.Seconds())
				r.add(subject, "CPU seconds for "+label, run.cpu.Seconds())
				r.add(subject, "M events/s, "+label, float64(events)/run.wall.Seconds()/1e6)
				r.add(subject, "M events/s per core used, "+label, float64(events)/run.cpu.Seconds()/1e6)
				r.add(subject, "MB max RSS, "+label, float64(run.maxRSS)/1e6)
				r.add(subject, "MB of HTML, "+label, float64(run.html)/1e6)
			}
		}
		// The traces take 2 bytes per event on disk.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	r.note("the trace: 4 locations, a solver loop over 4 calling depths with messages, recorded with EnterAt; %d CPUs", cores)
	r.note("each run is a child process (GOMAXPROCS %d, and 1): wall seconds, CPU seconds (user+sys, from wait4), max RSS (the child's VmHWM, read from /proc every 2 ms); the 1-core row's ratio is the inverse speedup", cores)
	return nil
}

// reportRun is what one run of hmbtrace report took.
type reportRun struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
	html      int64 // bytes
}

// reportChild runs `hmbtrace report` on trace with procs workers.
//
// The child's peak memory is its VmHWM, read from /proc every few
// milliseconds while it runs: ru_maxrss from wait4 would not do, as Go
// starts a child with vfork, and Linux counts the parent's peak (this
// process made the trace in a buffer of hundreds of MB) into the child's
// ru_maxrss when it execs.
func reportChild(bin, trace, out string, procs int) (reportRun, error) {
	cmd := exec.Command(bin, "report", "-procs", fmt.Sprint(procs), "-o", out, trace)
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", procs))
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return reportRun{}, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done, peak := make(chan struct{}), make(chan int64)
	go func() {
		var hwm int64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, ok := vmHWM(status); ok {
				hwm = max(hwm, v)
			}
			select {
			case <-done:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	hwm := <-peak
	if err != nil {
		return reportRun{}, fmt.Errorf("hmbtrace report %s: %v\n%s", trace, err, msg.Bytes())
	}
	if hwm == 0 {
		return reportRun{}, fmt.Errorf("hmbtrace report: no VmHWM in %s while it ran", status)
	}
	st, err := os.Stat(out)
	if err != nil {
		return reportRun{}, err
	}
	return reportRun{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: hwm, html: st.Size()}, nil
}

// vmHWM reads the peak resident set size, in bytes, from a
// /proc/<pid>/status file; false once the process has exited.
func vmHWM(status string) (int64, bool) {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// keptEvents returns how many events the trace at path keeps.
func keptEvents(path string) (uint64, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Story().Kept, nil
}

// bigTrace records about events enter/leave events of a solver-like call
// tree over 4 locations, into dir, in a buffer that keeps them all.
func bigTrace(dir string, events int) (string, error) {
	// About 2 bytes per event are kept: room for all of them.
	size := events*3 + 16<<20
	m, err := measure.Start(measure.Config{IgnoreEnv: true, Output: dir, Name: "report-bench", BufferSize: size, Clock: "monotonic", NoThrottle: true})
	if err != nil {
		return "", err
	}
	names := []string{"main", "timestep", "exchange", "compute", "kernel", "reduce"}
	var rg []measure.Region
	for _, n := range names {
		rg = append(rg, m.Region(n))
	}
	locs := make([]*measure.Location, 4)
	for i := range locs {
		locs[i] = m.Location(fmt.Sprintf("worker %d", i))
	}
	now := m.Now()
	per := events / len(locs)
	for li, l := range locs {
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
		put(true, rg[0], 10)
		for i := 0; n < per-2; i++ {
			put(true, rg[1], 50)
			put(true, rg[2], 20)
			l.Send(locs[(li+1)%len(locs)], 1, 4096)
			put(false, rg[2], 800)
			put(true, rg[3], 20)
			for k := 0; k < 8; k++ {
				put(true, rg[4], 15)
				put(false, rg[4], 400+uint64((i*7+k)%50))
			}
			put(false, rg[3], 10)
			put(true, rg[5], 30)
			put(false, rg[5], 200)
			put(false, rg[1], 10)
		}
		put(false, rg[0], 10)
	}
	if err := m.Close(); err != nil {
		return "", err
	}
	return m.Path(), nil
}
