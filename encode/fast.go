package encode

// EnterFast and LeaveFast are the commonest cases of Enter and Leave, small
// enough for the compiler to inline into a probe, so that a probe of a
// measured region makes no call but the clock's: Enter and Leave, which
// handle every case, cost too much to inline, and that call per record kept
// the Go probe behind the C one, whose compiler inlines hmb_put_enter. They
// write the bytes Enter and Leave write and change the Encoder as they do,
// or write nothing and return 0, after which the caller calls Enter or
// Leave. Every condition they test is one the inliner's budget allows: a
// record later than the previous one (a delta of 0 takes a sequence number
// other than 0), with the default sequence number 0, a delta that fits the
// one- and two-byte forms, every technique on, and for an enter the region
// the stream entered last (slot 0 of the prediction). TestFastPath checks
// the bytes against the general encoder's over random streams.

// EnterFast puts an enter record of region at time t with sequence number
// seq in one byte (slot 0, delta 1-15) or two (slot 0, delta 16-511) at b,
// and returns the bytes written; 0 means the record needs Enter. b is two
// bytes, not a slice, so that the probes, which know the bin has room,
// pay for no test of its length.
func (e *Encoder) EnterFast(b *[2]byte, t uint64, seq uint32, region uint32) int {
	d := t - e.time
	// No test of the techniques: the prediction holds a region only with
	// Predict on (StartBin and putPredEnter), and with a delta above 0
	// SplitTiming changes nothing.
	if t <= e.time || d >= 1<<9 || seq != 0 || region != e.pred[0] || region == 0 {
		return 0
	}
	e.time, e.next = t, 1
	if d < 16 {
		b[0] = TokPredEnter | byte(d)
		return 1
	}
	b[0], b[1] = TokPredEnterSlot|byte(d>>8), byte(d)
	return 2
}

// LeaveFast puts a leave record at time t with sequence number seq in one
// byte (delta 1-127) or two (delta 128-4095) at b, and returns the bytes
// written; 0 means the record needs Leave.
func (e *Encoder) LeaveFast(b *[2]byte, t uint64, seq uint32) int {
	d := t - e.time
	if e.tech != All || t <= e.time || d >= 1<<12 || seq != 0 {
		return 0
	}
	e.time, e.next = t, 1
	if d < 0x80 {
		b[0] = TokPredLeave | byte(d)
		return 1
	}
	b[0], b[1] = TokPredLeave12|byte(d>>8), byte(d)
	return 2
}
