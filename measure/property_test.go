package measure

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// recEvent is an event as a test recorded it, in the reader's terms.
type recEvent struct {
	kind   encode.Kind
	region uint32 // enter, leave: the region; messages: the peer
	depth  int
	time   uint64 // reduced
	seq    uint32
	tag    uint32
	call   int // the call the event belongs to (enter and leave of one call share it)
}

func (e recEvent) String() string {
	return fmt.Sprintf("%v r%d d%d t%d.%d", e.kind, e.region, e.depth, e.time, e.seq)
}

// same compares what the reader can know: not the test's call ids.
func (e recEvent) same(o recEvent) bool {
	return e.kind == o.kind && e.region == o.region && e.depth == o.depth && e.time == o.time && e.seq == o.seq && e.tag == o.tag
}

// modelFrame is an open call in the test's model of a location.
type modelFrame struct {
	region   Region
	filtered bool   // excluded by name: not in the trace, takes no depth
	start    uint64 // raw ticks
	call     int
	keep     bool // something inside is kept (for the duration filter)
}

// driver records random call trees and messages into a location and keeps
// its own model of what that recorded: every event with its depth, reduced
// time and sequence number, computed independently of the probes.
type driver struct {
	loc      *Location
	peers    []*Location
	open     []modelFrame
	now      uint64
	shift    uint8
	lastTR   uint64
	run      uint32
	calls    int
	recorded uint64
	events   []recEvent
	// duration filter model
	minDur    uint64
	vanished  map[int]bool // calls the duration filter removes
	filteredD uint64
	filteredN uint64
	isSkipped func(Region) bool
}

func (d *driver) stamp() (uint64, uint32) {
	tr := d.now >> d.shift
	if tr == d.lastTR {
		d.run++
	} else {
		d.lastTR, d.run = tr, 0
	}
	return tr, d.run
}

func (d *driver) depth() int {
	n := 0
	for _, f := range d.open {
		if !f.filtered {
			n++
		}
	}
	return n
}

// innermost returns the innermost call that is in the trace, or nil.
func (d *driver) innermost() *modelFrame {
	for i := len(d.open) - 1; i >= 0; i-- {
		if !d.open[i].filtered {
			return &d.open[i]
		}
	}
	return nil
}

func (d *driver) enter(r Region) {
	d.loc.EnterAt(r, d.now)
	d.recorded++
	if d.isSkipped(r) {
		d.filteredN++
		d.open = append(d.open, modelFrame{region: r, filtered: true})
		return
	}
	tr, seq := d.stamp()
	d.calls++
	d.open = append(d.open, modelFrame{region: r, start: d.now, call: d.calls})
	d.events = append(d.events, recEvent{kind: encode.KindEnter, region: uint32(r), depth: d.depth(), time: tr, seq: seq, call: d.calls})
}

func (d *driver) leave() { d.leaveCall(false) }

// leaveCall records the leave of the innermost call; byClose models the
// leaves Close makes of the calls still open, which skip excluded regions.
func (d *driver) leaveCall(byClose bool) {
	f := d.open[len(d.open)-1]
	if f.filtered {
		if !byClose {
			d.loc.LeaveAt(f.region, d.now)
			d.recorded++
			d.filteredN++
		}
		d.open = d.open[:len(d.open)-1]
		return
	}
	if !byClose {
		d.loc.LeaveAt(f.region, d.now)
	}
	d.recorded++
	tr, seq := d.stamp()
	depth := d.depth()
	d.open = d.open[:len(d.open)-1]
	d.events = append(d.events, recEvent{kind: encode.KindLeave, region: uint32(f.region), depth: depth, time: tr, seq: seq, call: f.call})
	if d.minDur > 0 && d.now-f.start < d.minDur && !f.keep {
		d.vanished[f.call] = true
		d.filteredD += 2
		return
	}
	if p := d.innermost(); p != nil {
		p.keep = true
	}
}

func (d *driver) messageAt(rng *rand.Rand) {
	peer := d.peers[rng.IntN(len(d.peers))]
	tag := uint32(rng.IntN(1000))
	k := encode.KindSend
	if rng.IntN(2) == 0 {
		k = encode.KindRecv
	}
	d.loc.MessageAt(Message{Recv: k == encode.KindRecv, Peer: uint64(peer.ID()), Tag: tag, Bytes: 64}, d.now)
	d.recorded++
	tr, seq := d.stamp()
	d.events = append(d.events, recEvent{kind: k, region: uint32(peer.ID()), depth: d.depth(), time: tr, seq: seq, tag: tag})
	if p := d.innermost(); p != nil {
		p.keep = true
	}
}

func (d *driver) step(rng *rand.Rand, regions []Region, maxDepth int, msgs bool) {
	d.now += uint64(rng.IntN(6))
	if msgs && rng.IntN(100) < 6 {
		d.messageAt(rng)
		return
	}
	if len(d.open) > 0 && (len(d.open) >= maxDepth || rng.IntN(100) < 48) {
		d.leave()
		return
	}
	r := regions[rng.IntN(len(regions))]
	if len(d.open) > 0 && rng.IntN(8) == 0 {
		r = d.open[len(d.open)-1].region // recursion
	}
	d.enter(r)
}

// expected returns the events the duration filter leaves.
func (d *driver) expected() []recEvent {
	var out []recEvent
	for _, e := range d.events {
		if e.call != 0 && d.vanished[e.call] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// readBack returns a location's events as the reader rebuilds them.
func readBack(t *testing.T, f *tracefile.File, id uint32) ([]recEvent, []bool) {
	t.Helper()
	it := f.Events(id)
	var out []recEvent
	var truncated []bool
	var e tracefile.Event
	for it.Next(&e) {
		r := recEvent{kind: e.Kind, region: e.Region, depth: e.Depth, time: e.Time, seq: e.Seq, tag: e.Tag}
		if e.Kind == encode.KindSend || e.Kind == encode.KindRecv {
			r.region = uint32(e.Peer)
		}
		out = append(out, r)
		truncated = append(truncated, e.Truncated)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("reading location %d: %v", id, err)
	}
	return out, truncated
}

// matchMinus checks that got is want with whole calls and single messages
// removed, and returns how many events were removed and the index in got
// where the first removal is (-1 if none). A removed call's enter/leave
// subtree is removed with it; the messages inside it may be kept, since the
// depth policy keeps communication longer than the calls around it.
func matchMinus(t *testing.T, name string, want, got []recEvent) (removed uint64, first int) {
	t.Helper()
	first = -1
	j := 0
	skip := 0 // depth of the removed call whose subtree is being passed, 0 if none
	for i := 0; i < len(want); i++ {
		e := want[i]
		isMsg := e.kind == encode.KindSend || e.kind == encode.KindRecv
		if skip > 0 && !isMsg {
			removed++
			if e.kind == encode.KindLeave && e.depth == skip {
				skip = 0
			}
			continue
		}
		if j < len(got) && got[j].same(e) {
			j++
			continue
		}
		if first < 0 {
			first = j
		}
		switch e.kind {
		case encode.KindSend, encode.KindRecv:
			removed++
		case encode.KindLeave:
			t.Fatalf("%s: event %d: got %v, want %v (only whole calls and messages may be missing)", name, i, at(got, j), e)
		default:
			removed++
			skip = e.depth
		}
	}
	if skip > 0 {
		t.Fatalf("%s: a missing call never leaves", name)
	}
	if j != len(got) {
		t.Fatalf("%s: %d extra events read back, first %v", name, len(got)-j, got[j])
	}
	return removed, first
}

func at(s []recEvent, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "end of stream"
}

// finalDepthLimit returns the shallowest depth the depth policy closed for
// the enter/leave class, and for the classes kept longest (messages).
func finalDepthLimit(f *tracefile.File) (calls, comm int) {
	calls, comm = 1<<30, 1<<30
	for _, r := range f.Reductions {
		if r.Reason != tracefile.ByDepth {
			continue
		}
		switch {
		case r.Class == tracefile.ClassMessage: // the depth policy's messages and collectives
			comm = min(comm, r.Depth)
		case r.Class == tracefile.ClassParadigm: // no paradigm regions here: nothing else closes
		case f.Header.Policy == "class": // its depth fallback closes every class
			comm = min(comm, r.Depth)
			calls = min(calls, r.Depth)
		default:
			calls = min(calls, r.Depth)
		}
	}
	return calls, comm
}

func classClosed(f *tracefile.File, c tracefile.Class) bool {
	for _, r := range f.Reductions {
		if r.Reason == tracefile.ByClass && r.Class == c {
			return true
		}
	}
	return false
}

func checkCounts(t *testing.T, l *tracefile.Location) {
	t.Helper()
	if l.Recorded != l.Accounted() {
		t.Fatalf("location %q: recorded %d != kept %d + filtered %d+%d + removed %v", l.Name, l.Recorded, l.Kept(), l.FilteredName, l.FilteredDuration, l.Removed())
	}
}

type propertyCase struct {
	seed     uint64
	policy   Reduction
	locs     int
	bins     int
	binSize  int
	shift    int
	off      encode.Techniques
	steps    int
	maxDepth int
	regions  int
	msgs     bool
	minDur   bool
	skip     bool // a filter file excludes some regions
}

func randomCase(seed uint64, policy Reduction) propertyCase {
	rng := rand.New(rand.NewPCG(seed, 0x5eed+uint64(policy)))
	return propertyCase{
		seed:     seed,
		policy:   policy,
		locs:     1 + rng.IntN(5),
		bins:     4 + rng.IntN(60),
		binSize:  256 << rng.IntN(3),
		shift:    1 + rng.IntN(4),
		off:      encode.Techniques(rng.IntN(16)) * encode.Techniques(rng.IntN(2)),
		steps:    500 + rng.IntN(20000),
		maxDepth: 2 + rng.IntN(40),
		regions:  1 + rng.IntN(120),
		msgs:     rng.IntN(3) > 0,
		minDur:   rng.IntN(4) == 0,
	}
}

// run records the case and returns the file and the drivers.
func (c propertyCase) run(t *testing.T) (*tracefile.File, []*driver) {
	dir := t.TempDir()
	cfg := Config{Output: dir, Name: "prop", BufferSize: c.bins * c.binSize, BinSize: c.binSize, TimerShift: c.shift,
		EncodingOff: c.off, Reduction: c.policy, NoThrottle: true} // the driver does not model throttling: its calls are all short
	if c.policy == ReduceClass {
		cfg.ClassOrder = []buffer.Class{buffer.ClassMessage}
	}
	if c.skip {
		path := filepath.Join(dir, "filter.txt")
		os.WriteFile(path, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE skip*\nSCOREP_REGION_NAMES_END\n"), 0o644)
		cfg.FilterFile = path
	}
	if c.minDur {
		cfg.MinDuration = 1 // replaced below by a bound in ticks of the test's clock
	}
	m, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.minDur {
		m.minDur = 12 // ticks: many of the test's calls are shorter
	}
	rng := rand.New(rand.NewPCG(c.seed, 1))
	var regions []Region
	for i := 0; i < c.regions; i++ {
		name := fmt.Sprintf("r%d", i)
		if c.skip && i%4 == 3 {
			name = "skip" + name
		}
		regions = append(regions, m.Region(name))
	}
	base := m.Now()
	drivers := make([]*driver, c.locs)
	var locs []*Location
	for i := range drivers {
		loc := m.Location(fmt.Sprintf("loc %d", i))
		loc.minDur = m.minDur
		locs = append(locs, loc)
		drivers[i] = &driver{loc: loc, now: base, shift: m.shift, lastTR: ^uint64(0), minDur: m.minDur, vanished: map[int]bool{},
			isSkipped: func(r Region) bool {
				var d [1]regionDef
				m.pageDefs(r, d[:])
				return d[0].filtered
			}}
	}
	for _, d := range drivers {
		d.peers = locs
	}
	for s := 0; s < c.steps; s++ {
		drivers[rng.IntN(len(drivers))].step(rng, regions, c.maxDepth, c.msgs)
	}
	// Close some calls by hand; Close leaves the rest at its own time.
	for _, d := range drivers {
		for len(d.open) > 0 && rng.IntN(3) > 0 {
			d.now += uint64(rng.IntN(3))
			d.leave()
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	end := f.Header.EndTicks
	for _, d := range drivers {
		for len(d.open) > 0 { // left by Close, at its time
			d.now = max(end, d.now)
			d.leaveCall(true)
		}
	}
	return f, drivers
}

// checkCommon checks what holds under every policy and returns each
// location's read-back events with their truncation marks.
func checkCommon(t *testing.T, f *tracefile.File, drivers []*driver) {
	for i, d := range drivers {
		l := f.Location(uint32(i))
		checkCounts(t, l)
		if d.recorded != l.Recorded {
			t.Fatalf("%s: recorded %d events, file says %d", l.Name, d.recorded, l.Recorded)
		}
		if d.filteredN != l.FilteredName {
			t.Fatalf("%s: %d events of excluded regions, file says %d", l.Name, d.filteredN, l.FilteredName)
		}
	}
}

// removedBelow sums the events a location's levels above depth limit (comm
// for messages) lost for the given reasons, at the probe or with their bins.
func removedBelow(l *tracefile.Location, limit, comm int, noMessages bool, reasons ...tracefile.Reason) uint64 {
	var n uint64
	for _, lv := range l.Levels {
		lim := limit
		if lv.Class == tracefile.ClassMessage {
			lim = comm
		}
		if lv.Depth >= lim || (noMessages && lv.Class == tracefile.ClassMessage) {
			continue
		}
		for _, r := range reasons {
			n += lv.Dropped[r] + lv.Revoked[r]
		}
	}
	return n
}

func testPolicy(t *testing.T, policy Reduction, n int) {
	for seed := uint64(0); seed < uint64(n); seed++ {
		c := randomCase(seed, policy)
		ok := t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			f, drivers := c.run(t)
			checkCommon(t, f, drivers)
			for i, d := range drivers {
				l := f.Location(uint32(i))
				got, truncated := readBack(t, f, uint32(i))
				if uint64(len(got)) != l.Kept()+uint64(countTrue(truncated)) {
					t.Fatalf("%s: read %d events (%d truncated enters), file says %d kept", l.Name, len(got), countTrue(truncated), l.Kept())
				}
				want := d.expected()
				if c.minDur {
					// Under reductions the duration filter's choices depend
					// on what else is kept: check the structure only.
					all := d.events
					if l.Windowed {
						all = nil
						for _, e := range d.events {
							if e.time > l.WindowTime || (e.time == l.WindowTime && e.seq > l.WindowSeq) {
								all = append(all, e)
							}
						}
					}
					matchMinus(t, l.Name, all, got[countTrue(truncated):])
					return
				}
				switch policy {
				case ReduceDepth, ReduceClass:
					checkDepthPolicy(t, f, l, want, got)
				case ReduceFirst:
					checkFirstPolicy(t, l, want, got)
				case ReduceLast:
					checkLastPolicy(t, l, want, got, truncated)
				}
			}
		})
		if !ok {
			t.Logf("case %+v", c)
			return
		}
	}
}

func countTrue(b []bool) (n int) {
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

func checkDepthPolicy(t *testing.T, f *tracefile.File, l *tracefile.Location, want, got []recEvent) {
	limit, comm := finalDepthLimit(f)
	msgClosed := classClosed(f, tracefile.ClassMessage)
	var w []recEvent
	for _, e := range want {
		isMsg := e.kind == encode.KindSend || e.kind == encode.KindRecv
		if isMsg && e.depth < comm && !msgClosed || !isMsg && e.depth < limit {
			w = append(w, e)
		}
	}
	removed, _ := matchMinus(t, l.Name, w, got)
	// What is missing above the closed depth must be accounted for: calls
	// and messages that found no bin, or came after recording stopped.
	if counted := removedBelow(l, limit, comm, msgClosed, tracefile.NoBin, tracefile.ByFirst); removed != counted {
		t.Fatalf("%s: %d events missing above the closed depth %d, %d counted as no-bin or stopped", l.Name, removed, limit, counted)
	}
}

func checkFirstPolicy(t *testing.T, l *tracefile.Location, want, got []recEvent) {
	removed, first := matchMinus(t, l.Name, want, got)
	if first >= 0 {
		// After the first event lost, only leaves of calls already kept
		// may follow: recording stopped.
		for _, e := range got[first:] {
			if e.kind != encode.KindLeave {
				t.Fatalf("%s: %v kept after recording stopped", l.Name, e)
			}
		}
	}
	if counted := l.Removed()[tracefile.ByFirst] + l.Removed()[tracefile.NoBin]; removed != counted {
		t.Fatalf("%s: %d events missing, %d counted", l.Name, removed, counted)
	}
}

func checkLastPolicy(t *testing.T, l *tracefile.Location, want, got []recEvent, truncated []bool) {
	if !l.Windowed {
		removed, _ := matchMinus(t, l.Name, want, got)
		if removed != l.Removed()[tracefile.NoBin] {
			t.Fatalf("%s: no window, yet %d events missing", l.Name, removed)
		}
		return
	}
	after := func(e recEvent) bool {
		return e.time > l.WindowTime || (e.time == l.WindowTime && e.seq > l.WindowSeq)
	}
	// The calls open at the window start, outermost first.
	var open []recEvent
	var suffix []recEvent
	for _, e := range want {
		if after(e) {
			suffix = append(suffix, e)
			continue
		}
		switch e.kind {
		case encode.KindEnter:
			open = append(open, e)
		case encode.KindLeave:
			open = open[:len(open)-1]
		}
	}
	if len(got) < len(open) {
		t.Fatalf("%s: %d events read, %d calls open at the window start", l.Name, len(got), len(open))
	}
	for i, o := range open {
		g := got[i]
		if g.kind != encode.KindEnter || g.region != o.region || g.depth != o.depth || !truncated[i] || g.time != l.WindowTime {
			t.Fatalf("%s: window start %d.%d: event %d is %v (truncated %v), want the truncated enter of %v", l.Name, l.WindowTime, l.WindowSeq, i, g, truncated[i], o)
		}
	}
	for i := len(open); i < len(truncated); i++ {
		if truncated[i] {
			t.Fatalf("%s: truncated enter at position %d, after the window start", l.Name, i)
		}
	}
	// Calls that found no bin may be missing; the counts cannot say which
	// of them were before the window start.
	removed, _ := matchMinus(t, l.Name, suffix, got[len(open):])
	if removed > l.Removed()[tracefile.NoBin] {
		t.Fatalf("%s: %d events missing after the window start, %d counted as no-bin", l.Name, removed, l.Removed()[tracefile.NoBin])
	}
}

func TestPropertyDepthPolicy(t *testing.T) { testPolicy(t, ReduceDepth, propertyRuns()) }
func TestPropertyClassPolicy(t *testing.T) { testPolicy(t, ReduceClass, propertyRuns()) }
func TestPropertyFirstPolicy(t *testing.T) { testPolicy(t, ReduceFirst, propertyRuns()) }
func TestPropertyLastPolicy(t *testing.T)  { testPolicy(t, ReduceLast, propertyRuns()) }

func propertyRuns() int {
	if testing.Short() {
		return 12
	}
	return 60
}

// TestPropertyFilters checks the name and duration filters against an exact
// model: with a buffer that never fills, the trace is the recorded events
// minus the excluded regions and minus the short calls with nothing kept
// inside, and every count says so.
func TestPropertyFilters(t *testing.T) {
	for seed := uint64(0); seed < uint64(propertyRuns()); seed++ {
		c := randomCase(seed, ReduceDepth)
		c.bins, c.binSize = 4096, 4096
		c.minDur = seed%3 != 2
		c.skip = seed%3 != 1
		ok := t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			f, drivers := c.run(t)
			if len(f.Reductions) > 0 {
				t.Fatal("the buffer reduced: the model does not cover that")
			}
			checkCommon(t, f, drivers)
			for i, d := range drivers {
				l := f.Location(uint32(i))
				got, _ := readBack(t, f, uint32(i))
				want := d.expected()
				if len(got) != len(want) {
					t.Fatalf("%s: read %d events, want %d", l.Name, len(got), len(want))
				}
				for k := range want {
					if !got[k].same(want[k]) {
						t.Fatalf("%s: event %d is %v, want %v", l.Name, k, got[k], want[k])
					}
				}
				if d.filteredD != l.FilteredDuration {
					t.Fatalf("%s: the model filters %d events by duration, the file %d", l.Name, d.filteredD, l.FilteredDuration)
				}
			}
		})
		if !ok {
			t.Logf("case %+v", c)
			return
		}
	}
}

func TestFilterFileErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.filter")
	os.WriteFile(path, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n"), 0o644)
	_, err := Start(Config{Output: dir, FilterFile: path})
	if err == nil || !strings.Contains(err.Error(), "bad.filter:2") {
		t.Fatalf("error %v, want one naming bad.filter line 2", err)
	}
}
