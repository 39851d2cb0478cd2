package encode

// Encoder writes the records of one level stream. It keeps the stream's
// delta state (previous time, default sequence number, previous counter
// values), which StartBin resets so that every bin decodes on its own.
//
// The put methods write into b, which must have at least the Max*Size of the
// record free, and return the number of bytes written. They never allocate.
type Encoder struct {
	tech Techniques
	time uint64             // time of the previous record in the bin
	next uint32             // Seq that a record at time gets without a prefix
	pred [predSlots]uint32  // regions entered last in the bin, latest first; 0: none (Predict)
	prev [MaxMetrics]uint64 // previous counter values in the bin
}

// NewEncoder returns an Encoder using the given techniques.
func NewEncoder(t Techniques) Encoder { return Encoder{tech: t} }

// Techniques returns the set the Encoder was made with.
func (e *Encoder) Techniques() Techniques { return e.tech }

// Time returns the time of the last record put.
func (e *Encoder) Time() uint64 { return e.time }

// StartBin writes the BIN record that opens a bin: t is the absolute time
// the following records are relative to (the first record's time), and
// openRegion the region open at the stream's depth, 0 if none.
func (e *Encoder) StartBin(b []byte, t uint64, openRegion uint32) int {
	leb := e.tech&LEB128 != 0
	b[0] = TokBin
	n := 1
	n += putUint(b[n:], t, 8, leb)
	n += putUint(b[n:], uint64(openRegion), 4, leb)
	e.time = t
	e.next = 0
	e.prev = [MaxMetrics]uint64{}
	// The region open at the bin's start is the likeliest to be entered
	// again after its leave: a loop's body. The prediction stays empty
	// without Predict, which EnterFast counts on.
	e.pred = [predSlots]uint32{}
	if e.tech&predictOn == predictOn {
		e.pred[0] = openRegion
	}
	return n
}

// Enter puts an enter record of region at time t with sequence number seq.
func (e *Encoder) Enter(b []byte, t uint64, seq uint32, region uint32) int {
	// The common cases, written without a call: every technique on, a
	// delta below 512, the default seq, and the region the stream entered
	// last, or the one before (a loop that calls two regions in turn).
	if d := t - e.time; e.tech == All && t >= e.time && d < 1<<9 && seq == e.defaultSeq(d) && region != 0 && len(b) >= 2 {
		if region == e.pred[0] {
			e.time, e.next = t, seq+1
			if d < 16 {
				b[0] = TokPredEnter | byte(d)
				return 1
			}
			b[0], b[1] = TokPredEnterSlot|byte(d>>8), byte(d)
			return 2
		}
		if region == e.pred[1] {
			e.time, e.next = t, seq+1
			e.pred[0], e.pred[1] = region, e.pred[0]
			if d == 0 {
				b[0] = TokPredEnterSlotNow | 1
				return 1
			}
			b[0], b[1] = TokPredEnterSlot|1<<1|byte(d>>8), byte(d)
			return 2
		}
	}
	return e.enterSlow(b, t, seq, region)
}

// defaultSeq is the sequence number a record d ticks after the previous
// one gets without a SEQ prefix.
func (e *Encoder) defaultSeq(d uint64) uint32 {
	if d == 0 {
		return e.next
	}
	return 0
}

func (e *Encoder) enterSlow(b []byte, t uint64, seq uint32, region uint32) int {
	if t < e.time {
		t = e.time
	}
	if e.tech&predictOn == predictOn {
		n := 0
		d := t - e.time
		if seq != e.defaultSeq(d) {
			n = e.putSeq(b, seq)
		}
		e.time, e.next = t, seq+1
		return n + e.putPredEnter(b[n:], d, region)
	}
	return e.enterGeneral(b, t, seq, region)
}

func (e *Encoder) enterGeneral(b []byte, t uint64, seq uint32, region uint32) int {
	n := e.seqPrefix(b, t, seq)
	leb := e.tech&LEB128 != 0
	now := t == e.time && e.tech&SplitTiming != 0
	tf := e.timeField(t)
	e.time = t
	if e.tech&Tokens != 0 {
		inline := region < 64 && region != 0
		var tok byte = TokEnterInline
		if now {
			tok = TokEnterNowInline
		}
		if inline {
			b[n] = tok | byte(region)
			n++
		} else {
			b[n] = tok
			n++
			n += putUint(b[n:], uint64(region), 4, leb)
		}
		if !now {
			n += putUint(b[n:], tf, 8, leb)
		}
		return n
	}
	if now {
		b[n] = TokEnterNow
		n++
		return n + putUint(b[n:], uint64(region), 4, leb)
	}
	b[n] = TokEnter
	n++
	n += putUint(b[n:], tf, 8, leb)
	return n + putUint(b[n:], uint64(region), 4, leb)
}

// Leave puts a leave record at time t with sequence number seq. The region
// left is the one open at the stream's depth; it is never stored.
func (e *Encoder) Leave(b []byte, t uint64, seq uint32) int {
	// The common case, written without a call: a delta that fits the token
	// with one more byte at most, the default seq.
	if d := t - e.time; e.tech == All && t >= e.time && d < 1<<12 && seq == e.defaultSeq(d) && len(b) >= 2 {
		e.time, e.next = t, seq+1
		if d < 0x80 {
			b[0] = TokPredLeave | byte(d)
			return 1
		}
		b[0], b[1] = TokPredLeave12|byte(d>>8), byte(d)
		return 2
	}
	return e.leaveSlow(b, t, seq)
}

func (e *Encoder) leaveSlow(b []byte, t uint64, seq uint32) int {
	if t < e.time {
		t = e.time
	}
	if e.tech&predictOn == predictOn {
		n := 0
		d := t - e.time
		if seq != e.defaultSeq(d) {
			n = e.putSeq(b, seq)
		}
		e.time, e.next = t, seq+1
		return n + putPredLeave(b[n:], d)
	}
	return e.leaveGeneral(b, t, seq)
}

func (e *Encoder) leaveGeneral(b []byte, t uint64, seq uint32) int {
	n := e.seqPrefix(b, t, seq)
	leb := e.tech&LEB128 != 0
	now := t == e.time && e.tech&SplitTiming != 0
	tf := e.timeField(t)
	e.time = t
	if e.tech&(Tokens|Delta|LEB128) == Tokens|Delta|LEB128 {
		return n + putLeaveDelta(b[n:], tf)
	}
	if now {
		b[n] = TokLeaveNow
		return n + 1
	}
	b[n] = TokLeave
	n++
	return n + putUint(b[n:], tf, 8, leb)
}

// putLeaveDelta writes a compact leave: the delta's low 5 bits in the token,
// the rest as a uvarint when bit 5 of the token says so. Leaves carry the
// durations of calls, often too long for a token alone but short enough for
// one more byte.
func putLeaveDelta(b []byte, d uint64) int {
	if d < 32 {
		b[0] = TokLeaveInline | byte(d)
		return 1
	}
	b[0] = TokLeaveInline | 0x20 | byte(d&0x1F)
	return 1 + putUvarint(b[1:], d>>5)
}

// Message puts a send (KindSend) or receive (KindRecv) record. peer is a
// location id of the same process, or an MPI world rank when rank is set.
func (e *Encoder) Message(b []byte, k Kind, t uint64, seq uint32, peer uint64, rank bool, tag uint32, bytes uint64) int {
	return e.MessageComm(b, k, t, seq, peer, rank, tag, bytes, 0)
}

// MessageComm puts a send (KindSend) or receive (KindRecv) record on
// communicator comm; comm 0 (none given) writes Message's record.
func (e *Encoder) MessageComm(b []byte, k Kind, t uint64, seq uint32, peer uint64, rank bool, tag uint32, bytes uint64, comm uint32) int {
	var tok byte = TokSend
	if comm != 0 {
		tok = TokSendComm
	}
	if k == KindRecv {
		tok++
	}
	if rank {
		tok += 2
	}
	leb := e.tech&LEB128 != 0
	n := e.putHead(b, tok, t, seq)
	n += putUint(b[n:], peer, 8, leb)
	n += putUint(b[n:], uint64(tag), 4, leb)
	n += putUint(b[n:], bytes, 8, leb)
	if comm != 0 {
		n += putUint(b[n:], uint64(comm), 4, leb)
	}
	return n
}

// RequestMessage puts the start of a non-blocking send (KindIsend) or the
// completion of a non-blocking receive (KindIrecv): the message's fields as
// MessageComm's, and the request that ties it to the operation's other
// records.
func (e *Encoder) RequestMessage(b []byte, k Kind, t uint64, seq uint32, peer uint64, rank bool, tag uint32, bytes uint64, comm uint32, request uint64) int {
	var tok byte = TokIsend
	if k == KindIrecv {
		tok++
	}
	if rank {
		tok += 2
	}
	leb := e.tech&LEB128 != 0
	n := e.putHead(b, tok, t, seq)
	n += putUint(b[n:], peer, 8, leb)
	n += putUint(b[n:], uint64(tag), 4, leb)
	n += putUint(b[n:], bytes, 8, leb)
	n += putUint(b[n:], uint64(comm), 4, leb)
	return n + putUint(b[n:], request, 8, leb)
}

// requestTokens maps the kinds that hold only a request to their tokens.
var requestTokens = [...]byte{
	KindIsendComplete:    TokIsendComplete,
	KindIrecvRequest:     TokIrecvRequest,
	KindRequestCancelled: TokRequestCancelled,
	KindCollRequest:      TokCollRequest,
}

// Request puts a record that holds only a request: KindIsendComplete,
// KindIrecvRequest, KindRequestCancelled or KindCollRequest. It returns 0
// for any other kind.
func (e *Encoder) Request(b []byte, k Kind, t uint64, seq uint32, request uint64) int {
	if int(k) >= len(requestTokens) || requestTokens[k] == 0 {
		return 0
	}
	n := e.putHead(b, requestTokens[k], t, seq)
	return n + putUint(b[n:], request, 8, e.tech&LEB128 != 0)
}

// Metric puts the counter values read at time t (at most MaxMetrics; extra
// values are not written). With delta encoding, each value is stored as the
// zigzag difference to the previous value of the same counter in the bin.
func (e *Encoder) Metric(b []byte, t uint64, seq uint32, values []uint64) int {
	if len(values) > MaxMetrics {
		values = values[:MaxMetrics]
	}
	leb := e.tech&LEB128 != 0
	n := e.putHead(b, TokMetric, t, seq)
	n += putUint(b[n:], uint64(len(values)), 1, leb)
	delta := e.tech&Delta != 0
	for i, v := range values {
		u := v
		if delta {
			u = zigzag(int64(v - e.prev[i]))
			e.prev[i] = v
		}
		n += putUint(b[n:], u, 8, leb)
	}
	return n
}

// Collective puts the root rank (negative: none) and byte count of a
// collective operation, right after its enter record.
func (e *Encoder) Collective(b []byte, t uint64, seq uint32, root int64, bytes uint64) int {
	return e.CollectiveComm(b, t, seq, root, bytes, 0, 0)
}

// CollectiveComm puts a collective operation's root rank (negative: none),
// bytes sent and received and communicator, right after its enter record.
// With neither received bytes nor a communicator it writes Collective's
// record.
func (e *Encoder) CollectiveComm(b []byte, t uint64, seq uint32, root int64, sent, received uint64, comm uint32) int {
	leb := e.tech&LEB128 != 0
	if received == 0 && comm == 0 {
		n := e.putHead(b, TokColl, t, seq)
		n += putUint(b[n:], uint64(max(root+1, 0)), 8, leb)
		return n + putUint(b[n:], sent, 8, leb)
	}
	n := e.putHead(b, TokCollComm, t, seq)
	n += putUint(b[n:], uint64(max(root+1, 0)), 8, leb)
	n += putUint(b[n:], sent, 8, leb)
	n += putUint(b[n:], received, 8, leb)
	return n + putUint(b[n:], uint64(comm), 4, leb)
}

// CollectiveComplete puts the completion of a non-blocking collective:
// the region of the call that started it, its root (negative: none),
// bytes sent and received, communicator and request.
func (e *Encoder) CollectiveComplete(b []byte, t uint64, seq uint32, region uint32, root int64, sent, received uint64, comm uint32, request uint64) int {
	leb := e.tech&LEB128 != 0
	n := e.putHead(b, TokCollComplete, t, seq)
	n += putUint(b[n:], uint64(region), 4, leb)
	n += putUint(b[n:], uint64(max(root+1, 0)), 8, leb)
	n += putUint(b[n:], sent, 8, leb)
	n += putUint(b[n:], received, 8, leb)
	n += putUint(b[n:], uint64(comm), 4, leb)
	return n + putUint(b[n:], request, 8, leb)
}

// Put puts record r, as a Decoder reads it, with the method of its kind,
// and returns the bytes written: 0 for a kind it does not know. Probes call
// those methods directly; Put serves code that re-encodes decoded records.
func (e *Encoder) Put(b []byte, r Record) int {
	switch r.Kind {
	case KindEnter:
		return e.Enter(b, r.Time, r.Seq, r.Region)
	case KindLeave:
		return e.Leave(b, r.Time, r.Seq)
	case KindSend, KindRecv:
		return e.MessageComm(b, r.Kind, r.Time, r.Seq, r.Peer, r.PeerRank, r.Tag, r.Bytes, r.Comm)
	case KindMetric:
		return e.Metric(b, r.Time, r.Seq, r.Values)
	case KindCollective:
		return e.CollectiveComm(b, r.Time, r.Seq, r.Root, r.Bytes, r.Received, r.Comm)
	case KindIsend, KindIrecv:
		return e.RequestMessage(b, r.Kind, r.Time, r.Seq, r.Peer, r.PeerRank, r.Tag, r.Bytes, r.Comm, r.Request)
	case KindIsendComplete, KindIrecvRequest, KindRequestCancelled, KindCollRequest:
		return e.Request(b, r.Kind, r.Time, r.Seq, r.Request)
	case KindCollComplete:
		return e.CollectiveComplete(b, r.Time, r.Seq, r.Region, r.Root, r.Bytes, r.Received, r.Comm, r.Request)
	case KindTaskCreate, KindTaskSwitch, KindTaskComplete, KindTaskSuspend:
		return e.Task(b, r.Kind, r.Time, r.Seq, r.Task)
	}
	if r.Kind.IsRma() {
		return e.Rma(b, &r)
	}
	if r.Kind.IsAnnotation() {
		return e.Annotation(b, &r)
	}
	return 0
}

// putHead writes the start of a record other than an enter or leave: a
// SEQ prefix if needed, the token and the time field. A time before the
// previous record's is taken as that one.
func (e *Encoder) putHead(b []byte, tok byte, t uint64, seq uint32) int {
	t = max(t, e.time)
	n := 0
	if seq != e.defaultSeq(t-e.time) { // seqPrefix's test, written out to spare a call
		n = e.putSeq(b, seq)
	}
	tf := e.timeField(t)
	e.time, e.next = t, seq+1
	b[n] = tok
	n++
	return n + putUint(b[n:], tf, 8, e.tech&LEB128 != 0)
}

// seqPrefix writes a SEQ prefix when seq differs from the default the
// decoder infers, and advances the stream's default.
func (e *Encoder) seqPrefix(b []byte, t uint64, seq uint32) int {
	want := e.defaultSeq(t - e.time)
	e.next = seq + 1
	if seq == want {
		return 0
	}
	return e.putSeq(b, seq)
}

func (e *Encoder) putSeq(b []byte, seq uint32) int {
	leb := e.tech&LEB128 != 0
	if e.tech&Tokens != 0 {
		if seq != 0 && seq < 32 {
			b[0] = TokSeqInline | byte(seq)
			return 1
		}
		b[0] = TokSeqInline
		return 1 + putUint(b[1:], uint64(seq), 4, leb)
	}
	b[0] = TokSeq
	return 1 + putUint(b[1:], uint64(seq), 4, leb)
}

func (e *Encoder) timeField(t uint64) uint64 {
	if e.tech&Delta != 0 {
		return t - e.time
	}
	return t
}

// LastSeq returns the sequence number of the last record put in the bin.
func (e *Encoder) LastSeq() uint32 { return e.next - 1 }
