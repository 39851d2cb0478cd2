package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The scale section's calibration: bench/scalecal/scalecal.c, a plain MPI
// program (no hmbtrace) that sends the collective end's messages and no
// more: its trips through a binomial tree of ceil(log2 p) rounds, a size
// and a small part per edge, on a duplicate of MPI_COMM_WORLD, then the
// archive's slots (each rank of a group sends its leader one number and
// gets one back). Run at each rank count right after that count's halo
// runs, it prices issue 35's "O(log p) rounds of small messages" in the
// machine state those runs had (ranks per core, load), where a round costs
// far more than with a core per rank.

// The waits the calibration times: Open MPI's MPI_Waitall, and the
// collective end's own (test, yield, then sleep) where ranks outnumber
// cores.
const (
	calWaitMPI  = "mpi"
	calWaitIdle = "idle"
)

// calReps is how often the calibration repeats its skeleton per wait;
// calBytes is the size of each part it sends (the collective end's bundles
// for halo.c are of this order).
const calReps, calBytes = 9, 1024

// scaleCal is one run of scalecal: its tree's rounds and trips, and per
// wait the medians over its repetitions.
type scaleCal struct {
	ranks, rounds, trips, bytes, group, reps int
	oversubscribed                           bool
	waits                                    map[string]calWait
	// improper says Open MPI ended the run after rank 0 had printed its
	// figures (errImproperExit): they were gathered before MPI_Finalize,
	// so they stand.
	improper bool
}

// calWait is what the calibration measured with one way of waiting: rank
// 0's time for the trips (the root, whose last trip ends the tree's), the
// slowest rank's, rank 0's for the slots (group 0's leader), and the
// thread CPU time the trips and slots took, summed over the ranks and the
// most of one.
type calWait struct {
	trips, slowest, slots, cpuSum, cpuMax float64
}

// totalRounds is the rounds of all trips.
func (c *scaleCal) totalRounds() int { return c.rounds * c.trips }

// perRound is a round's cost with the given wait: rank 0's trips over
// their rounds.
func (c *scaleCal) perRound(wait string) float64 {
	return c.waits[wait].trips / float64(max(c.totalRounds(), 1))
}

// buildScalecal compiles the calibration with mpicc alone.
func buildScalecal(o *options) (string, error) {
	out := filepath.Join(o.work, "scalecal")
	args := []string{"-O2", "-o", out, filepath.Join(o.root, "bench", "scalecal", "scalecal.c")}
	if msg, err := exec.Command("mpicc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the calibration: mpicc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out, nil
}

// runScalecal runs the calibration on p ranks, oversubscribed as the halo
// runs are, with groups of group ranks for the slots. Open MPI ends some
// runs of hundreds of ranks on two cores at their exit (errImproperExit),
// a plain MPI program's too: when rank 0 had printed its figures they
// stand; when not, the run is tried once more.
func runScalecal(bin string, p, reps, group int) (*scaleCal, error) {
	c, err := runScalecalOnce(bin, p, reps, group)
	if errors.Is(err, errImproperExit) {
		fmt.Fprintf(os.Stderr, "bench: scale: mpirun -np %d scalecal: Open MPI saw a rank exit improperly before rank 0 reported; running it again\n", p)
		c, err = runScalecalOnce(bin, p, reps, group)
	}
	return c, err
}

func runScalecalOnce(bin string, p, reps, group int) (*scaleCal, error) {
	cmd := exec.Command("mpirun", "--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(p), bin,
		strconv.Itoa(reps), strconv.Itoa(calBytes), strconv.Itoa(group))
	cmd.Env = append(os.Environ(), "OMPI_MCA_mpi_yield_when_idle=1",
		// As runHalo: PMIx gives up waiting for mpirun after 2 s.
		"OMPI_MCA_orte_allowed_exit_without_sync=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	improper := runErr != nil && strings.Contains(stderr.String(), "exiting improperly")
	if runErr != nil && !improper {
		return nil, fmt.Errorf("mpirun -np %d scalecal: %v\n%s", p, runErr, tail(stderr.String(), 2000))
	}
	c, err := parseScalecal(stdout.String())
	if err != nil && improper {
		return nil, fmt.Errorf("mpirun -np %d scalecal: %w", p, errImproperExit)
	}
	if err != nil {
		return nil, fmt.Errorf("mpirun -np %d scalecal: %v", p, err)
	}
	c.improper = improper
	if c.ranks != p {
		return nil, fmt.Errorf("mpirun -np %d scalecal: it says it ran on %d ranks", p, c.ranks)
	}
	return c, nil
}

// parseScalecal reads rank 0's lines: the header, then one line per wait.
func parseScalecal(out string) (*scaleCal, error) {
	c := &scaleCal{waits: map[string]calWait{}}
	header := false
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "scalecal: ranks "):
			var over int
			if _, err := fmt.Sscanf(line, "scalecal: ranks %d, rounds %d, trips %d, bytes %d, group %d, reps %d, oversubscribed %d",
				&c.ranks, &c.rounds, &c.trips, &c.bytes, &c.group, &c.reps, &over); err != nil {
				return nil, fmt.Errorf("the calibration's header %q: %v", line, err)
			}
			c.oversubscribed, header = over != 0, true
		case strings.HasPrefix(line, "scalecal: wait "):
			var w calWait
			name, rest, ok := strings.Cut(strings.TrimPrefix(line, "scalecal: wait "), ": ")
			if !ok {
				return nil, fmt.Errorf("the calibration's line %q: no wait named", line)
			}
			if _, err := fmt.Sscanf(rest, "trips %g s, slowest rank's trips %g s, slots %g s, CPU sum %g s, CPU max %g s",
				&w.trips, &w.slowest, &w.slots, &w.cpuSum, &w.cpuMax); err != nil {
				return nil, fmt.Errorf("the calibration's line %q: %v", line, err)
			}
			c.waits[name] = w
		}
	}
	if !header {
		return nil, fmt.Errorf("no calibration header (\"scalecal: ranks ...\") in %q", tail(out, 500))
	}
	for _, w := range []string{calWaitMPI, calWaitIdle} {
		if _, ok := c.waits[w]; !ok {
			return nil, fmt.Errorf("the calibration did not report its %q wait in %q", w, tail(out, 500))
		}
	}
	return c, nil
}

// scaleCost holds issue 35's cost rule at one rank count: the collective
// end against the rank files' end plus the end's rounds of small messages
// at the calibration's price, and the CPU the end spends apart from its
// latency.
type scaleCost struct {
	ranks int
	// The slowest rank's end without the replay (clock sync, results,
	// slots, write at exit), and the rank files'.
	end, files float64
	// The same from each rank's call of MPI_Finalize (fromFinalize): the
	// arrival skew counted in both layouts alike.
	finEnd, finFiles float64
	// The end's rounds (trips × ⌈log₂ p⌉) as its timing line says, and the
	// calibration's.
	rounds, calRounds int
	// A round's cost at this rank count: plain MPI (MPI_Waitall) and
	// waiting as the collective end does.
	round, roundIdle float64
	// The results' and the replay's CPU per rank (process CPU over each
	// step): summed over the ranks and the most of one.
	resultsSum, resultsMax, replaySum, replayMax float64
	// The slowest rank's wait-state replay and the archive run's mpirun.
	replay, wall float64
	cores        int
}

// costOf states the cost rule for the archive and rank-files runs of one
// rank count and its calibration.
func costOf(archive, files *haloRun, cal *scaleCal) scaleCost {
	c := scaleCost{ranks: archive.ranks, end: archive.end(), files: files.end(),
		finEnd: archive.fromFinalize(), finFiles: files.fromFinalize(),
		rounds: archive.trips * archive.rounds, calRounds: cal.totalRounds(),
		round: cal.perRound(calWaitMPI), roundIdle: cal.perRound(calWaitIdle),
		replay: archive.slowest(stepReplay), wall: archive.wall, cores: numCores()}
	c.resultsSum, c.resultsMax = sumMax(archive.steps[stepCPU])
	c.replaySum, c.replayMax = sumMax(archive.steps[stepReplayCPU])
	return c
}

func sumMax(v []float64) (sum, most float64) {
	for _, x := range v {
		sum += x
		most = max(most, x)
	}
	return sum, most
}

// bound is the rank files' end plus the end's rounds at plain MPI's price.
func (c scaleCost) bound() float64 { return c.files + float64(c.rounds)*c.round }

// holds says whether the end is within the bound.
func (c scaleCost) holds() bool { return c.end <= c.bound() }

// finBound and the two holds below are the rule counted from
// MPI_Finalize's call (fromFinalize).
func (c scaleCost) finBound() float64 { return c.finFiles + float64(c.rounds)*c.round }

func (c scaleCost) finHolds() bool { return c.finEnd <= c.finBound() }

func (c scaleCost) finHoldsWithWork() bool { return c.finEnd <= c.finBound()+c.workFloor() }

// workFloor is the least wall time the results' work takes on this
// machine: their CPU summed over the ranks, spread over every core. The
// issue's bound leaves that work out; with a core per rank it is the most
// one rank spends, here the ranks' sum shares the cores.
func (c scaleCost) workFloor() float64 { return c.resultsSum / float64(max(c.cores, 1)) }

// holdsWithWork says whether the end is within the bound plus the work's
// floor.
func (c scaleCost) holdsWithWork() bool { return c.end <= c.bound()+c.workFloor() }

// String renders the rule as the scale section's note.
func (c scaleCost) String() string {
	var b strings.Builder
	verdict := "yes"
	if !c.holds() {
		verdict = fmt.Sprintf("no, %.3f s over: %.0f rounds' worth", c.end-c.bound(), (c.end-c.bound())/max(c.round, 1e-12))
	}
	withWork := "yes"
	if !c.holdsWithWork() {
		withWork = fmt.Sprintf("no, %.3f s over", c.end-c.bound()-c.workFloor())
	}
	fmt.Fprintf(&b, "%d ranks: collective end without the replay %.3f s (slowest rank: clock sync, results, slots, write at exit), rank files' %.3f s; "+
		"%d rounds × %.3f ms a round (plain MPI at %d ranks, this run; %.3f ms waiting as the end does) = %.4f s: "+
		"end ≤ rank files + rounds × round: %s",
		c.ranks, c.end, c.files, c.rounds, 1e3*c.round, c.ranks, 1e3*c.roundIdle, float64(c.rounds)*c.round, verdict)
	if c.calRounds != c.rounds {
		fmt.Fprintf(&b, " (the calibration ran %d rounds, not the end's %d: bench/scalecal/scalecal.c no longer matches the collective end)", c.calRounds, c.rounds)
	}
	over := func(ok bool, by float64) string {
		if ok {
			return "yes"
		}
		return fmt.Sprintf("no, %.3f s over", by)
	}
	fmt.Fprintf(&b, "; counted from each rank's call of MPI_Finalize to its trace written, less the replay (the arrival skew in both layouts): "+
		"archive %.3f s, rank files %.3f s: ≤ rank files + rounds × round: %s; + the results' CPU over the cores: %s",
		c.finEnd, c.finFiles, over(c.finHolds(), c.finEnd-c.finBound()), over(c.finHoldsWithWork(), c.finEnd-c.finBound()-c.workFloor()))
	fmt.Fprintf(&b, "; results' CPU %.3f s summed over ranks (at least %.3f s of wall on %d cores), %.4f s the most of one rank; "+
		"end ≤ that bound + the results' CPU over the cores: %s; "+
		"wait-state replay %.3f s the slowest rank, %.1f %% of mpirun's %.2f s, its CPU %.3f s summed, %.4f s the most",
		c.resultsSum, c.workFloor(), c.cores, c.resultsMax, withWork,
		c.replay, 100*c.replay/max(c.wall, 1e-9), c.wall, c.replaySum, c.replayMax)
	return b.String()
}

// record adds the rule's figures as the archive's rows, and the
// calibration's as its own subject.
func (c scaleCost) record(r *report, cal *scaleCal) {
	p := c.ranks
	r.add(scaleArchive, fmt.Sprintf("%d ranks: rounds × calibrated round (plain MPI), s", p), float64(c.rounds)*c.round)
	r.add(scaleArchive, fmt.Sprintf("%d ranks: rank files' end + rounds × round, s", p), c.bound())
	r.add(scaleArchive, fmt.Sprintf("%d ranks: rank files' end + rounds × round + results' CPU over the cores, s", p), c.bound()+c.workFloor())
	r.add(scaleArchive, fmt.Sprintf("%d ranks: results' CPU summed over ranks, s", p), c.resultsSum)
	r.add(scaleArchive, fmt.Sprintf("%d ranks: results' CPU, most of one rank, s", p), c.resultsMax)
	r.add(scaleArchive, fmt.Sprintf("%d ranks: replay's CPU summed over ranks, s", p), c.replaySum)
	r.add(scaleArchive, fmt.Sprintf("%d ranks: slowest replay, %% of mpirun", p), 100*c.replay/max(c.wall, 1e-9))
	recordCal(r, cal)
}

// recordCal adds one calibration run's rows.
func recordCal(r *report, cal *scaleCal) {
	p := cal.ranks
	for _, w := range []string{calWaitMPI, calWaitIdle} {
		x := cal.waits[w]
		s := "calibration, " + w + " wait"
		r.add(s, fmt.Sprintf("%d ranks: %d rounds, rank 0, s", p, cal.totalRounds()), x.trips)
		r.add(s, fmt.Sprintf("%d ranks: a round, ms", p), 1e3*cal.perRound(w))
		r.add(s, fmt.Sprintf("%d ranks: slots, s", p), x.slots)
		r.add(s, fmt.Sprintf("%d ranks: thread CPU summed over ranks, s", p), x.cpuSum)
	}
}

// scaleModel says what the measurements predict for 10^5 ranks with a core
// per rank: the end's rounds at the price of a round with a core per rank
// (the calibration at one rank per core), the results' work on the
// critical path (the most CPU one rank spent, fitted as a + b × ⌈log₂ p⌉
// since the root merges one part more per round), the slots at the
// calibration's price for a group (fitted linearly in the group's ranks),
// and the write; and what this machine cannot show.
//
// merges are the root's merges' CPU by rank count (runRootMerges), nil
// when not measured: with them the root's work at 10^5 ranks is the most
// CPU of one rank at the largest rank count run plus the merges' fit at
// 10^5 ranks (an upper bound: the merges at that rank count are counted
// twice).
func scaleModel(perCore *scaleCal, costs []scaleCost, cals []*scaleCal, write float64, bytesPerRank float64, merges map[int]float64) []string {
	round := perCore.perRound(calWaitMPI)
	notes := []string{fmt.Sprintf("model: a round with a core per rank (the calibration at %d ranks on %d cores) costs %.1f µs (plain MPI) over shared memory",
		perCore.ranks, numCores(), 1e6*round)}
	if len(costs) == 0 || len(cals) == 0 {
		return append(notes, "model: no rank count completed both layouts and the calibration; nothing to fit")
	}
	var xs, ps, ys, gs, ss []float64
	per := make([]string, 0, len(costs))
	for _, c := range costs {
		xs, ps, ys = append(xs, float64(rounds(c.ranks))), append(ps, float64(c.ranks)), append(ys, c.resultsMax)
		per = append(per, fmt.Sprintf("%d ranks %.1f ms", c.ranks, 1e3*c.resultsMax))
	}
	for _, c := range cals {
		gs, ss = append(gs, float64(min(c.ranks, c.group))), append(ss, c.waits[calWaitMPI].slots)
	}
	a, b := leastSquares(xs, ys)
	la, lb := leastSquares(ps, ys)
	s0, s1 := leastSquares(gs, ss)
	const big, aggregate = 100_000, 1024
	trips := costs[len(costs)-1].rounds / max(rounds(costs[len(costs)-1].ranks), 1)
	n := trips * rounds(big)
	work := max(a+b*float64(rounds(big)), slicesMax(ys))
	linear := max(la+lb*big, slicesMax(ys))
	slots := max(s0+s1*aggregate, 0)
	var mergeNote, apart string
	if len(merges) >= 2 {
		apart = " (the root's merges measured apart, below, can)"
		var at float64
		at, mergeNote = rootMergeFit(merges, big)
		work = ys[len(ys)-1] + at
	}
	if len(costs) < 2 {
		notes = append(notes, fmt.Sprintf("model: one rank count measured (%d): no growth with p can be fitted, the figures below take its values as they are", costs[0].ranks))
	}
	notes = append(notes,
		fmt.Sprintf("model: the results' CPU, the most of one rank (the root, which merges a part a round): %s; fit %.2f ms + %.2f ms × ⌈log₂ p⌉ "+
			"(measured with ranks sharing cores, so it includes their waits' system calls: an upper bound); the unified tables the root merges grow with p, "+
			"and a fit %.3f ms + %.5f ms × p gives %.1f s at %d ranks: these runs cannot tell the two apart%s",
			strings.Join(per, ", "), 1e3*a, 1e3*b, 1e3*la, 1e3*lb, linear, big, apart),
		fmt.Sprintf("model: the calibration's slots at rank 0 (a leader answering its group): fit %.3f ms + %.4f ms × ranks in the group", 1e3*s0, 1e3*s1))
	if mergeNote != "" {
		notes = append(notes, mergeNote)
	}
	notes = append(notes,
		fmt.Sprintf("predicts for %d ranks, one per core: %d rounds (%d trips × %d) × %.1f µs = %.1f ms of messages over shared memory "+
			"(a network adds about two latencies a round: %.2f ms at 2 µs), the root's work %.0f ms, slots %.1f ms for groups of %d (fitted with ranks sharing cores: an upper bound), "+
			"then each rank writes its %.0f KB (%.3f s here) into one of %d files: %.2f s in all, against a rank file per rank, %d files created at once "+
			"(what a parallel file system's metadata servers take, which this machine cannot show)",
			big, n, trips, rounds(big), 1e6*round, 1e3*float64(n)*round, 1e3*float64(n)*4e-6, 1e3*work, 1e3*slots, aggregate,
			bytesPerRank/1e3, write, (big+aggregate-1)/aggregate, float64(n)*(round+4e-6)+work+slots+write, big))
	return notes
}

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
