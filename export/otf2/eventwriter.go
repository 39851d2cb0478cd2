package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Event record ids (OTF2_EVENT_*).
const (
	eventEnter                         = 12
	eventLeave                         = 13
	eventMpiSend                       = 14
	eventMpiIsend                      = 15
	eventMpiIsendComplete              = 16
	eventMpiIrecvRequest               = 17
	eventMpiRecv                       = 18
	eventMpiIrecv                      = 19
	eventMpiRequestTest                = 20
	eventMpiRequestCancelled           = 21
	eventMpiCollectiveBegin            = 22
	eventMpiCollectiveEnd              = 23
	eventMetric                        = 31
	eventThreadFork                    = 53
	eventThreadJoin                    = 54
	eventThreadTeamBegin               = 55
	eventThreadTeamEnd                 = 56
	eventNonBlockingCollectiveRequest  = 85
	eventNonBlockingCollectiveComplete = 86
)

// Upper bounds of event records, as libotf2 reserves them. Enter and Leave
// are "singletons": id and one compressed field, no length byte.
const (
	singletonBound   = 1 + maxCU32
	requestBound     = 1 + maxCU64               // a singleton with a request id
	mpiP2PEstimate   = 3*maxCU32 + maxCU64       // peer, comm, tag, length
	mpiIP2PEstimate  = mpiP2PEstimate + maxCU64  // and the request id
	collEndEstimate  = 1 + 2*maxCU32 + 2*maxCU64 // op, comm, root, sent, received
	metricEstimateN0 = maxCU32 + 1               // metric ref, value count
	metricValueBound = 1 + maxCU64               // type byte, value
)

// MetricValue is one value of a Metric event as OTF2 stores it: the 64-bit
// pattern of a uint64, an int64 or a float64, interpreted by the value type
// of the metric member it belongs to.
type MetricValue uint64

// Uint64Value, Int64Value and DoubleValue make the MetricValue of a value of
// the member's ValueType.
func Uint64Value(v uint64) MetricValue  { return MetricValue(v) }
func Int64Value(v int64) MetricValue    { return MetricValue(uint64(v)) }
func DoubleValue(v float64) MetricValue { return MetricValue(math.Float64bits(v)) }

var errWriterClosed = errors.New("otf2: event writer is closed")

// EventWriter streams the events of one location to traces/<ref>.evt. It
// holds one chunk in memory and appends each full chunk to the file, so its
// memory does not grow with the number of events. Timestamps must not
// decrease; consecutive events with equal timestamps share one TIMESTAMP
// record. An EventWriter is not safe for concurrent use.
type EventWriter struct {
	a    *Archive
	ref  LocationRef
	name string
	file chunkedFile

	// time is the time of the last TIMESTAMP record, libotf2's "buffer
	// time": 0 before the first event.
	time      uint64
	firstTime uint64
	events    uint64

	// Cached counts of defined references, refreshed from the archive when
	// an event names a reference beyond them.
	regions, comms uint32
	metricTypes    [][]ValueType // value types of the metric classes, by ref

	err error // sticky: set by an I/O error, Close or Abort
}

// Ref is the location's reference, for groups (MPICommWorld) and
// ClockOffset.
func (w *EventWriter) Ref() LocationRef { return w.ref }

// Events is the number of events written so far.
func (w *EventWriter) Events() uint64 { return w.events }

// Enter records that the location entered region r at time ts.
func (w *EventWriter) Enter(ts uint64, r RegionRef) error {
	return w.regionEvent(ts, eventEnter, r)
}

// Leave records that the location left region r at time ts.
func (w *EventWriter) Leave(ts uint64, r RegionRef) error {
	return w.regionEvent(ts, eventLeave, r)
}

func (w *EventWriter) regionEvent(ts uint64, id byte, r RegionRef) error {
	if uint32(r) >= w.regions {
		w.regions = w.a.regionCount.Load()
		if uint32(r) >= w.regions {
			return w.undefined("region", uint64(r), w.regions)
		}
	}
	if err := w.reserve(ts, singletonBound); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	w.file.pos = putCU32(b, p+1, uint32(r))
	w.events++
	return nil
}

// MpiSend records a blocking send to rank receiver of comm.
func (w *EventWriter) MpiSend(ts uint64, receiver uint32, comm CommRef, tag uint32, length uint64) error {
	return w.mpiP2P(ts, eventMpiSend, receiver, comm, tag, length, 0)
}

// MpiRecv records the completion of a receive from rank sender of comm.
func (w *EventWriter) MpiRecv(ts uint64, sender uint32, comm CommRef, tag uint32, length uint64) error {
	return w.mpiP2P(ts, eventMpiRecv, sender, comm, tag, length, 0)
}

// MpiIsend records the start of a non-blocking send to rank receiver of
// comm; MpiIsendComplete with the same request id, on the same location,
// records where it completed.
func (w *EventWriter) MpiIsend(ts uint64, receiver uint32, comm CommRef, tag uint32, length, request uint64) error {
	return w.mpiP2P(ts, eventMpiIsend, receiver, comm, tag, length, request)
}

// MpiIrecv records the completion of the non-blocking receive request (from
// rank sender of comm), started by MpiIrecvRequest.
func (w *EventWriter) MpiIrecv(ts uint64, sender uint32, comm CommRef, tag uint32, length, request uint64) error {
	return w.mpiP2P(ts, eventMpiIrecv, sender, comm, tag, length, request)
}

// MpiIsendComplete records that the send request completed.
func (w *EventWriter) MpiIsendComplete(ts uint64, request uint64) error {
	return w.requestEvent(ts, eventMpiIsendComplete, request)
}

// MpiIrecvRequest records the start of a non-blocking receive.
func (w *EventWriter) MpiIrecvRequest(ts uint64, request uint64) error {
	return w.requestEvent(ts, eventMpiIrecvRequest, request)
}

// MpiRequestTest records an unsuccessful test of a request.
func (w *EventWriter) MpiRequestTest(ts uint64, request uint64) error {
	return w.requestEvent(ts, eventMpiRequestTest, request)
}

// MpiRequestCancelled records that a request was cancelled.
func (w *EventWriter) MpiRequestCancelled(ts uint64, request uint64) error {
	return w.requestEvent(ts, eventMpiRequestCancelled, request)
}

// requestEvent writes a singleton: id and the request id, no length.
func (w *EventWriter) requestEvent(ts uint64, id byte, request uint64) error {
	if err := w.reserve(ts, requestBound); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	w.file.pos = putCU64(b, p+1, request)
	w.events++
	return nil
}

// checkComm refreshes the cached count of communicators when comm is beyond
// it.
func (w *EventWriter) checkComm(comm CommRef) error {
	if uint32(comm) >= w.comms {
		w.comms = w.a.commCount.Load()
		if uint32(comm) >= w.comms {
			return w.undefined("communicator", uint64(comm), w.comms)
		}
	}
	return nil
}

// mpiP2P writes a point-to-point event; the non-blocking ones (MpiIsend,
// MpiIrecv) end with the request id.
func (w *EventWriter) mpiP2P(ts uint64, id byte, peer uint32, comm CommRef, tag uint32, length, request uint64) error {
	if err := w.checkComm(comm); err != nil {
		return err
	}
	nonBlocking := id == eventMpiIsend || id == eventMpiIrecv
	estimate := mpiP2PEstimate
	if nonBlocking {
		estimate = mpiIP2PEstimate
	}
	if err := w.reserve(ts, recordBound(estimate)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	start := p + 2
	p = putCU32(b, start, peer)
	p = putCU32(b, p, uint32(comm))
	p = putCU32(b, p, tag)
	p = putCU64(b, p, length)
	if nonBlocking {
		p = putCU64(b, p, request)
	}
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}

// MpiCollectiveBegin records the start of a collective operation, at the
// enter of its region; MpiCollectiveEnd, before the leave, says which.
func (w *EventWriter) MpiCollectiveBegin(ts uint64) error {
	if err := w.reserve(ts, recordBound(0)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = eventMpiCollectiveBegin
	b[p+1] = 0
	w.file.pos = p + 2
	w.events++
	return nil
}

// MpiCollectiveEnd records the end of collective operation op on comm:
// root is the root's rank in comm (NoRoot if the operation has none), sent
// and received the bytes this location contributed and got.
func (w *EventWriter) MpiCollectiveEnd(ts uint64, op CollectiveOp, comm CommRef, root uint32, sent, received uint64) error {
	return w.collectiveEnd(ts, eventMpiCollectiveEnd, op, comm, root, sent, received, 0)
}

// NonBlockingCollectiveRequest records the start of a non-blocking
// collective operation (MPI_Iallreduce, ...), inside the region of the call
// that started it (OTF2 3.0).
func (w *EventWriter) NonBlockingCollectiveRequest(ts uint64, request uint64) error {
	if err := w.reserve(ts, recordBound(maxCU64)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = eventNonBlockingCollectiveRequest
	start := p + 2
	p = putCU64(b, start, request)
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}

// NonBlockingCollectiveComplete records where the non-blocking collective
// request completed, and what it was, as MpiCollectiveEnd does.
func (w *EventWriter) NonBlockingCollectiveComplete(ts uint64, op CollectiveOp, comm CommRef, root uint32, sent, received, request uint64) error {
	return w.collectiveEnd(ts, eventNonBlockingCollectiveComplete, op, comm, root, sent, received, request)
}

func (w *EventWriter) collectiveEnd(ts uint64, id byte, op CollectiveOp, comm CommRef, root uint32, sent, received, request uint64) error {
	if err := w.checkComm(comm); err != nil {
		return err
	}
	if op > CollDestroyHandleAndDeallocate {
		return fmt.Errorf("otf2: location %d %q: collective operation %d is not an OTF2 collective operation", w.ref, w.name, op)
	}
	estimate := collEndEstimate
	if id == eventNonBlockingCollectiveComplete {
		estimate += maxCU64
	}
	if err := w.reserve(ts, recordBound(estimate)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	start := p + 2
	b[start] = byte(op)
	p = putCU32(b, start+1, uint32(comm))
	p = putCU32(b, p, root)
	p = putCU64(b, p, sent)
	p = putCU64(b, p, received)
	if id == eventNonBlockingCollectiveComplete {
		p = putCU64(b, p, request)
	}
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}

// ThreadFork records that the location forks a team of threads of
// paradigm model (ParadigmOpenMP for a parallel region), of the given size
// (OTF2 1.2).
func (w *EventWriter) ThreadFork(ts uint64, model Paradigm, threads uint32) error {
	if err := w.reserve(ts, recordBound(1+maxCU32)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = eventThreadFork
	start := p + 2
	b[start] = byte(model)
	p = putCU32(b, start+1, threads)
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}

// ThreadJoin records that the team the location forked has joined.
func (w *EventWriter) ThreadJoin(ts uint64, model Paradigm) error {
	if err := w.reserve(ts, recordBound(1)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = eventThreadJoin
	b[p+1] = 1
	b[p+2] = byte(model)
	w.file.pos = p + 3
	w.events++
	return nil
}

// ThreadTeamBegin records that the location starts to work as a member of
// the thread team comm (a communicator of the team's locations).
func (w *EventWriter) ThreadTeamBegin(ts uint64, team CommRef) error {
	return w.teamEvent(ts, eventThreadTeamBegin, team)
}

// ThreadTeamEnd records that the location ends its work in thread team
// comm.
func (w *EventWriter) ThreadTeamEnd(ts uint64, team CommRef) error {
	return w.teamEvent(ts, eventThreadTeamEnd, team)
}

func (w *EventWriter) teamEvent(ts uint64, id byte, team CommRef) error {
	if err := w.checkComm(team); err != nil {
		return err
	}
	if err := w.reserve(ts, recordBound(maxCU32)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	start := p + 2
	p = putCU32(b, start, uint32(team))
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}

// Metric records the values of metric class m, one per member in the
// class's order.
func (w *EventWriter) Metric(ts uint64, m MetricRef, values []MetricValue) error {
	if int(m) >= len(w.metricTypes) {
		w.refreshMetrics()
		if int(m) >= len(w.metricTypes) {
			return w.undefined("metric class", uint64(m), uint32(len(w.metricTypes)))
		}
	}
	types := w.metricTypes[m]
	if len(values) != len(types) {
		return fmt.Errorf("otf2: location %d %q: metric class %d has %d members, got %d values", w.ref, w.name, m, len(types), len(values))
	}
	estimate := metricEstimateN0 + len(values)*metricValueBound
	if err := w.reserve(ts, recordBound(estimate)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = eventMetric
	start := p + 2
	if estimate >= 255 {
		start = p + 10
	}
	p = putCU32(b, start, uint32(m))
	b[p] = byte(len(values))
	p++
	for i, v := range values {
		b[p] = byte(types[i])
		p = putCU64(b, p+1, uint64(v))
	}
	if estimate >= 255 {
		b[w.file.pos+1] = 0xFF
		binary.LittleEndian.PutUint64(b[w.file.pos+2:start], uint64(p-start))
	} else {
		b[start-1] = byte(p - start)
	}
	w.file.pos = p
	w.events++
	return nil
}

// refreshMetrics copies the value types of the classes defined so far; a
// class never changes once defined, so the slices are shared.
func (w *EventWriter) refreshMetrics() {
	w.a.mu.Lock()
	defer w.a.mu.Unlock()
	for i := len(w.metricTypes); i < len(w.a.metricClasses); i++ {
		w.metricTypes = append(w.metricTypes, w.a.metricClasses[i].types)
	}
}

func (w *EventWriter) undefined(what string, ref uint64, defined uint32) error {
	if w.err != nil {
		return w.err
	}
	return fmt.Errorf("otf2: location %d %q: %s %d is not defined (%d so far)", w.ref, w.name, what, ref, defined)
}

// reserve makes room for a record of at most bound bytes at time ts and
// writes the TIMESTAMP record if the time changed. It follows libotf2's rule
// exactly: a record goes into the current chunk only if bound plus a
// timestamp is less than the free space (whether or not a timestamp is
// needed); a new chunk starts with the timestamp of its first event; and a
// timestamp is written when the time differs from the last one written, or
// is 0 (libotf2 cannot tell 0 from "no time yet").
func (w *EventWriter) reserve(ts uint64, bound int) error {
	if ts < w.time || bound+timestampLen >= len(w.file.buf)-w.file.pos {
		if err := w.reserveSlow(ts, bound); err != nil {
			return err
		}
	}
	if ts != w.time || ts == 0 {
		b := w.file.buf[w.file.pos : w.file.pos+timestampLen]
		b[0] = timestampID
		binary.LittleEndian.PutUint64(b[1:], ts)
		w.file.pos += timestampLen
		w.time = ts
	}
	return nil
}

func (w *EventWriter) reserveSlow(ts uint64, bound int) error {
	if w.err != nil {
		return w.err
	}
	if ts < w.time {
		return fmt.Errorf("otf2: location %d %q: timestamp %d is before the previous timestamp %d", w.ref, w.name, ts, w.time)
	}
	if w.file.buf == nil { // first event
		w.file.buf = w.a.takeChunk()
		w.file.startChunk(1)
		w.firstTime = ts
		return nil
	}
	if err := w.file.flushChunk(w.events); err != nil {
		w.fail(err)
		return err
	}
	w.file.startChunk(w.events + 1)
	b := w.file.buf[w.file.pos : w.file.pos+timestampLen]
	b[0] = timestampID
	binary.LittleEndian.PutUint64(b[1:], ts)
	w.file.pos += timestampLen
	w.time = ts
	return nil
}

func (w *EventWriter) fail(err error) {
	w.err = err
	w.file.buf = nil // every later event takes the slow path and sees err
}

// Close writes the last chunk and records the location's number of events
// for its definition. Closing a closed writer does nothing.
func (w *EventWriter) Close() error {
	switch {
	case w.err == errWriterClosed:
		return nil
	case w.err != nil:
		return w.err
	}
	buf := w.file.buf
	if buf == nil {
		// No events: a header and END_OF_FILE, like libotf2's empty files.
		w.file.buf = make([]byte, chunkHeaderLen+2)
		w.file.startChunk(1)
	}
	err := w.file.finish(w.events)
	if err != nil {
		w.fail(err)
		return err
	}
	w.fail(errWriterClosed)
	w.a.writerClosed(w, buf)
	return nil
}

// abort is called by Archive.Abort with the archive locked.
func (w *EventWriter) abort() {
	if w.err == nil {
		w.fail(errAborted)
	}
}
