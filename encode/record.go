package encode

import "fmt"

// Kind is the type of an event record.
type Kind uint8

// The record kinds.
const (
	KindEnter      Kind = 1 + iota // a region is entered
	KindLeave                      // the region open at the record's depth is left
	KindSend                       // a point-to-point message is sent
	KindRecv                       // a point-to-point message is received
	KindMetric                     // counter values read at the neighbouring enter or leave
	KindCollective                 // a collective operation's root and bytes, after its enter

	// Non-blocking MPI: a request id ties the records of one operation
	// together; it is unique per location over the run.
	KindIsend            // a non-blocking send starts: peer, tag, bytes, comm, request
	KindIsendComplete    // the request of a non-blocking send completes
	KindIrecvRequest     // a non-blocking receive starts: request
	KindIrecv            // the request of a non-blocking receive completes: peer, tag, bytes, comm
	KindRequestCancelled // a request was cancelled
	KindCollRequest      // a non-blocking collective starts, inside its region: request
	KindCollComplete     // a non-blocking collective completes: region, root, bytes, received, comm
)

// kindNames is keyed so that kinds added in separate places (encode/task.go
// and others) each add their own lines.
var kindNames = [...]string{
	KindEnter:            "ENTER",
	KindLeave:            "LEAVE",
	KindSend:             "SEND",
	KindRecv:             "RECV",
	KindMetric:           "METRIC",
	KindCollective:       "COLLECTIVE",
	KindIsend:            "ISEND",
	KindIsendComplete:    "ISEND_COMPLETE",
	KindIrecvRequest:     "IRECV_REQUEST",
	KindIrecv:            "IRECV",
	KindRequestCancelled: "REQUEST_CANCELLED",
	KindCollRequest:      "COLL_REQUEST",
	KindCollComplete:     "COLL_COMPLETE",
	KindTaskCreate:       "TASK_CREATE",
	KindTaskSwitch:       "TASK_SWITCH",
	KindTaskComplete:     "TASK_COMPLETE",
	KindTaskSuspend:      "TASK_SUSPEND",
	20:                   "RMA_WIN_CREATE",
	21:                   "RMA_WIN_DESTROY",
	22:                   "RMA_COLLECTIVE_BEGIN",
	23:                   "RMA_COLLECTIVE_END",
	24:                   "RMA_GROUP_SYNC",
	25:                   "RMA_REQUEST_LOCK",
	26:                   "RMA_ACQUIRE_LOCK",
	27:                   "RMA_TRY_LOCK",
	28:                   "RMA_RELEASE_LOCK",
	29:                   "RMA_SYNC",
	30:                   "RMA_WAIT_CHANGE",
	31:                   "RMA_PUT",
	32:                   "RMA_GET",
	33:                   "RMA_ATOMIC",
	34:                   "RMA_OP_COMPLETE_BLOCKING",
	35:                   "RMA_OP_COMPLETE_NON_BLOCKING",
	36:                   "RMA_OP_TEST",
	37:                   "RMA_OP_COMPLETE_REMOTE",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	if k.IsAnnotation() {
		return annotationNames[k-firstAnnotation]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MaxMetrics is the largest number of counter values one metric record holds.
const MaxMetrics = 16

// Record is one decoded event. Which fields are meaningful depends on Kind.
type Record struct {
	Kind Kind
	Time uint64 // reduced ticks, absolute
	Seq  uint32 // position within the location's run of equal timestamps

	Region uint32 // KindEnter; KindCollComplete: the region of the call that started it

	// Messages: the peer is a location id of the same process, or an MPI
	// world rank when PeerRank is set.
	Peer     uint64
	PeerRank bool
	Tag      uint32
	Bytes    uint64

	// Comm is the communicator of a message or collective, an id of the
	// file's communicators; 0 when none was given (a message between
	// goroutines, or a file older than communicators), which readers take
	// as MPI_COMM_WORLD for a rank peer.
	Comm uint32

	// Request identifies a non-blocking operation's records: unique per
	// location over the run, numbered by the caller (never an MPI_Request
	// value, which MPI reuses).
	Request uint64

	// Received is a collective's bytes received; Bytes are those sent or
	// contributed.
	Received uint64

	// KindMetric: the counter values, absolute. The slice is owned by the
	// Decoder and valid until its next call.
	Values []uint64

	// KindCollective: the root rank (-1 if the operation has none) and the
	// bytes this process contributed or received. Bytes is shared with
	// messages.
	Root int64

	// KindTaskCreate, KindTaskSwitch, KindTaskComplete, KindTaskSuspend: the task, an id
	// unique in the process over the run; 0 in a switch is the location's
	// implicit task (the thread's own code outside any explicit task).
	Task uint64

	// One-sided communication (the KindRma* kinds, see rma.go): the window
	// (an id of the file's windows), the target as a world rank (-1: all
	// of the window's processes, or none), Aux and Level as the kind says
	// (a lock, atomic or sync type, a collective operation; a sync level),
	// and the group of a group synchronisation (an id of the file's RMA
	// groups). Bytes, Received and Request (the matching or lock id) are
	// shared with messages.
	Win    uint32
	Remote int64
	Aux    uint32
	Level  uint32
	Group  uint32

	// Annotations (the kinds of mark.go): Key is the mark, parameter or
	// channel, an id of the file's definitions; Value a parameter's int,
	// or the id of its string; Token a channel message's, which ties its
	// send to its receive. Bytes, and a receive's Peer (the sending
	// location), are shared with messages.
	Key   uint32
	Value int64
	Token uint64
}

// Token values of the plain records. Compact tokens (below 0xE0) are
// described in the package documentation.
const (
	TokBin      = 0xE0 // time, open region
	TokEnter    = 0xE1 // [time], region
	TokEnterNow = 0xE2 // region; time of the previous record
	TokLeave    = 0xE3 // [time]
	TokLeaveNow = 0xE4 // time of the previous record
	TokSeq      = 0xE5 // seq; prefix of the next record
	TokSend     = 0xE6 // time, peer (location), tag, bytes
	TokRecv     = 0xE7
	TokSendRank = 0xE8 // time, peer (world rank), tag, bytes
	TokRecvRank = 0xE9
	TokMetric   = 0xEA // time, n, n values
	TokColl     = 0xEB // time, root+1, bytes

	// Messages with a communicator, in TokSend's order: time, peer, tag,
	// bytes, comm. A message without one keeps the tokens above, so that
	// files without communicators are unchanged.
	TokSendComm     = 0xEC
	TokRecvComm     = 0xED
	TokSendRankComm = 0xEE
	TokRecvRankComm = 0xEF

	// Non-blocking messages, in TokSend's order: time, peer, tag, bytes,
	// comm, request.
	TokIsend     = 0xF0
	TokIrecv     = 0xF1
	TokIsendRank = 0xF2
	TokIrecvRank = 0xF3

	TokIsendComplete    = 0xF4 // time, request
	TokIrecvRequest     = 0xF5 // time, request
	TokRequestCancelled = 0xF6 // time, request
	TokCollRequest      = 0xF7 // time, request
	TokCollComm         = 0xF8 // time, root+1, bytes, received, comm
	TokCollComplete     = 0xF9 // time, region, root+1, bytes, received, comm, request
	TokRma              = 0xFA // kind byte, time, the fields of the kind (rma.go)

	TokLeaveInline    = 0x00 // 0x00-0x3F
	TokEnterInline    = 0x40 // 0x40-0x7F
	TokEnterNowInline = 0x80 // 0x80-0xBF
	TokSeqInline      = 0xC0 // 0xC0-0xDF
	tokPlain          = 0xE0
)

// Upper bounds of one record's size, including a SEQ prefix, for any
// technique set. A bin must have this much room before a record is put.
const (
	MaxEnterLeaveSize = 1 + 5 + 1 + 5 + 10                    // seq prefix, token, region, time
	MaxMessageSize    = 1 + 5 + 1 + 10 + 10 + 5 + 10 + 5 + 10 // ..., peer, tag, bytes, comm, request
	MaxMetricSize     = 1 + 5 + 1 + 10 + 1 + 10*MaxMetrics
	MaxCollectiveSize = 1 + 5 + 1 + 10 + 5 + 10 + 10 + 10 + 5 + 10 // ..., region, root, bytes, received, comm, request
	MaxBinHeaderSize  = 1 + 10 + 5
)
