package waitstate

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// flat keeps a rank's flat profile as the probes would, for calls that do
// not nest.
type flat map[string]uint64

func (f flat) call(k *rank, name string, enter, leave uint64, inside func()) {
	k.call(name, enter, leave, inside)
	f[name] += leave - enter
}

func (f flat) into(k *rank) {
	for name, ns := range f {
		k.b.Trace.Locations[0].Profile = append(k.b.Trace.Locations[0].Profile,
			tracefile.ProfileEntry{Region: id(name), Visits: 1, Inclusive: ns, Exclusive: ns})
	}
}

// imbalancedRun is four ranks iterating work, an allreduce and more work;
// rank 2's work takes three times as long as the others'.
func imbalancedRun(t *testing.T, iters int) []*tracefile.File {
	ranks := []*rank{newRank(0, 4), newRank(1, 4), newRank(2, 4), newRank(3, 4)}
	for r, k := range ranks {
		f := flat{}
		work := uint64(100)
		if r == 2 {
			work = 300
		}
		for i := range iters {
			base := uint64(1000 + 400*i)
			f.call(k, "work", base, base+work, nil)
			f.call(k, "MPI_Allreduce", base+work, base+310, func() { k.l.Collective(base+work, -1, 8, 8, 1) })
			f.call(k, "work2", base+310, base+400, nil)
		}
		f.into(k)
	}
	return write(t, ranks...)
}

func TestCriticalPathThroughSlowRank(t *testing.T) {
	const iters = 5
	r, err := Analyze(imbalancedRun(t, iters), Options{Procs: 2})
	if err != nil {
		t.Fatal(err)
	}
	cp := r.CriticalPath
	if cp == nil {
		t.Fatal("no critical path")
	}
	// All ranks end at 3000 (1000 after their first event); the walk starts on rank 0, leaves it at the
	// end of its last wait (rank 2's entry into the last allreduce) and
	// stays on rank 2, which never waits, back to its start at 1000.
	if cp.Start != 1000 || cp.End != 3000 || cp.Length != 2000 || cp.Hops != 1 || cp.Last != 0 {
		t.Errorf("path %d..%d (%d ns), %d hops, last location %d; want 1000..3000, 1 hop, last 0", cp.Start, cp.End, cp.Length, cp.Hops, cp.Last)
	}
	want := map[[2]any]int64{
		{"work", 2}:          300 * iters,
		{"MPI_Allreduce", 2}: 10 * (iters - 1),
		{"work2", 2}:         90 * (iters - 1),
		{"MPI_Allreduce", 0}: 10,
		{"work2", 0}:         90,
	}
	var sum int64
	for _, v := range cp.Values {
		sum += v.Time
		k := [2]any{v.Region, v.Loc}
		if v.Time != want[k] {
			t.Errorf("%s on location %d: %d ns on the path, want %d", v.Region, v.Loc, v.Time, want[k])
		}
		delete(want, k)
		if r.PathName(v.Path) != v.Region {
			t.Errorf("call path %d is %q, want %q", v.Path, r.PathName(v.Path), v.Region)
		}
	}
	for k, ns := range want {
		t.Errorf("%s on location %d: not on the path, want %d ns", k[0], k[1], ns)
	}
	if sum != cp.Length {
		t.Errorf("the path's values add up to %d ns, its length is %d", sum, cp.Length)
	}
	// work: 1500 on the path, (3×100 + 300)×5 / 4 = 750 per rank on mean;
	// the allreduce's time less its waits and work2 are balanced.
	wantImb := map[string][3]int64{"work": {1500, 750, 750}, "work2": {450, 450, 0}, "MPI_Allreduce": {50, 50, 0}}
	if cp.Regions[0].Region != "work" {
		t.Errorf("largest share of the path: %s, want work", cp.Regions[0].Region)
	}
	for _, g := range cp.Regions {
		w := wantImb[g.Region]
		if g.Path != w[0] || g.Mean != w[1] || g.Imbalance != w[2] {
			t.Errorf("%s: path %d, mean %d, imbalance %d; want %v", g.Region, g.Path, g.Mean, g.Imbalance, w)
		}
	}
}

// TestCriticalPathAcrossRanks has the lateness move between ranks: a
// chain of messages where each receiver waits for its sender.
func TestCriticalPathAcrossRanks(t *testing.T) {
	r0, r1, r2 := newRank(0, 3), newRank(1, 3), newRank(2, 3)
	// rank 0 works to 500 then sends to 1; rank 1 waits from 100, works
	// to 800 then sends to 2; rank 2 waits from 200 and ends at 900.
	r0.call("work", 0, 500, nil)
	r0.send("MPI_Send", 500, 510, 1, 0)
	r1.call("work2", 0, 100, nil)
	r1.recv(100, 520, 0, 0)
	r1.call("work", 520, 800, nil)
	r1.send("MPI_Send", 800, 810, 2, 0)
	r2.call("work2", 0, 200, nil)
	r2.recv(200, 820, 1, 0)
	r2.call("work", 820, 900, nil)
	r, err := Analyze(write(t, r0, r1, r2), Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	cp := r.CriticalPath
	// Back from 900 on rank 2: its wait ended at 800 (rank 1's send),
	// rank 1's at 500 (rank 0's send); rank 0 from 0.
	if cp.Hops != 2 || cp.Length != 900 || cp.Last != 2 {
		t.Errorf("%d hops, %d ns, last %d; want 2 hops, 900 ns, last 2", cp.Hops, cp.Length, cp.Last)
	}
	want := map[[2]any]int64{
		{"work", 0}: 500, {"work", 1}: 280, {"work", 2}: 80,
		{"MPI_Recv", 1}: 20, {"MPI_Recv", 2}: 20,
	}
	for _, v := range cp.Values {
		k := [2]any{v.Region, v.Loc}
		if v.Time != want[k] {
			t.Errorf("%s on %d: %d ns, want %d", v.Region, v.Loc, v.Time, want[k])
		}
		delete(want, k)
	}
	for k, ns := range want {
		t.Errorf("%s on %d: not on the path, want %d", k[0], k[1], ns)
	}
}

func TestCriticalPathText(t *testing.T) {
	r, err := Analyze(imbalancedRun(t, 3), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Critical path: 1\.200 µs, ends on rank 0, 1 hop`, `450\.0 ns +450\.0 ns +work`, `900\.0 ns +work +rank 2`} {
		if !regexp.MustCompile(want).MatchString(text.String()) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Critical struct {
			Length  int64 `json:"length_ns"`
			Regions []struct {
				Region    string `json:"region"`
				Imbalance int64  `json:"imbalance_ns"`
			} `json:"regions"`
		} `json:"critical_path"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Critical.Length != 1200 || len(back.Critical.Regions) == 0 || back.Critical.Regions[0].Region != "work" || back.Critical.Regions[0].Imbalance != 450 {
		t.Errorf("JSON critical path %+v", back.Critical)
	}
}

func TestWriteWhy(t *testing.T) {
	r, err := Analyze(imbalancedRun(t, 3), Options{Worst: -1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteWhy(&b, r, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Why ranks wait`,
		`1\.800 µs Wait at N x N, 37\.50% of the run: most in MPI_Allreduce on rank 0 \(600\.0 ns\); caused most by work on rank 2 \(1\.800 µs\)`,
		`critical path 1\.200 µs; work holds 900\.0 ns of it, the largest imbalance is work's \(450\.0 ns`,
	} {
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	// A run without waits says nothing.
	r0 := newRank(0, 1)
	r0.call("work", 0, 10, nil)
	r, err = Analyze(write(t, r0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteWhy(&b, r, 3); err != nil || b.Len() > 0 {
		t.Errorf("a run without waits: %q, %v", b.String(), err)
	}
}
