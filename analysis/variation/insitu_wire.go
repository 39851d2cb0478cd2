package variation

import (
	"fmt"
	"math"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The wire form of the parts that go up the reduction tree (a Choice, the
// Segments): binary, varints, the floats in 8 bytes. The root of the tree
// decodes every rank's part once and, at each of its ⌈log₂ p⌉ levels,
// encodes its running merge; in JSON a segment took about 110 bytes and
// a merge of 10⁵ ranks' segments 43 s of the root's CPU (BenchmarkRoot-
// MergeScale in cshim). A slice's count is written one more than its
// length, 0 for nil, and a map's likewise, so that a part read back
// encodes to the same JSON as the part sent. The Cut goes down the tree in
// a wire form of what cutting reads (Local, Segments): the segment region,
// how it is cut and the run's axis. The choice it was made from and the
// buffers' losses only Finish reads, at the root, which keeps its Cut; and
// every rank decoding the whole Cut in JSON cost it its first use of
// encoding/json on the Plan's types, 0.4 ms of CPU a rank. The results
// the archive keeps stay in JSON (Encode).

// The wire forms begin with their magic, which changes with them.
const (
	choiceWireMagic   = "HMBVC1"
	segmentsWireMagic = "HMBVS1"
	cutWireMagic      = "HMBVK1"
)

// EncodeWire returns the wire form of v, a *Choice or *Segments, or what
// cutting reads of a *Cut (an error for a Cut with extra synchronization
// patterns, which the in-situ choice never makes).
func EncodeWire(v any) ([]byte, error) {
	var w wirecodec.Writer
	switch x := v.(type) {
	case *Choice:
		w = append(w, choiceWireMagic...)
		if err := writeChoice(&w, x); err != nil {
			return nil, err
		}
	case *Segments:
		// Sized once: a row takes about 40 bytes, a segment about 15.
		w = make(wirecodec.Writer, 0, len(segmentsWireMagic)+48*len(x.Rows)+16*len(x.Segments))
		w = append(w, segmentsWireMagic...)
		writeSegments(&w, x)
	case *Cut:
		if x.Plan.Sync.Len() > 0 {
			return nil, fmt.Errorf("variation: a Cut with synchronization patterns (%s) has no wire form", x.Plan.Sync)
		}
		w = append(w, cutWireMagic...)
		writeCut(&w, x)
	default:
		return nil, fmt.Errorf("variation: no wire form of %T", v)
	}
	return w, nil
}

// DecodeWire reads what EncodeWire wrote into v, a *Choice, *Segments or
// *Cut (what cutting reads of it).
func DecodeWire(b []byte, v any) error {
	magic := ""
	switch v.(type) {
	case *Choice:
		magic = choiceWireMagic
	case *Segments:
		magic = segmentsWireMagic
	case *Cut:
		magic = cutWireMagic
	default:
		return fmt.Errorf("variation: no wire form of %T", v)
	}
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return fmt.Errorf("variation: in-situ %T: not its wire form", v)
	}
	r := wirecodec.MakeReader(b, len(magic))
	switch x := v.(type) {
	case *Choice:
		*x = readChoice(&r)
	case *Segments:
		*x = readSegments(&r)
	case *Cut:
		*x = readCut(&r)
	}
	r.Done()
	if err := r.Err(); err != nil {
		return fmt.Errorf("variation: in-situ %T: %w", v, err)
	}
	return nil
}

// float writes v in one byte when it is +0 (a part's scores and medians,
// before the root scores them), else a flag and its 8 bytes.
func float(w *wirecodec.Writer, v float64) {
	if math.Float64bits(v) == 0 {
		w.U8(0)
		return
	}
	w.U8(1)
	w.F64(v)
}

func readFloat(r *wirecodec.Reader, field string) float64 {
	if r.Bool(field) {
		return r.F64(field)
	}
	return 0
}

// varint bounds of the ints written as int64.
const (
	minInt = math.MinInt
	maxInt = math.MaxInt
)

func writeChoice(w *wirecodec.Writer, c *Choice) error {
	w.Varint(int64(c.Locations))
	w.Varint(int64(c.Ranks))
	w.Varint(c.Run)
	w.Varint(c.Startup)
	w.Varint(c.Traced)
	w.OptCount(len(c.Totals), c.Totals != nil)
	for _, t := range c.Totals {
		w.String(t.Name)
		w.Uvarint(t.Visits)
		w.Varint(t.Inclusive)
		w.Varint(t.Exclusive)
		w.Varint(int64(t.Locations))
	}
	w.OptCount(len(c.Paradigms), c.Paradigms != nil)
	for _, name := range sortedKeys(c.Paradigms) {
		w.String(name)
		w.U8(uint8(c.Paradigms[name]))
	}
	w.OptCount(len(c.Waits), c.Waits != nil)
	for _, name := range sortedKeys(c.Waits) {
		s := c.Waits[name]
		if s == nil {
			return fmt.Errorf("variation: in-situ *Choice: no waits in %q", name)
		}
		w.String(name)
		w.Varint(s.Traced)
		w.Varint(s.Waiting)
		w.Varint(s.Span)
		w.Varint(s.Before)
		w.OptCount(len(s.Irregular), s.Irregular != nil)
		for _, v := range s.Irregular {
			w.F64(v)
		}
	}
	w.Bool(c.Axis.Synced)
	w.Uvarint(c.Axis.Reference)
	w.Varint(c.Axis.Origin)
	w.Varint(c.Axis.Wall)
	w.OptCount(len(c.Losses), c.Losses != nil)
	for _, l := range c.Losses {
		w.U8(uint8(l.Kind))
		w.Varint(int64(l.Depth))
		w.U8(uint8(l.Class))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func readChoice(r *wirecodec.Reader) Choice {
	var c Choice
	c.Locations = r.Int("locations", 0, maxInt)
	c.Ranks = r.Int("ranks", 0, maxInt)
	c.Run = r.Varint("run")
	c.Startup = r.Varint("startup")
	c.Traced = r.Varint("traced")
	if n, ok := r.OptCount("totals", 6); ok {
		c.Totals = make([]RegionTotal, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			c.Totals = append(c.Totals, RegionTotal{Name: r.String("total"), Visits: r.Uvarint("visits"),
				Inclusive: r.Varint("inclusive"), Exclusive: r.Varint("exclusive"), Locations: r.Int("total locations", 0, maxInt)})
		}
	}
	if n, ok := r.OptCount("paradigms", 2); ok {
		c.Paradigms = make(map[string]tracefile.Paradigm, n)
		for i := 0; i < n && r.OK(); i++ {
			name := r.String("paradigm")
			c.Paradigms[name] = tracefile.Paradigm(r.U8("paradigm"))
		}
	}
	if n, ok := r.OptCount("waits", 6); ok {
		c.Waits = make(waitSums, n)
		for i := 0; i < n && r.OK(); i++ {
			name := r.String("waits")
			s := &regionWaits{Traced: r.Varint("traced"), Waiting: r.Varint("waiting"), Span: r.Varint("span"), Before: r.Varint("before")}
			if m, ok := r.OptCount("irregular", 8); ok {
				s.Irregular = make([]float64, 0, m)
				for j := 0; j < m && r.OK(); j++ {
					s.Irregular = append(s.Irregular, r.F64("irregular"))
				}
			}
			c.Waits[name] = s
		}
	}
	c.Axis.Synced = r.Bool("synced")
	c.Axis.Reference = r.Uvarint("reference")
	c.Axis.Origin = r.Varint("origin")
	c.Axis.Wall = r.Varint("wall")
	if n, ok := r.OptCount("losses", 3); ok {
		c.Losses = make([]Loss, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			c.Losses = append(c.Losses, Loss{Kind: LossKind(r.U8("loss")), Depth: r.Int("loss depth", minInt, maxInt), Class: tracefile.Class(r.U8("loss class"))})
		}
	}
	return c
}

func writeSegments(w *wirecodec.Writer, s *Segments) {
	w.OptCount(len(s.Rows), s.Rows != nil)
	for _, row := range s.Rows {
		w.String(row.Label)
		w.Varint(int64(row.File))
		w.Uvarint(uint64(row.Location))
		w.Varint(int64(row.Segments))
		w.Uvarint(row.Invocations)
		w.Uvarint(row.SyncCalls)
		w.Uvarint(row.SyncKept)
		w.Varint(int64(row.Truncated))
		w.Varint(int64(row.Recursive))
		w.Varint(int64(row.Starts))
		float(w, row.Resolution)
		float(w, row.Median)
	}
	w.OptCount(len(s.Segments), s.Segments != nil)
	// A segment's row and start as the difference from the one before,
	// its SOS-time from Duration - Sync: each a byte or two.
	row, start := 0, int64(0)
	for _, seg := range s.Segments {
		w.Varint(int64(seg.Row - row))
		w.Varint(int64(seg.Index))
		w.Varint(seg.Start - start)
		w.Varint(seg.Duration)
		w.Varint(seg.Sync)
		w.Varint(seg.SOS - (seg.Duration - seg.Sync))
		float(w, seg.Score)
		row, start = seg.Row, seg.Start
	}
}

func readSegments(r *wirecodec.Reader) Segments {
	var s Segments
	if n, ok := r.OptCount("rows", 13); ok {
		s.Rows = make([]Row, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			s.Rows = append(s.Rows, Row{Label: r.String("label"), File: r.Int("file", minInt, maxInt), Location: r.U32("location"),
				Segments: r.Int("row segments", minInt, maxInt), Invocations: r.Uvarint("invocations"), SyncCalls: r.Uvarint("sync calls"),
				SyncKept: r.Uvarint("sync kept"), Truncated: r.Int("truncated", minInt, maxInt), Recursive: r.Int("recursive", minInt, maxInt),
				Starts: r.Int("starts", minInt, maxInt), Resolution: readFloat(r, "resolution"), Median: readFloat(r, "median")})
		}
	}
	if n, ok := r.OptCount("segments", 7); ok {
		s.Segments = make([]Segment, 0, n)
		row, start := 0, int64(0)
		for i := 0; i < n && r.OK(); i++ {
			var seg Segment
			seg.Row = row + r.Int("row", -int64(len(s.Rows)), int64(len(s.Rows)))
			if r.OK() && (seg.Row < 0 || seg.Row >= len(s.Rows)) {
				r.Failf("row", "row %d of %d", seg.Row, len(s.Rows))
			}
			seg.Index = r.Int("index", minInt, maxInt)
			seg.Start = start + r.Varint("start")
			seg.Duration = r.Varint("duration")
			seg.Sync = r.Varint("sync")
			seg.SOS = r.Varint("sos") + (seg.Duration - seg.Sync)
			seg.Score = readFloat(r, "score")
			s.Segments = append(s.Segments, seg)
			row, start = seg.Row, seg.Start
		}
	}
	return s
}

// writeCut writes what cutting reads of c (Cut.local, Plan.NewScanner).
func writeCut(w *wirecodec.Writer, c *Cut) {
	w.String(c.Plan.Region)
	w.Bool(c.Plan.Between)
	w.Bool(c.Plan.ByRank)
	w.Bool(c.Axis.Synced)
	w.Uvarint(c.Axis.Reference)
	w.Varint(c.Axis.Origin)
	w.Varint(c.Axis.Wall)
}

func readCut(r *wirecodec.Reader) Cut {
	var c Cut
	c.Plan.Region = r.String("cut region")
	c.Plan.Between = r.Bool("cut between")
	c.Plan.ByRank = r.Bool("cut by rank")
	c.Axis.Synced = r.Bool("cut axis synced")
	c.Axis.Reference = r.Uvarint("cut axis reference")
	c.Axis.Origin = r.Varint("cut axis origin")
	c.Axis.Wall = r.Varint("cut axis wall")
	return c
}
