package otf2

import (
	"encoding/binary"
	"fmt"
	"math"
)

// defFile writes definition records into a chunked definition file.
type defFile struct {
	cf      chunkedFile
	payload []byte // scratch for one record's payload
	records uint64
}

func (a *Archive) newDefFile(path string, buf []byte) (*defFile, error) {
	if err := createEmpty(path); err != nil {
		return nil, err
	}
	a.created = append(a.created, path)
	f := &defFile{cf: chunkedFile{path: path, buf: buf}}
	f.cf.startChunk(1)
	return f, nil
}

// put writes one record. libotf2 sizes definition records exactly (unlike
// events): the record goes into the current chunk if it is smaller than the
// free space, and its length takes the long form from 255 bytes on.
func (f *defFile) put(id byte, payload []byte) error {
	bound := recordBound(len(payload))
	if !f.cf.room(bound) {
		if err := f.cf.flushChunk(0); err != nil {
			return err
		}
		f.cf.startChunk(1)
		if !f.cf.room(bound) {
			return fmt.Errorf("otf2: %s: definition record %d of %d bytes does not fit in a chunk of %d bytes", f.cf.path, id, bound, len(f.cf.buf))
		}
	}
	b := f.cf.buf[f.cf.pos:]
	b[0] = id
	n := 2
	if len(payload) >= 255 {
		b[1] = 0xFF
		binary.LittleEndian.PutUint64(b[2:10], uint64(len(payload)))
		n = 10
	} else {
		b[1] = byte(len(payload))
	}
	n += copy(b[n:], payload)
	f.cf.pos += n
	f.records++
	return nil
}

// writeGlobalDefinitions writes traces.def in a fixed order: clock, strings
// (before anything refers to them), system tree, location groups, locations,
// regions, groups, communicators, metrics. The golden generator in
// testdata/gen writes the same order through libotf2.
func (a *Archive) writeGlobalDefinitions(f *defFile) error {
	p := f.payload[:0]
	put := func(id byte) error {
		err := f.put(id, p)
		p = p[:0]
		return err
	}
	c := a.clock
	p = appendCU64(p, c.ticksPerSecond)
	p = appendCU64(p, c.globalOffset)
	p = appendCU64(p, c.traceLength)
	p = appendCU64(p, math.MaxUint64) // realtime timestamp: undefined
	if err := put(defClockProperties); err != nil {
		return err
	}
	for i, s := range a.strings {
		p = appendCU32(p, uint32(i))
		p = appendString(p, s)
		if err := put(defString); err != nil {
			return err
		}
	}
	for i, n := range a.systemTreeNodes {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(n.name))
		p = appendCU32(p, uint32(n.class))
		p = appendCU32(p, uint32(n.parent))
		if err := put(defSystemTreeNode); err != nil {
			return err
		}
	}
	for i, g := range a.locationGroups {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(g.name))
		p = append(p, locationGroupTypeProcess)
		p = appendCU32(p, uint32(g.parent))
		p = appendCU32(p, undefined) // creating location group
		if err := put(defLocationGroup); err != nil {
			return err
		}
	}
	for i, l := range a.locations {
		p = appendCU64(p, uint64(i))
		p = appendCU32(p, uint32(l.name))
		p = append(p, locationTypeCPUThread)
		p = appendCU64(p, l.events)
		p = appendCU32(p, uint32(l.group))
		if err := put(defLocation); err != nil {
			return err
		}
	}
	for i, r := range a.regions {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(r.name))
		p = appendCU32(p, uint32(r.description))
		p = append(p, regionTypeAttic(r.role, r.paradigm, r.flags))
		p = appendCU32(p, uint32(r.file))
		p = appendCU32(p, r.begin)
		p = appendCU32(p, r.end)
		p = appendCU32(p, uint32(r.canonical))
		p = append(p, byte(r.role), byte(r.paradigm))
		p = appendCU32(p, uint32(r.flags))
		if err := put(defRegion); err != nil {
			return err
		}
	}
	for i, g := range a.groups {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(g.name))
		p = append(p, groupTypeAttic(g.typ, g.paradigm, g.flags))
		p = appendCU32(p, uint32(len(g.members)))
		for _, m := range g.members {
			p = appendCU64(p, m)
		}
		p = append(p, byte(g.typ), byte(g.paradigm))
		p = appendCU32(p, uint32(g.flags))
		if err := put(defGroup); err != nil {
			return err
		}
	}
	for i, c := range a.comms {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(c.name))
		p = appendCU32(p, uint32(c.group))
		id := byte(defComm)
		if c.inter {
			p = appendCU32(p, uint32(c.groupB))
			id = defInterComm
		}
		p = appendCU32(p, uint32(c.parent))
		p = appendCU32(p, uint32(c.flags))
		if err := put(id); err != nil {
			return err
		}
	}
	p, err := a.appendRmaWins(p, func(p []byte) ([]byte, error) { return p[:0], f.put(defRmaWin, p) })
	if err != nil {
		return err
	}
	for i, m := range a.metricMembers {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(m.name))
		p = appendCU32(p, uint32(m.description))
		p = append(p, byte(m.typ), byte(m.mode), byte(m.valueType), byte(m.base))
		p = appendCI64(p, m.exponent)
		p = appendCU32(p, uint32(m.unit))
		if err := put(defMetricMember); err != nil {
			return err
		}
	}
	for i, m := range a.metricClasses {
		p = appendCU32(p, uint32(i))
		p = append(p, byte(len(m.members)))
		for _, r := range m.members {
			p = appendCU32(p, uint32(r))
		}
		p = append(p, byte(m.occurrence), byte(m.recorder))
		if err := put(defMetricClass); err != nil {
			return err
		}
	}
	p, err = a.appendParameters(p, func(id byte, p []byte) ([]byte, error) { return p[:0], f.put(id, p) })
	if err != nil {
		return err
	}
	f.payload = p
	return nil
}
