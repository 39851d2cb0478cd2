package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
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
	// The VM's speed changes between runs (see probeslice.go), so the runs of
	// one round, seconds apart, are compared with each other: the median of
	// those ratios is steadier than a ratio of medians.
	var wallRatios, cpuRatios []float64
	for round := 0; round < o.rounds; round++ {
		var wall, cpu [2]float64 // uninstrumented, instrumented (defaults)
		for i, s := range subjects {
			cmd := exec.Command(s.bin, args...)
			cmd.Env = append(append(os.Environ(), "HMB_OUTPUT="+o.work), s.env...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", s.name, err, out)
			}
			w := float64(time.Since(start).Microseconds()) / 1e3
			c := float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Microseconds()) / 1e3
			r.add(s.name, "wall ms", w)
			r.add(s.name, "CPU ms", c)
			if i < 2 {
				wall[i], cpu[i] = w, c
			}
		}
		wallRatios = append(wallRatios, wall[1]/wall[0])
		cpuRatios = append(cpuRatios, cpu[1]/cpu[0])
	}
	r.note("heat %v, the whole process: start, run, writing the trace and its summary; CPU ms is user+sys of the process", args)
	r.note("instrumented (defaults) / uninstrumented within a round, the median over %d rounds: wall %.3f (%.3f–%.3f), CPU %.3f (%.3f–%.3f)",
		len(wallRatios), median(wallRatios), slices.Min(wallRatios), slices.Max(wallRatios),
		median(cpuRatios), slices.Min(cpuRatios), slices.Max(cpuRatios))
	return nil
}
