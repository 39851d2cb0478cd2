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
)

var kindNames = [...]string{"", "ENTER", "LEAVE", "SEND", "RECV", "METRIC", "COLLECTIVE"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
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

	Region uint32 // KindEnter

	// Messages: the peer is a location id of the same process, or an MPI
	// world rank when PeerRank is set.
	Peer     uint64
	PeerRank bool
	Tag      uint32
	Bytes    uint64

	// KindMetric: the counter values, absolute. The slice is owned by the
	// Decoder and valid until its next call.
	Values []uint64

	// KindCollective: the root rank (-1 if the operation has none) and the
	// bytes this process contributed or received. Bytes is shared with
	// messages.
	Root int64
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

	tokLeaveInline    = 0x00 // 0x00-0x3F
	tokEnterInline    = 0x40 // 0x40-0x7F
	tokEnterNowInline = 0x80 // 0x80-0xBF
	tokSeqInline      = 0xC0 // 0xC0-0xDF
	tokPlain          = 0xE0
)

// Upper bounds of one record's size, including a SEQ prefix, for any
// technique set. A bin must have this much room before a record is put.
const (
	MaxEnterLeaveSize = 1 + 5 + 1 + 5 + 10 // seq prefix, token, region, time
	MaxMessageSize    = 1 + 5 + 1 + 10 + 10 + 5 + 10
	MaxMetricSize     = 1 + 5 + 1 + 10 + 1 + 10*MaxMetrics
	MaxCollectiveSize = 1 + 5 + 1 + 10 + 10 + 10
	MaxBinHeaderSize  = 1 + 10 + 5
)
