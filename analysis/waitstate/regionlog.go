package waitstate

import (
	"encoding/binary"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// regionLog is a location's region enters and leaves, in its order, as
// the forward pass read them: what the second pass's sweep needs of its
// events, so that it does not decode the trace again. Each record is a
// token (0: a leave; region<<2|1: an enter; region<<2|3: an enter that
// opens removed ancestors, followed by its depth) and the difference of
// its reduced timestamp to the previous record's (zigzag), both as
// LEB128: 2 to 4 bytes where the trace's reader costs ~50 ns an event.
type regionLog struct {
	buf  []byte
	tick uint64 // the last record's timestamp
	// reread tells that the log was not kept (the run's logs would have
	// passed logBudget): the second pass reads the trace again.
	reread bool
}

// logBudget bounds the bytes the forward pass keeps in all locations'
// logs together: each location's log lives from the forward pass to its
// own sweep, so the logs are a run-wide table. Past it, a location's sweep
// decodes its events from the trace again (~45 ns an event rather than
// ~5), and the replay's memory beyond the run-wide tables is that of the
// locations the workers sweep at a time. A variable for the tests.
var logBudget int64 = 1 << 30

// Record tokens: the low bits of an enter's token.
const (
	logEnter    = 1
	logDepthSet = 2
)

func (l *regionLog) appendTick(t uint64) {
	l.buf = binary.AppendVarint(l.buf, int64(t-l.tick))
	l.tick = t
}

// enter records an enter of region at tick t; depth is the event's
// calling depth when the enter opens removed ancestors above it (the
// location's stack holds fewer than depth-1 frames), else 0.
func (l *regionLog) enter(region uint32, t uint64, depth int) {
	if depth > 0 {
		l.buf = binary.AppendUvarint(l.buf, uint64(region)<<2|logEnter|logDepthSet)
		l.buf = binary.AppendUvarint(l.buf, uint64(depth))
	} else {
		l.buf = binary.AppendUvarint(l.buf, uint64(region)<<2|logEnter)
	}
	l.appendTick(t)
}

// leave records a leave at tick t.
func (l *regionLog) leave(t uint64) {
	l.buf = append(l.buf, 0)
	l.appendTick(t)
}

// logRecord is one record of a regionLog.
type logRecord struct {
	enter  bool
	region uint32
	depth  int // an enter's depth when it opens removed ancestors, else 0
	tick   uint64
}

// logReader reads a regionLog from its start.
type logReader struct {
	buf  []byte
	tick uint64
}

// next reads the next record into r; false at the end. The log was
// written by this package, so a malformed record is a bug: it ends the
// log rather than being read as garbage.
func (lr *logReader) next(r *logRecord) bool {
	if len(lr.buf) == 0 {
		return false
	}
	var tok uint64
	if b := lr.buf; b[0] < 0x80 {
		tok, lr.buf = uint64(b[0]), b[1:]
	} else if len(b) > 1 && b[1] < 0x80 {
		// Two bytes: an enter of a region below 4,096 (LULESH's shape's
		// kernels are above 32), without Uvarint's call.
		tok, lr.buf = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
	} else {
		v, n := binary.Uvarint(lr.buf)
		if n <= 0 {
			lr.buf = nil
			return false
		}
		tok, lr.buf = v, lr.buf[n:]
	}
	r.enter, r.region, r.depth = tok&logEnter != 0, uint32(tok>>2), 0
	if tok&logDepthSet != 0 {
		v, n := binary.Uvarint(lr.buf)
		if n <= 0 {
			lr.buf = nil
			return false
		}
		r.depth, lr.buf = int(v), lr.buf[n:]
	}
	var dt int64
	if b := lr.buf; len(b) > 0 && b[0] < 0x80 {
		// One byte: zigzag of a small difference, the common case.
		dt, lr.buf = int64(b[0]>>1)^-int64(b[0]&1), b[1:]
	} else if len(b) > 1 && b[1] < 0x80 {
		// Two bytes: a difference below 8,192 ticks (LULESH's shape's
		// kernels), without Varint's call.
		u := uint64(b[0]&0x7f) | uint64(b[1])<<7
		dt, lr.buf = int64(u>>1)^-int64(u&1), b[2:]
	} else {
		v, n := binary.Varint(lr.buf)
		if n <= 0 {
			lr.buf = nil
			return false
		}
		dt, lr.buf = v, lr.buf[n:]
	}
	lr.tick += uint64(dt)
	r.tick = lr.tick
	return true
}

// records reads a location's enters and leaves for the second pass: from
// its log, or from its trace when the forward pass kept no log.
type records struct {
	log logReader
	it  *tracefile.Events // nil: read log
	e   tracefile.Event
}

// next reads the next record into r; false at the end (or at an error of
// the trace, which err returns). The sweep calls log.next itself when
// there is a log: a call a record rather than two.
func (rs *records) next(r *logRecord) bool {
	if rs.it == nil {
		return rs.log.next(r)
	}
	for rs.it.Next(&rs.e) {
		switch rs.e.Kind {
		case encode.KindEnter:
			// The event's depth says what the log's depth says: a stack
			// shorter than depth-1 opens removed ancestors.
			*r = logRecord{enter: true, region: rs.e.Region, depth: rs.e.Depth, tick: rs.e.Time}
			return true
		case encode.KindLeave:
			*r = logRecord{tick: rs.e.Time}
			return true
		}
	}
	return false
}

func (rs *records) err() error {
	if rs.it == nil {
		return nil
	}
	return rs.it.Err()
}
