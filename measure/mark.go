package measure

import (
	"sync"
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Annotations: marks (instant events), region parameters and messages on
// named channels. Each is a record of its own (encode's mark.go), so the
// enter and leave probes are untouched. Where they go in the buffer:
//
//   - A parameter belongs to the call it was recorded in: it goes to the
//     metric class at that call's depth, beside the counters read at its
//     enter. The depth policy sheds it exactly with the call's enter; the
//     class policy sheds it with the counters (the first class it
//     closes), before any call.
//   - Marks and channel messages go to the message class at the lane's
//     depth, as messages do: the default depth policy sheds them last,
//     after every compute level it could close. They are few and are what
//     a user looks for.

// annotations are a measurement's definitions of marks, parameters, the
// strings of string parameters and channels. Lookups by name take no lock
// once a name is defined (sync.Map); definitions take mu.
type annotations struct {
	mu       sync.Mutex
	marks    []string
	params   []tracefile.Param
	strs     []string
	channels []*Channel

	markIDs, paramIDs, strIDs, chanIDs sync.Map // name -> id (uint32); params by name+type
}

// Mark is an instant event's name, defined once with Measurement.Mark and
// recorded with Location.Mark. It belongs to the measurement that made it.
type Mark struct {
	m  *Measurement
	id uint32
}

// Param is a region parameter defined with Measurement.IntParam or
// StringParam, as Score-P's SCOREP_USER_PARAMETER_INT64 and _STRING define
// theirs: a name whose value is recorded with the call it belongs to.
type Param struct {
	m   *Measurement
	id  uint32
	typ tracefile.ParamType
}

// define returns the id of name in ids, appending it to names under mu on
// first use. ids are dense, from 1.
func (a *annotations) define(ids *sync.Map, key string, add func() uint32) uint32 {
	if id, ok := ids.Load(key); ok {
		return id.(uint32)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := ids.Load(key); ok {
		return id.(uint32)
	}
	id := add()
	ids.Store(key, id)
	return id
}

// Mark returns the mark with the given name, defining it on first use. It
// is safe for concurrent use; a disabled measurement returns the zero
// Mark, which records nothing.
func (m *Measurement) Mark(name string) Mark {
	if !m.Enabled() {
		return Mark{}
	}
	a := &m.annot
	return Mark{m, a.define(&a.markIDs, name, func() uint32 {
		a.marks = append(a.marks, name)
		return uint32(len(a.marks))
	})}
}

// IntParam returns the int parameter with the given name, defining it on
// first use. A name may be both an int and a string parameter: they are
// two parameters. Safe for concurrent use.
func (m *Measurement) IntParam(name string) Param { return m.param(name, tracefile.ParamInt) }

// StringParam returns the string parameter with the given name, as
// IntParam.
func (m *Measurement) StringParam(name string) Param { return m.param(name, tracefile.ParamString) }

func (m *Measurement) param(name string, t tracefile.ParamType) Param {
	if !m.Enabled() {
		return Param{}
	}
	a := &m.annot
	return Param{m, a.define(&a.paramIDs, string(rune('0'+t))+name, func() uint32 {
		a.params = append(a.params, tracefile.Param{Name: name, Type: t})
		return uint32(len(a.params))
	}), t}
}

// stringID returns the id of a string parameter's value s.
func (m *Measurement) stringID(s string) uint32 {
	a := &m.annot
	return a.define(&a.strIDs, s, func() uint32 {
		a.strs = append(a.strs, s)
		return uint32(len(a.strs))
	})
}

// annotationsTrace puts copies of the definitions into t.
func (m *Measurement) annotationsTrace(t *tracefile.Trace) {
	a := &m.annot
	a.mu.Lock()
	defer a.mu.Unlock()
	t.Marks = append([]string(nil), a.marks...)
	t.Params = append([]tracefile.Param(nil), a.params...)
	t.Strings = append([]string(nil), a.strs...)
	t.Channels = make([]string, len(a.channels))
	for i, c := range a.channels {
		t.Channels[i] = c.name
	}
	if len(t.Channels) == 0 {
		t.Channels = nil
	}
}

// Mark records instant event k on the lane, at the current depth: inside
// the region open there, as a point on its timeline. A Mark of another
// measurement is counted as a usage error (an undefined region's).
func (l *Location) Mark(k Mark) {
	if l == nil || !ProbesCompiledIn || k.m == nil {
		return
	}
	if k.m != l.m {
		l.usage.UnknownRegion++
		return
	}
	r := encode.Record{Kind: encode.KindMark, Key: k.id}
	l.annotate(&r)
}

// MarkName records the mark with the given name, defining it on first
// use: Mark(m.Mark(name)), for code that does not keep the Mark. The
// lookup takes no lock once the name is defined.
func (l *Location) MarkName(name string) {
	if l == nil || !ProbesCompiledIn {
		return
	}
	l.Mark(l.m.Mark(name))
}

// ParamInt records value v of int parameter p for the region open on the
// lane, as Score-P's SCOREP_USER_PARAMETER_INT64 does: call it right after
// the Enter. A filtered or throttled region opens nothing, so the value
// would go to the region around it; EnterInt knows and drops it. A Param
// of another measurement or of the string type is a usage error.
func (l *Location) ParamInt(p Param, v int64) {
	if l == nil || !ProbesCompiledIn || p.m == nil {
		return
	}
	if p.m != l.m || p.typ != tracefile.ParamInt {
		l.usage.UnknownRegion++
		return
	}
	r := encode.Record{Kind: encode.KindParamInt, Key: p.id, Value: v}
	l.param(&r)
}

// ParamString records value s of string parameter p, as ParamInt. The
// trace keeps each distinct string once; looking up one already recorded
// takes no lock.
func (l *Location) ParamString(p Param, s string) {
	if l == nil || !ProbesCompiledIn || p.m == nil {
		return
	}
	if p.m != l.m || p.typ != tracefile.ParamString {
		l.usage.UnknownRegion++
		return
	}
	r := encode.Record{Kind: encode.KindParamString, Key: p.id, Value: int64(l.m.stringID(s))}
	l.param(&r)
}

// EnterInt enters region r and records value v of int parameter p with
// that call: Enter then ParamInt, except that a filtered or throttled
// region records neither. Enter itself costs what it did.
func (l *Location) EnterInt(r Region, p Param, v int64) {
	if l == nil {
		return
	}
	d := l.depth
	l.Enter(r)
	if l.depth > d {
		l.ParamInt(p, v)
	}
}

// EnterString is EnterInt for a string parameter.
func (l *Location) EnterString(r Region, p Param, s string) {
	if l == nil {
		return
	}
	d := l.depth
	l.Enter(r)
	if l.depth > d {
		l.ParamString(p, s)
	}
}

// param records a parameter of the region open on the lane into the
// metric level of that region's depth, where the counters read at its
// enter go: the depth policy sheds that level exactly when it sheds the
// depth's enters, so a reduced trace keeps the parameters of the calls it
// keeps, and the class policy sheds parameters with the counters, before
// the calls. Not the enter's own level: a bin there keeps room for the
// leave, which a record that needs a new bin could lose. With no region
// open the parameter is the lane's own and goes to the message class, as
// a mark.
func (l *Location) param(r *encode.Record) {
	d := l.depth
	if d == 0 {
		l.annotate(r)
		return
	}
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	_, r.Time, r.Seq = l.stamp(l.now())
	l.recorded++
	f := &l.stack[d]
	// The duration filter holds the enter: a parameter is kept inside the
	// call, which makes the enter written, as a message does.
	if f.state == framePending {
		l.flush(d)
	}
	if f.state != frameWritten || d >= l.limit || l.h.ClassClosed&(1<<buffer.ClassMetric) != 0 {
		l.drop(d, buffer.ClassMetric)
		return
	}
	putAnnotation(l.metLevel(d), r, f.region)
}

// annotate records r at the lane's depth in the message class, as
// putAtDepth does for a message.
func (l *Location) annotate(r *encode.Record) {
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	_, r.Time, r.Seq = l.stamp(l.now())
	l.recorded++
	d := l.depth
	if l.pendingFrom != 0 {
		l.flush(d) // the calls around a kept record are kept where they can be
	}
	if d >= l.mlimit || l.h.ClassClosed&(1<<buffer.ClassMessage) != 0 {
		l.drop(d, buffer.ClassMessage)
		return
	}
	putAnnotation(l.msgLevel(d), r, l.stack[d].region)
}

// putAnnotation puts r into lv, whose open region is open: straight into
// the current bin when it has room (Level's direct path, without Put's
// copies of the record), else through Put, which takes a new bin.
func putAnnotation(lv *buffer.Level, r *encode.Record, open uint32) {
	if lv.Room() >= encode.MaxAnnotationSize {
		lv.Advance(lv.Encoder().Annotation(lv.Tail(), r))
		return
	}
	lv.Put(r, open)
}

// Channel is a named channel of a measurement: the trace's name for a Go
// channel (or any queue) whose receiver is not known when a value is sent.
// The sender records Send and passes the token it returns along with the
// value; whoever receives the value records Recv with that token. Tokens
// are numbered per channel, once each, so a reader pairs every receive
// with its send exactly, whatever the number of senders and receivers and
// whatever order the values overtake each other in; times or FIFO order
// would be guesses. The sender's lane travels in the token, so a receive
// names its sender even where the buffer shed the send. Its methods are
// safe for concurrent use.
type Channel struct {
	m    *Measurement
	id   uint32
	name string
	seq  atomic.Uint64
}

// ChanToken ties a value sent on a Channel to its receive. The zero
// ChanToken (from a nil lane or a disabled measurement) records nothing.
type ChanToken struct {
	ch   *Channel
	seq  uint64
	from uint32
}

// Number returns the token's number: its channel numbers the values sent
// on it 1, 2, ... in the order of their sends; 0 for the zero token.
func (t ChanToken) Number() uint64 { return t.seq }

// Channel returns the channel with the given name, defining it on first
// use: the same name gives the same *Channel. Safe for concurrent use; a
// disabled measurement returns nil, whose methods record nothing.
func (m *Measurement) Channel(name string) *Channel {
	if !m.Enabled() {
		return nil
	}
	a := &m.annot
	id := a.define(&a.chanIDs, name, func() uint32 {
		a.channels = append(a.channels, &Channel{m: m, id: uint32(len(a.channels) + 1), name: name})
		return uint32(len(a.channels))
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.channels[id-1]
}

// Name returns the channel's name.
func (c *Channel) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Send records on lane l that a value of the given size is sent on the
// channel, and returns the token to send with it. A lane of another
// measurement is a usage error, and its token records nothing.
func (c *Channel) Send(l *Location, bytes uint64) ChanToken {
	if c == nil || l == nil || !ProbesCompiledIn {
		return ChanToken{}
	}
	if l.m != c.m {
		l.usage.MessageNoPeer++
		return ChanToken{}
	}
	t := ChanToken{ch: c, seq: c.seq.Add(1), from: l.id}
	r := encode.Record{Kind: encode.KindChanSend, Key: c.id, Token: t.seq, Bytes: bytes}
	l.annotate(&r)
	return t
}

// Recv records on lane l that the value sent with token t is received. A
// token of another channel is a usage error (a message without a peer of
// this measurement); the zero token records nothing.
func (c *Channel) Recv(l *Location, t ChanToken, bytes uint64) {
	if c == nil || l == nil || !ProbesCompiledIn || t.ch == nil {
		return
	}
	if t.ch != c || l.m != c.m {
		l.usage.MessageNoPeer++
		return
	}
	r := encode.Record{Kind: encode.KindChanRecv, Key: c.id, Token: t.seq, Peer: uint64(t.from), Bytes: bytes}
	l.annotate(&r)
}
