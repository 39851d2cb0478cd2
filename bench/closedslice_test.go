package main

import (
	"strings"
	"testing"
)

// TestClosedSlices runs a few alternated slices of the kept and the
// closed-level probe and checks that each side answers with a plausible
// cost; runClosedSlices itself checks where every event went.
func TestClosedSlices(t *testing.T) {
	o := &options{quick: true, rounds: 2, work: t.TempDir()}
	res, err := runClosedSlices(o, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(res.rounds))
	}
	for i, ps := range res.rounds {
		if len(ps) != 3 {
			t.Fatalf("round %d: %d pairs, want 3", i, len(ps))
		}
		for j, p := range ps {
			for _, x := range []sliceResult{p.goSlice, p.cSlice} {
				// Above 0 and below a microsecond: a probe that fell back
				// to something slow would show.
				if !(x.ns > 0 && x.ns < 1000) || x.faults < 0 {
					t.Errorf("round %d pair %d: %+v", i, j, p)
				}
			}
		}
	}
}

// TestClosedProbeReport checks the rows and notes made of the pairs: each
// round's medians, the closed side as summarize's Go side.
func TestClosedProbeReport(t *testing.T) {
	res := &closedSliceResult{cpu: 1, rounds: [][]pair{
		{{goSlice: sliceResult{10, 0}, cSlice: sliceResult{20, 2}}, {goSlice: sliceResult{12, 0}, cSlice: sliceResult{16, 2}}, {goSlice: sliceResult{30, 0}, cSlice: sliceResult{20, 2}}},
		{{goSlice: sliceResult{9, 0}, cSlice: sliceResult{10, 0}}},
	}}
	r := &report{}
	closedProbeReport(r, res)
	want := map[string][]float64{
		"probe ns/event, event kept (slices)":                {20, 10},
		"probe ns/event, event into a closed level (slices)": {12, 9},
		"closed-level probe / kept probe (slices)":           {0.75, 0.9},
	}
	if len(r.rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(r.rows), len(want))
	}
	for _, x := range r.rows {
		w, ok := want[x.metric]
		if !ok || x.subject != "hmbtrace" || len(x.values) != len(w) {
			t.Errorf("row %+v", x)
			continue
		}
		for i := range w {
			if x.values[i] != w[i] {
				t.Errorf("%s: round %d: %v, want %v", x.metric, i, x.values[i], w[i])
			}
		}
	}
	// All four pairs: ratios 0.5, 0.75, 0.9, 1.5, whose median is 0.825.
	if len(r.notes) != 2 || !strings.Contains(r.notes[1], "0.825, the median of the ratio within a pair over 4 pairs (quartiles 0.750–1.500") ||
		!strings.Contains(r.notes[1], "the rounds' medians 0.750–0.900 over 2 rounds") {
		t.Errorf("notes %q", r.notes)
	}
}
