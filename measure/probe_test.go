package measure

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func startTest(t testing.TB, c Config) *Measurement {
	t.Helper()
	if c.Output == "" {
		c.Output = t.TempDir()
	}
	if c.Name == "" {
		c.Name = "test"
	}
	m, err := Start(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func openTrace(t testing.TB, m *Measurement) *tracefile.File {
	t.Helper()
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestProbesAllocateNothing(t *testing.T) {
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096})
	a, b := m.Region("a"), m.Region("b")
	loc := m.Location("main")
	loc.Enter(a) // grow the profile and stack once
	loc.Leave(a)
	allocs := testing.AllocsPerRun(10000, func() {
		loc.Enter(a)
		loc.Enter(b)
		loc.Leave(b)
		loc.Leave(a)
	})
	if allocs != 0 {
		t.Errorf("probes allocate %v times per run", allocs)
	}
	m.Close()
}

func TestFlatProfileIsExact(t *testing.T) {
	// A tiny buffer sheds most events; the profile must not notice.
	m := startTest(t, Config{BufferSize: 8 * 256, BinSize: 256, TimerShift: NoTimerShift, NoThrottle: true})
	outer, inner, rec := m.Region("outer"), m.Region("inner"), m.Region("rec")
	loc := m.Location("main")
	now := m.Now()
	for i := 0; i < 1000; i++ {
		loc.EnterAt(outer, now)
		loc.EnterAt(inner, now+10)
		loc.LeaveAt(inner, now+30)
		// recursion: inclusive time counts the outermost call only
		loc.EnterAt(rec, now+40)
		loc.EnterAt(rec, now+50)
		loc.LeaveAt(rec, now+60)
		loc.LeaveAt(rec, now+70)
		loc.LeaveAt(outer, now+100)
		now += 200
	}
	m.Close()
	f := openTrace(t, m)
	l := f.Location(0)
	want := map[string][3]uint64{
		"outer": {1000, 100 * 1000, 50 * 1000},
		"inner": {1000, 20 * 1000, 20 * 1000},
		"rec":   {2000, 30 * 1000, 30 * 1000},
	}
	for _, p := range l.Profile {
		name := f.RegionName(p.Region)
		if got := [3]uint64{p.Visits, p.Inclusive, p.Exclusive}; got != want[name] {
			t.Errorf("%s: visits, inclusive, exclusive = %v, want %v", name, got, want[name])
		}
	}
	if len(f.Reductions) == 0 {
		t.Errorf("the buffer never reduced: the test does not test what it says")
	}
}

func TestUsageErrors(t *testing.T) {
	m := startTest(t, Config{})
	a, b, c := m.Region("a"), m.Region("b"), m.Region("c")
	loc := m.Location("main")
	loc.Leave(a)   // nothing open
	loc.Enter(a)   //
	loc.Enter(b)   //
	loc.Enter(c)   //
	loc.Leave(a)   // leaves c and b implicitly, then a
	loc.Enter(a)   //
	loc.Leave(b)   // b is not open: ignored
	loc.Enter(999) // unknown region
	loc.Enter(0)   // the zero Region
	loc.Leave(a)   //
	loc.Enter(b)   // left open: Close leaves it
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	loc.Enter(a) // after Close
	loc.Leave(a)
	st := m.Stats()
	want := UsageErrors{LeaveNothingOpen: 1, LeftImplicitly: 2, LeaveNotOpen: 1, UnknownRegion: 2, OpenAtClose: 1, AfterClose: 2}
	if st.Usage != want {
		t.Errorf("usage errors %+v, want %+v", st.Usage, want)
	}
	// The stream stays balanced: the reader nests every event.
	got := eventLine(t, openTrace(t, m))
	wantSeq := "ENTER a 1, ENTER b 2, ENTER c 3, LEAVE c 3, LEAVE b 2, LEAVE a 1, ENTER a 1, LEAVE a 1, ENTER b 1, LEAVE b 1"
	if got != wantSeq {
		t.Errorf("events\n %s\nwant\n %s", got, wantSeq)
	}
}

// A process that exits inside regions (Fortran's STOP in a subroutine)
// leaves them at Close's time, with no usage error; a second Close does
// nothing.
func TestCloseAtExit(t *testing.T) {
	m := startTest(t, Config{})
	a, b := m.Region("main"), m.Region("stop_run")
	loc := m.Location("main")
	loc.Enter(a)
	loc.Enter(b)
	if err := m.CloseAtExit(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if u := m.Stats().Usage; u != (UsageErrors{}) {
		t.Errorf("usage errors %+v, want none", u)
	}
	if got, want := eventLine(t, openTrace(t, m)), "ENTER main 1, ENTER stop_run 2, LEAVE stop_run 2, LEAVE main 1"; got != want {
		t.Errorf("events\n %s\nwant\n %s", got, want)
	}
}

// eventLine lists location 0's events as "KIND region depth", comma-separated.
func eventLine(t *testing.T, f *tracefile.File) string {
	t.Helper()
	var names []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		names = append(names, fmt.Sprintf("%v %s %d", e.Kind, f.RegionName(e.Region), e.Depth))
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return strings.Join(names, ", ")
}

func TestDisabledMeasurement(t *testing.T) {
	dir := t.TempDir()
	m, err := Start(Config{Disabled: true, Output: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Region("x")
	loc := m.Location("main")
	if r != 0 || loc != nil || m.Enabled() {
		t.Fatalf("disabled measurement hands out region %d, location %v", r, loc)
	}
	loc.Enter(r) // must not panic
	loc.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*")); len(matches) != 0 {
		t.Errorf("disabled measurement wrote %v", matches)
	}
}

func TestCloseTwice(t *testing.T) {
	m := startTest(t, Config{})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCloseReportsUnwritableOutput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := writeFileForTest(file); err != nil {
		t.Fatal(err)
	}
	m := startTest(t, Config{Output: filepath.Join(file, "sub")})
	err := m.Close()
	if err == nil || !strings.Contains(err.Error(), "HMB_OUTPUT") {
		t.Fatalf("Close error %v, want one naming HMB_OUTPUT", err)
	}
}

// TestRaceStress records calls and messages from 8 goroutines into a
// buffer small enough that reductions of each policy happen while they
// write; run it under -race.
func TestRaceStress(t *testing.T) {
	for _, policy := range []Reduction{ReduceDepth, ReduceClass, ReduceFirst, ReduceLast} {
		t.Run(policy.String(), func(t *testing.T) { raceStress(t, policy) })
	}
}

func raceStress(t *testing.T, policy Reduction) {
	m := startTest(t, Config{BufferSize: 512 * 512, BinSize: 512, TimerShift: 3, Reduction: policy, MinDuration: 50})
	var regions []Region
	for i := 0; i < 20; i++ {
		regions = append(regions, m.Region(fmt.Sprintf("r%d", i)))
	}
	steps := 200000
	if testing.Short() {
		steps = 40000
	}
	locs := make([]*Location, 8)
	for g := range locs {
		locs[g] = m.Location(fmt.Sprintf("g%d", g))
	}
	var wg sync.WaitGroup
	recorded := make([]uint64, len(locs))
	for g := range locs {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			loc := locs[g]
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			var open []Region
			for i := 0; i < steps; i++ {
				switch {
				case rng.IntN(20) == 0:
					loc.Send(locs[rng.IntN(len(locs))], 1, 8)
				case len(open) > 0 && (len(open) > 12 || rng.IntN(2) == 0):
					loc.Leave(open[len(open)-1])
					open = open[:len(open)-1]
				default:
					r := regions[rng.IntN(len(regions))]
					loc.Enter(r)
					open = append(open, r)
				}
				recorded[g]++
			}
			for len(open) > 0 {
				loc.Leave(open[len(open)-1])
				open = open[:len(open)-1]
				recorded[g]++
			}
		}(g)
	}
	wg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if len(st.Reductions) == 0 {
		t.Fatal("no reduction happened: the buffer is too large for the test")
	}
	if st.Kept == 0 {
		t.Error("nothing was kept: the buffer is too small for the test")
	}
	f := openTrace(t, m)
	for i := range f.Locations {
		l := &f.Locations[i]
		checkCounts(t, l)
		if l.Recorded != recorded[l.ID] {
			t.Errorf("%s: file says %d recorded, goroutine recorded %d", l.Name, l.Recorded, recorded[l.ID])
		}
		evs, tr := readBack(t, f, l.ID)
		if uint64(len(evs)) != l.Kept()+uint64(countTrue(tr)) {
			t.Errorf("%s: read %d events (%d truncated), %d kept", l.Name, len(evs), countTrue(tr), l.Kept())
		}
	}
	t.Logf("%d reductions, %d of %d events kept", len(st.Reductions), st.Kept, st.Recorded)
}

func BenchmarkClock(b *testing.B) {
	var s uint64
	for i := 0; i < b.N; i++ {
		s += clock.Now()
	}
	_ = s
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/read")
}

// BenchmarkEnterLeave measures the probes on a loop whose every event is
// kept: a new measurement every million pairs, so the buffer never fills.
// The first touch of the buffer's pages is part of what is measured, as in
// a real run.
func BenchmarkEnterLeave(b *testing.B) {
	benchEnterLeave(b, Config{BufferSize: 16 << 20, NoThrottle: true}) // the region is as short as regions get
}

// benchEnterLeave measures enter/leave pairs into measurements of cfg, a
// new one every 2^20 pairs.
func benchEnterLeave(b *testing.B, cfg Config) {
	const round = 1 << 20
	var kept uint64
	var bytes int64
	var m *Measurement
	var loc *Location
	var r Region
	rotate := func() {
		b.StopTimer()
		if m != nil {
			m.Close()
			st := m.Stats()
			kept += st.Kept
			bytes += st.BytesUsed
		}
		m = startTest(b, cfg)
		r = m.Region("bench")
		loc = m.Location("bench")
		b.StartTimer()
	}
	rotate()
	for i := 0; i < b.N; i++ {
		if i%round == round-1 {
			rotate()
		}
		loc.Enter(r)
		loc.Leave(r)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(2*b.N)
	m.Close()
	st := m.Stats()
	kept += st.Kept
	bytes += st.BytesUsed
	if kept != uint64(2*b.N) {
		b.Fatalf("kept %d events of %d", kept, 2*b.N)
	}
	b.ReportMetric(ns, "ns/event")
	b.ReportMetric(float64(bytes)/float64(kept), "B/event")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRuntimeTraceRegion measures runtime/trace regions with tracing
// on, writing to io.Discard: the peer a Go developer uses today.
func BenchmarkRuntimeTraceRegion(b *testing.B) {
	if err := trace.Start(io.Discard); err != nil {
		b.Skip("runtime/trace is already on:", err)
	}
	defer trace.Stop()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		trace.StartRegion(ctx, "bench").End()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/event")
	b.ReportMetric(0, "ns/op")
}

func writeFileForTest(path string) error { return os.WriteFile(path, []byte("x"), 0o644) }

// A region the filter file excludes is filtered whether the location's
// profile holds it already or grows to hold it at its first probe.
func TestFilteredRegionDefinedLate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "filter.txt")
	os.WriteFile(path, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE skip*\nSCOREP_REGION_NAMES_END\n"), 0o644)
	m := startTest(t, Config{Output: dir, FilterFile: path})
	a := m.Region("a")
	loc := m.Location("main")
	loc.Enter(a) // the profile grows to hold a
	loc.Leave(a)
	skip := m.Region("skip") // defined after: the next probe grows the profile
	loc.Enter(skip)
	loc.Leave(skip)
	loc.Enter(skip) // now in the profile
	loc.Leave(skip)
	loc.Enter(a)
	loc.Leave(a)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if st.Recorded != 8 || st.FilteredName != 4 || st.Kept != 4 || st.Usage != (UsageErrors{}) {
		t.Errorf("recorded %d, filtered %d, kept %d, usage %+v; want 8, 4, 4, none", st.Recorded, st.FilteredName, st.Kept, st.Usage)
	}
	f := openTrace(t, m)
	var names []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		names = append(names, fmt.Sprintf("%v %s", e.Kind, f.RegionName(e.Region)))
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if got, want := strings.Join(names, ", "), "ENTER a, LEAVE a, ENTER a, LEAVE a"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestOutlinedBodiesFiltered: Clang's outlined OpenMP bodies, when the
// compiler instruments them, are counted as filtered, and a user region of
// the same name, or a compiler region of another, is kept.
func TestOutlinedBodiesFiltered(t *testing.T) {
	m := startTest(t, Config{Output: t.TempDir()})
	loc := m.Location("main")
	for _, name := range []string{".omp_outlined.", ".omp_outlined..3", "__omp_outlined__2", ".omp_task_entry."} {
		r := m.RegionParadigm(name, tracefile.ParadigmCompiler)
		loc.Enter(r)
		loc.Leave(r)
	}
	for _, r := range []Region{m.RegionParadigm("._omp_fn.0", tracefile.ParadigmCompiler), m.Region(".omp_outlined.x")} {
		loc.Enter(r)
		loc.Leave(r)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Recorded != 12 || st.FilteredName != 8 || st.Kept != 4 {
		t.Errorf("recorded %d, filtered %d, kept %d; want 12, 8, 4", st.Recorded, st.FilteredName, st.Kept)
	}
}

// TestProbeClampsToLastStamp checks that a probe whose clock read is
// earlier than its location's last stamp (here a LeaveAt at a later time
// on another level) records at that stamp, never before it: the assembly
// clamps the time before its tests, and the clamped time, equal to the
// last one, goes to Go (it needs a sequence number). Without the clamp the
// leave of the outer region, whose level's last record is older than its
// clock read, would be written at the read by the fast path.
func TestProbeClampsToLastStamp(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{BufferSize: 1 << 20, NoThrottle: true})
	loc := m.Location("clamp")
	outer, inner := m.Region("outer"), m.Region("inner")
	for range 3 { // the levels cached and their bins begun: the fast path
		loc.Enter(outer)
		loc.Enter(inner)
		loc.Leave(inner)
		loc.Leave(outer)
	}
	loc.Enter(outer)
	later := m.Now() + 1<<32 // seconds ahead of any clock read below
	loc.EnterAt(inner, later)
	loc.LeaveAt(inner, later)
	loc.Leave(outer)
	loc.Done()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, openTrace(t, m))
	if len(evs) != 16 {
		t.Fatalf("%d events, want 16", len(evs))
	}
	var last [3]uint64 // each region's last leave
	for _, e := range evs {
		if e.Kind == encode.KindLeave && e.Region < uint32(len(last)) {
			last[e.Region] = e.Time
		}
	}
	innerLeave, outerLeave := last[inner], last[outer]
	if innerLeave == 0 || outerLeave == 0 {
		t.Fatalf("no leave of inner (%d) or outer (%d) among %d events", inner, outer, len(evs))
	}
	if outerLeave < innerLeave {
		t.Errorf("outer's leave at %d, before inner's leave at %d, the location's last stamp", outerLeave, innerLeave)
	}
}
