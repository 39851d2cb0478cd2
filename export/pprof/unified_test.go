package pprof

import (
	"slices"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A function is a region of the run (tracefile.ReadUnified): "work" at
// a.c:10 on rank 0 and at a.c:20 on rank 1 (one name, one file, two
// functions) are two functions with their own lines and times, not one
// that adds them; "only", which rank 2 alone defined and entered, is one.
func TestFunctionsUnified(t *testing.T) {
	dir := t.TempDir()
	lines := []int{10, 20, 0}
	var files []*tracefile.File
	for rank, line := range lines {
		b := tracetest.NewBuilder("run", "h", rank, time.Unix(0, 0))
		b.Trace.Regions = []tracefile.Region{{ID: 1, Name: "main", File: "m.c", Line: 1}, {ID: 2, Name: "work", File: "a.c", Line: line}}
		if line == 0 {
			b.Trace.Regions[1] = tracefile.Region{ID: 2, Name: "only", File: "o.c", Line: 3}
		}
		l := b.Location("main")
		l.Enter(10, 1)
		l.Enter(20, 2)
		l.Leave(20 + uint64(1000*(rank+1)))
		l.Leave(5000)
		files = append(files, b.Write(t, dir))
	}
	p, err := BuildProcs(files, 1)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct {
		name, file string
		line       int64
		ns         int64 // exclusive, over the samples whose leaf it is
	}
	var got []fn
	for _, f := range p.Function {
		var ns int64
		for _, s := range p.Sample {
			if s.Location[0].Line[0].Function == f {
				ns += s.Value[1]
			}
		}
		got = append(got, fn{f.Name, f.Filename, f.StartLine, ns})
	}
	want := []fn{{"main", "m.c", 1, 3*4990 - 6000}, {"work", "a.c", 10, 1000}, {"work", "a.c", 20, 2000}, {"only", "o.c", 3, 3000}}
	if !slices.Equal(got, want) {
		t.Errorf("functions %+v, want %+v", got, want)
	}
}
