package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// The mpi section: what the PMPI wrappers add to an MPI call, measured two
// ways, each built plain and linked with libhmbtrace-mpi and interleaved
// over the rounds.
//
// The ping-pong bounces small messages between two ranks (and is run with
// HMB_ENABLE=0 too); each round trip has four MPI calls, a send and a
// receive on each rank. A blocking call is recorded whole when it returns
// (cshim/lib/mpicall.h), a receive by the thread's next probe
// (cshim/lib/mpicall.c), so what lies on the round trip's critical path is
// a rank's work from its receive's return to its send's start: two clock
// reads and the receive staged; the send's probe, which writes both calls,
// overlaps the other rank's work. The time includes the scheduling of two
// processes. selfsend is one rank's MPI_Send to itself and the MPI_Recv
// that takes it, best of many short repeats: what the wrappers add to a
// call alone, a region and a message per call, all of it on the path;
// selfsend_pairs alternates it with the same calls through PMPI_ in one
// process, and does the same for MPI_Irecv, MPI_Isend and their two
// MPI_Wait, recorded whole when they return as a blocking call is, their
// request records sharing their leave's clock read. The
// notes give the added ns per call: the median over the rounds of traced
// minus plain of the same round (a row needs a plain one to take its ratio
// to). A note gives that work alone, timed without MPI
// (cshim/bench/mpi_critical.c), the wrappers' way and the two probes' way
// of 5e847ce: a figure the scheduling of two ranks cannot move.
// The floor is the ping-pong with the wrappers reduced to their two clock
// reads per call (libhmbtrace-mpi built with HMBMPI_ABLATE=1, nothing
// recorded): what any wrapper that takes the timestamps a trace needs
// adds. pingpong.c reports the mean of the middle half of its round trips,
// which a rank descheduled now and then leaves alone.
// cshim/bench/mpi_ab.sh compares two builds the same way as this section,
// cshim/bench/mpi_ablate.sh the wrappers' work step by step.
// selfSendGoal is the ns per call a blocking send or receive to self may
// add (issue 36): the note says how far the wrappers are from it.
const selfSendGoal = 30

func runMPI(o *options, r *report) error {
	if why := missing(prereq{"mpicc", "libopenmpi-dev"}, prereq{"mpirun", "openmpi-bin"}, prereq{"make", "make"}, prereq{"gcc", "gcc"}); why != "" {
		r.skip("MPI ping-pong", why)
		return nil
	}
	if err := makeCshim(o, "cshim", "bench-mpi-binary"); err != nil {
		return fmt.Errorf("building the ping-pong: %w", err)
	}
	bench := filepath.Join(o.root, "build", "bench")
	critical, err := buildCritical(o)
	if err != nil {
		return err
	}
	floorLib, err := buildClockOnly(o)
	if err != nil {
		return err
	}
	trips, rounds := 200_000, 10_000
	if o.quick {
		trips = 50_000
	}
	traced := []string{"HMB_OUTPUT=" + filepath.Join(o.work, "pingpong")}
	var addedOn, addedOff, addedFloor, addedSelf, addedPairs, addedPairsFloor, addedIsend, onPathWhole, onPathTwo []float64
	for round := 0; round < o.rounds; round++ {
		plain, err := pingPong(filepath.Join(bench, "pingpong_plain"), trips, nil)
		if err != nil {
			return err
		}
		on, err := pingPong(filepath.Join(bench, "pingpong"), trips, traced)
		if err != nil {
			return err
		}
		off, err := pingPong(filepath.Join(bench, "pingpong"), trips, []string{"HMB_ENABLE=0"})
		if err != nil {
			return err
		}
		floor, err := pingPong(filepath.Join(bench, "pingpong"), trips, append([]string{"LD_LIBRARY_PATH=" + floorLib}, traced...))
		if err != nil {
			return err
		}
		r.add("plain", "ns/round trip", plain)
		r.add("libhmbtrace-mpi", "ns/round trip", on)
		r.add("libhmbtrace-mpi, HMB_ENABLE=0", "ns/round trip", off)
		r.add("wrappers reading the clock only", "ns/round trip", floor)
		addedOn = append(addedOn, (on-plain)/4)
		addedOff = append(addedOff, (off-plain)/4)
		addedFloor = append(addedFloor, (floor-plain)/4)

		self, err := selfSend(filepath.Join(bench, "selfsend_plain"), rounds, nil)
		if err != nil {
			return err
		}
		selfOn, err := selfSend(filepath.Join(bench, "selfsend"), rounds, traced)
		if err != nil {
			return err
		}
		r.add("plain", "ns/send+recv to self", self)
		r.add("libhmbtrace-mpi", "ns/send+recv to self", selfOn)
		addedSelf = append(addedSelf, (selfOn-self)/2)
		sp, err := selfSendPairs(filepath.Join(bench, "selfsend_pairs"), o.quick, traced)
		if err != nil {
			return err
		}
		r.add("PMPI_Send+PMPI_Recv to self, alternated", "ns/send+recv to self", sp.blocking.plain)
		r.add("libhmbtrace-mpi, alternated with PMPI_", "ns/send+recv to self", sp.blocking.traced)
		// Named plain, the section's reference, so that the row after it has its ratio.
		r.add("plain", "ns/irecv+isend+2 wait to self", sp.nonblocking.plain)
		r.add("libhmbtrace-mpi, alternated with PMPI_", "ns/irecv+isend+2 wait to self", sp.nonblocking.traced)
		addedPairs = append(addedPairs, sp.blocking.added)
		addedIsend = append(addedIsend, sp.nonblocking.added)
		// The same with the wrappers reduced to their clock reads: what the probe's work adds is the difference.
		spFloor, err := selfSendPairs(filepath.Join(bench, "selfsend_pairs"), o.quick, append([]string{"LD_LIBRARY_PATH=" + floorLib}, traced...))
		if err != nil {
			return err
		}
		addedPairsFloor = append(addedPairsFloor, spFloor.blocking.added)

		ways, err := criticalPath(critical, filepath.Join(o.work, "critical"))
		if err != nil {
			return err
		}
		onPathWhole = append(onPathWhole, ways["whole"])
		onPathTwo = append(onPathTwo, ways["two probes"])
	}
	r.note("ping-pong: 8-byte messages, %d round trips per run (mean of the middle half), 4 MPI calls per round trip: the wrappers add %.0f ns per MPI call tracing, %.0f ns with HMB_ENABLE=0; "+
		"the floor, wrappers that only read the clock before and after each call (two RDTSC), adds %.0f",
		trips, median(addedOn), median(addedOff), median(addedFloor))
	r.note("to self: 1 rank, best of 30 repeats of %d sends and receives, 2 MPI calls each: the wrappers add %.1f ns per MPI call tracing",
		rounds, median(addedSelf))
	r.note("to self, alternated in one process (cshim/bench/selfsend_pairs.c: slices of MPI_Send+MPI_Recv through the wrappers and through PMPI_, thread CPU time): "+
		"the wrappers add %.1f ns per MPI call, the median over the rounds of the median within pairs (%.1f–%.1f); two clock reads per call, the message sharing the enter's or the leave's; "+
		"the wrappers reduced to those two reads add %.1f, so the call's region and message, recorded by one fused probe, %.1f (goal of issue 36: %d in all)",
		median(addedPairs), slices.Min(addedPairs), slices.Max(addedPairs), median(addedPairsFloor), median(addedPairs)-median(addedPairsFloor), selfSendGoal)
	r.note("non-blocking to self, alternated the same way (MPI_Irecv, MPI_Isend and the two MPI_Wait that complete them): the wrappers add %.1f ns per MPI call (%.1f–%.1f); "+
		"two clock reads per call, each recorded whole when it returns (hmb_mpi_req_call), its request's record sharing the leave's read",
		median(addedIsend), slices.Min(addedIsend), slices.Max(addedIsend))
	r.note("on a ping-pong's critical path (cshim/bench/mpi_critical.c: from a receive's return to the next send, without MPI): "+
		"%.1f ns per half round trip the wrappers' way (hmb_mpi_call, which stages the receive, and a clock read), %.1f ns with two probes (hmb_recv_leave, hmb_enter_send)",
		median(onPathWhole), median(onPathTwo))
	return nil
}

// buildCritical builds cshim/bench/mpi_critical.c against the library
// just built, into the work directory.
func buildCritical(o *options) (string, error) {
	out := filepath.Join(o.work, "mpi_critical")
	lib := filepath.Join(o.root, "build", "lib")
	cmd := exec.Command("gcc", "-O2", "-I"+filepath.Join(o.root, "cshim", "lib"), "-o", out,
		filepath.Join(o.root, "cshim", "bench", "mpi_critical.c"), "-L"+lib, "-Wl,-rpath,"+lib, "-lhmbtrace")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building mpi_critical: %v\n%s", err, msg)
	}
	return out, nil
}

// buildClockOnly builds libhmbtrace-mpi with its wrappers reduced to
// their clock reads (HMBMPI_ABLATE=1, cshim/mpi/mpi_internal.h) into a
// directory of the work directory, next to a link to the libhmbtrace just
// built, and returns that directory, for LD_LIBRARY_PATH.
func buildClockOnly(o *options) (string, error) {
	dir := filepath.Join(o.work, "mpi-clock-only")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lib := filepath.Join(o.root, "build", "lib")
	link := filepath.Join(dir, "libhmbtrace.so")
	os.Remove(link)
	if err := os.Symlink(filepath.Join(lib, "libhmbtrace.so"), link); err != nil {
		return "", err
	}
	src := filepath.Join(o.root, "cshim")
	args := []string{"-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wl,-soname,libhmbtrace-mpi.so", "-DHMBMPI_ABLATE=1",
		"-I" + filepath.Join(src, "lib"), "-I" + filepath.Join(src, "mpi"), "-o", filepath.Join(dir, "libhmbtrace-mpi.so")}
	for _, f := range []string{"hmbtrace_mpi.c", "rma.c", "wrappers_gen.c", "fortran_gen.c"} {
		args = append(args, filepath.Join(src, "mpi", f))
	}
	args = append(args, "-L"+lib, "-Wl,-rpath,$ORIGIN", "-lhmbtrace")
	if msg, err := exec.Command("mpicc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the clock-only wrappers: mpicc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return dir, nil
}

// criticalPath runs mpi_critical and returns its ns on the path per way.
func criticalPath(path, out string) (map[string]float64, error) {
	cmd := exec.Command(path, "100000")
	cmd.Env = append(os.Environ(), "HMB_OUTPUT="+out)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", path, err, msg)
	}
	ways := map[string]float64{}
	for _, line := range strings.Split(string(msg), "\n") {
		// mpi_critical <way>: on the path <ns> ns, off it ...
		rest, ok := strings.CutPrefix(line, "mpi_critical ")
		way, rest, ok2 := strings.Cut(rest, ": on the path ")
		if !ok || !ok2 {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, line, err)
		}
		ways[way] = v
	}
	if len(ways) != 2 {
		return nil, fmt.Errorf("%s: want the two ways' lines in\n%s", path, msg)
	}
	return ways, nil
}

// pingPong runs the ping-pong on two ranks and returns its ns per round trip.
func pingPong(path string, trips int, env []string) (float64, error) {
	args := []string{"-np", "2"}
	if runtime.NumCPU() < 2 {
		// Oversubscribed, OpenMPI yields while it waits: slower, but it runs.
		args = append(args, "--oversubscribe")
	}
	return mpiRun("pingpong", path, args, env, strconv.Itoa(trips))
}

// selfSend runs selfsend on one rank and returns its best ns per send and
// receive over 30 repeats of rounds.
func selfSend(path string, rounds int, env []string) (float64, error) {
	return mpiRun("selfsend", path, []string{"-np", "1"}, env, strconv.Itoa(rounds), "30")
}

// pairsLine is one pattern's line of selfsend_pairs: ns per round through
// PMPI_ and through the wrappers, medians of alternated slices, and the
// wrappers' added ns per call, the median within a pair.
type pairsLine struct{ plain, traced, added float64 }

// selfPairs is what selfsend_pairs measured: a blocking send and receive
// per round, and the non-blocking calls and their completions.
type selfPairs struct{ blocking, nonblocking pairsLine }

// selfSendPairs runs selfsend_pairs on one rank.
func selfSendPairs(path string, quick bool, env []string) (selfPairs, error) {
	pairs := "200"
	if quick {
		pairs = "50"
	}
	args := []string{"--allow-run-as-root", "-np", "1"}
	for _, kv := range env {
		args = append(args, "-x", kv[:strings.IndexByte(kv, '=')])
	}
	args = append(args, path, pairs, "2000")
	cmd := exec.Command("mpirun", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return selfPairs{}, fmt.Errorf("mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var sp selfPairs
	found := 0
	for _, line := range strings.Split(string(out), "\n") {
		for _, p := range []struct {
			name string
			l    *pairsLine
		}{{"selfsend", &sp.blocking}, {"isend", &sp.nonblocking}} {
			var n int
			var rounds int64
			var q1, q3 float64
			if _, err := fmt.Sscanf(line, p.name+" pairs %d rounds %d plain %g traced %g added %g quartiles %g %g",
				&n, &rounds, &p.l.plain, &p.l.traced, &p.l.added, &q1, &q3); err == nil {
				found++
			}
		}
	}
	if found != 2 {
		return sp, fmt.Errorf("mpirun %s: want the selfsend and isend lines in\n%s", strings.Join(args, " "), out)
	}
	return sp, nil
}

// mpiRun runs path under mpirun with the variables env and returns the
// number of its output line "<name> <number> ns ...".
func mpiRun(name, path string, mpiArgs, env []string, progArgs ...string) (float64, error) {
	args := append([]string{"--allow-run-as-root"}, mpiArgs...)
	for _, kv := range env {
		args = append(args, "-x", kv[:strings.IndexByte(kv, '=')])
	}
	args = append(append(args, path), progArgs...)
	cmd := exec.Command("mpirun", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == name && f[2] == "ns" {
			return strconv.ParseFloat(f[1], 64)
		}
	}
	return 0, fmt.Errorf("mpirun %s: no result in\n%s", strings.Join(args, " "), out)
}
