package summary_test

import (
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// rankTrace writes the trace of one rank: "work" for work ns, and "extra"
// for 1 µs if extra.
func rankTrace(t *testing.T, dir string, rank int, work uint64, extra bool) *tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: dir, Name: "run", Rank: rank, TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Region("work")
	l := m.Location("main")
	t0 := m.Now()
	l.EnterAt(r, t0+10)
	l.LeaveAt(r, t0+10+work)
	if extra {
		x := m.Region("extra")
		l.EnterAt(x, t0+20+work)
		l.LeaveAt(x, t0+1020+work)
	}
	return tracetest.Finish(t, m)
}

// A region the probes switched off on one rank counts all its visits, and
// both tables mark it: its times cover only the timed visits.
func TestThrottledRegionMarked(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank, n := range []int{10, 4} {
		m, err := measure.Start(measure.Config{Output: dir, Name: "run", Rank: rank, TimerShift: measure.NoTimerShift, Clock: "monotonic",
			ThrottleCalls: 3, ThrottleTime: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		r := m.Region("tiny")
		l := m.Location("main")
		for i := 0; i < n; i++ {
			l.Enter(r)
			l.Leave(r)
		}
		files = append(files, tracetest.Finish(t, m))
	}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		`(?m)^\s*14\s.*tiny  \[throttled: [0-9]+ of the visits timed\]$`,
		`(?m)^\s.*µs\s+[0-9.]+\s+[01]\s+tiny  \[throttled: 6 of the visits timed\]$`,
		`\[throttled\]: switched off during the run`,
		`\[throttled\]: each rank timed the visits before`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("no match for %q in\n%s", want, s)
		}
	}
}

func TestRanks(t *testing.T) {
	dir := t.TempDir()
	files := []*tracefile.File{
		rankTrace(t, dir, 0, 100_000, false),
		rankTrace(t, dir, 1, 300_000, true),
		rankTrace(t, dir, 2, 200_000, false),
	}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "Regions per rank (inclusive time over 3 ranks") {
		t.Fatalf("no per-rank table:\n%s", s)
	}
	for _, want := range []string{
		`100\.000 µs\s+200\.000 µs\s+300\.000 µs\s+1\.50\s+1\s+work`, // min, mean, max, max/mean, slowest
		`0\.0 ns\s+333\.3 ns\s+1\.000 µs\s+3\.00\s+1\s+extra`,        // ranks without it count 0
	} {
		if !regexp.MustCompile(`(?m)^\s*` + want + `$`).MatchString(s) {
			t.Errorf("no line %q in\n%s", want, s)
		}
	}
	for r := 0; r < 3; r++ {
		if !strings.Contains(s, "run."+string(rune('0'+r))+".hmb (rank "+string(rune('0'+r))+")") {
			t.Errorf("no buffer story of rank %d:\n%s", r, s)
		}
	}
}

// Files that share a rank are not the ranks of one run: no per-rank table.
func TestNoRanksForUnrelatedFiles(t *testing.T) {
	files := []*tracefile.File{
		rankTrace(t, t.TempDir(), 0, 100_000, false),
		rankTrace(t, t.TempDir(), 0, 300_000, false),
	}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Regions per rank") {
		t.Errorf("a per-rank table for two rank-0 files:\n%s", out.String())
	}
}

// A C++ or Fortran name of hundreds of characters keeps the table's lines
// short; the TSV has it whole.
func TestLongNames(t *testing.T) {
	long := "std::vector<double, std::allocator<double> >::operator[](unsigned long) " + strings.Repeat("with_a_very_long_template_argument_", 10) + "end"
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "long", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Location("main")
	t0 := m.Now()
	for i, name := range []string{long, "advec_mom_kernel_mod::advec_mom_kernel", long + "2"} {
		r := m.Region(name)
		l.EnterAt(r, t0+uint64(10+100*i))
		l.LeaveAt(r, t0+uint64(60+100*i))
	}
	files := []*tracefile.File{tracetest.Finish(t, m)}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	table = table[strings.Index(table, "Regions ("):]
	table = table[:strings.Index(table, "\nBuffer of")]
	lines := 0
	for _, line := range strings.Split(table, "\n") {
		if n := utf8.RuneCountInString(line); n > 120 {
			t.Errorf("a line of %d characters:\n%s", n, line)
		}
		// The own name is the last word, longer than the column: it
		// keeps its beginning and its end, which sets the two apart.
		if strings.Contains(line, "with_a_very_long_template_arg…") {
			lines++
			if !strings.HasSuffix(line, "_end") && !strings.HasSuffix(line, "end2") {
				t.Errorf("long name not cut in the middle: %q", line)
			}
		}
	}
	if lines != 2 || !strings.Contains(table, "  advec_mom_kernel_mod::advec_mom_kernel\n") {
		t.Errorf("want both long names cut and the short one whole:\n%s", table)
	}

	out.Reset()
	if err := summary.WriteOptions(&out, files, summary.Options{NameWidth: -1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  "+long+"\n") {
		t.Errorf("full names asked for, not printed:\n%s", out.String())
	}

	out.Reset()
	if err := summary.WriteTSV(&out, files); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[1] != "1" || f[2] != "50" || f[3] != "50" {
			t.Errorf("TSV line %q: want region, 1 visit, 50 ns, 50 ns", line)
		}
		names = append(names, f[0])
	}
	sort.Strings(names)
	if want := []string{"advec_mom_kernel_mod::advec_mom_kernel", long, long + "2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("TSV names %q, want %q", names, want)
	}
}

// Two traces of one rank of one run (the second written under a distinct
// name) get a note.
func TestSameRankNote(t *testing.T) {
	dir := t.TempDir()
	files := []*tracefile.File{rankTrace(t, dir, 0, 100, false), rankTrace(t, t.TempDir(), 0, 100, false), rankTrace(t, dir, 1, 100, false)}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	want := "note: rank 0 of run has 2 traces, " + files[0].Path + ", " + files[1].Path + ": processes given the same rank"
	if !strings.Contains(out.String(), want) || strings.Count(out.String(), "note:") != 1 {
		t.Errorf("summary lacks %q once:\n%s", want, out.String())
	}
}

// TestOverRun checks that a region lasting longer than its file's run is
// noted, and that one within the run is not.
func TestOverRun(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "late", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Region("main")
	l := m.Location("main")
	t0 := m.Now()
	l.EnterAt(r, t0)
	l.LeaveAt(r, t0+10_000_000_000) // 10 s after: after Close
	f := tracetest.Finish(t, m)
	var out strings.Builder
	if err := summary.Write(&out, []*tracefile.File{f}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "note: main on main of "+f.Path+" lasts 10.000 s, longer than the file's run") {
		t.Errorf("no note of the region longer than the run:\n%s", out.String())
	}
	m2, err := measure.Start(measure.Config{Output: dir, Name: "inside", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	l2 := m2.Location("main")
	l2.Enter(m2.Region("main"))
	l2.Leave(m2.Region("main"))
	g := tracetest.Finish(t, m2)
	out.Reset()
	if err := summary.Write(&out, []*tracefile.File{g}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "longer than the file's run") {
		t.Errorf("a region inside the run is noted:\n%s", out.String())
	}
}

// TestNamesToldApart: OpenMP constructs of C++ methods whose names a cut
// in the middle made equal (the function's own name was the middle) show
// as different rows that keep the function's name.
func TestNamesToldApart(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "kripke", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Location("main")
	t0 := m.Now()
	own := []string{"LTimes", "LPlusTimes", "scattering", "source"}
	for i, f := range own {
		r := m.Region("!$omp implicit barrier Kernel_3d_DGZ::" + f + "(Grid_Data*) [clone ._omp_fn.0]")
		l.EnterAt(r, t0+uint64(10+100*i))
		l.LeaveAt(r, t0+uint64(60+100*i))
	}
	files := []*tracefile.File{tracetest.Finish(t, m)}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range own {
		want := "  !$omp implicit barrier …::" + f + "(…) [clone ._omp_fn.0]\n"
		if strings.Count(out.String(), want) != 1 {
			t.Errorf("want one row %q:\n%s", want, out.String())
		}
	}
}

// The summary says why a region was switched off or kept: an accessor of
// 30 ns preempted in a few calls is off on every rank, at the early step;
// a region with half its calls long is kept, with its count; one with
// fewer visits than the early step is not listed, and neither is the
// phase region, which is never throttled (it was listed as kept for its
// long calls).
func TestThrottlingSaysWhy(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank := range 2 {
		m, err := measure.Start(measure.Config{Output: dir, Name: "run", Rank: rank, TimerShift: measure.NoTimerShift, Clock: "monotonic", Phase: "iter"})
		if err != nil {
			t.Fatal(err)
		}
		// The accessor as -finstrument-functions defines it; an MPI call,
		// never throttled, is not listed however short its calls.
		acc, mixed, few := m.RegionParadigm("Domain::fx(int)", tracefile.ParadigmCompiler), m.Region("mixed"), m.Region("few")
		mpi := m.RegionParadigm("MPI_Comm_rank", tracefile.ParadigmMPI)
		iter := m.Region("iter")
		l := m.Location("main")
		now := m.Now() + 1
		call := func(r measure.Region, ns uint64) {
			l.EnterAt(r, now)
			now += ns
			l.LeaveAt(r, now)
			now += 5
		}
		for i := range 5000 {
			d := uint64(30)
			if i%1000 == 7+rank { // preempted: 4 ms
				d += 4e6
			}
			call(acc, d)
			if i < 3000 { // fewer than the late step's visits
				call(mixed, 100+300*uint64(i%2))
			}
			if i < 100 {
				call(few, 10)
			}
			if i < 2000 {
				call(iter, 100+300*uint64(i%2))
			}
			call(mpi, 20)
		}
		files = append(files, tracetest.Finish(t, m))
	}
	var out strings.Builder
	if err := summary.Write(&out, files); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		`(?m)^Throttling \(HMB_THROTTLE\): a call is long from 250.0 ns; a region is switched off after 1,024 visits if at most 1 call in 256 was long, after 4,096 if at most 1 in 8$`,
		`(?m)^  Domain::fx\(int\)\s+off on 2 locations \(early\): 4 of 2,048 timed calls long$`,
		`(?m)^  mixed\s+kept on 2 locations: 3,000 of 6,000 calls long \(more than 1 in 256, and fewer than 4,096 visits\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("no match for %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "  few ") || strings.Contains(s, "  MPI_Comm_rank ") || regexp.MustCompile(`(?m)^  iter\s+kept`).MatchString(s) {
		t.Errorf("a region of 100 visits, an MPI call or the phase region is listed:\n%s", s)
	}
}
