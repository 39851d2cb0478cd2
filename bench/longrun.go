package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/hmbtrace/hmbtrace/bench/internal/longrun"
)

// longrunChild is the environment variable that makes the bench binary
// (or its test binary) run the long run and print its result as JSON:
// the run has a process of its own, so its peak RSS is its own, not that
// of the sections before it.
const longrunChild = "HMB_BENCH_LONGRUN_CHILD"

// runLongRun drives a long run into a 16 MiB buffer (once: it is long).
func runLongRun(o *options, r *report) error {
	events := int64(1.5e9) // 13-byte basic records: about 1150 times the 16 MiB buffer
	if o.quick {
		events = 2e7
	}
	res, err := longrunInChild(longrun.Options{Events: events, Goroutines: 2, BufferSize: 16 << 20, Output: o.work})
	if err != nil {
		return err
	}
	const s = "hmbtrace"
	r.add(s, "events recorded", float64(res.Events))
	r.add(s, "basic-record trace GiB", float64(res.BasicBytes)/(1<<30))
	r.add(s, "buffer MiB", float64(res.BufferSize)/(1<<20))
	r.add(s, "trace/buffer ratio", res.Ratio())
	r.add(s, "peak RSS MiB", float64(res.PeakRSS)/(1<<20))
	r.add(s, "probe ns/event before reductions", res.NsBefore-res.NsDriver)
	r.add(s, "probe ns/event after reductions", res.NsAfter-res.NsDriver)
	r.note("%d reductions closed depths %v; flat profile equal to the unreduced reference: %v; peak RSS of a process of its own",
		res.Reductions, res.DepthsClosed, res.ProfileExact)
	r.note("probe ns/event: the CPU time of the recording threads per event, less the driver's (%.1f ns/event): after the reductions the events of the closed depths are dropped at the probe",
		res.NsDriver)
	r.note("before and after reductions are one run's blocks before the first reduction and after the last, tens of seconds apart, on a machine whose speed changes by up to 1.7x for milliseconds to seconds, with the calibration of the driver at yet another moment: they compare the moments as much as the probes; the slices compare the two probes themselves")
	rounds, pairs := o.rounds, 192
	if o.quick {
		pairs = 64
	}
	sl, err := runClosedSlices(o, rounds, pairs)
	if err != nil {
		return err
	}
	closedProbeReport(r, sl)
	if !res.ProfileExact {
		return fmt.Errorf("the flat profile differs from the unreduced reference: %v", res.ProfileIssues)
	}
	return nil
}

// longrunInChild runs the long run in a child process: this executable
// again, with longrunChild set.
func longrunInChild(opt longrun.Options) (*longrun.Result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(opt)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), longrunChild+"="+string(spec))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the long run's process: %v", err)
	}
	var res longrun.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("the long run's process printed %s: %v", strconv.Quote(string(out)), err)
	}
	return &res, nil
}

// maybeLongrunChild runs the long run and exits if this process is the
// child of longrunInChild.
func maybeLongrunChild() {
	spec, ok := os.LookupEnv(longrunChild)
	if !ok {
		return
	}
	var opt longrun.Options
	if err := json.Unmarshal([]byte(spec), &opt); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s=%q: %v\n", longrunChild, spec, err)
		os.Exit(2)
	}
	res, err := longrun.Run(opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: long run:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "bench: long run:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
