package chrome

import (
	"strconv"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// annotation writes a mark, a region parameter or a channel message as an
// instant on the location's track: a mark named after itself (category
// "mark"), a parameter after its name with its value in args ("param"), a
// channel message "send"/"recv" with the channel, token and bytes
// ("channel"). A channel message is also a flow from send to receive whose
// id is the file, channel and token: the reader's exact pairing, not the
// order of the messages.
func (x *track) annotation(i int, f *tracefile.File, e *tracefile.Event, ts uint64, pid, tid int) {
	b := func(s string) { x.buf = append(x.buf, s...) }
	switch e.Kind {
	case encode.KindMark:
		x.start('i', f.MarkName(e.Key), ts, pid, tid)
		b(`,"cat":"mark","s":"t"`)
		x.end()
		return
	case encode.KindParamInt, encode.KindParamString:
		p, _ := f.Param(e.Key)
		x.start('i', p.Name, ts, pid, tid)
		b(`,"cat":"param","s":"t","args":{"value":`)
		if e.Kind == encode.KindParamInt {
			x.buf = strconv.AppendInt(x.buf, e.Value, 10)
		} else {
			x.buf = appendString(x.buf, f.StringValue(uint32(e.Value)))
		}
		b("}")
		x.end()
		return
	}
	name, ph := "send", byte('s')
	if e.Kind == encode.KindChanRecv {
		name, ph = "recv", 'f'
	}
	x.start('i', name, ts, pid, tid)
	b(`,"cat":"channel","s":"t","args":{"channel":`)
	x.buf = appendString(x.buf, f.ChannelName(e.Key))
	b(`,"token":`)
	x.buf = strconv.AppendUint(x.buf, e.Token, 10)
	if e.Kind == encode.KindChanRecv {
		b(`,"from":`)
		x.buf = appendString(x.buf, x.peerName(i, e))
	}
	b(`,"bytes":`)
	x.buf = strconv.AppendUint(x.buf, e.Bytes, 10)
	b("}")
	x.end()
	x.start(ph, "channel", ts, pid, tid)
	b(`,"cat":"channel","id":"chan-`)
	x.buf = strconv.AppendInt(x.buf, int64(i), 10)
	b("-")
	x.buf = strconv.AppendUint(x.buf, uint64(e.Key), 10)
	b("-")
	x.buf = strconv.AppendUint(x.buf, e.Token, 10)
	b(`"`)
	if ph == 'f' {
		b(`,"bp":"e"`)
	}
	x.end()
}
