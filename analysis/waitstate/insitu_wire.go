package waitstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// The wire form of InSitu: how the ranks' parts travel up the tree at the
// collective end, where each merge decodes two parts and encodes one. It
// is binary and compact (varints, every string once in a table, then by
// index): the JSON form (EncodeInSitu) repeats the region of each value
// and spells every number, and its decoding was most of a merge's time.
// The archive keeps the JSON form. A slice's count is written one more
// than its length, 0 for nil, so that a part read back encodes to the
// same JSON as the part sent.

// inSituWireMagic begins the wire form, and changes with it.
const inSituWireMagic = "HMBWS1"

// wireWriter writes the wire form: the body, and the strings' table.
type wireWriter struct {
	b     wirecodec.Writer
	strs  []string
	index map[string]int
}

func (w *wireWriter) uv(v uint64) { w.b.Uvarint(v) }
func (w *wireWriter) sv(v int64)  { w.b.Varint(v) }
func (w *wireWriter) bool(v bool) { w.b.Bool(v) }

// count writes n, the length of a slice, nil when !present.
func (w *wireWriter) count(n int, present bool) {
	if !present {
		w.uv(0)
		return
	}
	w.uv(uint64(n) + 1)
}

func (w *wireWriter) str(s string) {
	i, ok := w.index[s]
	if !ok {
		i = len(w.strs)
		w.index[s] = i
		w.strs = append(w.strs, s)
	}
	w.uv(uint64(i))
}

func (w *wireWriter) value(v Value) {
	w.b = append(w.b, byte(v.Pattern))
	w.str(v.Region)
	w.sv(int64(v.Path))
	w.sv(int64(v.Loc))
	w.sv(v.Time)
	w.sv(int64(v.Count))
}

// EncodeInSituWire returns s in its wire form, for the gathering of the
// ranks' parts; DecodeInSituWire reads it.
func EncodeInSituWire(s *InSitu) []byte {
	w := &wireWriter{index: map[string]int{}}
	w.count(len(s.Locations), s.Locations != nil)
	for _, l := range s.Locations {
		w.sv(int64(l.File))
		w.sv(int64(l.Loc))
		w.uv(uint64(l.ID))
		w.sv(int64(l.Rank))
		w.str(l.Name)
	}
	w.count(len(s.Paths), s.Paths != nil)
	for _, p := range s.Paths {
		w.sv(int64(p.Parent))
		w.str(p.Region)
	}
	w.count(len(s.Values), s.Values != nil)
	for _, v := range s.Values {
		w.value(v)
	}
	w.sv(s.Total)
	w.bool(s.Synced)
	for _, n := range []uint64{s.Sends, s.Matched, s.UnmatchedRecvs, s.UnmatchedCollectives, s.Unresolved, s.ClockViolations, s.DelayIncomplete} {
		w.uv(n)
	}
	w.count(len(s.Delays), s.Delays != nil)
	for _, v := range s.Delays {
		w.value(v)
	}
	// A delay cost's own Pattern is left out, as JSON leaves it.
	w.count(len(s.DelayCosts), s.DelayCosts != nil)
	for _, c := range s.DelayCosts {
		w.b = append(w.b, byte(c.Pattern))
		w.bool(c.LongTerm)
		w.str(c.Region)
		w.sv(int64(c.Path))
		w.sv(int64(c.Loc))
		w.sv(c.Time)
	}
	w.count(len(s.Unexplained), s.Unexplained != nil)
	for _, f := range s.Unexplained {
		w.b.U64(math.Float64bits(f))
	}
	w.count(len(s.Worst), s.Worst != nil)
	for _, x := range s.Worst {
		w.b = append(w.b, byte(x.Pattern))
		w.str(x.Region)
		w.sv(int64(x.Path))
		w.sv(int64(x.Loc))
		w.sv(x.Start)
		w.sv(x.Time)
		w.sv(int64(x.Peer))
		w.sv(int64(x.PeerRank))
		w.sv(int64(x.PeerLoc))
		w.sv(int64(x.DelayRank))
		w.bool(x.Since)
		w.bool(x.Delay != nil)
		if d := x.Delay; d != nil {
			w.sv(int64(d.Loc))
			w.str(d.Region)
			w.sv(d.Time)
			w.sv(d.Interval)
			w.sv(d.Since)
			w.bool(d.Work != nil)
			if d.Work != nil {
				w.sv(*d.Work)
			}
			w.str(d.WorkRegion)
		}
	}
	w.bool(s.Path != nil)
	if p := s.Path; p != nil {
		w.count(len(p.Values), p.Values != nil)
		for _, v := range p.Values {
			w.str(v.Region)
			w.sv(int64(v.Path))
			w.sv(int64(v.Loc))
			w.sv(v.Time)
		}
		w.bool(p.HasEnd)
		w.sv(p.End)
		w.sv(int64(p.LastRank))
		w.sv(int64(p.LastLoc))
		w.bool(p.HasStart)
		w.sv(p.Start)
		w.sv(int64(p.Hops))
	}
	w.count(len(s.Exclusive), s.Exclusive != nil)
	for _, e := range s.Exclusive {
		w.str(e.Region)
		w.sv(e.Ns)
	}
	w.sv(s.OriginWall)
	w.sv(s.OriginSync)

	// The header: the magic, the strings, then the body.
	n := len(inSituWireMagic) + binary.MaxVarintLen64 + len(w.b)
	for _, s := range w.strs {
		n += binary.MaxVarintLen64 + len(s)
	}
	out := make(wirecodec.Writer, 0, n)
	out = append(out, inSituWireMagic...)
	out.Uvarint(uint64(len(w.strs)))
	for _, s := range w.strs {
		out.String(s)
	}
	return append(out, w.b...)
}

// wireIn reads the wire form, its strings by index.
type wireIn struct {
	wireReader
	strs []string
}

func (r *wireIn) str() string {
	i := r.small()
	if r.OK() && i >= len(r.strs) {
		r.fail(fmt.Errorf("string %d of %d", i, len(r.strs)))
	}
	if !r.OK() {
		return ""
	}
	return r.strs[i]
}

// int reads a signed index or count that fits an int32.
func (r *wireIn) int() int {
	v := r.sv()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail(fmt.Errorf("an index of %d", v))
		return 0
	}
	return int(v)
}

func (r *wireIn) bool() bool { return r.byte1() != 0 }

// count reads a slice's length and whether it is there, bounded by what
// is left to read (each element takes a byte at least).
func (r *wireIn) count() (int, bool) {
	n := r.small()
	if n == 0 || !r.OK() {
		return 0, false
	}
	if n-1 > r.Len() {
		r.fail(fmt.Errorf("%d elements in %d bytes", n-1, r.Len()))
		return 0, false
	}
	return n - 1, true
}

func (r *wireIn) value() Value {
	var v Value
	v.Pattern = Pattern(r.byte1())
	v.Region = r.str()
	v.Path = r.int()
	v.Loc = r.int()
	v.Time = r.sv()
	v.Count = r.int()
	return v
}

func (r *wireIn) values() []Value {
	n, ok := r.count()
	if !ok {
		return nil
	}
	vs := make([]Value, 0, n)
	for i := 0; i < n && r.OK(); i++ {
		vs = append(vs, r.value())
	}
	return vs
}

// DecodeInSituWire reads what EncodeInSituWire wrote, checking its
// indices as DecodeInSitu does.
func DecodeInSituWire(b []byte) (*InSitu, error) {
	if len(b) < len(inSituWireMagic) || string(b[:len(inSituWireMagic)]) != inSituWireMagic {
		return nil, errors.New("waitstate: the in-situ wait states: not their wire form")
	}
	r := &wireIn{wireReader: newWireReader(b, len(inSituWireMagic))}
	ns := r.small()
	if ns > r.Len() {
		r.fail(fmt.Errorf("%d strings in %d bytes", ns, r.Len()))
		ns = 0
	}
	r.strs = make([]string, 0, ns)
	for i := 0; i < ns && r.OK(); i++ {
		r.strs = append(r.strs, r.wireReader.str())
	}
	s := &InSitu{}
	if n, ok := r.count(); ok {
		s.Locations = make([]Location, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			var l Location
			l.File = r.int()
			l.Loc = r.int()
			id := r.uv()
			if id > math.MaxUint32 {
				r.fail(fmt.Errorf("a location's id %d", id))
			}
			l.ID = uint32(id)
			l.Rank = r.int()
			l.Name = r.str()
			s.Locations = append(s.Locations, l)
		}
	}
	if n, ok := r.count(); ok {
		s.Paths = make([]CallPath, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			p := CallPath{Parent: r.int()}
			p.Region = r.str()
			s.Paths = append(s.Paths, p)
		}
	}
	s.Values = r.values()
	s.Total = r.sv()
	s.Synced = r.bool()
	for _, p := range []*uint64{&s.Sends, &s.Matched, &s.UnmatchedRecvs, &s.UnmatchedCollectives, &s.Unresolved, &s.ClockViolations, &s.DelayIncomplete} {
		*p = r.uv()
	}
	s.Delays = r.values()
	if n, ok := r.count(); ok {
		s.DelayCosts = make([]inSituCost, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			var c inSituCost
			c.Pattern = Pattern(r.byte1())
			c.LongTerm = r.bool()
			c.Region = r.str()
			c.Path = r.int()
			c.Loc = r.int()
			c.Time = r.sv()
			s.DelayCosts = append(s.DelayCosts, c)
		}
	}
	if n, ok := r.count(); ok {
		s.Unexplained = make([]float64, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			s.Unexplained = append(s.Unexplained, math.Float64frombits(r.u64()))
		}
	}
	if n, ok := r.count(); ok {
		s.Worst = make([]inSituWait, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			var x inSituWait
			x.Pattern = Pattern(r.byte1())
			x.Region = r.str()
			x.Path = r.int()
			x.Loc = r.int()
			x.Start = r.sv()
			x.Time = r.sv()
			x.Peer = r.int()
			x.PeerRank = r.int()
			x.PeerLoc = r.int()
			x.DelayRank = r.int()
			x.Since = r.bool()
			if r.bool() {
				d := &Delay{Loc: r.int()}
				d.Region = r.str()
				d.Time = r.sv()
				d.Interval = r.sv()
				d.Since = r.sv()
				if r.bool() {
					work := r.sv()
					d.Work = &work
				}
				d.WorkRegion = r.str()
				x.Delay = d
			}
			s.Worst = append(s.Worst, x)
		}
	}
	if r.bool() {
		p := &inSituPath{}
		if n, ok := r.count(); ok {
			p.Values = make([]PathTime, 0, n)
			for i := 0; i < n && r.OK(); i++ {
				v := PathTime{Region: r.str()}
				v.Path = r.int()
				v.Loc = r.int()
				v.Time = r.sv()
				p.Values = append(p.Values, v)
			}
		}
		p.HasEnd = r.bool()
		p.End = r.sv()
		p.LastRank = r.int()
		p.LastLoc = r.int()
		p.HasStart = r.bool()
		p.Start = r.sv()
		p.Hops = r.int()
		s.Path = p
	}
	if n, ok := r.count(); ok {
		s.Exclusive = make([]RegionNs, 0, n)
		for i := 0; i < n && r.OK(); i++ {
			e := RegionNs{Region: r.str()}
			e.Ns = r.sv()
			s.Exclusive = append(s.Exclusive, e)
		}
	}
	s.OriginWall = r.sv()
	s.OriginSync = r.sv()
	if r.OK() && r.Len() > 0 {
		r.fail(fmt.Errorf("%d bytes after the end", r.Len()))
	}
	if !r.OK() {
		return nil, fmt.Errorf("waitstate: the in-situ wait states' wire form: %w", r.Err())
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}
