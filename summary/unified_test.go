package summary_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// unifiedRanks writes three ranks whose definitions differ: "work" is
// a.c:10 on rank 0 and b.c:5 on rank 1 (two functions of one name),
// "only" is entered on rank 2 alone, and rank 2 has no "work". Each rank
// spends its own time in each region, so a row's numbers say which ranks'
// regions it summed.
func unifiedRanks(t *testing.T) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	type reg struct {
		name, file string
		line       int
		excl       uint64
	}
	ranks := [][]reg{
		{{"main", "m.c", 1, 1000}, {"work", "a.c", 10, 7000}},
		{{"main", "m.c", 1, 2000}, {"work", "b.c", 5, 11000}},
		{{"main", "m.c", 1, 3000}, {"only", "o.c", 3, 13000}},
	}
	var files []*tracefile.File
	for rank, regs := range ranks {
		b := tracetest.NewBuilder("run", "host", rank, time.Unix(1, 0))
		l := b.Location("main")
		for i, r := range regs {
			b.Trace.Regions = append(b.Trace.Regions, tracefile.Region{ID: uint32(i + 1), Name: r.name, File: r.file, Line: r.line})
		}
		// main encloses the other region: main's own time, then the
		// other's.
		main, other := regs[0], regs[1]
		l.Enter(10, 1)
		l.Enter(10+main.excl, 2)
		l.Leave(10 + main.excl + other.excl)
		l.Leave(10 + main.excl + other.excl)
		b.Trace.Locations[0].Profile = []tracefile.ProfileEntry{
			{Region: 1, Visits: 1, Inclusive: main.excl + other.excl, Exclusive: main.excl},
			{Region: 2, Visits: 1, Inclusive: other.excl, Exclusive: other.excl},
		}
		files = append(files, b.Write(t, dir))
	}
	return files
}

// The profile's rows are the run's regions (tracefile.ReadUnified): two
// functions that share a name are two rows, told apart by their source,
// not one row that adds their times; a region only one rank entered is a
// row of its own.
func TestProfileUnifiedRegions(t *testing.T) {
	files := unifiedRanks(t)
	var out strings.Builder
	if err := summary.WriteTSV(&out, files); err != nil {
		t.Fatal(err)
	}
	want := "only\t1\t13000\t13000\n" +
		"work (b.c:5)\t1\t11000\t11000\n" +
		"work (a.c:10)\t1\t7000\t7000\n" +
		"main\t3\t37000\t6000\n"
	if got := out.String(); got != want {
		t.Errorf("profile:\n%s\nwant (by name, work would be one row of 18000 ns):\n%s", got, want)
	}
}

// The run profile unifies regions as the run's definitions do: the two
// works of unifiedRanks are two regions, each of its rank, and the run's
// summary labels them by source; "only" is of one rank.
func TestRunProfileUnifiedRegions(t *testing.T) {
	files := unifiedRanks(t)
	p := summary.Reduce(files)
	type row struct {
		name, file string
		line       int
		ranks      int
		excl       int64
	}
	var got []row
	for _, r := range p.Regions {
		got = append(got, row{r.Name, r.File, r.Line, r.Ranks, r.Exclusive.Sum})
	}
	want := []row{{"main", "m.c", 1, 3, 6000}, {"only", "o.c", 3, 1, 13000}, {"work", "a.c", 10, 1, 7000}, {"work", "b.c", 5, 1, 11000}}
	if !slices.Equal(got, want) {
		t.Errorf("regions %+v, want %+v", got, want)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var q summary.RunProfile
	if err := q.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(p.Regions, q.Regions) {
		t.Errorf("decoded regions %+v, %v; want %+v", q.Regions, err, p.Regions)
	}
	var out strings.Builder
	if err := summary.WriteRun(&out, &p, summary.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"work (a.c:10)", "work (b.c:5)"} {
		if !strings.Contains(out.String(), label) {
			t.Errorf("the run's summary lacks %q:\n%s", label, out.String())
		}
	}
}
