package summary

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// syntheticFiles opens a synthetic run of ranks ranks (tracetest.SyntheticRun).
func syntheticFiles(t *testing.T, ranks, iters int) []*tracefile.File {
	t.Helper()
	var files []*tracefile.File
	for _, p := range tracetest.SyntheticRun(t, t.TempDir(), "halo", ranks, iters) {
		files = append(files, tracetest.Open(t, p))
	}
	return files
}

func marshal(t *testing.T, p *RunProfile) []byte {
	t.Helper()
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Merging the ranks' profiles in any tree gives the profile of one pass
// over the ranks, byte for byte, and leaves the merged-in profiles as they
// were.
func TestRunProfileMergeTrees(t *testing.T) {
	files := syntheticFiles(t, 37, 3)
	want := Reduce(files)
	wantBytes := marshal(t, &want)
	locals := make([]RunProfile, len(files))
	localBytes := make([][]byte, len(files))
	for i, f := range files {
		locals[i] = LocalFile(f)
		localBytes[i] = marshal(t, &locals[i])
	}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 35))
		// Each tree starts from copies that share the locals' slices,
		// as ranks' buffers would not: Merge must not write into them.
		parts := append([]RunProfile(nil), locals...)
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		for len(parts) > 1 {
			i, j := rng.IntN(len(parts)), rng.IntN(len(parts)-1)
			if j >= i {
				j++
			}
			parts[i].Merge(&parts[j])
			parts = append(parts[:j], parts[j+1:]...)
		}
		if got := marshal(t, &parts[0]); !bytes.Equal(got, wantBytes) {
			t.Fatalf("tree %d: %d bytes differ from the flat reduction's %d:\ngot  %+v\nwant %+v", seed, len(got), len(wantBytes), parts[0], want)
		}
	}
	for i := range locals {
		if got := marshal(t, &locals[i]); !bytes.Equal(got, localBytes[i]) {
			t.Fatalf("rank %d's profile changed by merging it", i)
		}
	}
	// The zero profile is Merge's identity, on either side.
	var zero RunProfile
	zero.Merge(&want)
	if !bytes.Equal(marshal(t, &zero), wantBytes) {
		t.Error("zero.Merge(p) is not p")
	}
	p := want
	p.Merge(&RunProfile{})
	if !bytes.Equal(marshal(t, &p), wantBytes) {
		t.Error("p.Merge(zero) is not p")
	}
}

// The run profile's numbers are the ones the summary computes from the
// files: each region's per-rank values computed here directly, the flat
// profile of WriteTSV, the per-rank table of -ranks, the story of every
// file.
func TestRunProfileFlat(t *testing.T) {
	files := syntheticFiles(t, 23, 4)
	p := Reduce(files)

	// Per region and rank, straight from the files.
	type key struct {
		name     string
		paradigm tracefile.Paradigm
	}
	values := map[key]map[int][3]int64{} // visits, inclusive, exclusive
	for _, f := range files {
		for _, l := range f.Locations {
			for _, e := range l.Profile {
				k := key{f.RegionName(e.Region), f.Regions[e.Region-1].Paradigm}
				if values[k] == nil {
					values[k] = map[int][3]int64{}
				}
				v := values[k][f.Header.Rank]
				v[0] += int64(e.Visits + e.VisitsAfter)
				v[1] += f.TicksToNanos(e.Inclusive)
				v[2] += f.TicksToNanos(e.Exclusive)
				values[k][f.Header.Rank] = v
			}
		}
	}
	if len(p.Regions) != len(values) {
		t.Fatalf("%d regions, want %d", len(p.Regions), len(values))
	}
	for _, r := range p.Regions {
		byRank := values[key{r.Name, r.Paradigm}]
		if r.Ranks != len(byRank) {
			t.Errorf("%s: on %d ranks, want %d", r.Name, r.Ranks, len(byRank))
		}
		for q, got := range []Stat{r.Visits, r.Inclusive, r.Exclusive} {
			want := Stat{Min: 1 << 62}
			for _, v := range byRank {
				want.Sum += v[q]
				want.Min, want.Max = min(want.Min, v[q]), max(want.Max, v[q])
			}
			if got != want {
				t.Errorf("%s: quantity %d is %+v, want %+v", r.Name, q, got, want)
			}
		}
		slowest := -1
		for rank := range len(files) {
			if v := byRank[rank][1]; slowest < 0 || v > byRank[slowest][1] {
				slowest = rank
			}
		}
		if got := p.SlowestRank(&r); got != slowest {
			t.Errorf("%s: slowest rank %d, want %d", r.Name, got, slowest)
		}
	}
	// "checkpoint" is on every fourth rank only: its minimum over the run
	// is 0, and its maximum that of the ranks that have it.
	for _, r := range p.Regions {
		if r.Name == "checkpoint" {
			lo, _, hi := p.Spread(r.Inclusive, r.Ranks)
			if r.Ranks != 6 || lo != 0 || hi != r.Inclusive.Max || r.Inclusive.Min == 0 {
				t.Errorf("checkpoint on %d ranks: spread %d..%d of %+v", r.Ranks, lo, hi, r.Inclusive)
			}
		}
	}

	// The flat profile WriteTSV prints, from the run profile.
	var tsv, fromRun strings.Builder
	if err := WriteTSV(&tsv, files); err != nil {
		t.Fatal(err)
	}
	for _, r := range runRows(&p) {
		fmt.Fprintf(&fromRun, "%s\t%d\t%d\t%d\n", textname.Escape(r.Name), uint64(r.Visits.Sum)-r.VisitsAfter, r.Inclusive.Sum, r.Exclusive.Sum)
	}
	if tsv.String() != fromRun.String() {
		t.Errorf("WriteTSV:\n%s\nfrom the run profile:\n%s", tsv.String(), fromRun.String())
	}

	// The per-rank table of -ranks, but for the run's column of ranks.
	var perRank, run strings.Builder
	if err := WriteOptions(&perRank, files, Options{Ranks: true}); err != nil {
		t.Fatal(err)
	}
	if err := WriteOptions(&run, files, Options{}); err != nil {
		t.Fatal(err)
	}
	a, b := rankRows(perRank.String()), rankRows(run.String())
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("-ranks has %d rows per rank, the run %d", len(a), len(b))
	}
	for i := range a {
		fb := strings.Fields(b[i])
		fb = append(fb[:8], fb[9:]...) // the ranks column
		if fa := strings.Fields(a[i]); !reflect.DeepEqual(fa, fb) {
			t.Errorf("row %d: -ranks %q, run %q", i, a[i], b[i])
		}
	}

	// The buffers' story, from each file's.
	var recorded, kept, removed uint64
	var reduced []int
	worst := -1
	var worstShare float64
	for _, f := range files {
		st := f.Story()
		recorded += st.Recorded
		kept += st.Kept
		removed += st.RemovedTotal
		if len(st.Reductions) > 0 {
			reduced = append(reduced, f.Header.Rank)
		}
		if share := float64(st.Kept) / float64(st.Recorded); worst < 0 || share < worstShare {
			worst, worstShare = f.Header.Rank, share
		}
	}
	bs := &p.Buffer
	if bs.Recorded != recorded || bs.Kept != kept || bs.Removed.Total() != removed || bs.Worst.Rank != worst {
		t.Errorf("buffers: recorded %d kept %d removed %d worst rank %d; the files: %d %d %d %d", bs.Recorded, bs.Kept, bs.Removed.Total(), bs.Worst.Rank,
			recorded, kept, removed, worst)
	}
	var got []int
	for _, r := range bs.Reduced {
		for k := r.First; k <= r.Last; k++ {
			got = append(got, k)
		}
	}
	if !reflect.DeepEqual(got, reduced) || len(reduced) == 0 {
		t.Errorf("ranks that reduced %v, want %v", got, reduced)
	}
	if len(p.Throttled) != 1 || p.Throttled[0].Name != "tiny" || p.Throttled[0].Ranks != 8 {
		t.Errorf("throttled %+v, want tiny on 8 ranks (0, 3, ..., 21)", p.Throttled)
	}
}

// rankRows returns the rows of the table "Regions per rank".
func rankRows(s string) []string {
	_, table, ok := strings.Cut(s, "\nRegions per rank")
	if !ok {
		return nil
	}
	lines := strings.Split(table, "\n")
	var rows []string
	for _, l := range lines[2:] {
		if l == "" || strings.HasPrefix(l, "  [") {
			break
		}
		rows = append(rows, l)
	}
	return rows
}

// Ranks of different clock rates: each rank's ticks are converted with its
// own rate before they are summed, as the flat profile does.
func TestRunProfileClockRates(t *testing.T) {
	trace := func(rate float64, ticks uint64) *tracefile.Trace {
		return &tracefile.Trace{
			Header:    tracefile.Header{Name: "r", TicksPerSecond: rate, EndTicks: 10 * ticks},
			Regions:   []tracefile.Region{{ID: 1, Name: "work"}},
			Locations: []tracefile.Location{{Name: "main", Profile: []tracefile.ProfileEntry{{Region: 1, Visits: 1, Inclusive: ticks, Exclusive: ticks}}}},
		}
	}
	a, b := Local(trace(1e9, 1000), 0), Local(trace(3e9, 1000), 1)
	a.Merge(&b)
	r := a.Regions[0]
	// 1000 ticks at 1 GHz is 1000 ns; at 3 GHz 333.33, rounded to 333.
	if r.Inclusive != (Stat{1333, 333, 1000}) || r.Slowest != 0 {
		t.Errorf("inclusive %+v, slowest %d", r.Inclusive, r.Slowest)
	}
}

func TestRunProfileBinary(t *testing.T) {
	files := syntheticFiles(t, 9, 2)
	p := Reduce(files)
	data := marshal(t, &p)
	var q RunProfile
	if err := q.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("decoded\n%+v\nencoded\n%+v", q, p)
	}
	// Every truncation is an error, none a panic, and leaves q as it was.
	for n := range len(data) {
		if err := q.UnmarshalBinary(data[:n]); err == nil {
			t.Fatalf("%d of %d bytes decode", n, len(data))
		}
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatal("a failed decode changed the profile")
	}
	for _, c := range []struct {
		data []byte
		want string
	}{
		{append(data[:len(data):len(data)], 0), "1 bytes after the end"},
		{append([]byte("HMBRUN\x09"), data[7:]...), "version 9"},
		{[]byte("profile"), "no HMBRUN"},
	} {
		if err := q.UnmarshalBinary(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one saying %q", err, c.want)
		}
	}
	// Regions out of order would break Merge: the decoder refuses them.
	swapped := p
	swapped.Regions = append([]RegionStats(nil), p.Regions...)
	swapped.Regions[0], swapped.Regions[1] = swapped.Regions[1], swapped.Regions[0]
	if err := q.UnmarshalBinary(marshal(t, &swapped)); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("regions out of order: %v", err)
	}
	big := RunProfile{Ranks: RankSet{{0, 1 << 40}}}
	if _, err := big.MarshalBinary(); err == nil {
		t.Error("a rank beyond 32 bits encodes")
	}
}

// FuzzRunProfileDecode checks that any bytes decode to a profile or an
// error, never a panic or a huge allocation, and that what decodes
// encodes to bytes that decode to the same profile.
func FuzzRunProfileDecode(f *testing.F) {
	empty := RunProfile{}
	b, _ := empty.MarshalBinary()
	f.Add(b)
	f.Add([]byte("HMBRUN\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p RunProfile
		if err := p.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q RunProfile
		if err := q.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded profile does not decode: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("decoded %+v, re-decoded %+v", p, q)
		}
		// A decoded profile merges and prints without a panic.
		var w RunProfile
		w.Merge(&p)
		w.Merge(&q)
		var out strings.Builder
		if err := WriteRun(&out, &w, Options{}); err != nil {
			t.Fatal(err)
		}
	})
}

// Counters are summed by metric name over ranks that name them in other
// orders; a name in two paradigms is two regions, each labelled.
func TestRunProfileCountersAndParadigms(t *testing.T) {
	trace := func(metrics []string, cycles, instr uint64) *tracefile.Trace {
		vals := []uint64{cycles, instr}
		if metrics[0] == "instructions" {
			vals = []uint64{instr, cycles}
		}
		return &tracefile.Trace{
			Header:  tracefile.Header{Name: "r", TicksPerSecond: 1e9, EndTicks: 1000, Metrics: metrics},
			Regions: []tracefile.Region{{ID: 1, Name: "solve"}, {ID: 2, Name: "MPI_Send", Paradigm: tracefile.ParadigmMPI}, {ID: 3, Name: "MPI_Send"}},
			Locations: []tracefile.Location{{Name: "main", Profile: []tracefile.ProfileEntry{
				{Region: 1, Visits: 1, Inclusive: 500, Exclusive: 400, CounterInclusive: vals, CounterExclusive: vals},
				{Region: 2, Visits: 2, Inclusive: 50, Exclusive: 50},
				{Region: 3, Visits: 1, Inclusive: 40, Exclusive: 40},
			}}},
		}
	}
	p := Local(trace([]string{"cycles", "instructions"}, 1000, 3000), 0)
	q := Local(trace([]string{"instructions", "cycles"}, 2000, 1000), 1)
	p.Merge(&q)
	var out strings.Builder
	if err := WriteRun(&out, &p, Options{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"cycles   instructions   IPC  region\n",
		"3,000 / 3,000  4,000 / 4,000  1.33  solve\n",
		"MPI_Send (mpi)\n", "MPI_Send (user)\n",
		"Run r: 2 ranks (0-1) on 1 host (), start unknown, 2 locations\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

// The run's buffer story names the ranks whose counts do not balance, the
// locations a signal interrupted, what was filtered and the usage errors,
// summed.
func TestRunBufferStory(t *testing.T) {
	trace := func(recorded uint64, interrupted bool) *tracefile.Trace {
		return &tracefile.Trace{
			Header: tracefile.Header{Name: "r", Host: "n", TicksPerSecond: 1e9, EndTicks: 1000, BufferSize: 1 << 20, BinSize: 1 << 10, Policy: "depth"},
			Locations: []tracefile.Location{{Name: "main", Recorded: recorded, FilteredName: 2, FilteredDuration: 3, Interrupted: interrupted,
				Usage:  tracefile.UsageErrors{LeaveNothingOpen: 1},
				Levels: []tracefile.LevelStats{{Depth: 1, Class: tracefile.ClassRegion, Written: 5}}}},
		}
	}
	var p RunProfile
	for rank := range 8 {
		// Ranks 3 and 4 recorded one event more than they account for.
		l := Local(trace(map[bool]uint64{true: 11, false: 10}[rank == 3 || rank == 4], rank == 6), rank)
		p.Merge(&l)
	}
	var out strings.Builder
	if err := WriteRun(&out, &p, Options{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"  events recorded  82\n",
		"  events filtered  40; 16 by name, 24 of short calls\n",
		"  WARNING: recorded != kept + filtered + removed on 2 ranks (3-4)\n",
		"  1 location was still running when the traces were written (a caught signal, or a probe under way past Close's wait)",
		"  usage errors     8: 8 leaves with no region open;\n",
		"  reductions       none: the whole run fit on every rank\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

// The story of an in-situ profile says when it was told; one of files
// does not.
func TestRunBufferInSitu(t *testing.T) {
	tr := &tracefile.Trace{
		Header: tracefile.Header{Name: "r", Host: "n", TicksPerSecond: 1e9, EndTicks: 1000, BufferSize: 1 << 20, BinSize: 1 << 10, Policy: "depth"},
		Locations: []tracefile.Location{{Name: "main", Recorded: 5,
			Levels: []tracefile.LevelStats{{Depth: 1, Class: tracefile.ClassRegion, Written: 5}}}},
	}
	p := Local(tr, 0)
	for _, inSitu := range []bool{false, true} {
		var out strings.Builder
		if err := WriteRun(&out, &p, Options{InSitu: inSitu}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "Buffers of the run at the collective end in MPI_Finalize (1 rank, summed)"); got != inSitu {
			t.Errorf("InSitu %v: says the collective end %v:\n%s", inSitu, got, out.String())
		}
	}
}

// A run of ranks some of which hmbtrace recover made from their mappings
// says which, that their counts are lower bounds, and which died unseen;
// their interrupted locations are not blamed on a signal alone. The sets
// survive the binary form.
func TestRunRecovered(t *testing.T) {
	var p RunProfile
	for rank := range 4 {
		tr := &tracefile.Trace{
			Header: tracefile.Header{Name: "r", Host: "n", TicksPerSecond: 1e9, EndTicks: 1000, BufferSize: 1 << 20, BinSize: 1 << 10, Policy: "depth"},
			Locations: []tracefile.Location{{Name: "main", Recorded: 5, Interrupted: rank >= 2,
				Levels: []tracefile.LevelStats{{Depth: 1, Class: tracefile.ClassRegion, Written: 5}}}},
		}
		switch rank {
		case 2:
			tr.Recovered = &tracefile.Recovered{End: tracefile.EndSignal, Signal: 15, Unaccounted: 7}
		case 3:
			tr.Recovered = &tracefile.Recovered{End: tracefile.EndUnknown, Unaccounted: 5}
		}
		l := Local(tr, rank)
		p.Merge(&l)
	}
	var q RunProfile
	if err := q.UnmarshalBinary(marshal(t, &p)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := WriteRun(&out, &q, Options{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"  RECOVERED        2 ranks (2-3) by hmbtrace recover",
		"lower bounds (12 more were published as recorded)",
		"  ended unseen     1 rank (3) died without a handler seeing a signal",
		"2 locations were still running when the run ended (a caught signal, or a death no handler saw",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}
