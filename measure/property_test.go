package measure

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// recEvent is an event as a test recorded it, in the reader's terms.
type recEvent struct {
	kind   encode.Kind
	region uint32
	depth  int
	time   uint64 // reduced
}

func (e recEvent) String() string {
	return fmt.Sprintf("%v r%d d%d t%d", e.kind, e.region, e.depth, e.time)
}

// driver records random call trees into a location and remembers what it
// recorded. Times advance by small random steps, so that after the shift
// many events share a timestamp.
type driver struct {
	loc    *Location
	open   []Region
	now    uint64
	shift  uint8
	events []recEvent
}

func (d *driver) step(rng *rand.Rand, regions []Region, maxDepth int) {
	d.now += uint64(rng.IntN(6))
	if len(d.open) > 0 && (len(d.open) >= maxDepth || rng.IntN(100) < 48) {
		r := d.open[len(d.open)-1]
		d.loc.LeaveAt(r, d.now)
		d.events = append(d.events, recEvent{encode.KindLeave, uint32(r), len(d.open), d.now >> d.shift})
		d.open = d.open[:len(d.open)-1]
		return
	}
	r := regions[rng.IntN(len(regions))]
	if len(d.open) > 0 && rng.IntN(8) == 0 {
		r = d.open[len(d.open)-1] // recursion
	}
	d.loc.EnterAt(r, d.now)
	d.open = append(d.open, r)
	d.events = append(d.events, recEvent{encode.KindEnter, uint32(r), len(d.open), d.now >> d.shift})
}

// readBack returns a location's events as the reader rebuilds them.
func readBack(t *testing.T, f *tracefile.File, id uint32) []recEvent {
	t.Helper()
	it := f.Events(id)
	var out []recEvent
	var e tracefile.Event
	for it.Next(&e) {
		out = append(out, recEvent{e.Kind, e.Region, e.Depth, e.Time})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("reading location %d: %v", id, err)
	}
	return out
}

// matchMinusSubtrees checks that got is want with whole subtrees removed
// (calls whose enter found no bin) and returns how many events they held.
func matchMinusSubtrees(t *testing.T, name string, want, got []recEvent) uint64 {
	t.Helper()
	var skipped uint64
	j := 0
	for i := 0; i < len(want); {
		if j < len(got) && got[j] == want[i] {
			i++
			j++
			continue
		}
		if want[i].kind != encode.KindEnter {
			t.Fatalf("%s: event %d: got %v, want %v (only whole calls may be missing)", name, i, at(got, j), want[i])
		}
		depth := want[i].depth
		for {
			skipped++
			e := want[i]
			i++
			if e.kind == encode.KindLeave && e.depth == depth {
				break
			}
			if i == len(want) {
				t.Fatalf("%s: a missing call never leaves", name)
			}
		}
	}
	if j != len(got) {
		t.Fatalf("%s: %d extra events read back, first %v", name, len(got)-j, got[j])
	}
	return skipped
}

func at(s []recEvent, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "end of stream"
}

// finalDepthLimit returns the shallowest depth the depth policy closed.
func finalDepthLimit(f *tracefile.File) int {
	limit := 1 << 30
	for _, r := range f.Reductions {
		if r.Reason == tracefile.ByDepth && r.Depth < limit {
			limit = r.Depth
		}
	}
	return limit
}

func checkCounts(t *testing.T, l *tracefile.Location) {
	t.Helper()
	var removed uint64
	for _, v := range l.Removed() {
		removed += v
	}
	if l.Recorded != l.Kept()+removed {
		t.Fatalf("location %q: recorded %d != kept %d + removed %d (%v)", l.Name, l.Recorded, l.Kept(), removed, l.Removed())
	}
}

type propertyCase struct {
	seed     uint64
	locs     int
	bins     int
	binSize  int
	shift    int
	off      encode.Techniques
	steps    int
	maxDepth int
	regions  int
}

func randomCase(seed uint64) propertyCase {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	return propertyCase{
		seed:     seed,
		locs:     1 + rng.IntN(5),
		bins:     4 + rng.IntN(60),
		binSize:  256 << rng.IntN(3),
		shift:    1 + rng.IntN(4),
		off:      encode.Techniques(rng.IntN(16)) * encode.Techniques(rng.IntN(2)),
		steps:    500 + rng.IntN(20000),
		maxDepth: 2 + rng.IntN(40),
		regions:  1 + rng.IntN(120),
	}
}

func runCase(t *testing.T, c propertyCase) {
	dir := t.TempDir()
	m, err := Start(Config{Output: dir, Name: "prop", BufferSize: c.bins * c.binSize, BinSize: c.binSize, TimerShift: c.shift, EncodingOff: c.off})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(c.seed, 1))
	var regions []Region
	for i := 0; i < c.regions; i++ {
		regions = append(regions, m.Region(fmt.Sprintf("r%d", i)))
	}
	base := m.Now()
	drivers := make([]*driver, c.locs)
	for i := range drivers {
		drivers[i] = &driver{loc: m.Location(fmt.Sprintf("loc %d", i)), now: base, shift: m.shift}
	}
	for s := 0; s < c.steps; s++ {
		drivers[rng.IntN(len(drivers))].step(rng, regions, c.maxDepth)
	}
	// Close some calls by hand; Close leaves the rest at its own time.
	for _, d := range drivers {
		for len(d.open) > 0 && rng.IntN(3) > 0 {
			d.now += uint64(rng.IntN(3))
			r := d.open[len(d.open)-1]
			d.loc.LeaveAt(r, d.now)
			d.events = append(d.events, recEvent{encode.KindLeave, uint32(r), len(d.open), d.now >> d.shift})
			d.open = d.open[:len(d.open)-1]
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(filepath.Join(dir, "prop.0.hmb"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	end := f.Header.EndTicks
	limit := finalDepthLimit(f)
	var noBinAll uint64
	for _, l := range f.Locations {
		noBinAll += l.Removed()[tracefile.NoBin]
	}
	t.Logf("%d reductions, depth limit %d, %d no-bin drops", len(f.Reductions), limit, noBinAll)
	for i, d := range drivers {
		for len(d.open) > 0 { // left by Close
			r := d.open[len(d.open)-1]
			d.events = append(d.events, recEvent{encode.KindLeave, uint32(r), len(d.open), max(end, d.now) >> d.shift})
			d.open = d.open[:len(d.open)-1]
		}
		var want []recEvent
		for _, e := range d.events {
			if e.depth < limit {
				want = append(want, e)
			}
		}
		l := f.Location(uint32(i))
		checkCounts(t, l)
		got := readBack(t, f, uint32(i))
		if uint64(len(got)) != l.Kept() {
			t.Fatalf("%s: read %d events, file says %d kept", l.Name, len(got), l.Kept())
		}
		skipped := matchMinusSubtrees(t, l.Name, want, got)
		var noBin uint64
		for _, lv := range l.Levels {
			if lv.Depth < limit {
				noBin += lv.Dropped[tracefile.NoBin] + lv.Dropped[tracefile.ByFirst]
			}
		}
		if skipped != noBin {
			t.Fatalf("%s: %d events missing below the closed depth %d, but %d counted as dropped for want of a bin or after recording stopped", l.Name, skipped, limit, noBin)
		}
		if uint64(len(d.events)) != l.Recorded {
			t.Fatalf("%s: recorded %d events, file says %d", l.Name, len(d.events), l.Recorded)
		}
	}
}

func TestPropertyRandomCallTrees(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		c := randomCase(seed)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			runCase(t, c)
		})
		if t.Failed() {
			t.Logf("case %+v", c)
			return
		}
	}
}
