package tracefile

import (
	"fmt"
	"slices"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// secAnnotations defines what annotation records name (encode's mark.go):
// marks, region parameters, the strings of string parameters, channels.
const secAnnotations = 0x30

// versionAnnotations is the format version of a file that may hold
// annotation records. The writer puts it only into such files, so that
// every other file stays version 1, which older tools read; an older tool
// given one of these stops at the header ("format version 2; this reader
// reads version 1") instead of at an unknown token deep in a bin.
const versionAnnotations = 2

func init() { sectionNames[secAnnotations] = "ANNOTATIONS" }

// ParamType is the type of a region parameter's values. The numbering is
// part of the format.
type ParamType uint8

// The parameter types, as Score-P's SCOREP_USER_PARAMETER_INT64 and
// _STRING record them.
const (
	ParamInt ParamType = iota
	ParamString
	numParamTypes
)

func (p ParamType) String() string {
	switch p {
	case ParamInt:
		return "int"
	case ParamString:
		return "string"
	}
	return fmt.Sprintf("ParamType(%d)", uint8(p))
}

// Param is a region parameter's definition.
type Param struct {
	Name string
	Type ParamType
}

// Annotations are the definitions annotation records name. Ids are dense
// and start at 1: Marks[id-1] is the name of mark id, and so on; Strings
// holds the values of string parameters.
type Annotations struct {
	Marks    []string
	Params   []Param
	Strings  []string
	Channels []string
}

func (a *Annotations) empty() bool {
	return len(a.Marks) == 0 && len(a.Params) == 0 && len(a.Strings) == 0 && len(a.Channels) == 0
}

// name returns names[id-1], or what stands for an id the file does not
// define (a trace recovered from a mapping, which has no definitions of
// annotations).
func name(names []string, what string, id uint32) string {
	if id >= 1 && int(id) <= len(names) {
		return names[id-1]
	}
	return fmt.Sprintf("%s %d", what, id)
}

// MarkName returns the name of mark id.
func (a *Annotations) MarkName(id uint32) string { return name(a.Marks, "mark", id) }

// ChannelName returns the name of channel id.
func (a *Annotations) ChannelName(id uint32) string { return name(a.Channels, "channel", id) }

// StringValue returns string id of the string parameters' values.
func (a *Annotations) StringValue(id uint32) string { return name(a.Strings, "string", id) }

// Param returns the definition of parameter id; ok is false for an id the
// file does not define.
func (a *Annotations) Param(id uint32) (p Param, ok bool) {
	if id >= 1 && int(id) <= len(a.Params) {
		return a.Params[id-1], true
	}
	return Param{Name: fmt.Sprintf("parameter %d", id)}, false
}

// Describe says what annotation event e records, in one line for dump and
// report: `mark "converged"`, `param n = 42`, `chan "jobs" send #7, 64 bytes`.
// It returns "" for an event of another kind.
func (a *Annotations) Describe(e *Event) string {
	switch e.Kind {
	case encode.KindMark:
		return fmt.Sprintf("mark %q", a.MarkName(e.Key))
	case encode.KindParamInt:
		p, _ := a.Param(e.Key)
		return fmt.Sprintf("param %s = %d", p.Name, e.Value)
	case encode.KindParamString:
		p, _ := a.Param(e.Key)
		return fmt.Sprintf("param %s = %q", p.Name, a.StringValue(uint32(e.Value)))
	case encode.KindChanSend:
		return fmt.Sprintf("chan %q send #%d, %d bytes", a.ChannelName(e.Key), e.Token, e.Bytes)
	case encode.KindChanRecv:
		return fmt.Sprintf("chan %q recv #%d from location %d, %d bytes", a.ChannelName(e.Key), e.Token, e.Peer, e.Bytes)
	}
	return ""
}

// fileVersion is the version a writer puts into the file of t.
func (t *Trace) fileVersion() uint16 {
	if !t.Annotations.empty() || t.annotated {
		return versionAnnotations
	}
	return 1
}

// encodeAnnotations writes the definitions, nil if there are none.
func encodeAnnotations(a *Annotations) []byte {
	if a.empty() {
		return nil
	}
	var p wirecodec.Writer
	p.Strings(a.Marks)
	p.Uvarint(uint64(len(a.Params)))
	for _, x := range a.Params {
		p.String(x.Name)
		p.U8(uint8(x.Type))
	}
	p.Strings(a.Strings)
	p.Strings(a.Channels)
	return p
}

func decodeAnnotations(f *fields, a *Annotations) {
	a.Marks = f.Strings("marks")
	n := f.Count("parameters", 2)
	a.Params = make([]Param, 0, n)
	for i := 0; i < n && f.OK(); i++ {
		p := Param{Name: f.String("parameter name"), Type: ParamType(f.U8("parameter type"))}
		if f.OK() && p.Type >= numParamTypes {
			f.Fail("parameter type", fmt.Sprintf("%d of parameter %q is not int (0) or string (1)", p.Type, p.Name))
		}
		a.Params = append(a.Params, p)
	}
	a.Strings = f.Strings("parameter strings")
	a.Channels = f.Strings("channels")
}

// ChanMessage is one value sent on a channel, paired with its receive by
// the token the value carried: tokens are numbered per channel at the
// send, once each, so a pair is never a guess from times or order.
type ChanMessage struct {
	Channel uint32
	Token   uint64
	From    uint32 // the sending location
	To      uint32 // the receiving location; 0 with Received false
	Bytes   uint64 // as the send gave them, else the receive

	// The records' times (reduced ticks) and sequence numbers, where the
	// file holds them: the buffer may shed either side (a send's level
	// closed, a value never received).
	SendTime, RecvTime uint64
	SendSeq, RecvSeq   uint32
	Sent, Received     bool
}

// ChannelMessages pairs the channel sends and receives of every location
// of the file by (channel, token), sorted by channel and token. A receive
// names its sender, so a message whose send was shed still has its From;
// a send never received has Received false. A second receive of one
// token (the program handed one value to two receivers) is its own entry,
// with Sent false.
func (f *File) ChannelMessages() ([]ChanMessage, error) {
	type key struct {
		ch  uint32
		tok uint64
	}
	byKey := map[key]int{}
	var msgs []ChanMessage
	var e Event
	for i := range f.Locations {
		l := &f.Locations[i]
		if !keepsMessages(l) {
			continue
		}
		it := f.Events(l.ID)
		for it.Next(&e) {
			if e.Kind != encode.KindChanSend && e.Kind != encode.KindChanRecv {
				continue
			}
			k := key{e.Key, e.Token}
			j, seen := byKey[k]
			if !seen {
				j = len(msgs)
				byKey[k] = j
				msgs = append(msgs, ChanMessage{Channel: e.Key, Token: e.Token, Bytes: e.Bytes})
			}
			m := &msgs[j]
			if e.Kind == encode.KindChanSend {
				if m.Sent {
					return nil, fmt.Errorf("%s: channel %q: token %d sent twice (locations %d and %d): the file is corrupted", f.Path, f.ChannelName(e.Key), e.Token, m.From, l.ID)
				}
				if m.Received && m.From != l.ID {
					return nil, fmt.Errorf("%s: channel %q: token %d sent by location %d, its receive names location %d: the file is corrupted", f.Path, f.ChannelName(e.Key), e.Token, l.ID, m.From)
				}
				m.Sent, m.From, m.SendTime, m.SendSeq, m.Bytes = true, l.ID, e.Time, e.Seq, e.Bytes
				continue
			}
			if m.Received {
				msgs = append(msgs, ChanMessage{Channel: e.Key, Token: e.Token, Bytes: e.Bytes})
				m = &msgs[len(msgs)-1]
			}
			if m.Sent && uint64(m.From) != e.Peer {
				return nil, fmt.Errorf("%s: channel %q: token %d sent by location %d, received on location %d from location %d: the file is corrupted", f.Path, f.ChannelName(e.Key), e.Token, m.From, l.ID, e.Peer)
			}
			if e.Peer > 0xFFFFFFFF {
				return nil, fmt.Errorf("%s: channel %q: token %d received on location %d from location %d, which no file has", f.Path, f.ChannelName(e.Key), e.Token, l.ID, e.Peer)
			}
			m.Received, m.To, m.From, m.RecvTime, m.RecvSeq = true, l.ID, uint32(e.Peer), e.Time, e.Seq
			if !m.Sent {
				m.Bytes = e.Bytes
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(msgs, func(a, b ChanMessage) int {
		if a.Channel != b.Channel {
			return int(a.Channel) - int(b.Channel)
		}
		switch {
		case a.Token < b.Token:
			return -1
		case a.Token > b.Token:
			return 1
		}
		return 0
	})
	return msgs, nil
}
