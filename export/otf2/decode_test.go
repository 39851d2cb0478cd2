package otf2

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A minimal decoder of the event files this package writes, for property
// and fuzz tests: it checks the chunk structure (sizes, headers, event
// numbers, a TIMESTAMP at the start of every chunk, zero padding, the
// END_OF_FILE terminator) and returns the events.

type decodedEvent struct {
	kind   string
	time   uint64
	ref    uint64
	values []uint64 // metric values; for MPI: peer, tag, length
	attrs  []uint64 // the attribute list before it: attribute, type, value, ...
}

type eventDecoder struct {
	b     []byte
	p     int
	attrs []uint64 // an attribute list read, for the next event
	time  uint64
}

func (d *eventDecoder) byte() (byte, error) {
	if d.p >= len(d.b) {
		return 0, fmt.Errorf("offset %d: unexpected end of data", d.p)
	}
	c := d.b[d.p]
	d.p++
	return c, nil
}

func (d *eventDecoder) cu64() (uint64, error) {
	n, err := d.byte()
	if err != nil {
		return 0, err
	}
	switch {
	case n == 0:
		return 0, nil
	case n == 0xFF:
		return ^uint64(0), nil
	case n > 8:
		return 0, fmt.Errorf("offset %d: compressed integer of %d bytes", d.p-1, n)
	case d.p+int(n) > len(d.b):
		return 0, fmt.Errorf("offset %d: truncated compressed integer", d.p-1)
	}
	var v uint64
	for i := 0; i < int(n); i++ {
		v |= uint64(d.b[d.p+i]) << (8 * i)
	}
	d.p += int(n)
	return v, nil
}

// cu32 reads a compressed uint32, whose one-byte FF is 2^32-1.
func (d *eventDecoder) cu32() (uint64, error) {
	v, err := d.cu64()
	if err == nil && v > math.MaxUint32 {
		if v != math.MaxUint64 || d.b[d.p-1] != 0xFF {
			return 0, fmt.Errorf("offset %d: %d does not fit a compressed uint32", d.p, v)
		}
		v = math.MaxUint32
	}
	return v, err
}

func (d *eventDecoder) u64() (uint64, error) {
	if d.p+8 > len(d.b) {
		return 0, fmt.Errorf("offset %d: truncated uint64", d.p)
	}
	v := binary.LittleEndian.Uint64(d.b[d.p:])
	d.p += 8
	return v, nil
}

// decodeEventFile decodes an .evt file written with the given chunk size.
func decodeEventFile(data []byte, chunkSize int) ([]decodedEvent, error) {
	var evs []decodedEvent
	d := &eventDecoder{b: data}
	for chunk := 0; ; chunk++ {
		start := chunk * chunkSize
		if start >= len(data) {
			return nil, fmt.Errorf("chunk %d at offset %d: missing (no END_OF_FILE before)", chunk, start)
		}
		end := min(start+chunkSize, len(data))
		d.b = data[:end]
		d.p = start
		if end-start < chunkHeaderLen || data[start] != chunkHeader || data[start+1] != littleEndianMarker {
			return nil, fmt.Errorf("chunk %d at offset %d: no chunk header", chunk, start)
		}
		first := binary.LittleEndian.Uint64(data[start+2:])
		last := binary.LittleEndian.Uint64(data[start+10:])
		if first != uint64(len(evs))+1 {
			return nil, fmt.Errorf("chunk %d: first event %d, want %d", chunk, first, len(evs)+1)
		}
		d.p += chunkHeaderLen
		sawTime := false
		for {
			id, err := d.byte()
			if err != nil {
				return nil, fmt.Errorf("chunk %d: %w", chunk, err)
			}
			switch id {
			case endOfChunk:
				if d.attrs != nil {
					return nil, fmt.Errorf("chunk %d: an attribute list at its end, its event in the next chunk", chunk)
				}
				for _, c := range data[d.p:end] {
					if c != 0 {
						return nil, fmt.Errorf("chunk %d: non-zero padding", chunk)
					}
				}
				if end-start != chunkSize {
					return nil, fmt.Errorf("chunk %d: %d bytes, want %d", chunk, end-start, chunkSize)
				}
			case endOfFile:
				if c, err := d.byte(); err != nil || c != endOfBuffer || d.p != len(data) {
					return nil, fmt.Errorf("chunk %d: END_OF_FILE not followed by END_OF_BUFFER at the end of the file", chunk)
				}
			case attributeListID:
				if d.attrs != nil {
					return nil, fmt.Errorf("chunk %d offset %d: two attribute lists in a row", chunk, d.p-1)
				}
				if d.attrs, err = d.attributeList(); err != nil {
					return nil, fmt.Errorf("chunk %d: %w", chunk, err)
				}
				continue
			case timestampID:
				t, err := d.u64()
				if err != nil {
					return nil, err
				}
				if t < d.time {
					return nil, fmt.Errorf("chunk %d: timestamp %d after %d", chunk, t, d.time)
				}
				d.time, sawTime = t, true
				continue
			default:
				if !sawTime {
					return nil, fmt.Errorf("chunk %d offset %d: event before any TIMESTAMP in the chunk", chunk, d.p-1)
				}
				e, err := d.event(id)
				if err != nil {
					return nil, fmt.Errorf("chunk %d: %w", chunk, err)
				}
				e.attrs, d.attrs = d.attrs, nil
				evs = append(evs, e)
				continue
			}
			if last != uint64(len(evs)) {
				return nil, fmt.Errorf("chunk %d: last event %d, want %d", chunk, last, len(evs))
			}
			if id == endOfFile {
				return evs, nil
			}
			break
		}
	}
}

func (d *eventDecoder) event(id byte) (decodedEvent, error) {
	e := decodedEvent{time: d.time}
	switch id {
	case eventEnter, eventLeave:
		e.kind = map[byte]string{eventEnter: "ENTER", eventLeave: "LEAVE"}[id]
		r, err := d.cu32()
		e.ref = r
		return e, err
	case eventMpiIsendComplete, eventMpiIrecvRequest, eventMpiRequestTest, eventMpiRequestCancelled:
		e.kind = requestEventNames[id]
		r, err := d.cu64()
		e.values = []uint64{r}
		return e, err
	}
	n, err := d.byte()
	if err != nil {
		return e, err
	}
	length := uint64(n)
	if n == 0xFF {
		if length, err = d.u64(); err != nil {
			return e, err
		}
	}
	end := d.p + int(length)
	if length > uint64(len(d.b)) || end > len(d.b) {
		return e, fmt.Errorf("offset %d: record length %d beyond the chunk", d.p, length)
	}
	switch id {
	case eventMpiSend, eventMpiRecv:
		e.kind = map[byte]string{eventMpiSend: "MPI_SEND", eventMpiRecv: "MPI_RECV"}[id]
		var f [4]uint64
		for i := range f {
			read := d.cu32
			if i == 3 {
				read = d.cu64
			}
			if f[i], err = read(); err != nil {
				return e, err
			}
		}
		e.ref, e.values = f[1], []uint64{f[0], f[2], f[3]}
	case eventMpiIsend, eventMpiIrecv:
		e.kind = map[byte]string{eventMpiIsend: "MPI_ISEND", eventMpiIrecv: "MPI_IRECV"}[id]
		if e.values, err = d.fields("cccCC"); err != nil {
			return e, err
		}
	case eventMpiCollectiveBegin:
		e.kind = "MPI_COLLECTIVE_BEGIN"
	case eventMpiCollectiveEnd:
		e.kind = "MPI_COLLECTIVE_END"
		if e.values, err = d.fields("bccCC"); err != nil {
			return e, err
		}
	case eventNonBlockingCollectiveRequest:
		e.kind = "NON_BLOCKING_COLLECTIVE_REQUEST"
		if e.values, err = d.fields("C"); err != nil {
			return e, err
		}
	case eventNonBlockingCollectiveComplete:
		e.kind = "NON_BLOCKING_COLLECTIVE_COMPLETE"
		if e.values, err = d.fields("bccCCC"); err != nil {
			return e, err
		}
	case eventThreadFork:
		e.kind = "THREAD_FORK"
		if e.values, err = d.fields("bc"); err != nil {
			return e, err
		}
	case eventThreadJoin:
		e.kind = "THREAD_JOIN"
		if e.values, err = d.fields("b"); err != nil {
			return e, err
		}
	case eventThreadTaskCreate, eventThreadTaskSwitch, eventThreadTaskComplete:
		e.kind = map[byte]string{eventThreadTaskCreate: "THREAD_TASK_CREATE", eventThreadTaskSwitch: "THREAD_TASK_SWITCH",
			eventThreadTaskComplete: "THREAD_TASK_COMPLETE"}[id]
		if e.values, err = d.fields("ccc"); err != nil {
			return e, err
		}
	case eventThreadTeamBegin, eventThreadTeamEnd:
		e.kind = map[byte]string{eventThreadTeamBegin: "THREAD_TEAM_BEGIN", eventThreadTeamEnd: "THREAD_TEAM_END"}[id]
		if e.values, err = d.fields("c"); err != nil {
			return e, err
		}
	case eventParameterInt, eventParameterString:
		e.kind = map[byte]string{eventParameterInt: "PARAMETER_INT64", eventParameterString: "PARAMETER_STRING"}[id]
		if e.values, err = d.fields("cC"); err != nil {
			return e, err
		}
	case eventMetric:
		e.kind = "METRIC"
		if e.ref, err = d.cu32(); err != nil {
			return e, err
		}
		count, err := d.byte()
		if err != nil {
			return e, err
		}
		for i := 0; i < int(count); i++ {
			if _, err := d.byte(); err != nil {
				return e, err
			}
			v, err := d.cu64()
			if err != nil {
				return e, err
			}
			e.values = append(e.values, v)
		}
	default:
		return e, fmt.Errorf("offset %d: unknown event record %d", d.p-2, id)
	}
	if d.p != end {
		return e, fmt.Errorf("%s record: length %d, fields take %d", e.kind, length, int(length)+d.p-end)
	}
	return e, nil
}

var requestEventNames = map[byte]string{
	eventMpiIsendComplete:    "MPI_ISEND_COMPLETE",
	eventMpiIrecvRequest:     "MPI_IRECV_REQUEST",
	eventMpiRequestTest:      "MPI_REQUEST_TEST",
	eventMpiRequestCancelled: "MPI_REQUEST_CANCELLED",
}

// fields reads fields by a layout: b a byte, c a compressed uint32, C a
// compressed uint64.
// attributeList reads an attribute list after its id: length, count, and
// per attribute its reference, type and value (a string reference for
// TypeString, a compressed integer for the others).
func (d *eventDecoder) attributeList() ([]uint64, error) {
	n, err := d.byte()
	if err != nil {
		return nil, err
	}
	end := d.p + int(n)
	count, err := d.cu32()
	if err != nil {
		return nil, err
	}
	var out []uint64
	for i := uint64(0); i < count; i++ {
		vs, err := d.fields("cb")
		if err != nil {
			return nil, err
		}
		var v uint64
		if vs[1] == uint64(TypeString) {
			v, err = d.cu32()
		} else {
			v, err = d.cu64()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, vs[0], vs[1], v)
	}
	if d.p != end {
		return nil, fmt.Errorf("offset %d: attribute list of %d bytes, its fields take %d", d.p, n, int(n)+d.p-end)
	}
	return out, nil
}

func (d *eventDecoder) fields(layout string) ([]uint64, error) {
	vs := make([]uint64, len(layout))
	for i, c := range layout {
		var err error
		switch c {
		case 'b':
			var v byte
			v, err = d.byte()
			vs[i] = uint64(v)
		case 'c':
			vs[i], err = d.cu32()
		case 'C':
			vs[i], err = d.cu64()
		}
		if err != nil {
			return nil, err
		}
	}
	return vs, nil
}
