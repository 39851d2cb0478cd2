package cshim

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
	"golang.org/x/sys/unix"
)

// How rank 0's merges at the collective end grow with the ranks: the
// ranks' parts of a halo code (tracetest.SyntheticRun's: a ring's
// exchange in 20 steps on two threads a rank, with the quirks of a real
// run's buffers), as the binomial tree delivers them to the
// root (its child at level k holds ranks 2^k to 2^(k+1)-1, merged), and
// the root's merges timed level by level. Making p ranks' traces is
// O(p²) (each names MPI_COMM_WORLD's p members), so the parts of a few
// ranks (haloTemplate) are made from their traces as the ranks make them,
// and rank r's is template rank r mod haloTemplate's with its rank
// numbers changed to r's; the definitions are made for every rank from a
// trace whose groups are the run's (world, cartesian, row and column).

// haloTemplate is the number of ranks whose parts are made from traces.
const haloTemplate = 16

// scalePasses are the passes whose parts go up the tree, in the order of
// the bundles (cshim/mpi: run_reduce), the definitions as defsKey.
var scalePasses = []int{PassProfile, PassComm, PassChoice, PassPhases, defsKey, PassSegments, PassWaitStates}

func scalePassName(pass int) string {
	if pass == defsKey {
		return "definitions"
	}
	if pass == PassWaitStates {
		return "wait states"
	}
	return passDefs[pass].name
}

func scaleCodec(pass int) *partCodec {
	switch pass {
	case defsKey:
		return defsCodec
	case PassWaitStates:
		return waitStatesCodec
	}
	return passDefs[pass].merge
}

// haloParts are the template ranks' parts, in their codecs' written form,
// and what rank r's are made from.
type haloParts struct {
	files []*tracefile.File
	parts map[int][][]byte // by pass, by template rank
}

func newHaloParts(tb testing.TB) *haloParts {
	tb.Helper()
	dir := tb.TempDir()
	h := &haloParts{parts: map[int][][]byte{}}
	for _, path := range tracetest.SyntheticRun(tb, dir, "halo", haloTemplate, 20) {
		h.files = append(h.files, tracetest.Open(tb, path))
	}
	var choice *variation.Choice
	for r, f := range h.files {
		p := summary.LocalFile(f)
		h.add(tb, PassProfile, &p)
		c, err := comm.Local(f)
		if err != nil {
			tb.Fatal(err)
		}
		h.add(tb, PassComm, []comm.Part{c})
		ch, err := variation.LocalChoice(f)
		if err != nil {
			tb.Fatal(err)
		}
		h.add(tb, PassChoice, ch)
		if r == 0 {
			choice = ch
		} else {
			choice.Merge(ch)
		}
		src, series := trend.RankPhaseSeries(f)
		h.add(tb, PassPhases, &trend.InSitu{Source: src, Series: series})
	}
	cut, err := choice.Cut()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range h.files {
		s, err := cut.Local(f)
		if err != nil {
			tb.Fatal(err)
		}
		h.add(tb, PassSegments, s)
	}
	parts, err := waitstate.ReplayInMemory(h.files, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, w := range parts {
		h.add(tb, PassWaitStates, w)
	}
	return h
}

func (h *haloParts) add(tb testing.TB, pass int, v any) {
	tb.Helper()
	b, err := scaleCodec(pass).encode(v)
	if err != nil {
		tb.Fatal(err)
	}
	h.parts[pass] = append(h.parts[pass], b)
}

// relabel returns s, a location's label among the ranks, of template rank
// r0's changed to rank r's.
func relabel(s string, r0, r int) string {
	if name, ok := strings.CutPrefix(s, tracefile.RankLabel(r0, "")); ok {
		return tracefile.RankLabel(r, name)
	}
	return s
}

// haloGroups are the groups of a halo run of p ranks, one slice each, as
// one rank's measurement holds them (shared here between the ranks, so
// that making p ranks' definitions is not O(p²)).
type haloGroups struct {
	px         int
	world      []int32
	rows, cols [][]int32
}

func newHaloGroups(p int) *haloGroups {
	px, py := tracetest.HaloGrid(p)
	g := &haloGroups{px: px, world: make([]int32, p), rows: make([][]int32, py), cols: make([][]int32, px)}
	for i := range g.world {
		g.world[i] = int32(i)
	}
	for y := range g.rows {
		for x := 0; x < px; x++ {
			g.rows[y] = append(g.rows[y], int32(y*px+x))
		}
	}
	for x := range g.cols {
		for y := 0; y < py; y++ {
			g.cols[x] = append(g.cols[x], int32(y*px+x))
		}
	}
	return g
}

// rankValue returns rank r's part of pass, of a run of p ranks, as read.
func (h *haloParts) rankValue(tb testing.TB, g *haloGroups, pass, r, p int) any {
	tb.Helper()
	r0 := r % haloTemplate
	if pass == defsKey {
		f := h.files[r0]
		t := tracefile.Trace{Header: f.Header, Regions: f.Regions, Locations: f.Locations}
		t.Header.Rank = r
		t.Comms = []tracefile.Comm{
			{ID: 1, Name: "MPI_COMM_WORLD", Members: g.world},
			{ID: 2, Name: "MPI_COMM_SELF", Members: []int32{int32(r)}},
			{ID: 3, Parent: 1, Members: g.world},
			{ID: 4, Parent: 3, Members: g.rows[r/g.px]},
			{ID: 5, Parent: 3, Members: g.cols[r%g.px]},
		}
		d := &tracefile.RunDefinitions{}
		d.Add(&t)
		return d
	}
	v, err := scaleCodec(pass).decode(h.parts[pass][r0])
	if err != nil {
		tb.Fatal(err)
	}
	switch x := v.(type) {
	case *summary.RunProfile:
		*x = summary.Local(&h.files[r0].Trace, r)
	case []comm.Part:
		for i := range x {
			x[i].Rank = r
			for j := range x[i].Sends {
				if s := &x[i].Sends[j]; s.ToRank >= 0 {
					s.ToRank = ((s.ToRank-r0)%p + r + p) % p
				}
			}
		}
	case *variation.Segments:
		for i := range x.Rows {
			x.Rows[i].File = r
			x.Rows[i].Label = relabel(x.Rows[i].Label, r0, r)
		}
	case *trend.InSitu:
		for _, s := range x.Series {
			s.Location = relabel(s.Location, r0, r)
		}
	case *waitstate.InSitu:
		for i := range x.Locations {
			l := &x.Locations[i]
			l.File, l.Rank, l.Name = r, r, relabel(l.Name, r0, r)
		}
	}
	return v
}

// subtree returns the part of ranks lo to hi-1 of pass, merged as read (a
// binomial tree of their merges, so that the merges that sort are not
// quadratic), in written form: what the root's child sends it.
func (h *haloParts) subtree(tb testing.TB, g *haloGroups, pass, lo, hi, p int) []byte {
	tb.Helper()
	c := scaleCodec(pass)
	vals := make([]any, hi-lo)
	for i := range vals {
		vals[i] = h.rankValue(tb, g, pass, lo+i, p)
	}
	for step := 1; step < len(vals); step <<= 1 {
		for i := 0; i+step < len(vals); i += 2 * step {
			vals[i] = c.merge(vals[i], vals[i+step])
			vals[i+step] = nil
		}
	}
	b, err := c.encode(vals[0])
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// rootLevel is what the root's merge at one level of the tree took.
type rootLevel struct {
	child int // bytes: the child's part
	took  time.Duration
	cpu   time.Duration // the process's, the collector's included
}

// processCPU returns the process's CPU time: on a shared machine the
// wall time of a level counts the time the benchmark waited for a core.
func processCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// rootMerges merges children (the root's own part first) as rank 0 does
// at the collective end: through the cgo boundary's copies (C.GoBytes of
// the parts), its running merge held between them. It returns the root's
// result as read, each level's cost, and the time its result took to take
// at the end (PassSet's runPart).
func rootMerges(tb testing.TB, pass int, own []byte, children [][]byte) (any, []rootLevel, time.Duration) {
	tb.Helper()
	c := scaleCodec(pass)
	forgetHeld()
	defer forgetHeld()
	var levels []rootLevel
	for k, child := range children {
		t0, c0 := time.Now(), processCPU()
		var a []byte
		if k == 0 {
			a = bytes.Clone(own)
		}
		if err := c.mergeInto(pass, a, k > 0, bytes.Clone(child)); err != nil {
			tb.Fatal(err)
		}
		levels = append(levels, rootLevel{child: len(child), took: time.Since(t0), cpu: processCPU() - c0})
	}
	t0 := time.Now()
	rp := &runPart{codec: c, pass: pass, b: own, isHeld: len(children) > 0}
	v, err := rp.value()
	if err != nil {
		tb.Fatal(err)
	}
	return v, levels, time.Since(t0)
}

// rootBytes is the root's result in written form.
func rootBytes(tb testing.TB, pass int, v any) []byte {
	tb.Helper()
	b, err := scaleCodec(pass).encode(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// rootChildren returns rank 0's part of pass and its children's, level
// by level, in a run of p ranks.
func (h *haloParts) rootChildren(tb testing.TB, pass, p int) ([]byte, [][]byte) {
	tb.Helper()
	g := newHaloGroups(p)
	own := h.subtree(tb, g, pass, 0, 1, p)
	var children [][]byte
	for step := 1; step < p; step <<= 1 {
		children = append(children, h.subtree(tb, g, pass, step, min(2*step, p), p))
	}
	return own, children
}

// TestRootMergesEqualRanksInOrder checks the benchmark's tree: the root's
// result of every pass is what merging the ranks' parts one after the
// other makes, and it holds every rank once, in rank order.
func TestRootMergesEqualRanksInOrder(t *testing.T) {
	const p = 37
	h := newHaloParts(t)
	g := newHaloGroups(p)
	for _, pass := range scalePasses {
		own, children := h.rootChildren(t, pass, p)
		v, _, _ := rootMerges(t, pass, own, children)
		got := rootBytes(t, pass, v)
		c := scaleCodec(pass)
		want := h.rankValue(t, g, pass, 0, p)
		for r := 1; r < p; r++ {
			want = c.merge(want, h.rankValue(t, g, pass, r, p))
		}
		wb, err := c.encode(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wb) {
			t.Errorf("%s: the tree's root holds %d bytes, the ranks in order %d", scalePassName(pass), len(got), len(wb))
		}
	}
	v, err := commCodec.decode(mustRoot(t, h, PassComm, p))
	if err != nil {
		t.Fatal(err)
	}
	for i, part := range v.([]comm.Part) {
		if part.Rank != i {
			t.Fatalf("the matrix's part %d is rank %d's", i, part.Rank)
		}
	}
	d, err := defsCodec.decode(mustRoot(t, h, defsKey, p))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for r := 0; r < p; r++ {
		want += len(h.files[r%haloTemplate].Locations)
	}
	if n := len(d.(*tracefile.RunDefinitions).Locations); n != want {
		t.Fatalf("the definitions hold %d locations, want %d", n, want)
	}
}

func mustRoot(t *testing.T, h *haloParts, pass, p int) []byte {
	own, children := h.rootChildren(t, pass, p)
	v, _, _ := rootMerges(t, pass, own, children)
	return rootBytes(t, pass, v)
}

// BenchmarkRootMergeScale times rank 0's merges of each pass at 10³, 10⁴
// and 10⁵ ranks (HMB_ROOT_MERGE_RANKS="1000,10000" picks others), and
// logs each level's bytes, wall and CPU time (the process's, so with the
// collector's): how the root's work grows with p. On one core:
//
//	GOMAXPROCS=1 go test ./cshim -run '^$' -bench RootMergeScale -benchtime 1x -v
func BenchmarkRootMergeScale(b *testing.B) {
	counts := []int{1000, 10000, 100000}
	if s := os.Getenv("HMB_ROOT_MERGE_RANKS"); s != "" {
		counts = counts[:0]
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 2 {
				b.Fatalf("HMB_ROOT_MERGE_RANKS: %q", f)
			}
			counts = append(counts, n)
		}
	}
	h := newHaloParts(b)
	for _, p := range counts {
		for _, pass := range scalePasses {
			own, children := h.rootChildren(b, pass, p)
			name := strings.ReplaceAll(scalePassName(pass), " ", "_")
			b.Run(fmt.Sprintf("p=%d/%s", p, name), func(b *testing.B) {
				b.ReportAllocs()
				var levels []rootLevel
				var read time.Duration
				var v any
				for i := 0; i < b.N; i++ {
					v, levels, read = rootMerges(b, pass, own, children)
				}
				m := rootBytes(b, pass, v)
				var lines []string
				var cpu time.Duration
				for k, l := range levels {
					lines = append(lines, fmt.Sprintf("level %2d: child %11d B, %9.3f ms, CPU %9.3f ms", k, l.child, l.took.Seconds()*1e3, l.cpu.Seconds()*1e3))
					cpu += l.cpu
				}
				b.Logf("%d ranks, %s: root's result %d B, taken at the end %.3f ms\n%s", p, scalePassName(pass), len(m), read.Seconds()*1e3, strings.Join(lines, "\n"))
				b.ReportMetric(float64(len(m)), "B-result")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/root")
				b.ReportMetric(cpu.Seconds()*1e3, "CPU-ms/root")
			})
		}
	}
}
