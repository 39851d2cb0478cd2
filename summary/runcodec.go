package summary

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

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
	e := &runEncoder{b: append([]byte(runMagic), runVersion)}
	e.ranks(p.Ranks)
	f := &p.Facts
	e.strings(f.Names)
	e.strings(f.Hosts)
	e.int(f.Start)
	e.stat(f.Duration)
	e.int(f.Locations)
	e.int(f.LocationTime)
	e.strings(f.Clocks)
	e.float(f.MinRate)
	e.float(f.MaxRate)
	e.b = append(e.b, f.MinShift, f.MaxShift)
	e.float(f.MinProbeCost)
	e.float(f.MaxProbeCost)

	e.uint(uint64(len(p.Regions)))
	for i := range p.Regions {
		r := &p.Regions[i]
		e.string(r.Name)
		e.b = append(e.b, byte(r.Paradigm))
		e.string(r.File)
		e.int(int64(r.Line))
		e.int(int64(r.Ranks))
		e.stat(r.Visits)
		e.stat(r.Inclusive)
		e.stat(r.Exclusive)
		e.int(int64(r.Slowest))
		e.uint(r.VisitsAfter)
		e.bool(r.Throttled)
		e.uint(uint64(len(r.Counters)))
		for _, c := range r.Counters {
			e.string(c.Metric)
			e.uint(c.Inclusive)
			e.uint(c.Exclusive)
		}
	}

	b := &p.Buffer
	e.uint(b.Recorded)
	e.uint(b.Kept)
	e.uint(b.FilteredName)
	e.uint(b.FilteredDuration)
	e.uints(b.KeptByClass[:])
	e.uints(b.Removed[:])
	e.uints(usageCounts(&b.Usage))
	e.uint(uint64(len(b.Depths)))
	for _, d := range b.Depths {
		e.int(int64(d.Depth))
		e.uint(d.Kept)
		e.uints(d.Removed[:])
		e.int(int64(d.ClosedRanks))
	}
	e.uint(b.Bins)
	e.uint(b.Bytes)
	e.stat(b.BufferSize)
	e.stat(b.BinSize)
	e.strings(b.Policies)
	e.int(int64(b.Worst.Rank))
	e.uint(b.Worst.Kept)
	e.uint(b.Worst.Recorded)
	e.ranks(b.Reduced)
	e.uints(b.Steps[:])
	e.ranks(b.Unbalanced)
	e.uint(b.Interrupted)
	e.uint(b.Windowed)
	e.ranks(b.Recovered)
	e.ranks(b.Died)
	e.uint(b.Unaccounted)
	m := &b.Messages
	e.uints([]uint64{m.Locations, m.Sent, m.SentBytes, m.Received, m.ReceivedBytes, m.Shed})

	e.uint(uint64(len(p.Throttled)))
	for _, t := range p.Throttled {
		e.string(t.Name)
		e.b = append(e.b, byte(t.Paradigm))
		e.int(int64(t.Ranks))
		e.uint(t.Locations)
		e.int(t.FirstAt)
		e.uint(t.Visits)
		e.uint(t.VisitsAfter)
	}
	return e.b, nil
}

// usageCounts returns the usage errors' counters in the order of
// UsageErrors' fields, which the binary form keeps.
func usageCounts(u *tracefile.UsageErrors) []uint64 {
	return []uint64{u.UnknownRegion, u.LeaveNothingOpen, u.LeaveNotOpen, u.LeftImplicitly, u.OpenAtClose, u.AfterClose, u.MessageNoPeer}
}

func usageFields(u *tracefile.UsageErrors) []*uint64 {
	return []*uint64{&u.UnknownRegion, &u.LeaveNothingOpen, &u.LeaveNotOpen, &u.LeftImplicitly, &u.OpenAtClose, &u.AfterClose, &u.MessageNoPeer}
}

type runEncoder struct{ b []byte }

func (e *runEncoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *runEncoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *runEncoder) float(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}
func (e *runEncoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *runEncoder) string(s string) { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *runEncoder) strings(ss []string) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.string(s)
	}
}
func (e *runEncoder) uints(vs []uint64) {
	e.uint(uint64(len(vs)))
	for _, v := range vs {
		e.uint(v)
	}
}
func (e *runEncoder) stat(s Stat) { e.int(s.Sum); e.int(s.Min); e.int(s.Max) }

// ranks writes a rank set: the first range's start, then for each range
// the gap after the previous one (less the one rank that keeps them
// apart) and its length less one.
func (e *runEncoder) ranks(s RankSet) {
	e.uint(uint64(len(s)))
	for i, r := range s {
		if i == 0 {
			e.int(int64(r.First))
		} else {
			e.uint(uint64(r.First - s[i-1].Last - 2))
		}
		e.uint(uint64(r.Last - r.First))
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
	d := &runDecoder{b: data, at: len(runMagic) + 1}
	var q RunProfile
	q.Ranks = d.ranks("ranks")
	nranks := q.Ranks.Len()
	f := &q.Facts
	f.Names = d.sortedStrings("run names")
	f.Hosts = d.sortedStrings("hosts")
	f.Start = d.int("start")
	f.Duration = d.stat("duration")
	f.Locations = d.int("locations")
	f.LocationTime = d.int("location-time")
	f.Clocks = d.sortedStrings("clocks")
	f.MinRate = d.float("clock rate")
	f.MaxRate = d.float("clock rate")
	f.MinShift = d.byte("timer shift")
	f.MaxShift = d.byte("timer shift")
	f.MinProbeCost = d.float("probe cost")
	f.MaxProbeCost = d.float("probe cost")

	n := d.count("regions")
	if n > 0 {
		q.Regions = make([]RegionStats, n)
	}
	for i := range q.Regions {
		r := &q.Regions[i]
		r.Name = d.string("region name")
		r.Paradigm = tracefile.Paradigm(d.byte("paradigm"))
		if version >= 2 {
			r.File = d.string("region file")
			r.Line = d.intIn("region line", math.MinInt32, math.MaxInt32)
		}
		if i > 0 && d.err == nil && compareRegions(q.Regions[i-1], *r) >= 0 {
			d.fail("regions not sorted by name, paradigm and source at %q", r.Name)
		}
		r.Ranks = d.ranksIn("region's ranks", nranks)
		r.Visits = d.stat("visits")
		r.Inclusive = d.stat("inclusive time")
		r.Exclusive = d.stat("exclusive time")
		r.Slowest = d.rankOf("slowest rank", q.Ranks)
		r.VisitsAfter = d.uint("visits after")
		r.Throttled = d.bool("throttled")
		nc := d.count("counters")
		if nc > 0 {
			r.Counters = make([]CounterSums, nc)
		}
		for k := range r.Counters {
			c := &r.Counters[k]
			c.Metric = d.string("metric")
			if k > 0 && d.err == nil && c.Metric <= r.Counters[k-1].Metric {
				d.fail("counters not sorted at %q", c.Metric)
			}
			c.Inclusive = d.uint("counter")
			c.Exclusive = d.uint("counter")
		}
	}

	b := &q.Buffer
	b.Recorded = d.uint("recorded")
	b.Kept = d.uint("kept")
	b.FilteredName = d.uint("filtered")
	b.FilteredDuration = d.uint("filtered")
	d.array("kept by class", b.KeptByClass[:])
	d.array("removed", b.Removed[:])
	usage := make([]uint64, len(usageFields(&b.Usage)))
	d.array("usage errors", usage)
	for i, u := range usageFields(&b.Usage) {
		*u = usage[i]
	}
	n = d.count("depths")
	if n > 0 {
		b.Depths = make([]DepthStats, n)
	}
	for i := range b.Depths {
		ds := &b.Depths[i]
		ds.Depth = d.intIn("depth", math.MinInt32, math.MaxInt32)
		if i > 0 && d.err == nil && ds.Depth <= b.Depths[i-1].Depth {
			d.fail("depths not sorted at %d", ds.Depth)
		}
		ds.Kept = d.uint("kept")
		d.array("removed", ds.Removed[:])
		ds.ClosedRanks = d.intIn("closed ranks", 0, nranks)
	}
	b.Bins = d.uint("bins")
	b.Bytes = d.uint("bytes")
	b.BufferSize = d.stat("buffer size")
	b.BinSize = d.stat("bin size")
	b.Policies = d.sortedStrings("policies")
	if nranks > 0 {
		b.Worst.Rank = d.rankOf("worst rank", q.Ranks)
	} else {
		b.Worst.Rank = d.intIn("worst rank", 0, 0)
	}
	b.Worst.Kept = d.uint("worst rank's kept")
	b.Worst.Recorded = d.uint("worst rank's recorded")
	b.Reduced = d.ranks("ranks that reduced")
	d.array("reduction steps", b.Steps[:])
	b.Unbalanced = d.ranks("unbalanced ranks")
	b.Interrupted = d.uint("interrupted")
	b.Windowed = d.uint("windowed")
	b.Recovered = d.ranks("recovered ranks")
	b.Died = d.ranks("ranks that died")
	b.Unaccounted = d.uint("unaccounted")
	m := &b.Messages
	msg := make([]uint64, 6)
	d.array("messages", msg)
	m.Locations, m.Sent, m.SentBytes, m.Received, m.ReceivedBytes, m.Shed = msg[0], msg[1], msg[2], msg[3], msg[4], msg[5]

	n = d.count("throttled regions")
	if n > 0 {
		q.Throttled = make([]ThrottledStats, n)
	}
	for i := range q.Throttled {
		t := &q.Throttled[i]
		t.Name = d.string("throttled region")
		t.Paradigm = tracefile.Paradigm(d.byte("paradigm"))
		if i > 0 && d.err == nil && compareThrottled(q.Throttled[i-1], *t) >= 0 {
			d.fail("throttled regions not sorted at %q", t.Name)
		}
		t.Ranks = d.ranksIn("throttled region's ranks", nranks)
		t.Locations = d.uint("locations")
		t.FirstAt = d.int("throttled at")
		t.Visits = d.uint("visits")
		t.VisitsAfter = d.uint("visits after")
	}
	if d.err == nil && d.at != len(d.b) {
		d.fail("%d bytes after the end", len(d.b)-d.at)
	}
	if d.err != nil {
		return d.err
	}
	*p = q
	return nil
}

type runDecoder struct {
	b   []byte
	at  int
	err error
}

func (d *runDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("run profile: at byte %d: "+format, append([]any{d.at}, a...)...)
	}
}

func (d *runDecoder) uint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.at:])
	if n <= 0 {
		d.fail("%s: truncated or overlong varint", what)
		return 0
	}
	d.at += n
	return v
}

func (d *runDecoder) int(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.at:])
	if n <= 0 {
		d.fail("%s: truncated or overlong varint", what)
		return 0
	}
	d.at += n
	return v
}

// intIn reads a signed value that must be within [lo, hi].
func (d *runDecoder) intIn(what string, lo, hi int) int {
	v := d.int(what)
	if d.err == nil && (v < int64(lo) || v > int64(hi)) {
		d.fail("%s %d out of range [%d, %d]", what, v, lo, hi)
		return 0
	}
	return int(v)
}

// ranksIn reads how many ranks of nranks have something: at least one.
func (d *runDecoder) ranksIn(what string, nranks int) int {
	return d.intIn(what, 1, max(nranks, 1))
}

// rankOf reads a rank that must be in s.
func (d *runDecoder) rankOf(what string, s RankSet) int {
	v := d.intIn(what, minRank, maxRank)
	if d.err == nil && !s.Contains(v) {
		d.fail("%s %d is not a rank of the profile", what, v)
	}
	return v
}

func (d *runDecoder) byte(what string) uint8 {
	if d.err != nil {
		return 0
	}
	if d.at >= len(d.b) {
		d.fail("%s: truncated", what)
		return 0
	}
	d.at++
	return d.b[d.at-1]
}

func (d *runDecoder) bool(what string) bool {
	switch v := d.byte(what); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("%s: %d is not a boolean", what, v)
		return false
	}
}

func (d *runDecoder) float(what string) float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.at < 8 {
		d.fail("%s: truncated", what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.at:]))
	if math.IsNaN(v) {
		d.fail("%s: not a number", what)
		return 0
	}
	d.at += 8
	return v
}

// count reads the length of a list, each of whose elements takes at least
// a byte: so a corrupt length cannot make a large allocation.
func (d *runDecoder) count(what string) int {
	n := d.uint(what)
	if d.err == nil && n > uint64(len(d.b)-d.at) {
		d.fail("%s: %d of them in %d bytes", what, n, len(d.b)-d.at)
		return 0
	}
	return int(n)
}

func (d *runDecoder) string(what string) string {
	n := d.count(what)
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.at : d.at+n])
	d.at += n
	return s
}

func (d *runDecoder) sortedStrings(what string) []string {
	n := d.count(what)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string(what)
		if i > 0 && d.err == nil && out[i] <= out[i-1] {
			d.fail("%s not sorted at %q", what, out[i])
		}
	}
	return out
}

// array reads a fixed array written with its length: a shorter one (of an
// older writer) leaves the rest 0, a longer one is an error.
func (d *runDecoder) array(what string, dst []uint64) {
	n := d.count(what)
	if d.err == nil && n > len(dst) {
		d.fail("%s: %d of them, this reader knows %d", what, n, len(dst))
		return
	}
	for i := 0; i < n; i++ {
		dst[i] = d.uint(what)
	}
}

func (d *runDecoder) stat(what string) Stat {
	return Stat{d.int(what), d.int(what), d.int(what)}
}

func (d *runDecoder) ranks(what string) RankSet {
	n := d.count(what)
	if n == 0 {
		return nil
	}
	s := make(RankSet, n)
	last := int64(0)
	for i := range s {
		var first int64
		if i == 0 {
			first = d.int(what)
		} else {
			gap := d.uint(what)
			if gap > maxRank-minRank {
				d.fail("%s: gap %d", what, gap)
			}
			first = last + 2 + int64(gap)
		}
		length := d.uint(what)
		if length > maxRank-minRank {
			d.fail("%s: range of %d", what, length)
		}
		last = first + int64(length)
		if d.err == nil && (first < minRank || last > maxRank) {
			d.fail("%s: ranks %d to %d out of range", what, first, last)
		}
		if d.err != nil {
			return nil
		}
		s[i] = RankRange{int(first), int(last)}
	}
	return s
}
