package main

import "testing"

// TestParseOMPBenchAmidMessages checks that openmp_bench's result is read
// when the measurement says something of its own before it (an earlier
// run's files moved aside).
func TestParseOMPBenchAmidMessages(t *testing.T) {
	out := "hmbtrace: an earlier run's openmp_bench_gcc.0.hmb moved to x/openmp_bench_gcc.run-20261206-183122/ (a new run never replaces them)\n" +
		"parallel region 18565 ns, barrier 7926 ns, task 631 ns, probe 24.8 ns/event (best of 5 rounds of 500)\n"
	res, err := parseOMPBench(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.ns["parallel region"] != 18565 || res.ns["task"] != 631 {
		t.Errorf("read %v", res.ns)
	}
}
