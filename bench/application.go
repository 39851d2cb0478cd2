package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// runApplication times examples/heat four ways, interleaved: with the
// probes compiled out, instrumented with the defaults, instrumented with
// the measurement disabled at run time (HMB_ENABLE=0), and with the buffer
// in a mapping that outlives the process (HMB_SURVIVE=1).
func runApplication(o *options, r *report) error {
	args := []string{"-quiet"}
	if o.quick {
		args = append(args, "-n", "512", "-iters", "60")
	}
	off, err := buildHeat(o, "hmbtrace_off")
	if err != nil {
		return err
	}
	on, err := buildHeat(o, "")
	if err != nil {
		return err
	}
	subjects := []struct {
		name, bin string
		env       []string
	}{
		{"uninstrumented (-tags hmbtrace_off)", off, nil},
		{"instrumented (defaults)", on, nil},
		{"instrumented, HMB_ENABLE=0", on, []string{"HMB_ENABLE=0"}},
		{"instrumented, HMB_SURVIVE=1", on, []string{"HMB_SURVIVE=1"}},
	}
	for round := 0; round < o.rounds; round++ {
		for _, s := range subjects {
			cmd := exec.Command(s.bin, args...)
			cmd.Env = append(append(os.Environ(), "HMB_OUTPUT="+o.work), s.env...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", s.name, err, out)
			}
			r.add(s.name, "wall ms", float64(time.Since(start).Milliseconds()))
		}
	}
	r.note("heat %v, the whole process: start, run, writing the trace and its summary", args)
	return nil
}
