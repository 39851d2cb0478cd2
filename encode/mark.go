package encode

// Annotations: what a program says about its own run beside its regions.
// A mark is an instant event with a name; a region parameter is an int or
// a string recorded right after an enter, as Score-P's parameter
// instrumentation records it (SCOREP_USER_PARAMETER_INT64, _STRING); a
// channel message is a send or receive on a named channel whose receiver
// is not known when the value is sent (a Go channel that carries work).
// The kinds take the values 38..42.
const (
	KindMark        Kind = 38 // an instant event: Key (the mark)
	KindParamInt    Kind = 39 // a parameter of the region just entered: Key (the parameter), Value
	KindParamString Kind = 40 // as KindParamInt, Value the id of a string of the file
	// A value is sent on a channel: Key (the channel), Token (unique per
	// channel over the run), Bytes. The receive of that value records the
	// same channel and Token, so a reader pairs the two exactly, whoever
	// received it.
	KindChanSend Kind = 41
	// The value sent with Token on channel Key is received: Key, Token,
	// Peer (the sending location's id, which the token carries), Bytes.
	KindChanRecv Kind = 42

	firstAnnotation = KindMark
	lastAnnotation  = KindChanRecv
)

func init() {
	for k, n := range map[Kind]string{KindMark: "MARK", KindParamInt: "PARAM_INT",
		KindParamString: "PARAM_STRING", KindChanSend: "CHAN_SEND", KindChanRecv: "CHAN_RECV"} {
		annotationNames[k-firstAnnotation] = n
	}
}

var annotationNames [lastAnnotation - firstAnnotation + 1]string

// IsAnnotation tells whether k is a mark, a parameter or a channel message.
func (k Kind) IsAnnotation() bool { return k >= firstAnnotation && k <= lastAnnotation }

// TokAnnotation is the token of every annotation record: the kind byte
// (38..42), the time field, then the fields of the kind: the key; for a
// parameter its value (an int zigzag-encoded, a string's id); for a
// channel message the token, the sender (a receive only) and the bytes.
const TokAnnotation = 0xFC

// MaxAnnotationSize bounds an annotation record: SEQ prefix, token, kind,
// time, key, token, sender, bytes (a channel receive, the largest). It fits the
// room buffer.Level.Put asks for any record, which the check below keeps so.
const MaxAnnotationSize = 1 + 5 + 1 + 1 + 10 + 5 + 10 + 10 + 10

var _ = [1]struct{}{}[max(0, MaxAnnotationSize-max(MaxMessageSize, MaxCollectiveSize))]

// Annotation puts an annotation record r (r.Kind one of KindMark,
// KindParamInt, KindParamString, KindChanSend, KindChanRecv) and returns
// its size; 0 for another kind, or a string parameter whose Value is not
// a string id (0..2^32-1).
func (e *Encoder) Annotation(b []byte, r *Record) int {
	if !r.Kind.IsAnnotation() || r.Kind == KindParamString && (r.Value < 0 || r.Value > 1<<32-1) {
		return 0
	}
	leb := e.tech&LEB128 != 0
	// putHead's record head with the kind between the token and the time,
	// as an RMA record has it.
	t := max(r.Time, e.time)
	n := 0
	if r.Seq != e.defaultSeq(t-e.time) {
		n = e.putSeq(b, r.Seq)
	}
	tf := e.timeField(t)
	e.time, e.next = t, r.Seq+1
	b[n], b[n+1] = TokAnnotation, byte(r.Kind)
	n += 2
	n += putUint(b[n:], tf, 8, leb)
	n += putUint(b[n:], uint64(r.Key), 4, leb)
	switch r.Kind {
	case KindParamInt:
		n += putUint(b[n:], zigzag(r.Value), 8, leb)
	case KindParamString:
		n += putUint(b[n:], uint64(r.Value), 4, leb)
	case KindChanSend, KindChanRecv:
		n += putUint(b[n:], r.Token, 8, leb)
		if r.Kind == KindChanRecv {
			n += putUint(b[n:], r.Peer, 8, leb)
		}
		n += putUint(b[n:], r.Bytes, 8, leb)
	}
	return n
}

// annotation decodes the rest of an annotation record after its token:
// kind, time and fields. It returns the record's time.
func (d *Decoder) annotation(r *Record, leb bool) (uint64, bool) {
	k, t, ok := d.extended("annotation", firstAnnotation, lastAnnotation, leb)
	if !ok {
		return 0, false
	}
	r.Kind = k
	if r.Key, ok = d.uint32Field("annotation key", leb); !ok {
		return 0, false
	}
	switch k {
	case KindParamInt:
		var u uint64
		u, ok = d.uint(8, leb)
		r.Value = unzigzag(u)
	case KindParamString:
		var s uint32
		s, ok = d.uint32Field("parameter string", leb)
		r.Value = int64(s)
	case KindChanSend, KindChanRecv:
		r.Token, ok = d.uint(8, leb)
		if ok && k == KindChanRecv {
			r.Peer, ok = d.uint(8, leb)
		}
		if ok {
			r.Bytes, ok = d.uint(8, leb)
		}
	}
	return t, ok
}
