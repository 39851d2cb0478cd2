package convert

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Annotations in OTF2 (tracefile's annotation.go):
//
//   - A region parameter is what Score-P writes for its parameter
//     instrumentation: a Parameter definition (int64 or string) and a
//     ParameterInt or ParameterString event right after the region's
//     Enter.
//   - A mark is a ParameterString event of the parameter "mark" whose
//     value is the mark's name: OTF2 has no instant event in a location's
//     event stream, and a parameter event is one, in the region it
//     happened in, that every OTF2 reader reads.
//   - A channel message is an MpiSend and MpiRecv on the communicator of
//     locations (as every message between locations of one process),
//     tagged with the channel's id and carrying the attributes "channel"
//     (its name) and "token". The send names its receiver, which the
//     reader found by the token (tracefile.File.ChannelMessages): a value
//     sent but never received is left out and counted with the messages
//     without a peer.

// MarkParameter is the name of the OTF2 parameter marks are values of.
const MarkParameter = "mark"

// annotationRefs are the OTF2 references of one file's annotations, by id-1.
type annotationRefs struct {
	params   []otf2.ParameterRef
	strs     []otf2.StringRef
	marks    []otf2.StringRef
	channels []otf2.StringRef
	// receivers: the receiving location of each channel send that was
	// received, by channel and token.
	receivers map[[2]uint64]uint32
}

// annotationDefs are the definitions shared by the files.
type annotationDefs struct {
	perFile        []annotationRefs
	params         map[tracefile.Param]otf2.ParameterRef
	mark           otf2.ParameterRef
	channel, token otf2.AttributeRef
}

// defineAnnotations defines what the files' annotations need, before any
// location is exported, so the workers only read the references. A run
// without annotations defines nothing: its archive is the one it was.
func (x *exporter) defineAnnotations() error {
	any := false
	for _, f := range x.files {
		if len(f.Marks)+len(f.Params)+len(f.Channels) > 0 {
			any = true
		}
	}
	if !any {
		return nil
	}
	a := x.a
	d := &annotationDefs{perFile: make([]annotationRefs, len(x.files)), params: map[tracefile.Param]otf2.ParameterRef{}}
	var err error
	if d.mark, err = a.Parameter(MarkParameter, otf2.ParameterString); err != nil {
		return err
	}
	if d.channel, err = a.Attribute("channel", "the channel a message went through", otf2.TypeString); err != nil {
		return err
	}
	if d.token, err = a.Attribute("token", "the message's number on its channel", otf2.TypeUint64); err != nil {
		return err
	}
	strs := func(names []string) ([]otf2.StringRef, error) {
		refs := make([]otf2.StringRef, len(names))
		for k, s := range names {
			if refs[k], err = a.DefineString(s); err != nil {
				return nil, err
			}
		}
		return refs, nil
	}
	for i, f := range x.files {
		r := &d.perFile[i]
		for _, p := range f.Params {
			ref, ok := d.params[p]
			if !ok {
				t := otf2.ParameterInt64
				if p.Type == tracefile.ParamString {
					t = otf2.ParameterString
				}
				if ref, err = a.Parameter(p.Name, t); err != nil {
					return fmt.Errorf("%s: %w", f.Path, err)
				}
				d.params[p] = ref
			}
			r.params = append(r.params, ref)
		}
		if r.strs, err = strs(f.Strings); err == nil {
			if r.marks, err = strs(f.Marks); err == nil {
				r.channels, err = strs(f.Channels)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if len(f.Channels) == 0 {
			continue
		}
		msgs, err := f.ChannelMessages()
		if err != nil {
			return err
		}
		r.receivers = map[[2]uint64]uint32{}
		for _, m := range msgs {
			if m.Sent && m.Received {
				r.receivers[[2]uint64{uint64(m.Channel), m.Token}] = m.To
			}
		}
	}
	x.annot = d
	return nil
}

// annotation writes annotation event e of file i.
func (x *exporter) annotation(i int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	d := x.annot
	if d == nil {
		x.st.AnnotationsLeftOut++ // a file whose annotations are not defined
		return nil
	}
	r := &d.perFile[i]
	ref := func(refs []otf2.StringRef, id uint64) (otf2.StringRef, bool) {
		if id >= 1 && id <= uint64(len(refs)) {
			return refs[id-1], true
		}
		x.st.AnnotationsLeftOut++
		return 0, false
	}
	switch e.Kind {
	case encode.KindMark:
		s, ok := ref(r.marks, uint64(e.Key))
		if !ok {
			return nil
		}
		x.st.Marks++
		return w.ParameterString(ts, d.mark, s)
	case encode.KindParamInt, encode.KindParamString:
		f := x.files[i]
		p, ok := f.Param(e.Key)
		if !ok || (p.Type == tracefile.ParamString) != (e.Kind == encode.KindParamString) {
			x.st.AnnotationsLeftOut++
			return nil
		}
		pref := r.params[e.Key-1]
		if e.Kind == encode.KindParamInt {
			x.st.Parameters++
			return w.ParameterInt(ts, pref, e.Value)
		}
		if e.Value < 0 {
			x.st.AnnotationsLeftOut++
			return nil
		}
		s, ok := ref(r.strs, uint64(e.Value))
		if !ok {
			return nil
		}
		x.st.Parameters++
		return w.ParameterString(ts, pref, s)
	}
	// A channel message, as a message between locations of the process.
	name, ok := ref(r.channels, uint64(e.Key))
	if !ok {
		return nil
	}
	peer := tracefile.Event{Kind: encode.KindSend, Peer: e.Peer}
	if e.Kind == encode.KindChanSend {
		to, received := r.receivers[[2]uint64{uint64(e.Key), e.Token}]
		if !received {
			x.st.MessagesWithoutPeer++
			return nil
		}
		peer.Peer = uint64(to)
	} else {
		peer.Kind = encode.KindRecv
	}
	c, rank, ok, err := x.p2p(i, &peer)
	if err != nil || !ok {
		return err
	}
	if err := w.AttributeList(ts, otf2.AttributeValue{Attribute: d.channel, Value: uint64(name)},
		otf2.AttributeValue{Attribute: d.token, Value: e.Token}); err != nil {
		return err
	}
	x.st.ChannelMessages++
	if e.Kind == encode.KindChanSend {
		return w.MpiSend(ts, rank, c, e.Key, e.Bytes)
	}
	return w.MpiRecv(ts, rank, c, e.Key, e.Bytes)
}
