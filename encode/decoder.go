package encode

import (
	"encoding/binary"
	"fmt"
)

// Error is a malformed bin: the offset within the bin and the reason.
type Error struct {
	Offset int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Reason) }

// Decoder reads the records of one bin. It never panics: malformed input
// ends the iteration and Err reports where and why.
type Decoder struct {
	tech       Techniques
	short      bool // Predict is on: Next tries nextShort first
	b          []byte
	off        int
	time       uint64
	next       uint32
	binTime    uint64
	openRegion uint32
	pred       [predSlots]uint32 // the Encoder's pred
	prev       [MaxMetrics]uint64
	vals       [MaxMetrics]uint64
	err        error
}

// NewDecoder returns a Decoder for bins written with the given techniques.
func NewDecoder(t Techniques) *Decoder {
	return &Decoder{tech: t, short: t&predictOn == predictOn}
}

// Reset starts decoding bin b, which must begin with a BIN record.
func (d *Decoder) Reset(b []byte) error {
	*d = Decoder{tech: d.tech, short: d.short, b: b}
	if len(b) == 0 || b[0] != TokBin {
		return d.fail("bin does not start with a BIN record")
	}
	d.off = 1
	leb := d.tech&LEB128 != 0
	t, ok := d.uint(8, leb)
	if !ok {
		return d.err
	}
	r, ok := d.uint(4, leb)
	if !ok {
		return d.err
	}
	if r > 0xFFFFFFFF {
		return d.fail("open region out of range")
	}
	d.time, d.binTime, d.openRegion = t, t, uint32(r)
	d.pred[0] = uint32(r)
	return nil
}

// BinTime returns the absolute time in the bin's BIN record.
func (d *Decoder) BinTime() uint64 { return d.binTime }

// OpenRegion returns the region that was open at the stream's depth when
// the bin started, 0 if none.
func (d *Decoder) OpenRegion() uint32 { return d.openRegion }

// Offset returns the offset of the next record within the bin.
func (d *Decoder) Offset() int { return d.off }

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

func (d *Decoder) fail(reason string) error {
	if d.err == nil {
		d.err = &Error{Offset: d.off, Reason: reason}
	}
	d.off = len(d.b)
	return d.err
}

// uint reads an integer field: a LEB128 varint, or fixed width little endian.
func (d *Decoder) uint(width int, leb bool) (uint64, bool) {
	if leb {
		v, n := binary.Uvarint(d.b[d.off:])
		if n <= 0 {
			if n == 0 {
				d.fail("truncated varint")
			} else {
				d.fail("varint overflows 64 bits")
			}
			return 0, false
		}
		d.off += n
		return v, true
	}
	if len(d.b)-d.off < width {
		d.fail(fmt.Sprintf("truncated %d-byte field", width))
		return 0, false
	}
	var v uint64
	switch width {
	case 1:
		v = uint64(d.b[d.off])
	case 4:
		v = uint64(binary.LittleEndian.Uint32(d.b[d.off:]))
	default:
		v = binary.LittleEndian.Uint64(d.b[d.off:])
	}
	d.off += width
	return v, true
}

func (d *Decoder) uint32Field(what string, leb bool) (uint32, bool) {
	v, ok := d.uint(4, leb)
	if ok && v > 0xFFFFFFFF {
		d.fail(what + " out of range")
		return 0, false
	}
	return uint32(v), ok
}

// timeField reads a time field and returns the absolute time.
func (d *Decoder) timeField(leb bool) (uint64, bool) {
	at := d.off
	v, ok := d.uint(8, leb)
	if !ok {
		return 0, false
	}
	if d.tech&Delta == 0 {
		if v < d.time {
			d.off = at
			d.fail("time goes backwards")
			return 0, false
		}
		return v, true
	}
	t := d.time + v
	if t < d.time {
		d.off = at
		d.fail("time overflows")
		return 0, false
	}
	return t, true
}

// fields reads len(f) LEB128 fields from the record's next byte on, for
// the records of several fields (messages, collectives): one call per
// record rather than per field, and no bounds or error bookkeeping per
// field. It returns the offset after them, or false if a field is
// truncated or overflows, and then changes nothing, so that the caller
// decodes the record field by field and reports the fault where it is.
func (d *Decoder) fields(f []uint64) (int, bool) {
	b, o := d.b, d.off
	for i := range f {
		if o >= len(b) {
			return 0, false
		}
		if c := b[o]; c < 0x80 {
			f[i] = uint64(c)
			o++
			continue
		}
		if o+1 < len(b) && b[o+1] < 0x80 {
			f[i] = uint64(b[o]&0x7F) | uint64(b[o+1])<<7
			o += 2
			continue
		}
		v, n := binary.Uvarint(b[o:])
		if n <= 0 {
			return 0, false
		}
		f[i] = v
		o += n
	}
	return o, true
}

// Next decodes the next record into r. It returns false at the end of the
// bin or on error; Err tells which.
func (d *Decoder) Next(r *Record) bool {
	if d.err != nil {
		return false
	}
	if d.short && d.nextShort(r) {
		return true
	}
	if d.off >= len(d.b) {
		return false
	}
	leb := d.tech&LEB128 != 0
	seq, explicit := uint32(0), false
	tok := d.b[d.off]
	if (tok >= TokSeqInline && tok < tokPlain) || tok == TokSeq {
		if tok != TokSeq && d.tech&Tokens == 0 {
			return d.badToken(d.off, tok)
		}
		d.off++
		explicit = true
		if tok&0x1F != 0 && tok < tokPlain {
			seq = uint32(tok & 0x1F)
		} else {
			v, ok := d.uint32Field("seq", leb)
			if !ok {
				return false
			}
			seq = v
		}
		if d.off >= len(d.b) {
			d.fail("SEQ prefix at the end of the bin")
			return false
		}
		tok = d.b[d.off]
		if (tok >= TokSeqInline && tok < tokPlain) || tok == TokSeq {
			d.fail("two SEQ prefixes in a row")
			return false
		}
	}
	start := d.off
	d.off++
	t := d.time
	*r = Record{}
	ok := true
	pred := d.tech&predictOn == predictOn
	// Records of several fields take d.fields when every field is a
	// LEB128 varint and the time a delta; what it cannot take (a
	// malformed field) is decoded field by field below.
	delta := d.tech&(LEB128|Delta) == LEB128|Delta
	switch {
	case pred && tok < TokSeqInline:
		t, ok = d.predRecord(r, tok, start)
	case tok < TokEnterInline:
		if d.tech&(Tokens|Delta|LEB128) != Tokens|Delta|LEB128 {
			return d.badToken(start, tok)
		}
		r.Kind = KindLeave
		delta := uint64(tok & 0x1F)
		if tok&0x20 != 0 {
			var hi uint64
			if hi, ok = d.uint(8, true); ok {
				if hi > (1<<64-1)>>5 {
					d.fail("leave delta overflows 64 bits")
					return false
				}
				delta |= hi << 5
			}
		}
		if ok {
			if t+delta < t {
				d.off = start
				d.fail("time overflows")
				return false
			}
			t += delta
		}
	case tok < TokSeqInline:
		if d.tech&Tokens == 0 {
			return d.badToken(start, tok)
		}
		r.Kind = KindEnter
		now := tok >= TokEnterNowInline
		if now && d.tech&SplitTiming == 0 {
			return d.badToken(start, tok)
		}
		r.Region = uint32(tok & 0x3F)
		if r.Region == 0 {
			r.Region, ok = d.uint32Field("region", leb)
		}
		if ok && !now {
			t, ok = d.timeField(leb)
		}
	case tok == TokEnter, tok == TokEnterNow:
		r.Kind = KindEnter
		if tok == TokEnter {
			t, ok = d.timeField(leb)
		} else if d.tech&SplitTiming == 0 {
			return d.badToken(start, tok)
		}
		if ok {
			r.Region, ok = d.uint32Field("region", leb)
		}
	case tok == TokLeave:
		r.Kind = KindLeave
		t, ok = d.timeField(leb)
	case tok == TokLeaveNow:
		if d.tech&SplitTiming == 0 {
			return d.badToken(start, tok)
		}
		r.Kind = KindLeave
	case tok >= TokSend && tok <= TokRecvRank:
		r.Kind = KindSend
		if tok == TokRecv || tok == TokRecvRank {
			r.Kind = KindRecv
		}
		r.PeerRank = tok >= TokSendRank
		if delta {
			var f [4]uint64 // time, peer, tag, bytes
			if o, fine := d.fields(f[:]); fine && d.time+f[0] >= d.time && f[2] <= 0xFFFFFFFF {
				d.off, t = o, d.time+f[0]
				r.Peer, r.Tag, r.Bytes = f[1], uint32(f[2]), f[3]
				break
			}
		}
		t, ok = d.timeField(leb)
		if ok {
			r.Peer, ok = d.uint(8, leb)
		}
		if ok {
			r.Tag, ok = d.uint32Field("tag", leb)
		}
		if ok {
			r.Bytes, ok = d.uint(8, leb)
		}
	case tok == TokMetric:
		r.Kind = KindMetric
		t, ok = d.timeField(leb)
		var n uint64
		if ok {
			n, ok = d.uint(1, leb)
		}
		if ok && n > MaxMetrics {
			d.fail(fmt.Sprintf("metric record with %d values (at most %d)", n, MaxMetrics))
			return false
		}
		for i := 0; ok && i < int(n); i++ {
			var u uint64
			u, ok = d.uint(8, leb)
			if d.tech&Delta != 0 {
				u = d.prev[i] + uint64(unzigzag(u))
				d.prev[i] = u
			}
			d.vals[i] = u
		}
		r.Values = d.vals[:n]
	case tok == TokColl, tok == TokCollComm:
		r.Kind = KindCollective
		if delta {
			var f [5]uint64 // time, root+1, bytes, received, comm
			n := 3
			if tok == TokCollComm {
				n = 5
			}
			if o, fine := d.fields(f[:n]); fine && d.time+f[0] >= d.time && f[1] <= 1<<62 && f[4] <= 0xFFFFFFFF {
				d.off, t = o, d.time+f[0]
				r.Root, r.Bytes, r.Received, r.Comm = int64(f[1])-1, f[2], f[3], uint32(f[4])
				break
			}
		}
		t, ok = d.timeField(leb)
		if ok {
			r.Root, ok = d.root()
		}
		if ok {
			r.Bytes, ok = d.uint(8, leb)
		}
		if ok && tok == TokCollComm {
			if r.Received, ok = d.uint(8, leb); ok {
				r.Comm, ok = d.uint32Field("comm", leb)
			}
		}
	case tok >= TokSendComm && tok <= TokIrecvRank:
		i := tok - TokSendComm // bit 0: a receive, bit 1: a rank peer, bit 2: non-blocking
		r.Kind = [...]Kind{KindSend, KindRecv, KindSend, KindRecv, KindIsend, KindIrecv, KindIsend, KindIrecv}[i]
		r.PeerRank = i&2 != 0
		isend := i&4 != 0
		if delta {
			var f [6]uint64 // time, peer, tag, bytes, comm, request
			n := 5
			if isend {
				n = 6
			}
			if o, fine := d.fields(f[:n]); fine && d.time+f[0] >= d.time && f[2] <= 0xFFFFFFFF && f[4] <= 0xFFFFFFFF {
				d.off, t = o, d.time+f[0]
				r.Peer, r.Tag, r.Bytes, r.Comm, r.Request = f[1], uint32(f[2]), f[3], uint32(f[4]), f[5]
				break
			}
		}
		t, ok = d.timeField(leb)
		if ok {
			r.Peer, ok = d.uint(8, leb)
		}
		if ok {
			r.Tag, ok = d.uint32Field("tag", leb)
		}
		if ok {
			r.Bytes, ok = d.uint(8, leb)
		}
		if ok {
			r.Comm, ok = d.uint32Field("comm", leb)
		}
		if ok && isend {
			r.Request, ok = d.uint(8, leb)
		}
	case tok >= TokIsendComplete && tok <= TokCollRequest:
		r.Kind = [...]Kind{KindIsendComplete, KindIrecvRequest, KindRequestCancelled, KindCollRequest}[tok-TokIsendComplete]
		t, ok = d.timeField(leb)
		if ok {
			r.Request, ok = d.uint(8, leb)
		}
	case tok == TokCollComplete:
		r.Kind = KindCollComplete
		t, ok = d.timeField(leb)
		if ok {
			r.Region, ok = d.uint32Field("region", leb)
		}
		if ok {
			r.Root, ok = d.root()
		}
		if ok {
			r.Bytes, ok = d.uint(8, leb)
		}
		if ok {
			r.Received, ok = d.uint(8, leb)
		}
		if ok {
			r.Comm, ok = d.uint32Field("comm", leb)
		}
		if ok {
			r.Request, ok = d.uint(8, leb)
		}
	case tok == TokTask:
		t, ok = d.timeField(leb)
		if ok {
			ok = d.task(r)
		}
	case tok == TokRma:
		t, ok = d.rma(r, leb)
	case tok == TokAnnotation:
		t, ok = d.annotation(r, leb)
	default:
		return d.badToken(start, tok)
	}
	if !ok {
		return false
	}
	if pred && r.Kind == KindEnter {
		predict(&d.pred, r.Region)
	}
	if !explicit && t == d.time {
		seq = d.next
	}
	r.Time, r.Seq = t, seq
	d.time, d.next = t, seq+1
	return true
}

// root reads a collective's root, stored as root+1 so that none (-1) is 0.
func (d *Decoder) root() (int64, bool) {
	v, ok := d.uint(8, d.tech&LEB128 != 0)
	if ok && v > 1<<62 {
		d.fail(fmt.Sprintf("collective root %d out of range", v))
		return 0, false
	}
	return int64(v) - 1, ok
}

func (d *Decoder) badToken(at int, tok byte) bool {
	d.off = at
	d.fail(fmt.Sprintf("token 0x%02X is not valid with techniques %s", tok, d.tech))
	return false
}
