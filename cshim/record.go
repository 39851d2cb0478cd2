package cshim

import (
	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/measure"
)

// Record is one probe as a C thread stages it (struct hmb_record in
// cshim/lib/shim.h): the kind in the top four bits of Word and the region id
// or function address below. A message takes two records: the second holds
// the peer rank in Time and the byte count in Word; so does a collective,
// with its root in Time.
type Record struct {
	Time uint64
	Word uint64
}

// The kinds of records.
const (
	KindEnter     = 1 // Word: region id
	KindLeave     = 2 // Word: region id
	KindFuncEnter = 3 // Word: function address (-finstrument-functions)
	KindFuncExit  = 4 // Word: function address
	KindSend      = 5 // Word: tag; a second record follows
	KindRecv      = 6 // Word: tag; a second record follows
	KindColl      = 7 // Word: region; a second record follows: root in Time, bytes in Word
	// Word: an encode.Kind; MPIRecords-1 records follow: peer or root in
	// [1].Time, tag and comm<<32 in [1].Word, bytes in [2].Time, request in
	// [2].Word, received bytes in [3].Time, region in [3].Word.
	KindMPI = 8
)

// MPIRecords is the number of records of a KindMPI probe.
const MPIRecords = 4

// TaskTied, in [1].Time of a task record's KindMPI probe, marks a tied
// task's record (hmb_task_switch_tied, hmb_task_complete_tied): replayed
// as measure's tied-task replay, without the bookkeeping of suspension.
const TaskTied = 1

const (
	kindShift   = 60
	payloadMask = 1<<kindShift - 1
)

// Kind returns the record's kind.
func (r Record) Kind() int { return int(r.Word >> kindShift) }

// Payload returns the record's region id, function address or tag.
func (r Record) Payload() uint64 { return r.Word & payloadMask }

// MakeRecord builds a record of kind k: the inverse of Kind and Payload.
func MakeRecord(k int, t, payload uint64) Record {
	return Record{Time: t, Word: uint64(k)<<kindShift | payload&payloadMask}
}

// Probes counts the probes among records: a message or a collective takes
// two records.
func Probes(recs []Record) uint64 {
	var n uint64
	for i := 0; i < len(recs); i++ {
		switch recs[i].Kind() {
		case KindSend, KindRecv, KindColl:
			i++
		case KindMPI:
			i += MPIRecords - 1
		}
		n++
	}
	return n
}

// MakeMPIRecord builds the records of a KindMPI probe of r at time t (r's
// own Time and Seq are not kept), as the C probes stage it.
func MakeMPIRecord(t uint64, r encode.Record) [MPIRecords]Record {
	if r.Kind.IsRma() {
		return [MPIRecords]Record{
			{Time: t, Word: KindMPI<<kindShift | uint64(r.Kind)},
			{Time: uint64(r.Remote), Word: uint64(r.Aux) | uint64(r.Win)<<32},
			{Time: r.Bytes, Word: r.Request},
			{Time: r.Received, Word: uint64(r.Group) | uint64(r.Level)<<32},
		}
	}
	peer := r.Peer
	if r.Kind == encode.KindCollective || r.Kind == encode.KindCollComplete {
		peer = uint64(r.Root)
	}
	req := r.Request
	if r.Kind >= encode.KindTaskCreate && r.Kind <= encode.KindTaskSuspend {
		req = r.Task
	}
	return [MPIRecords]Record{
		{Time: t, Word: KindMPI<<kindShift | uint64(r.Kind)},
		{Time: peer, Word: uint64(r.Tag) | uint64(r.Comm)<<32},
		{Time: r.Bytes, Word: req},
		{Time: r.Received, Word: uint64(r.Region)},
	}
}

// funcCacheSize is the number of entries of a thread's cache of resolved
// function addresses: direct-mapped, so that a hit costs a load and a compare.
const funcCacheSize = 512

type funcEntry struct {
	addr   uint64
	region measure.Region
}

// Thread is a C thread's location and its cache of function regions. Its
// Replay is not safe for concurrent use: the C side calls it under the
// thread's lock.
type Thread struct {
	rt    *Runtime
	loc   *measure.Location
	funcs [funcCacheSize]funcEntry
}

// Location returns the thread's location.
func (t *Thread) Location() *measure.Location { return t.loc }

// SetTeam records the thread's place as an OpenMP thread (hmb_thread_team):
// its thread number in each enclosing team, outermost first.
func (t *Thread) SetTeam(numbers []int) { mi.SetTeam(t.loc, numbers) }

// Replay records the staged probes recs into the thread's location, in
// order, with their timestamps. It returns how many probes it could not
// decode (an unknown kind, a message cut short); the C side counts them as
// dropped. Region ids the measurement never defined are the location's
// usage errors, as for Go probes.
func (t *Thread) Replay(recs []Record) (malformed uint64) {
	loc := t.loc
	for i := 0; i < len(recs); i++ {
		w, ts := recs[i].Word, recs[i].Time
		// Enter and leave first: they are nearly all the records.
		switch w >> kindShift {
		case KindEnter:
			loc.EnterAt(measure.Region(w&payloadMask), ts)
		case KindLeave:
			loc.LeaveAt(measure.Region(w&payloadMask), ts)
		default:
			i = t.replayOther(recs, i, &malformed)
		}
	}
	return malformed
}

// replayOther replays the record at recs[i], which is not an enter or leave
// of a region, and returns the index of its last record.
func (t *Thread) replayOther(recs []Record, i int, malformed *uint64) int {
	r := recs[i]
	switch k := r.Word >> kindShift; k {
	case KindFuncEnter:
		t.loc.EnterAt(t.funcRegion(r.Word&payloadMask), r.Time)
	case KindFuncExit:
		t.loc.LeaveAt(t.funcRegion(r.Word&payloadMask), r.Time)
	case KindColl:
		if i+1 == len(recs) {
			*malformed++
			return i
		}
		ext := recs[i+1]
		t.loc.EnterCollectiveAt(measure.Region(r.Word&payloadMask), int(int64(ext.Time)), ext.Word, r.Time)
		return i + 1
	case KindMPI:
		if i+MPIRecords > len(recs) {
			*malformed++
			return len(recs) - 1
		}
		if !t.replayMPI(recs[i : i+MPIRecords]) {
			*malformed++
		}
		return i + MPIRecords - 1
	case KindSend, KindRecv:
		if i+1 == len(recs) {
			*malformed++
			return i
		}
		ext := recs[i+1]
		t.loc.MessageAt(measure.Message{
			Recv:       k == KindRecv,
			Peer:       ext.Time,
			PeerIsRank: true,
			Tag:        uint32(r.Word),
			Bytes:      ext.Word,
		}, r.Time)
		return i + 1
	default:
		*malformed++
	}
	return i
}

// replayMPI replays a KindMPI probe: the records of communicators and
// requests (measure's record replay), a collective with received bytes or a
// communicator, and the task records (the task id in the request's place).
// It returns false for a kind that is none of these.
func (t *Thread) replayMPI(recs []Record) bool {
	k := encode.Kind(recs[0].Word & payloadMask)
	r := encode.Record{Kind: k, Peer: recs[1].Time, PeerRank: true, Tag: uint32(recs[1].Word), Comm: uint32(recs[1].Word >> 32),
		Bytes: recs[2].Time, Request: recs[2].Word, Received: recs[3].Time, Region: uint32(recs[3].Word)}
	switch k {
	case encode.KindCollective:
		t.loc.EnterCollectiveCommAt(measure.Region(r.Region), int(int64(r.Peer)), r.Bytes, r.Received, measure.CommID(r.Comm), recs[0].Time)
		return true
	case encode.KindCollComplete:
		r.Root, r.Peer, r.PeerRank = int64(r.Peer), 0, false
	case encode.KindIsendComplete, encode.KindIrecvRequest, encode.KindRequestCancelled, encode.KindCollRequest:
		r.Peer, r.PeerRank = 0, false
	case encode.KindTaskCreate, encode.KindTaskSwitch, encode.KindTaskComplete, encode.KindTaskSuspend:
		if recs[1].Time&TaskTied != 0 || k == encode.KindTaskCreate {
			mi.TiedTaskAt(t.loc, k, r.Request, recs[0].Time)
			return true
		}
		r = encode.Record{Kind: k, Task: r.Request}
	case encode.KindSend, encode.KindRecv, encode.KindIsend, encode.KindIrecv:
	default:
		if !k.IsRma() {
			return false
		}
		// hmb_rma's layout (probes.c): the target, aux and window, bytes
		// and id, received bytes, group and sync level.
		r = encode.Record{Kind: k, Remote: int64(recs[1].Time), Aux: uint32(recs[1].Word), Win: uint32(recs[1].Word >> 32),
			Bytes: recs[2].Time, Request: recs[2].Word, Received: recs[3].Time,
			Group: uint32(recs[3].Word), Level: uint32(recs[3].Word >> 32)}
	}
	mi.RecordAt(t.loc, r, recs[0].Time)
	return true
}

// AddDropped counts the events the thread's direct C probes did not keep
// at depth d: enters and leaves regions[d], messages messages[d] and
// collectives' records collectives[d], before anything else reaches the
// location.
func (t *Thread) AddDropped(regions, messages, collectives []uint64) {
	// Most depths dropped nothing: no call for them.
	for d, n := range regions {
		if n != 0 {
			mi.AddDropped(t.loc, d, buffer.ClassRegion, n)
		}
	}
	for d, n := range messages {
		if n != 0 {
			mi.AddDropped(t.loc, d, buffer.ClassMessage, n)
		}
	}
	for d, n := range collectives {
		if n != 0 {
			mi.AddDropped(t.loc, d, buffer.ClassCollective, n)
		}
	}
}

// FuncRegion returns the region of the function at addr, as the replay of a
// -finstrument-functions record names it.
func (t *Thread) FuncRegion(addr uint64) measure.Region { return t.funcRegion(addr) }

// funcRegion returns the region of the function at addr, resolving it on
// first sight.
func (t *Thread) funcRegion(addr uint64) measure.Region {
	e := &t.funcs[(addr>>4)%funcCacheSize]
	if e.addr == addr && e.region != 0 {
		return e.region
	}
	r := t.rt.funcRegion(addr)
	e.addr, e.region = addr, r
	return r
}
