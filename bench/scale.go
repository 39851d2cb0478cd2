package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
)

// The scale section: the collective end of an MPI run (issue 35) at 16,
// 64, 256 and 512 ranks, oversubscribed on this machine's cores, against
// the rank files of HMB_OUTPUT_LAYOUT=rank-files in the same bench run.
// The program is cshim/testdata/mpi/halo.c (a halo exchange, a ring and
// an allreduce per iteration) in a small buffer. Per rank count and layout
// it reports the steps of the collective end each rank timed
// (HMB_COLLECTIVE_TIMING=1: clock sync, the run's results (definitions
// unified, profile and matrix reduced, analyses), the archive's slots, and
// apart from them the wait-state replay, which issue 32 accounts for;
// median and slowest rank), MPI_Finalize as the program
// saw it, the write at exit (halo.c's destructor, after the writer's exit
// handler), files created, bytes written, and each tool's wall time and
// peak RSS on the result. After them a plain MPI program sends the
// collective end's messages at the same rank count (scalecal.go), which
// prices the rounds issue 35's cost rule allows; the per-rank CPU of the
// results and of the replay is reported apart from their latency, since
// here it is multiplied by the ranks per core. A rank count runs once per
// layout (512 ranks on two cores take minutes), so a value's range is that
// of one run.
// Not in the default sections, nor in make test: go run ./bench -sections scale.

// scaleRanks are the rank counts the section runs (-quick: the first two).
var scaleRanks = []int{16, 64, 256, 512}

// setScaleRanks sets scaleRanks from -scale-ranks.
func setScaleRanks(list string) error {
	var ranks []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return fmt.Errorf("-scale-ranks %q: %q is not a number of ranks, 2 or more", list, f)
		}
		ranks = append(ranks, n)
	}
	scaleRanks = ranks
	return nil
}

// scaleTools are the tools run on each result, as the user types them
// after `hmbtrace`; "OUT" is replaced by a fresh output path.
var scaleTools = []struct {
	name string
	args []string
}{
	{"summary", []string{"summary"}},
	{"comm", []string{"comm"}},
	{"variation", []string{"variation"}},
	{"dynamics", []string{"dynamics"}},
	{"report", []string{"report", "-o", "OUT.html"}},
	{"export otf2", []string{"export", "-format", "otf2", "-o", "OUT.otf2"}},
}

// The layouts compared; the reference subject is the rank files.
const (
	scaleArchive   = "archive"
	scaleRankFiles = "rank files"
)

func runScale(o *options, r *report) error {
	if why := missing(prereq{"mpicc", "libopenmpi-dev"}, prereq{"mpirun", "openmpi-bin"}, prereq{"make", "make"}); why != "" {
		r.skip("halo", why)
		return nil
	}
	if err := makeCshim(o, "cshim"); err != nil {
		return err
	}
	hmbtrace, err := buildHmbtrace(o, "hmbtrace")
	if err != nil {
		return err
	}
	halo, err := buildHalo(o)
	if err != nil {
		return err
	}
	cal, err := buildScalecal(o)
	if err != nil {
		return err
	}
	ranks, iters := scaleRanks, 20
	if o.quick {
		ranks = ranks[:min(2, len(ranks))]
	}
	// A round with a core per rank: no rank waits for another's core.
	perCore, err := runScalecal(cal, numCores(), calReps, measure.DefaultAggregate)
	if err != nil {
		return err
	}
	recordCal(r, perCore)
	var costs []scaleCost
	var cals []*scaleCal
	var notes []string
	write, bytesPerRank := math.NaN(), math.NaN()
	for _, p := range ranks {
		runs := map[string]*haloRun{}
		for _, layout := range []string{scaleArchive, scaleRankFiles} {
			run, err := runHalo(o, halo, p, iters, layout, true)
			if errors.Is(err, errImproperExit) {
				// Open MPI's failure, not the collective end's: the other
				// rank counts still measure.
				r.skip(fmt.Sprintf("%d ranks, %s", p, layout), err.Error())
				continue
			}
			if err != nil {
				return err
			}
			run.record(r, layout)
			runs[layout] = run
			if err := runScaleTools(o, r, hmbtrace, run, layout); err != nil {
				return err
			}
		}
		// Right after the halo runs, at their rank count: the same ranks
		// per core, about the same load.
		c, err := runScalecal(cal, p, calReps, measure.DefaultAggregate)
		if errors.Is(err, errImproperExit) {
			r.skip(fmt.Sprintf("%d ranks, calibration", p), err.Error())
			continue
		}
		if err != nil {
			return err
		}
		if c.improper {
			notes = append(notes, fmt.Sprintf("%d ranks: Open MPI ended the calibration's run at its exit, after rank 0 had reported: its figures stand", p))
		}
		a, f := runs[scaleArchive], runs[scaleRankFiles]
		if a == nil || f == nil {
			recordCal(r, c)
			notes = append(notes, fmt.Sprintf("%d ranks: a layout did not complete; the calibration alone: %d rounds × %.3f ms a round (plain MPI; %.3f ms waiting as the end does); load %s",
				p, c.totalRounds(), 1e3*c.perRound(calWaitMPI), 1e3*c.perRound(calWaitIdle), loadAverage()))
			continue
		}
		if math.IsNaN(write) {
			write, bytesPerRank = a.slowest(stepExit), float64(a.onDisk)/float64(a.ranks)
		}
		cost := costOf(a, f, c)
		cost.record(r, c)
		costs, cals = append(costs, cost), append(cals, c)
		notes = append(notes, fmt.Sprintf("%s; load %s", cost, loadAverage()))
	}
	r.note("halo.c, %d iterations, 64 cells, HMB_BUFFER_SIZE=1M, mpirun --oversubscribe on %d cores; times of one run per rank count and layout: \"median\" column is the median rank, the range the fastest to slowest; "+
		"the calibration (bench/scalecal/scalecal.c, plain MPI, %d repetitions, %d-byte parts) runs after them at the same rank count", iters, numCores(), calReps, calBytes)
	merges, err := runRootMerges(o)
	if err != nil {
		notes = append(notes, err.Error())
	}
	for _, n := range notes {
		r.note("%s", n)
	}
	for _, n := range scaleModel(perCore, costs, cals, write, bytesPerRank, merges) {
		r.note("%s", n)
	}
	return nil
}

// loadAverage is the machine's load over the last minute, as uptime says
// it, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// buildHalo compiles halo.c against the libraries just built.
func buildHalo(o *options) (string, error) {
	out := filepath.Join(o.work, "halo")
	lib := filepath.Join(o.root, "build", "lib")
	args := []string{"-O2", "-o", out, filepath.Join(o.root, "cshim", "testdata", "mpi", "halo.c"),
		"-L" + lib, "-Wl,-rpath," + lib, "-Wl,--push-state,--no-as-needed,-lhmbtrace-mpi,--pop-state", "-lhmbtrace"}
	if msg, err := exec.Command("mpicc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building halo: mpicc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out, nil
}

// errImproperExit is Open MPI ending a run because it took a rank that had
// finalized for one exiting without MPI_Finalize.
var errImproperExit = errors.New("the run was ended by Open MPI, which said a rank that had called MPI_Finalize exited improperly")

// The per-rank timings a run reports.
const (
	stepSync      = "clock sync at MPI_Finalize"
	stepResults   = "results: definitions unified, profile and matrix reduced, analyses"
	stepReplay    = "wait-state replay"
	stepSlots     = "archive slots agreed"
	stepFinalize  = "MPI_Finalize"
	stepExit      = "write at exit"
	stepCPU       = "collective end's CPU, results"
	stepReplayCPU = "collective end's CPU, wait-state replay"
	stepInitSync  = "clock sync at MPI_Init"
)

// scaleSteps are the steps every rank reports, in the order of the report.
var scaleSteps = []string{stepInitSync, stepSync, stepResults, stepReplay, stepSlots, stepFinalize, stepExit, stepCPU, stepReplayCPU}

// archiveOnly says which steps the rank files' layout does not take.
func archiveOnly(step string) bool {
	switch step {
	case stepResults, stepReplay, stepSlots, stepCPU, stepReplayCPU:
		return true
	}
	return false
}

// haloRun is what one mpirun of halo left: per step every rank's seconds
// (indexed by rank), the files it wrote, their size and their blocks on
// disk (the archive is sparse: the margins its slots reserve are holes),
// and where.
type haloRun struct {
	ranks               int
	rounds              int // the rounds of a trip, as the timing lines say
	trips               int // the results' trips through the tree, up or down
	dir                 string
	wall                float64
	steps               map[string][]float64
	files, size, onDisk int64
}

// runHalo runs halo on p ranks in the given layout, into a directory of
// its own.
func runHalo(o *options, halo string, p, iters int, layout string, retry bool) (*haloRun, error) {
	dir := filepath.Join(o.work, "scale", fmt.Sprintf("%d-%s", p, strings.ReplaceAll(layout, " ", "-")))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hmbLayout := "archive"
	if layout == scaleRankFiles {
		hmbLayout = "rank-files"
	}
	cmd := exec.Command("mpirun", "--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(p), halo, strconv.Itoa(iters), "64")
	cmd.Env = append(os.Environ(), "HMB_OUTPUT="+dir, "HMB_NAME=halo", "HMB_BUFFER_SIZE=1M", "HMB_OUTPUT_LAYOUT="+hmbLayout,
		"HALO_TIMING=1", "HMB_COLLECTIVE_TIMING=1", "HMB_COLLECTIVE_TIMEOUT=10m",
		// Ranks that wait yield their core: hundreds share two.
		"OMPI_MCA_mpi_yield_when_idle=1",
		// A rank's PMIx_Finalize waits 2 s at most (hard-coded in PMIx
		// 4.2) for mpirun's ack; hundreds of ranks on two cores wait
		// longer, exit, and Open MPI ends the run if it sees one exit
		// before it took its finalize ("exiting improperly", PID 0).
		// Ranks that crash still end it: they exit non-zero.
		"OMPI_MCA_orte_allowed_exit_without_sync=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if err != nil && strings.Contains(stderr.String(), "exiting improperly") {
		// Seen at 256 and 512 ranks before the setting above (PMIx's 2 s
		// finalize wait; docs/performance.md). Kept for an Open MPI that
		// ignores the setting: once more, then give up.
		os.RemoveAll(dir)
		if retry {
			fmt.Fprintf(os.Stderr, "bench: scale: mpirun -np %d (%s): Open MPI saw a rank exit improperly; running it again\n", p, layout)
			return runHalo(o, halo, p, iters, layout, false)
		}
		return nil, fmt.Errorf("mpirun -np %d (%s), twice: %w", p, layout, errImproperExit)
	}
	run := newHaloRun(p)
	run.dir, run.wall = dir, time.Since(start).Seconds()
	if err != nil {
		return nil, fmt.Errorf("mpirun -np %d halo (%s): %v\n%s", p, layout, err, tail(stderr.String(), 2000))
	}
	if err := run.parse(stdout.String(), stderr.String()); err != nil {
		return nil, fmt.Errorf("mpirun -np %d halo (%s): %v", p, layout, err)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		run.files++
		run.size += info.Size()
		run.onDisk += blocksOnDisk(info)
		return nil
	})
	return run, err
}

// newHaloRun returns a run of p ranks with no step reported yet (NaN).
func newHaloRun(p int) *haloRun {
	h := &haloRun{ranks: p, steps: map[string][]float64{}}
	for _, s := range scaleSteps {
		h.steps[s] = slices.Repeat([]float64{math.NaN()}, p)
	}
	return h
}

// numCores is the cores the ranks share.
func numCores() int { return runtime.NumCPU() }

// parse reads halo's "finalize R S" and "exit R S" lines and the shim's
// "hmbtrace: rank R: collective end ..." lines, and checks every rank
// said each.
func (h *haloRun) parse(stdout, stderr string) error {
	set := func(step string, rank int, v float64, line string) error {
		if rank < 0 || rank >= h.ranks {
			return fmt.Errorf("line %q: no rank %d in a run of %d", line, rank, h.ranks)
		}
		h.steps[step][rank] = v
		return nil
	}
	for line := range strings.Lines(stdout) {
		f := strings.Fields(line)
		if len(f) != 3 || (f[0] != "finalize" && f[0] != "exit") {
			continue
		}
		rank, err1 := strconv.Atoi(f[1])
		v, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("halo's line %q: want <step> <rank> <seconds>", strings.TrimSpace(line))
		}
		step := stepFinalize
		if f[0] == "exit" {
			step = stepExit
		}
		if err := set(step, rank, v, line); err != nil {
			return err
		}
	}
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, ": collective end of ") {
			continue
		}
		var rank, size, n, trips, calls int
		var sync, results, replay, slots, cpu, replayCPU, resultsCPU, initSync float64
		if _, err := fmt.Sscanf(line, "hmbtrace: rank %d: collective end of %d ranks, %d rounds, %d trips: clock sync %g s, results %g s, "+
			"wait-state replay %g s, archive slots %g s, replay calls %d, CPU %g s, of it the replay's %g s, results' %g s, MPI_Init's clock sync %g s",
			&rank, &size, &n, &trips, &sync, &results, &replay, &slots, &calls, &cpu, &replayCPU, &resultsCPU, &initSync); err != nil {
			return fmt.Errorf("the shim's timing line %q: %v", line, err)
		}
		h.trips, h.rounds = max(h.trips, trips), max(h.rounds, n)
		for _, x := range []struct {
			step string
			v    float64
		}{{stepInitSync, initSync}, {stepSync, sync}, {stepResults, results}, {stepReplay, replay}, {stepSlots, slots},
			{stepCPU, resultsCPU}, {stepReplayCPU, replayCPU}} {
			if err := set(x.step, rank, x.v, line); err != nil {
				return err
			}
		}
	}
	for _, s := range scaleSteps {
		for rank, v := range h.steps[s] {
			if math.IsNaN(v) {
				return fmt.Errorf("rank %d did not report %q (HMB_COLLECTIVE_TIMING, HALO_TIMING)\nstderr: %s", rank, s, tail(stderr, 2000))
			}
		}
	}
	return nil
}

// end returns the slowest rank's collective end and write without the
// wait-state replay (clock sync, results, slots and the write at exit;
// the rank files' layout has only the first and the last): each rank's
// steps summed, the most of them.
func (h *haloRun) end() float64 {
	most := 0.0
	for rank := range h.ranks {
		t := 0.0
		for _, s := range []string{stepSync, stepResults, stepSlots, stepExit} {
			if v := h.steps[s][rank]; !math.IsNaN(v) {
				t += v
			}
		}
		most = max(most, t)
	}
	return most
}

// fromFinalize returns the slowest rank's time from its call of
// MPI_Finalize to its trace written, less the wait-state replay: each
// rank's MPI_Finalize, as halo times it, and its write at exit. Unlike
// end, it counts the ranks' arrival skew in both layouts alike: the
// archive's first bundle waits for the last rank to arrive, and so does
// the fence in PMPI_Finalize that the rank files' layout passes through
// (end leaves that fence out, and with it the skew, for rank files only).
func (h *haloRun) fromFinalize() float64 {
	most := 0.0
	for rank := range h.ranks {
		t := h.steps[stepFinalize][rank] + h.steps[stepExit][rank]
		if v := h.steps[stepReplay][rank]; !math.IsNaN(v) {
			t -= v
		}
		most = max(most, t)
	}
	return most
}

func (h *haloRun) slowest(step string) float64 { return slices.Max(h.steps[step]) }

// record adds the run's rows: each step's ranks as the samples of one
// row (median rank, fastest to slowest), files and bytes.
func (h *haloRun) record(r *report, layout string) {
	for _, s := range scaleSteps {
		if layout == scaleRankFiles && archiveOnly(s) {
			continue // the rank files take none of these steps
		}
		for _, v := range h.steps[s] {
			r.add(layout, fmt.Sprintf("%d ranks: %s, s", h.ranks, s), v)
		}
	}
	r.add(layout, fmt.Sprintf("%d ranks: slowest rank's collective end + write, without the replay, s", h.ranks), h.end())
	if layout == scaleArchive {
		r.add(layout, fmt.Sprintf("%d ranks: slowest rank's wait-state replay, s", h.ranks), h.slowest(stepReplay))
		r.add(layout, fmt.Sprintf("%d ranks: results' trips through the tree", h.ranks), float64(h.trips))
	}
	r.add(layout, fmt.Sprintf("%d ranks: mpirun, s", h.ranks), h.wall)
	r.add(layout, fmt.Sprintf("%d ranks: files", h.ranks), float64(h.files))
	r.add(layout, fmt.Sprintf("%d ranks: bytes on disk", h.ranks), float64(h.onDisk))
	r.add(layout, fmt.Sprintf("%d ranks: file size, bytes", h.ranks), float64(h.size))
}

// runScaleTools runs every tool on the run's directory (the archive, or
// the directory of rank files: each command reads either) and records
// its wall time and peak RSS.
func runScaleTools(o *options, r *report, hmbtrace string, h *haloRun, layout string) error {
	for _, t := range scaleTools {
		out := filepath.Join(o.work, "scale-out", fmt.Sprintf("%d-%s-%s", h.ranks, strings.ReplaceAll(layout, " ", "-"), strings.ReplaceAll(t.name, " ", "-")))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		args := make([]string, 0, len(t.args)+1)
		for _, a := range t.args {
			args = append(args, strings.ReplaceAll(a, "OUT", out))
		}
		args = append(args, h.dir)
		cmd := exec.Command(hmbtrace, args...)
		var msg strings.Builder
		cmd.Stdout, cmd.Stderr = &msg, &msg
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("hmbtrace %s: %v\n%s", strings.Join(args, " "), err, tail(msg.String(), 2000))
		}
		wall := time.Since(start).Seconds()
		r.add(layout, fmt.Sprintf("%d ranks: %s, s", h.ranks, t.name), wall)
		if mb, ok := peakRSS(cmd.ProcessState); ok {
			r.add(layout, fmt.Sprintf("%d ranks: %s peak RSS, MB", h.ranks, t.name), mb)
		}
		os.RemoveAll(out + ".otf2")
	}
	return nil
}

// rounds returns ceil(log2 p), the rounds of the collective end's trees.
func rounds(p int) int {
	n := 0
	for 1<<n < p {
		n++
	}
	return n
}

// leastSquares fits y = a + b x.
func leastSquares(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return sy / n, 0
	}
	b = (n*sxy - sx*sy) / d
	return (sy - b*sx) / n, b
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
