package summary

import (
	"errors"
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The binary form of a RunProfile: a section of a run's results. The
// magic and a version, then every field in the order of the types, as
// varints (signed ones zig-zag), strings and lists with their length
// first, floats as 8 bytes little-endian, rank sets as ranges given by
// the gap from the previous one and their length. Fixed arrays (classes,
// reasons, usage kinds) are written with their length, so that a later
// version with more of them still reads this one. Lists are written in
// the sorted order the type keeps, and the decoder checks it, so that a
// decoded profile merges as one from Local does.
//
// Version 2 adds each region's source file and line after its paradigm
// (regions of one name in different sources are two); a version 1
// profile, of regions without them, still reads.
const (
	runMagic   = "HMBRUN"
	runVersion = 2
)

// The bounds of a rank in the binary form: MPI's ranks are C ints.
const (
	minRank = math.MinInt32
	maxRank = math.MaxInt32
)

// MarshalBinary encodes the profile (encoding.BinaryMarshaler).
func (p *RunProfile) MarshalBinary() ([]byte, error) {
	for _, s := range []RankSet{p.Ranks, p.Buffer.Reduced, p.Buffer.Unbalanced, p.Buffer.Recovered, p.Buffer.Died} {
		if len(s) > 0 && (s[0].First < minRank || s[len(s)-1].Last > maxRank) {
			return nil, fmt.Errorf("run profile: ranks %d to %d: the binary form holds ranks of 32 bits", s[0].First, s[len(s)-1].Last)
		}
	}
	e := &runEncoder{append([]byte(runMagic), runVersion)}
	e.ranks(p.Ranks)
	f := &p.Facts
	e.Strings(f.Names)
	e.Strings(f.Hosts)
	e.Varint(f.Start)
	e.stat(f.Duration)
	e.Varint(f.Locations)
	e.Varint(f.LocationTime)
	e.Strings(f.Clocks)
	e.F64(f.MinRate)
	e.F64(f.MaxRate)
	e.U8(f.MinShift)
	e.U8(f.MaxShift)
	e.F64(f.MinProbeCost)
	e.F64(f.MaxProbeCost)

	e.Uvarint(uint64(len(p.Regions)))
	for i := range p.Regions {
		r := &p.Regions[i]
		e.String(r.Name)
		e.U8(byte(r.Paradigm))
		e.String(r.File)
		e.Varint(int64(r.Line))
		e.Varint(int64(r.Ranks))
		e.stat(r.Visits)
		e.stat(r.Inclusive)
		e.stat(r.Exclusive)
		e.Varint(int64(r.Slowest))
		e.Uvarint(r.VisitsAfter)
		e.Bool(r.Throttled)
		e.Uvarint(uint64(len(r.Counters)))
		for _, c := range r.Counters {
			e.String(c.Metric)
			e.Uvarint(c.Inclusive)
			e.Uvarint(c.Exclusive)
		}
	}

	b := &p.Buffer
	e.Uvarint(b.Recorded)
	e.Uvarint(b.Kept)
	e.Uvarint(b.FilteredName)
	e.Uvarint(b.FilteredDuration)
	e.Uints(b.KeptByClass[:])
	e.Uints(b.Removed[:])
	e.Uints(usageCounts(&b.Usage))
	e.Uvarint(uint64(len(b.Depths)))
	for _, d := range b.Depths {
		e.Varint(int64(d.Depth))
		e.Uvarint(d.Kept)
		e.Uints(d.Removed[:])
		e.Varint(int64(d.ClosedRanks))
	}
	e.Uvarint(b.Bins)
	e.Uvarint(b.Bytes)
	e.stat(b.BufferSize)
	e.stat(b.BinSize)
	e.Strings(b.Policies)
	e.Varint(int64(b.Worst.Rank))
	e.Uvarint(b.Worst.Kept)
	e.Uvarint(b.Worst.Recorded)
	e.ranks(b.Reduced)
	e.Uints(b.Steps[:])
	e.ranks(b.Unbalanced)
	e.Uvarint(b.Interrupted)
	e.Uvarint(b.Windowed)
	e.ranks(b.Recovered)
	e.ranks(b.Died)
	e.Uvarint(b.Unaccounted)
	m := &b.Messages
	e.Uints([]uint64{m.Locations, m.Sent, m.SentBytes, m.Received, m.ReceivedBytes, m.Shed})

	e.Uvarint(uint64(len(p.Throttled)))
	for _, t := range p.Throttled {
		e.String(t.Name)
		e.U8(byte(t.Paradigm))
		e.Varint(int64(t.Ranks))
		e.Uvarint(t.Locations)
		e.Varint(t.FirstAt)
		e.Uvarint(t.Visits)
		e.Uvarint(t.VisitsAfter)
	}
	return e.Writer, nil
}

// usageCounts returns the usage errors' counters in the order of
// UsageErrors' fields, which the binary form keeps.
func usageCounts(u *tracefile.UsageErrors) []uint64 {
	return []uint64{u.UnknownRegion, u.LeaveNothingOpen, u.LeaveNotOpen, u.LeftImplicitly, u.OpenAtClose, u.AfterClose, u.MessageNoPeer}
}

func usageFields(u *tracefile.UsageErrors) []*uint64 {
	return []*uint64{&u.UnknownRegion, &u.LeaveNothingOpen, &u.LeaveNotOpen, &u.LeftImplicitly, &u.OpenAtClose, &u.AfterClose, &u.MessageNoPeer}
}

// runEncoder writes the binary form: the wire codec's fields and the
// profile's own, stats and rank sets.
type runEncoder struct{ wirecodec.Writer }

func (e *runEncoder) stat(s Stat) { e.Varint(s.Sum); e.Varint(s.Min); e.Varint(s.Max) }

// ranks writes a rank set: the first range's start, then for each range
// the gap after the previous one (less the one rank that keeps them
// apart) and its length less one.
func (e *runEncoder) ranks(s RankSet) {
	e.Uvarint(uint64(len(s)))
	for i, r := range s {
		if i == 0 {
			e.Varint(int64(r.First))
		} else {
			e.Uvarint(uint64(r.First - s[i-1].Last - 2))
		}
		e.Uvarint(uint64(r.Last - r.First))
	}
}

// UnmarshalBinary decodes a profile MarshalBinary encoded
// (encoding.BinaryUnmarshaler), replacing p. An error says what is wrong
// and at which byte; p is then unchanged.
func (p *RunProfile) UnmarshalBinary(data []byte) error {
	if len(data) < len(runMagic)+1 || string(data[:len(runMagic)]) != runMagic {
		return errors.New("run profile: not one (no " + runMagic + " at the start)")
	}
	version := data[len(runMagic)]
	if version < 1 || version > runVersion {
		return fmt.Errorf("run profile: version %d, this reader knows 1 to %d", version, runVersion)
	}
	d := &runDecoder{wirecodec.MakeReader(data, len(runMagic)+1)}
	var q RunProfile
	q.Ranks = d.ranks("ranks")
	nranks := q.Ranks.Len()
	f := &q.Facts
	f.Names = d.sortedStrings("run names")
	f.Hosts = d.sortedStrings("hosts")
	f.Start = d.Varint("start")
	f.Duration = d.stat("duration")
	f.Locations = d.Varint("locations")
	f.LocationTime = d.Varint("location-time")
	f.Clocks = d.sortedStrings("clocks")
	f.MinRate = d.F64("clock rate")
	f.MaxRate = d.F64("clock rate")
	f.MinShift = d.U8("timer shift")
	f.MaxShift = d.U8("timer shift")
	f.MinProbeCost = d.F64("probe cost")
	f.MaxProbeCost = d.F64("probe cost")

	n := d.Count("regions", 1)
	if n > 0 {
		q.Regions = make([]RegionStats, n)
	}
	for i := range q.Regions {
		r := &q.Regions[i]
		r.Name = d.String("region name")
		r.Paradigm = tracefile.Paradigm(d.U8("paradigm"))
		if version >= 2 {
			r.File = d.String("region file")
			r.Line = d.Int("region line", math.MinInt32, math.MaxInt32)
		}
		if i > 0 && d.OK() && compareRegions(q.Regions[i-1], *r) >= 0 {
			d.Failf("regions", "not sorted by name, paradigm and source at %q", r.Name)
		}
		r.Ranks = d.ranksIn("region's ranks", nranks)
		r.Visits = d.stat("visits")
		r.Inclusive = d.stat("inclusive time")
		r.Exclusive = d.stat("exclusive time")
		r.Slowest = d.rankOf("slowest rank", q.Ranks)
		r.VisitsAfter = d.Uvarint("visits after")
		r.Throttled = d.Bool("throttled")
		nc := d.Count("counters", 1)
		if nc > 0 {
			r.Counters = make([]CounterSums, nc)
		}
		for k := range r.Counters {
			c := &r.Counters[k]
			c.Metric = d.String("metric")
			if k > 0 && d.OK() && c.Metric <= r.Counters[k-1].Metric {
				d.Failf("counters", "not sorted at %q", c.Metric)
			}
			c.Inclusive = d.Uvarint("counter")
			c.Exclusive = d.Uvarint("counter")
		}
	}

	b := &q.Buffer
	b.Recorded = d.Uvarint("recorded")
	b.Kept = d.Uvarint("kept")
	b.FilteredName = d.Uvarint("filtered")
	b.FilteredDuration = d.Uvarint("filtered")
	d.Uints("kept by class", b.KeptByClass[:])
	d.Uints("removed", b.Removed[:])
	usage := make([]uint64, len(usageFields(&b.Usage)))
	d.Uints("usage errors", usage)
	for i, u := range usageFields(&b.Usage) {
		*u = usage[i]
	}
	n = d.Count("depths", 1)
	if n > 0 {
		b.Depths = make([]DepthStats, n)
	}
	for i := range b.Depths {
		ds := &b.Depths[i]
		ds.Depth = d.Int("depth", math.MinInt32, math.MaxInt32)
		if i > 0 && d.OK() && ds.Depth <= b.Depths[i-1].Depth {
			d.Failf("depths", "not sorted at %d", ds.Depth)
		}
		ds.Kept = d.Uvarint("kept")
		d.Uints("removed", ds.Removed[:])
		ds.ClosedRanks = d.Int("closed ranks", 0, int64(nranks))
	}
	b.Bins = d.Uvarint("bins")
	b.Bytes = d.Uvarint("bytes")
	b.BufferSize = d.stat("buffer size")
	b.BinSize = d.stat("bin size")
	b.Policies = d.sortedStrings("policies")
	if nranks > 0 {
		b.Worst.Rank = d.rankOf("worst rank", q.Ranks)
	} else {
		b.Worst.Rank = d.Int("worst rank", 0, 0)
	}
	b.Worst.Kept = d.Uvarint("worst rank's kept")
	b.Worst.Recorded = d.Uvarint("worst rank's recorded")
	b.Reduced = d.ranks("ranks that reduced")
	d.Uints("reduction steps", b.Steps[:])
	b.Unbalanced = d.ranks("unbalanced ranks")
	b.Interrupted = d.Uvarint("interrupted")
	b.Windowed = d.Uvarint("windowed")
	b.Recovered = d.ranks("recovered ranks")
	b.Died = d.ranks("ranks that died")
	b.Unaccounted = d.Uvarint("unaccounted")
	m := &b.Messages
	msg := make([]uint64, 6)
	d.Uints("messages", msg)
	m.Locations, m.Sent, m.SentBytes, m.Received, m.ReceivedBytes, m.Shed = msg[0], msg[1], msg[2], msg[3], msg[4], msg[5]

	n = d.Count("throttled regions", 1)
	if n > 0 {
		q.Throttled = make([]ThrottledStats, n)
	}
	for i := range q.Throttled {
		t := &q.Throttled[i]
		t.Name = d.String("throttled region")
		t.Paradigm = tracefile.Paradigm(d.U8("paradigm"))
		if i > 0 && d.OK() && compareThrottled(q.Throttled[i-1], *t) >= 0 {
			d.Failf("throttled regions", "not sorted at %q", t.Name)
		}
		t.Ranks = d.ranksIn("throttled region's ranks", nranks)
		t.Locations = d.Uvarint("locations")
		t.FirstAt = d.Varint("throttled at")
		t.Visits = d.Uvarint("visits")
		t.VisitsAfter = d.Uvarint("visits after")
	}
	d.Done()
	if err := d.Err(); err != nil {
		var e *wirecodec.Error
		errors.As(err, &e)
		return fmt.Errorf("run profile: at byte %d: %w", e.Offset, e)
	}
	*p = q
	return nil
}

// runDecoder reads the binary form: the wire codec's fields and the
// profile's own, checked against what was read before them.
type runDecoder struct{ wirecodec.Reader }

// ranksIn reads how many ranks of nranks have something: at least one.
func (d *runDecoder) ranksIn(what string, nranks int) int {
	return d.Int(what, 1, int64(max(nranks, 1)))
}

// rankOf reads a rank that must be in s.
func (d *runDecoder) rankOf(what string, s RankSet) int {
	v := d.Int(what, minRank, maxRank)
	if d.OK() && !s.Contains(v) {
		d.Failf(what, "%d is not a rank of the profile", v)
	}
	return v
}

func (d *runDecoder) sortedStrings(what string) []string {
	n := d.Count(what, 1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.String(what)
		if i > 0 && d.OK() && out[i] <= out[i-1] {
			d.Failf(what, "not sorted at %q", out[i])
		}
	}
	return out
}

func (d *runDecoder) stat(what string) Stat {
	return Stat{d.Varint(what), d.Varint(what), d.Varint(what)}
}

func (d *runDecoder) ranks(what string) RankSet {
	n := d.Count(what, 1)
	if n == 0 {
		return nil
	}
	s := make(RankSet, n)
	last := int64(0)
	for i := range s {
		var first int64
		if i == 0 {
			first = d.Varint(what)
		} else {
			gap := d.Uvarint(what)
			if gap > maxRank-minRank {
				d.Failf(what, "gap %d", gap)
			}
			first = last + 2 + int64(gap)
		}
		length := d.Uvarint(what)
		if length > maxRank-minRank {
			d.Failf(what, "range of %d", length)
		}
		last = first + int64(length)
		if d.OK() && (first < minRank || last > maxRank) {
			d.Failf(what, "ranks %d to %d out of range", first, last)
		}
		if !d.OK() {
			return nil
		}
		s[i] = RankRange{int(first), int(last)}
	}
	return s
}
