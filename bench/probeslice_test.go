package main

import (
	"math"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestProbeSlices runs a few alternated slices of both probes and checks
// that each side answers with a plausible cost and keeps its events.
func TestProbeSlices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the C shim")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := &options{quick: true, rounds: 1, work: t.TempDir(), root: root}
	bench, err := cProbes(o)
	if err != nil {
		tracetest.SkipOrFail(t, err.Error())
	}
	// The C probe against libotf2, alternated the same way in one process.
	cp, err := runCPairs(bench, true)
	if err != nil {
		t.Fatal(err)
	}
	if !(cp.hmb > 0 && cp.hmb < 1000 && cp.otf2 > 0 && cp.otf2 < 1000) || cp.pairs != 64 || !(cp.q1 <= cp.ratio && cp.ratio <= cp.q3) {
		t.Errorf("probe_bench pairs: %+v", cp)
	}
	path, err := buildProbeSlices(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := startProbeSlices(o, path)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.runPairs(3)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("%d pairs, want 3", len(ps))
	}
	for i, p := range ps {
		for _, x := range []sliceResult{p.goSlice, p.cSlice} {
			// Above 0 and below a microsecond: a probe that fell back to
			// something slow (a system call per event) would show.
			if !(x.ns > 0 && x.ns < 1000) || x.faults < 0 {
				t.Errorf("pair %d: %+v", i, p)
			}
		}
	}
}

func TestSummarize(t *testing.T) {
	ps := []pair{
		{sliceResult{20, 10}, sliceResult{10, 30}},
		{sliceResult{30, 10}, sliceResult{30, 10}},
		{sliceResult{10, 0}, sliceResult{20, 0}},
	}
	st := summarize(ps)
	if st.goNs != 20 || st.cNs != 20 {
		t.Errorf("medians %v %v, want 20 20", st.goNs, st.cNs)
	}
	if want := []float64{0.5, 1, 2}; len(st.ratios) != 3 || st.ratios[0] != want[0] || st.ratios[1] != want[1] || st.ratios[2] != want[2] {
		t.Errorf("ratios %v, want %v", st.ratios, want)
	}
	events := float64(3*4*sliceIterations) / 1000
	if math.Abs(st.goFaults-20/events) > 1e-12 || math.Abs(st.cFaults-40/events) > 1e-12 {
		t.Errorf("faults per 1000 events %v %v", st.goFaults, st.cFaults)
	}
	if st.goSpread != [2]float64{10, 30} || st.cSpread != [2]float64{10, 30} {
		t.Errorf("spreads %v %v", st.goSpread, st.cSpread)
	}
	if q := quantile(st.ratios, 0.25); q != 0.5 {
		t.Errorf("first quartile %v, want 0.5", q)
	}
}
