package cshim_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestOpenMPBenchProbeRecords: the C probe openmp_bench times as the unit
// of the OpenMP adapter's cost records every event, in the default
// configuration: none of its regions is throttled, every iteration's
// enters and leaves are kept. (One pair of regions for all its iterations
// was switched off after 4096 visits, and the unit was a throttled
// probe's.)
func TestOpenMPBenchProbeRecords(t *testing.T) {
	const n, rounds = 3000, 5 // openmp_bench's rounds; 3000 iterations: 3 pairs of regions a round
	build := library(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "openmp_bench")
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-omp")
	if err != nil {
		t.Fatalf("pkg-config --cflags --libs hmbtrace-omp: %v\n%s", err, pc)
	}
	args := append([]string{"-O2", "-g", "-fopenmp", "-DHMB_PROBE", "-o", prog, filepath.Join(root, "cshim", "bench", "openmp_bench.c")},
		strings.Fields(string(pc))...)
	if msg, err := run(dir, nil, "gcc", args...); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	p := program{path: prog, out: filepath.Join(dir, "hmb-out")}
	out, _ := p.run(t, []string{"OMP_NUM_THREADS=2"}, "3000")
	if !strings.Contains(out, " ns/event (best of 5 rounds of 3000)") {
		t.Fatalf("openmp_bench printed %q", out)
	}
	files, _ := filepath.Glob(filepath.Join(p.out, "*.hmb"))
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	f, err := tracefile.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if th := f.Throttled(); len(th) > 0 {
		t.Errorf("throttled regions %+v, want none", th)
	}
	// Kept, per region of the probe loop: its enters and leaves.
	kept := map[string]int{}
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			if (e.Kind == encode.KindEnter || e.Kind == encode.KindLeave) && strings.HasPrefix(f.RegionName(e.Region), "bench ") {
				kept[f.RegionName(e.Region)]++
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for name, k := range kept {
		if k > 2*1000 {
			t.Errorf("region %s: %d events, more than a pair of regions serves (2 x 1000)", name, k)
		}
		total += k
	}
	if want := 4 * n * rounds; total != want {
		t.Errorf("%d events of the probe loop's regions kept, want %d", total, want)
	}
}
