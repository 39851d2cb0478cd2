package score_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func regionScore(t *testing.T, s *Score, name string) RegionScore {
	t.Helper()
	for _, r := range s.Regions {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no region %q in the score", name)
	return RegionScore{}
}

// The overhead model: 2 probe events per visit; the pure time is the
// inclusive time less one probe per visit and two per nested call.
func TestScoreOverheadModel(t *testing.T) {
	f := figure2(t)
	cost := f.Header.ProbeCost
	if !(cost > 0) {
		t.Fatalf("probe cost %v in the file", cost)
	}
	s, err := Compute([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		visits uint64
		incl   float64
		nested uint64
	}{
		{"main", 3, 54 * unit, 3 * (1 + 3 + 6)}, // i, three a, each with b and c
		{"a", 9, 36 * unit, 18},
		{"b", 9, 21 * unit, 0},
		{"i", 3, 12 * unit, 0},
	} {
		r := regionScore(t, s, c.name)
		wantOvhd := 2 * float64(c.visits) * cost
		wantPure := c.incl - float64(c.visits)*cost - 2*float64(c.nested)*cost
		if r.Visits != c.visits || r.Nested != c.nested || !near(r.Overhead, wantOvhd) || !near(r.Pure, wantPure) {
			t.Errorf("%s: visits %d nested %d overhead %g pure %g; want %d, %d, %g, %g",
				c.name, r.Visits, r.Nested, r.Overhead, r.Pure, c.visits, c.nested, wantOvhd, wantPure)
		}
		if !near(r.RelTotal, wantOvhd/wantPure) || !near(r.RelProlog, wantOvhd/2/wantPure) {
			t.Errorf("%s: relative overheads %g, %g", c.name, r.RelTotal, r.RelProlog)
		}
	}
	if !near(s.Overhead, 2*float64(3+3+9+9+9)*cost) {
		t.Errorf("total overhead %g", s.Overhead)
	}
}

// The files of one run are scored with the least of their probe costs: a
// rank preempted while it measured must not make its regions look costly.
func TestScoreLeastProbeCost(t *testing.T) {
	f := figure2(t)
	cost := f.Header.ProbeCost
	slow := *f
	slow.Path += ".preempted"
	slow.Header.ProbeCost = 8 * cost
	s, err := Compute([]*tracefile.File{&slow, f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.ProbeCost != cost || s.Files[0].ProbeCost != 8*cost || s.Files[1].ProbeCost != cost {
		t.Errorf("probe cost %g, files %g %g; want %g, %g, %g", s.ProbeCost, s.Files[0].ProbeCost, s.Files[1].ProbeCost, cost, 8*cost, cost)
	}
	if r := regionScore(t, s, "main"); !near(r.Overhead, 2*6*cost) {
		t.Errorf("main: overhead %g, want %g", r.Overhead, 2*6*cost)
	}
	var out bytes.Buffer
	if err := render.ScoreText(&out, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "estimated at") {
		t.Errorf("the text does not say which probe cost it used:\n%s", out.String())
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestScoreFlagsHotHelper(t *testing.T) {
	f := hotHelper(t, measure.Config{})
	s, err := Compute([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Flagged(); len(got) != 1 || got[0] != "helper" {
		t.Fatalf("flagged %q; want helper", got)
	}
	if r := regionScore(t, s, "setup"); r.RelTotal <= DefaultThreshold || r.Flagged {
		t.Errorf("setup: relative overhead %g, flagged %v; want above the threshold but too rare to flag", r.RelTotal, r.Flagged)
	}
	all, err := Compute([]*tracefile.File{f}, Options{MinShare: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := all.Flagged(); len(got) != 2 || got[0] != "helper" || got[1] != "setup" {
		t.Errorf("flagged without a minimum share %q; want helper and setup", got)
	}

	// The filter file excludes helper and nothing else.
	var ff bytes.Buffer
	if err := render.ScoreFilter(&ff, s); err != nil {
		t.Fatal(err)
	}
	flt, err := filter.Parse("generated", bytes.NewReader(ff.Bytes()))
	if err != nil {
		t.Fatalf("generated filter file does not parse: %v\n%s", err, ff.String())
	}
	for _, r := range s.Regions {
		if flt.Excluded(r.Name, "") != (r.Name == "helper") {
			t.Errorf("filter file excludes %s: %v\n%s", r.Name, flt.Excluded(r.Name, ""), ff.String())
		}
	}

	var out bytes.Buffer
	if err := render.ScoreText(&out, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Flagged (+) 1 region(s)", `"helper"`, "re-encoding gives", "would keep it (an estimate). This run had ",
		" and kept every event.", "  flt         + flagged", "  total ovhd  the probes' whole cost"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// Re-encoding the kept events gives the file's bytes and bins exactly when
// the buffer kept whole level streams: unreduced, and after closing depths.
func TestTraceBytesReencoded(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  measure.Config
	}{
		{"unreduced", measure.Config{}},
		{"small bins", measure.Config{BinSize: 256}},
		{"depth reduced", measure.Config{BufferSize: 6 << 10, BinSize: 512}},
		{"timer shift", measure.Config{TimerShift: 5}},
	} {
		f := hotHelper(t, tc.cfg)
		s, err := Compute([]*tracefile.File{f}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fs := s.Files[0]
		if fs.Reencoded != fs.FileBytes {
			t.Errorf("%s: re-encoded %d bytes, the file holds %d", tc.name, fs.Reencoded, fs.FileBytes)
		}
		bins, err := WalkBins(f)
		if err != nil {
			t.Fatal(err)
		}
		if bins != fs.FileBins {
			t.Errorf("%s: re-encoding gives %d bins, the file has %d", tc.name, bins, fs.FileBins)
		}
		var regionBytes float64
		for _, r := range s.Regions {
			regionBytes += r.KeptBytes
		}
		if int64(regionBytes+s.UnattributedBytes)+fs.HeaderBytes != fs.FileBytes {
			t.Errorf("%s: regions %v + outside %v + headers %d != %d", tc.name, regionBytes, s.UnattributedBytes, fs.HeaderBytes, fs.FileBytes)
		}
		if tc.name == "depth reduced" && fs.Removed == 0 {
			t.Errorf("%s: nothing removed", tc.name)
		}
	}
}

// Messages are re-encoded too, and count for the region they were sent in.
func TestTraceBytesMessages(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "t", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	send, recv := m.Region("send"), m.Region("recv")
	a, b := m.Location("a"), m.Location("b")
	t0 := m.Now()
	for i := uint64(0); i < 300; i++ {
		at := t0 + 1000*i
		a.EnterAt(send, at)
		a.MessageAt(measure.Message{Peer: uint64(b.ID()), Tag: uint32(i % 3), Bytes: 8 << (i % 10)}, at+10)
		a.LeaveAt(send, at+20)
		b.EnterAt(recv, at+5)
		b.MessageAt(measure.Message{Recv: true, Peer: 7, PeerIsRank: true, Tag: 1, Bytes: 64}, at+500)
		b.LeaveAt(recv, at+600)
	}
	s, err := Compute([]*tracefile.File{tracetest.Finish(t, m)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := s.Files[0]
	if fs.Reencoded != fs.FileBytes {
		t.Errorf("re-encoded %d bytes, the file holds %d", fs.Reencoded, fs.FileBytes)
	}
	// A message record takes more than its enter and leave together.
	if r := regionScore(t, s, "send"); r.KeptEvents != 600 || r.KeptBytes <= 2*float64(r.KeptEvents) {
		t.Errorf("send: %d events, %g bytes; want 600 events and their messages", r.KeptEvents, r.KeptBytes)
	}
}

// Collectives are re-encoded too: their enter, root and bytes, and leave.
func TestTraceBytesCollectives(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "t", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	step, allreduce := m.Region("step"), m.Region("allreduce")
	a := m.Location("a")
	t0 := m.Now()
	for i := uint64(0); i < 300; i++ {
		at := t0 + 1000*i
		a.EnterAt(step, at)
		a.EnterCollectiveAt(allreduce, int(i%3)-1, 8*i, at+10)
		a.LeaveAt(allreduce, at+400)
		a.LeaveAt(step, at+500)
	}
	s, err := Compute([]*tracefile.File{tracetest.Finish(t, m)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fs := s.Files[0]; fs.Reencoded != fs.FileBytes {
		t.Errorf("re-encoded %d bytes, the file holds %d", fs.Reencoded, fs.FileBytes)
	}
}

// The buffer size the score proposes keeps the same run unreduced.
func TestUnreducedBufferSuffices(t *testing.T) {
	small := measure.Config{BufferSize: 6 << 10, BinSize: 512}
	f := hotHelper(t, small)
	s, err := Compute([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := s.Files[0]
	if fs.Removed == 0 {
		t.Fatal("the small buffer removed nothing")
	}
	need := fs.UnreducedBuffer()
	again := hotHelper(t, measure.Config{BufferSize: int(need), BinSize: 512})
	var removed uint64
	for i := range again.Locations {
		for _, n := range again.Locations[i].Removed() {
			removed += n
		}
	}
	_, bytes := again.Bins()
	t.Logf("estimated %d bytes of records in %d bins; the rerun kept %d bytes in %d bins of %d", int64(fs.UnreducedBytes), fs.UnreducedBins, bytes, func() int { n, _ := again.Bins(); return n }(), again.Header.BinSize)
	if removed > 0 || len(again.Reductions) > 0 {
		t.Errorf("a buffer of %d bytes (the estimate) still removed %d events", need, removed)
	}
	// Removed levels are costed at the bytes per record of the deepest
	// kept one, whose longer calls take more bytes: an overestimate.
	if est := fs.UnreducedBytes; est < float64(bytes) || est > float64(bytes)*1.5 {
		t.Errorf("estimated %g bytes; the unreduced run has %d", est, bytes)
	}
}

func TestParseProperty(t *testing.T) {
	for _, p := range []Property{TotalOverhead, PrologOverhead} {
		q, err := ParseProperty(p.String())
		if err != nil || q != p {
			t.Errorf("%v: %v, %v", p, q, err)
		}
	}
	if _, err := ParseProperty("tot"); err == nil || !strings.Contains(err.Error(), `"tot"`) {
		t.Errorf("ParseProperty(tot): %v", err)
	}
	if _, err := Compute(nil, Options{Property: 7}); err == nil {
		t.Error("Compute with property 7: no error")
	}
}
