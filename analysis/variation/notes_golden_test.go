package variation_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// textCases are traces whose notes and errors the commands print.
func textCases(t *testing.T) map[string]func() (*Variation, error) {
	sync, _ := filter.ParsePatternList("barrier wait")
	mpiOnly := func(names ...string) *tracefile.File {
		locs := map[string][]call{}
		var order []string
		for r := 0; r < 3; r++ {
			var calls []call
			var at uint64
			for it := 0; it < 20; it++ {
				for i, n := range names {
					calls = append(calls, c(n, at+uint64(i), at+uint64(i)+1))
				}
				calls = append(calls, c("MPI_Waitall", at+10, at+19), c("MPI_Allreduce", at+20, at+24), c("wait\tloop", at+25, at+29, c("MPI_Wait", at+25, at+29)))
				at += 30
			}
			name := fmt.Sprintf("rank %d", r)
			order = append(order, name)
			locs[name] = calls
		}
		return recordCalls(t, measure.Config{}, unit, locs, order...)
	}
	return map[string]func() (*Variation, error){
		"shed sync": func() (*Variation, error) {
			p := planted{locations: 4, iterations: 400, slow: map[[2]int]bool{{1, 5}: true}}
			locs, order := p.calls()
			f := recordCalls(t, measure.Config{BufferSize: 24 << 10, BinSize: 512}, unit, locs, order...)
			return Analyze([]*tracefile.File{f}, Options{Sync: sync})
		},
		"window": func() (*Variation, error) {
			p := planted{locations: 2, iterations: 400}
			locs, order := p.calls()
			f := recordCalls(t, measure.Config{BufferSize: 8 << 10, BinSize: 512, Reduction: measure.ReduceLast}, unit, locs, order...)
			return Analyze([]*tracefile.File{f}, Options{Sync: sync})
		},
		"no sync": func() (*Variation, error) {
			p := planted{locations: 2, iterations: 40}
			locs, order := p.calls()
			f := recordCalls(t, measure.Config{}, unit, locs, order...)
			return Analyze([]*tracefile.File{f}, Options{Sync: filter.Patterns{}})
		},
		"no sync, patterns": func() (*Variation, error) {
			p := planted{locations: 2, iterations: 40}
			locs, order := p.calls()
			f := recordCalls(t, measure.Config{}, unit, locs, order...)
			other, _ := filter.ParsePatternList("lock*,spin")
			return Analyze([]*tracefile.File{f}, Options{Sync: other})
		},
		"mpi only": func() (*Variation, error) {
			return Analyze([]*tracefile.File{mpiOnly("MPI_Isend", "MPI_Irecv")}, Options{})
		},
		"mpi only, many": func() (*Variation, error) {
			return Analyze([]*tracefile.File{mpiOnly("MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv", "MPI_Probe")}, Options{})
		},
	}
}

// TestNoteText checks that the notes and errors, now data worded by
// package render, read byte for byte as they did when the analysis wrote
// them (testdata/notes.golden holds that text).
func TestNoteText(t *testing.T) {
	var b strings.Builder
	cases := textCases(t)
	for _, name := range []string{"shed sync", "window", "no sync", "no sync, patterns", "mpi only", "mpi only, many"} {
		v, err := cases[name]()
		fmt.Fprintf(&b, "== %s\n", name)
		if err != nil {
			fmt.Fprintf(&b, "error: %s\n", render.ErrorText(err))
			continue
		}
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "note: %s\n", render.VariationNote(n))
		}
	}
	want, err := os.ReadFile("testdata/notes.golden")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
