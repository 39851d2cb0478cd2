package encode

// Region prediction (the Predict technique) and the token table it allows.
//
// The first table spent 128 token values on region ids carried inline by
// enters, and 64 on leaves. In a level stream, though, an enter's region is
// nearly always one of the few the stream entered last: a loop calls the
// same callees in turn. Predict keeps the stream's eight regions entered
// last, most recent first, and an enter names its region by its place (its
// slot) in that list. The list starts each bin with the region open at the
// bin's depth only, so that a bin still decodes on its own. The token
// values freed from region ids go to the records' time deltas, which are
// what costs bytes: a leave fits one byte below 128 ticks and two below
// 4096, an enter of the region entered last one byte below 16 ticks, an
// enter of any slot two bytes below 512. The table:
//
//	0x00-0x7F  LEAVE, delta = token
//	0x80-0x8F  LEAVE, delta = (token&0x0F)<<8 | next byte
//	0x90-0x9F  ENTER of slot 0 (the region entered last), delta = token&0x0F
//	0xA0-0xAF  ENTER of slot (token>>1)&7, delta = (token&1)<<8 | next byte
//	0xB0-0xB3  ENTER of slot token&3, delta uvarint
//	0xB4       LEAVE, delta uvarint
//	0xB5       ENTER, region uvarint, delta uvarint (a region not predicted)
//	0xB6       ENTER at the previous record's time, region uvarint
//	0xB7-0xB8  not used
//	0xB9-0xBF  ENTER of slot token&7 (1-7) at the previous record's time
//	0xC0-0xFF  as in the first table (SEQ prefixes, plain records)
//
// Every enter, whichever its form, then moves its region to slot 0 (or
// puts it there, the last slot's region falling out). Region 0 is never
// predicted: a slot holding 0 is empty.
//
// Measured on the bench's synthetic stream (go run ./bench -sections size)
// the first table gave 2.26 bytes per event and this one 1.81; on
// examples/heat 2.01 and 1.53. docs/encoding.md says what else was tried.

// predSlots is the number of regions an Encoder predicts from.
const predSlots = 8

// predictOn is the set Predict takes effect with.
const predictOn = Predict | Tokens | Delta | LEB128

// The tokens of the table with Predict on, below the SEQ prefixes.
const (
	TokPredLeave         = 0x00 // 0x00-0x7F
	TokPredLeave12       = 0x80 // 0x80-0x8F
	TokPredEnter         = 0x90 // 0x90-0x9F
	TokPredEnterSlot     = 0xA0 // 0xA0-0xAF
	TokPredEnterSlotLong = 0xB0 // 0xB0-0xB3
	TokPredLeaveLong     = 0xB4
	TokPredEnterRegion   = 0xB5
	TokPredEnterNow      = 0xB6
	TokPredEnterSlotNow  = 0xB8 // 0xB9-0xBF: slot token&7, which is never 0
)

// predict returns the slot of region in p, or -1, and moves region to
// slot 0 as the decoder does for every enter.
func predict(p *[predSlots]uint32, region uint32) int {
	if region == 0 {
		return -1
	}
	i := 0
	for i < predSlots-1 && p[i] != region {
		i++
	}
	slot := i
	if p[i] != region {
		slot = -1 // region falls in at slot 0; the last slot's falls out
	}
	for ; i > 0; i-- { // a loop: copy would call memmove for a few words
		p[i] = p[i-1]
	}
	p[0] = region
	return slot
}

// putPredEnter writes an enter of region d ticks after the previous record
// with Predict on, and moves region to slot 0.
func (e *Encoder) putPredEnter(b []byte, d uint64, region uint32) int {
	slot := predict(&e.pred, region)
	now := d == 0 && e.tech&SplitTiming != 0
	switch {
	case slot == 0 && d < 16:
		b[0] = TokPredEnter | byte(d)
		return 1
	case slot > 0 && now:
		b[0] = TokPredEnterSlotNow | byte(slot)
		return 1
	case slot >= 0 && d < 1<<9:
		b[0], b[1] = TokPredEnterSlot|byte(slot<<1)|byte(d>>8), byte(d)
		return 2
	case slot >= 0 && slot < 4:
		b[0] = TokPredEnterSlotLong | byte(slot)
		return 1 + putUvarint(b[1:], d)
	case now:
		b[0] = TokPredEnterNow
		return 1 + putUvarint(b[1:], uint64(region))
	}
	b[0] = TokPredEnterRegion
	n := 1 + putUvarint(b[1:], uint64(region))
	return n + putUvarint(b[n:], d)
}

// putPredLeave writes a leave d ticks after the previous record with
// Predict on.
func putPredLeave(b []byte, d uint64) int {
	switch {
	case d < 0x80:
		b[0] = TokPredLeave | byte(d)
		return 1
	case d < 1<<12:
		b[0], b[1] = TokPredLeave12|byte(d>>8), byte(d)
		return 2
	}
	b[0] = TokPredLeaveLong
	return 1 + putUvarint(b[1:], d)
}

// predShort describes the tokens below TokPredEnterSlotLong by their high
// nibble, so that the commonest records decode without a cascade of
// comparisons: the bits of the token that are the delta (mask), whether a
// byte follows with the delta's low bits (low), whether the record is an
// enter (enter) and the bits that, shifted right once, are its slot.
type predShort struct {
	mask, low, enter, slot uint8
}

var predShorts = [TokPredEnterSlotLong >> 4]predShort{
	0x0: {mask: 0x7F}, 0x1: {mask: 0x7F}, 0x2: {mask: 0x7F}, 0x3: {mask: 0x7F},
	0x4: {mask: 0x7F}, 0x5: {mask: 0x7F}, 0x6: {mask: 0x7F}, 0x7: {mask: 0x7F},
	TokPredLeave12 >> 4:   {mask: 0x0F, low: 1},
	TokPredEnter >> 4:     {mask: 0x0F, enter: 1},
	TokPredEnterSlot >> 4: {mask: 0x01, low: 1, enter: 1, slot: 0x0E},
}

// nextShort decodes a record of the Predict table whose token is below
// TokPredEnterSlotLong and that has no SEQ prefix: the leaves and enters of
// one or two bytes, nearly every record of a level stream. It does what
// Next and predRecord do for them, and reports false, having changed
// nothing, for anything else and for what would be an error, which Next
// then decodes and reports as before.
func (d *Decoder) nextShort(r *Record) bool {
	off := d.off
	if off >= len(d.b) {
		return false
	}
	tok := d.b[off]
	if tok >= TokPredEnterSlotLong {
		if tok == TokPredEnterRegion {
			return d.enterRegion(r, off)
		}
		return false
	}
	p := predShorts[tok>>4]
	n := int(p.low)
	if off+n >= len(d.b) {
		return false
	}
	// With no low byte, the load reads the token again and the mask
	// drops it: one path for both lengths.
	delta := uint64(tok&p.mask)<<(8*n) | uint64(d.b[off+n])&-uint64(n)
	t := d.time + delta
	if t < d.time {
		return false
	}
	var region uint32
	kind := KindLeave
	if p.enter != 0 {
		slot := int(tok&p.slot) >> 1
		if region = d.pred[slot]; region == 0 {
			return false
		}
		// The regions in the slots differ, so the region's slot is where
		// predict finds it: move it to slot 0 as predict does.
		for i := slot; i > 0; i-- {
			d.pred[i] = d.pred[i-1]
		}
		d.pred[0] = region
		kind = KindEnter
	}
	var seq uint32
	if t == d.time {
		seq = d.next
	}
	*r = Record{Kind: kind, Time: t, Seq: seq, Region: region}
	d.off = off + n + 1
	d.time, d.next = t, seq+1
	return true
}

// enterRegion is nextShort for an enter of a region the prediction missed
// (TokPredEnterRegion at off): where a loop calls more regions than there
// are slots, as many records as the short forms, so they skip Next's
// general path too. Like nextShort, it changes nothing and reports false
// for what would be an error.
func (d *Decoder) enterRegion(r *Record, off int) bool {
	d.off = off + 1
	var f [2]uint64 // region, delta
	o, ok := d.fields(f[:])
	t := d.time + f[1]
	if !ok || f[0] > 0xFFFFFFFF || t < d.time {
		d.off = off
		return false
	}
	region := uint32(f[0])
	predict(&d.pred, region)
	var seq uint32
	if t == d.time {
		seq = d.next
	}
	*r = Record{Kind: KindEnter, Time: t, Seq: seq, Region: region}
	d.off = o
	d.time, d.next = t, seq+1
	return true
}

// predRecord decodes a record of the Predict table's compact range (a
// token below TokSeqInline) into r and returns its time; the token at
// start is read.
func (d *Decoder) predRecord(r *Record, tok byte, start int) (uint64, bool) {
	t := d.time
	var delta uint64
	ok := true
	slot := -1
	switch {
	case tok < TokPredLeave12:
		r.Kind, delta = KindLeave, uint64(tok)
	case tok < TokPredEnter:
		r.Kind = KindLeave
		delta, ok = d.lowByte(uint64(tok & 0x0F))
	case tok < TokPredEnterSlot:
		r.Kind, slot, delta = KindEnter, 0, uint64(tok&0x0F)
	case tok < TokPredEnterSlotLong:
		r.Kind, slot = KindEnter, int(tok>>1&7)
		delta, ok = d.lowByte(uint64(tok & 1))
	case tok < TokPredLeaveLong:
		r.Kind, slot = KindEnter, int(tok&3)
		delta, ok = d.delta()
	case tok == TokPredLeaveLong:
		r.Kind = KindLeave
		delta, ok = d.delta()
	case tok == TokPredEnterRegion, tok == TokPredEnterNow:
		if tok == TokPredEnterNow && d.tech&SplitTiming == 0 {
			return 0, d.badToken(start, tok)
		}
		r.Kind = KindEnter
		// An enter of a region not predicted, common where a loop calls
		// more regions than there are slots: both fields in one call.
		var f [2]uint64 // region, delta
		n := 1
		if tok == TokPredEnterRegion {
			n = 2
		}
		if o, fine := d.fields(f[:n]); fine && f[0] <= 0xFFFFFFFF {
			d.off, r.Region, delta = o, uint32(f[0]), f[1]
			break
		}
		r.Region, ok = d.uint32Field("region", true)
		if ok && tok == TokPredEnterRegion {
			delta, ok = d.uint(8, true)
		}
	case tok > TokPredEnterSlotNow:
		if d.tech&SplitTiming == 0 {
			return 0, d.badToken(start, tok)
		}
		r.Kind, slot = KindEnter, int(tok&7)
	default:
		return 0, d.badToken(start, tok)
	}
	if !ok {
		return 0, false
	}
	if t+delta < t {
		d.off = start
		d.fail("time overflows")
		return 0, false
	}
	if slot >= 0 {
		if r.Region = d.pred[slot]; r.Region == 0 {
			d.off = start
			d.fail("enter of an empty prediction slot")
			return 0, false
		}
	}
	return t + delta, true
}

// delta reads a varint time delta, by d.fields: the field-by-field reader
// only for what fields cannot take, to report it.
func (d *Decoder) delta() (uint64, bool) {
	var f [1]uint64
	if o, ok := d.fields(f[:]); ok {
		d.off = o
		return f[0], true
	}
	return d.uint(8, true)
}

// lowByte reads the byte that completes a delta whose high bits hi the
// token carries.
func (d *Decoder) lowByte(hi uint64) (uint64, bool) {
	if d.off >= len(d.b) {
		d.fail("truncated delta")
		return 0, false
	}
	v := hi<<8 | uint64(d.b[d.off])
	d.off++
	return v, true
}
