package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// The mpi section: a ping-pong of small messages between two ranks, built
// plain and linked with libhmbtrace-mpi (tracing, and with HMB_ENABLE=0),
// interleaved over the rounds. Each round trip has four MPI calls on its
// critical path (a send and a receive on each rank), so what the wrappers
// add per call is a quarter of what they add per round trip.
func runMPI(o *options, r *report) error {
	for _, need := range []struct{ what, pkg string }{{"mpicc", "libopenmpi-dev"}, {"mpirun", "openmpi-bin"}, {"make", "make"}} {
		if _, err := exec.LookPath(need.what); err != nil {
			r.skip("MPI ping-pong", fmt.Sprintf("no %s (Debian package %s)", need.what, need.pkg))
			return nil
		}
	}
	cmd := exec.Command("make", "-s", "-C", "cshim", "cshim", "bench-mpi-binary")
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the ping-pong: %v\n%s", err, out)
	}
	bin := filepath.Join(o.root, "build", "bench", "pingpong")
	trips := 200_000
	if o.quick {
		trips = 50_000
	}
	subjects := []struct {
		name, path string
		env        []string
	}{
		{"plain", bin + "_plain", nil},
		{"libhmbtrace-mpi", bin, []string{"HMB_OUTPUT=" + filepath.Join(o.work, "pingpong")}},
		{"libhmbtrace-mpi, HMB_ENABLE=0", bin, []string{"HMB_ENABLE=0"}},
	}
	for round := 0; round < o.rounds; round++ {
		for _, s := range subjects {
			ns, err := pingPong(s.path, trips, s.env)
			if err != nil {
				return err
			}
			r.add(s.name, "ns/round trip", ns)
		}
	}
	var plain, traced, off float64
	for _, x := range r.rows {
		switch x.subject {
		case "plain":
			plain = x.median()
		case "libhmbtrace-mpi":
			traced = x.median()
		case "libhmbtrace-mpi, HMB_ENABLE=0":
			off = x.median()
		}
	}
	r.note("8-byte messages, %d round trips per run; 4 MPI calls per round trip: the wrappers add %.0f ns per MPI call tracing, %.0f ns with HMB_ENABLE=0",
		trips, (traced-plain)/4, (off-plain)/4)
	return nil
}

// pingPong runs the ping-pong on two ranks and returns its ns per round trip.
func pingPong(path string, trips int, env []string) (float64, error) {
	args := []string{"--allow-run-as-root", "-np", "2"}
	if runtime.NumCPU() < 2 {
		// Oversubscribed, OpenMPI yields while it waits: slower, but it runs.
		args = append(args, "--oversubscribe")
	}
	for _, kv := range env {
		args = append(args, "-x", kv[:strings.IndexByte(kv, '=')])
	}
	args = append(args, path, strconv.Itoa(trips))
	cmd := exec.Command("mpirun", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "pingpong" && f[2] == "ns" {
			return strconv.ParseFloat(f[1], 64)
		}
	}
	return 0, fmt.Errorf("mpirun %s: no result in\n%s", strings.Join(args, " "), out)
}
