package waitstate

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// mergeReference is Merge as it was before it merged sorted runs: it
// appends o's lists to s's and sorts them whole, and sums the exclusive
// times in a map. TestInSituMergeSame holds Merge to it.
func mergeReference(s, o *InSitu) {
	if len(s.Locations) == 0 && len(s.Paths) == 0 && len(s.Values) == 0 && s.Total == 0 {
		s.Synced = o.Synced
	} else {
		s.Synced = s.Synced && o.Synced
	}
	idx := make(map[treeKey]int, len(s.Paths))
	for i, p := range s.Paths {
		idx[treeKey{p.Parent, p.Region}] = i
	}
	remap := make([]int, len(o.Paths))
	for i, p := range o.Paths {
		parent := -1
		if p.Parent >= 0 && p.Parent < i {
			parent = remap[p.Parent]
		}
		k := treeKey{parent, p.Region}
		id, ok := idx[k]
		if !ok {
			id = len(s.Paths)
			idx[k] = id
			s.Paths = append(s.Paths, CallPath{Parent: parent, Region: p.Region})
		}
		remap[i] = id
	}
	path := func(p int) int {
		if p >= 0 && p < len(remap) {
			return remap[p]
		}
		return p
	}
	base := len(s.Locations)
	s.Locations = append(s.Locations, o.Locations...)
	for _, v := range o.Values {
		v.Path = path(v.Path)
		v.Loc += base
		s.Values = append(s.Values, v)
	}
	slices.SortFunc(s.Values, compareValue)
	s.Total += o.Total
	s.Sends += o.Sends
	s.Matched += o.Matched
	s.UnmatchedRecvs += o.UnmatchedRecvs
	s.UnmatchedCollectives += o.UnmatchedCollectives
	s.Unresolved += o.Unresolved
	s.ClockViolations += o.ClockViolations

	for _, v := range o.Delays {
		v.Loc += base
		s.Delays = append(s.Delays, v)
	}
	slices.SortFunc(s.Delays, compareValue)
	for _, c := range o.DelayCosts {
		c.Path = path(c.Path)
		c.Loc += base
		s.DelayCosts = append(s.DelayCosts, c)
	}
	slices.SortFunc(s.DelayCosts, func(x, y inSituCost) int { return compareDelayCost(x.cost(), y.cost()) })
	for len(s.Unexplained) < base {
		s.Unexplained = append(s.Unexplained, 0)
	}
	s.Unexplained = append(s.Unexplained[:base], o.Unexplained...)
	for _, w := range o.Worst {
		w.Path = path(w.Path)
		w.Loc += base
		s.Worst = append(s.Worst, w)
	}
	slices.SortFunc(s.Worst, func(x, y inSituWait) int { return compareInstance(x.Instance, y.Instance) })
	if len(s.Worst) > DefaultWorst {
		s.Worst = s.Worst[:DefaultWorst]
	}
	if o.Path != nil {
		if s.Path == nil {
			s.Path = &inSituPath{}
		}
		for _, v := range o.Path.Values {
			v.Path = path(v.Path)
			v.Loc += base
			s.Path.Values = append(s.Path.Values, v)
		}
		slices.SortFunc(s.Path.Values, comparePathTime)
		if o.Path.HasEnd {
			s.Path.HasEnd, s.Path.End, s.Path.LastRank, s.Path.LastLoc = true, o.Path.End, o.Path.LastRank, o.Path.LastLoc
		}
		if o.Path.HasStart {
			s.Path.HasStart, s.Path.Start, s.Path.Hops = true, o.Path.Start, o.Path.Hops
		}
	}
	excl := make(map[string]int64, len(s.Exclusive))
	for _, e := range s.Exclusive {
		excl[e.Region] += e.Ns
	}
	for _, e := range o.Exclusive {
		excl[e.Region] += e.Ns
	}
	s.Exclusive = s.Exclusive[:0]
	for name, ns := range excl {
		s.Exclusive = append(s.Exclusive, RegionNs{name, ns})
	}
	slices.SortFunc(s.Exclusive, func(x, y RegionNs) int { return cmp.Compare(x.Region, y.Region) })
	s.DelayIncomplete += o.DelayIncomplete
	if base == 0 {
		s.OriginWall, s.OriginSync = o.OriginWall, o.OriginSync
	} else {
		s.OriginWall, s.OriginSync = min(s.OriginWall, o.OriginWall), min(s.OriginSync, o.OriginSync)
	}
}

// randomPart is a rank's part as Finish gives one: its lists sorted
// (but the worst waits, in the order found, sometimes more than
// DefaultWorst), their keys unique, over a call tree of its own whose
// paths are in another order than other ranks' (so that Merge's remap
// reorders them). With sparse, most lists are short or empty.
func randomPart(rng *rand.Rand, rank int, sparse bool) *InSitu {
	regions := []string{"main", "step", "MPI_Recv", "MPI_Send", "MPI_Allreduce", "MPI_Barrier", "compute", "io"}
	p := &InSitu{Synced: rng.IntN(8) != 0, Total: rng.Int64N(1e6), Sends: rng.Uint64N(9), Matched: rng.Uint64N(9),
		UnmatchedRecvs: rng.Uint64N(2), UnmatchedCollectives: rng.Uint64N(2), Unresolved: rng.Uint64N(2), ClockViolations: rng.Uint64N(2),
		DelayIncomplete: rng.Uint64N(2), OriginWall: rng.Int64N(1e9), OriginSync: -rng.Int64N(1e3)}
	nl := 1 + rng.IntN(3)
	for l := range nl {
		p.Locations = append(p.Locations, Location{Loc: l, ID: uint32(rng.IntN(100)), Rank: rank, Name: fmt.Sprintf("rank %d: %d", rank, l)})
	}
	// A call tree: each path's parent before it, regions at random, so
	// that ranks' trees overlap in part and in another order.
	for range 1 + rng.IntN(10) {
		parent := -1
		if len(p.Paths) > 0 && rng.IntN(4) != 0 {
			parent = rng.IntN(len(p.Paths))
		}
		k := CallPath{Parent: parent, Region: regions[rng.IntN(len(regions))]}
		if !slices.Contains(p.Paths, k) {
			p.Paths = append(p.Paths, k)
		}
	}
	np := len(p.Paths)
	n := func(most int) int {
		if sparse && rng.IntN(3) != 0 {
			return rng.IntN(2)
		}
		return rng.IntN(most + 1)
	}
	for range n(30) {
		pa := rng.IntN(np)
		v := Value{Pattern: Pattern(rng.IntN(int(NumPatterns))), Region: p.Paths[pa].Region, Path: pa, Loc: rng.IntN(nl), Time: rng.Int64N(1e5), Count: 1 + rng.IntN(5)}
		if !slices.ContainsFunc(p.Values, func(w Value) bool { return compareValue(v, w) == 0 }) {
			p.Values = append(p.Values, v)
		}
	}
	slices.SortFunc(p.Values, compareValue)
	for range n(10) {
		v := Value{Pattern: Pattern(rng.IntN(int(NumPatterns))), Region: regions[rng.IntN(len(regions))], Path: -1, Loc: rng.IntN(nl), Time: rng.Int64N(1e5), Count: 1 + rng.IntN(3)}
		if !slices.ContainsFunc(p.Delays, func(w Value) bool { return compareValue(v, w) == 0 }) {
			p.Delays = append(p.Delays, v)
		}
	}
	slices.SortFunc(p.Delays, compareValue)
	costOrder := func(x, y inSituCost) int { return compareDelayCost(x.cost(), y.cost()) }
	for range n(10) {
		pa := rng.IntN(np)
		c := inSituCost{Pattern: Pattern(rng.IntN(int(NumPatterns))), DelayCost: DelayCost{LongTerm: rng.IntN(2) == 0, Region: p.Paths[pa].Region, Path: pa, Loc: rng.IntN(nl), Time: 1 + rng.Int64N(1e4)}}
		if !slices.ContainsFunc(p.DelayCosts, func(d inSituCost) bool { return costOrder(c, d) == 0 }) {
			p.DelayCosts = append(p.DelayCosts, c)
		}
	}
	slices.SortFunc(p.DelayCosts, costOrder)
	if rng.IntN(4) != 0 {
		for range nl - rng.IntN(nl+1) {
			p.Unexplained = append(p.Unexplained, float64(rng.IntN(1000))/4)
		}
	}
	for range n(DefaultWorst + 5) {
		pa := rng.IntN(np)
		w := inSituWait{Instance: Instance{Pattern: Pattern(rng.IntN(int(NumPatterns))), Region: p.Paths[pa].Region, Path: pa, Loc: rng.IntN(nl),
			Start: rng.Int64N(1e6), Time: 1000 * (1 + rng.Int64N(20)), Peer: -1}, PeerRank: rng.IntN(rank + 1), PeerLoc: rng.IntN(2), DelayRank: -1}
		if rng.IntN(3) == 0 {
			w.Delay, w.DelayRank, w.Since = &Delay{Loc: 0, Region: "compute", Time: w.Time / 2, Interval: w.Time, Since: -1}, rank, rng.IntN(2) == 0
		}
		if !slices.ContainsFunc(p.Worst, func(x inSituWait) bool { return compareInstance(w.Instance, x.Instance) == 0 }) {
			p.Worst = append(p.Worst, w)
		}
	}
	if rng.IntN(5) != 0 {
		p.Path = &inSituPath{HasEnd: rng.IntN(4) == 0, End: rng.Int64N(1e6), LastRank: rank, LastLoc: rng.IntN(nl), HasStart: rng.IntN(4) == 0, Start: rng.Int64N(1e3), Hops: rng.IntN(50)}
		for range n(10) {
			v := PathTime{Path: rng.IntN(np), Loc: rng.IntN(nl), Time: rng.Int64N(1e5)}
			v.Region = p.Paths[v.Path].Region
			if !slices.ContainsFunc(p.Path.Values, func(w PathTime) bool { return comparePathTime(v, w) == 0 }) {
				p.Path.Values = append(p.Path.Values, v)
			}
		}
		slices.SortFunc(p.Path.Values, comparePathTime)
	}
	for _, r := range regions {
		if rng.IntN(2) == 0 && !(sparse && rng.IntN(2) == 0) {
			p.Exclusive = append(p.Exclusive, RegionNs{r, rng.Int64N(1e6)})
		}
	}
	slices.SortFunc(p.Exclusive, func(x, y RegionNs) int { return cmp.Compare(x.Region, y.Region) })
	return p
}

// mergeTree merges parts up a binomial tree, as the ranks do at the end
// of a run, with merge, and returns the root's.
func mergeTree(parts []*InSitu, merge func(s, o *InSitu)) *InSitu {
	for step := 1; step < len(parts); step *= 2 {
		for r := 0; r+step < len(parts); r += 2 * step {
			merge(parts[r], parts[r+step])
		}
	}
	return parts[0]
}

// sameMerged fails t at the first field where got and want differ, or
// if their wire forms do.
func sameMerged(t *testing.T, what string, got, want *InSitu) {
	t.Helper()
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Fatalf("%s: %s merged\n%+v\nwant\n%+v", what, g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
	if got.Path != nil && want.Path != nil && !reflect.DeepEqual(*got.Path, *want.Path) {
		t.Fatalf("%s: the critical path merged\n%+v\nwant\n%+v", what, *got.Path, *want.Path)
	}
	if !bytes.Equal(EncodeInSituWire(got), EncodeInSituWire(want)) {
		t.Fatalf("%s: the wire forms differ", what)
	}
}

// TestInSituMergeSame merges random parts up the tree with Merge and
// with the whole sort it replaced, which must give the same run's part,
// field by field and in the wire form, at each size up to 200 ranks.
func TestInSituMergeSame(t *testing.T) {
	for seed := range uint64(12) {
		for _, ranks := range []int{1, 2, 3, 7, 64, 200} {
			gen := func() []*InSitu {
				rng := rand.New(rand.NewPCG(seed, uint64(ranks)))
				parts := make([]*InSitu, ranks)
				for r := range parts {
					parts[r] = randomPart(rng, r, seed%3 == 2)
				}
				return parts
			}
			sameMerged(t, fmt.Sprintf("seed %d, %d ranks", seed, ranks), mergeTree(gen(), (*InSitu).Merge), mergeTree(gen(), mergeReference))
		}
	}
}

// TestInSituMergeUnsorted: a part whose lists are out of order (one made
// by hand, or of another version) merges as the whole sort merged it.
func TestInSituMergeUnsorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 50 {
		seed := rng.Uint64()
		gen := func() []*InSitu {
			r := rand.New(rand.NewPCG(seed, 0))
			parts := make([]*InSitu, 9)
			for i := range parts {
				p := randomPart(r, i, false)
				r.Shuffle(len(p.Values), func(i, j int) { p.Values[i], p.Values[j] = p.Values[j], p.Values[i] })
				r.Shuffle(len(p.Delays), func(i, j int) { p.Delays[i], p.Delays[j] = p.Delays[j], p.Delays[i] })
				r.Shuffle(len(p.DelayCosts), func(i, j int) { p.DelayCosts[i], p.DelayCosts[j] = p.DelayCosts[j], p.DelayCosts[i] })
				r.Shuffle(len(p.Exclusive), func(i, j int) { p.Exclusive[i], p.Exclusive[j] = p.Exclusive[j], p.Exclusive[i] })
				if len(p.Exclusive) > 0 && r.IntN(2) == 0 {
					p.Exclusive = append(p.Exclusive, RegionNs{p.Exclusive[0].Region, 5}) // a region twice
				}
				if p.Path != nil {
					r.Shuffle(len(p.Path.Values), func(i, j int) { p.Path.Values[i], p.Path.Values[j] = p.Path.Values[j], p.Path.Values[i] })
				}
				parts[i] = p
			}
			return parts
		}
		sameMerged(t, fmt.Sprint("seed ", seed), mergeTree(gen(), (*InSitu).Merge), mergeTree(gen(), mergeReference))
	}
}

// BenchmarkInSituMergeRoot merges what the root of a run of p ranks
// merges at the end: its own part, then its children's subtrees of 1, 2,
// 4, ... p/2 ranks (merged before the timer), with ns per element of the
// root's result.
func BenchmarkInSituMergeRoot(b *testing.B) {
	for _, p := range []int{1000, 10000} {
		b.Run(fmt.Sprint("p=", p), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			parts := make([]*InSitu, p)
			for r := range parts {
				parts[r] = randomPart(rng, r, false)
			}
			// The subtrees the root's children send: ranks [k, 2k).
			var kids []*InSitu
			for k := 1; k < p; k *= 2 {
				kids = append(kids, mergeTree(slices.Clone(parts[k:min(2*k, p)]), (*InSitu).Merge))
			}
			root := EncodeInSituWire(parts[0])
			elems := 0
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				s, err := DecodeInSituWire(root)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for _, k := range kids {
					s.Merge(k)
				}
				if i == 0 {
					elems = len(s.Values) + len(s.Delays) + len(s.DelayCosts) + len(s.Worst) + len(s.Exclusive) + len(s.Locations)
					if s.Path != nil {
						elems += len(s.Path.Values)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elems), "ns/elem")
		})
	}
}
