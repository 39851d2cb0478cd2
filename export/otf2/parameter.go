package otf2

import (
	"fmt"
	"math"
)

// Parameters and attributes: what Score-P's parameter instrumentation
// writes (a Parameter definition and ParameterInt or ParameterString
// events in the region they belong to), and attribute lists, the extra
// typed values an event may carry (Attribute definitions, ATTRIBUTE_LIST
// records before the event).

// ParameterRef is a reference to a Parameter definition.
type ParameterRef uint32

// AttributeRef is a reference to an Attribute definition.
type AttributeRef uint32

// StringRef is a reference to a String definition, as ParameterString
// events and string attributes name strings.
type StringRef uint32

// ParameterType is OTF2_ParameterType.
type ParameterType uint8

// Parameter types (OTF2_PARAMETER_TYPE_*).
const (
	ParameterString ParameterType = 0
	ParameterInt64  ParameterType = 1
	ParameterUint64 ParameterType = 2
)

// TypeString is OTF2_TYPE_STRING, the type of an attribute whose value is
// a string reference; attributes of TypeUint64 and TypeInt64 hold numbers.
const TypeString ValueType = 11

const (
	defAttribute = 11
	defParameter = 23

	eventParameterString = 32
	eventParameterInt    = 33

	attributeListID = 6
)

type parameterDef struct {
	name stringRef
	typ  ParameterType
}

type attributeDef struct {
	name, description stringRef
	typ               ValueType
}

// DefineString defines string s (once: the same s gives the same reference), for
// the events and attributes that name strings.
func (a *Archive) DefineString(s string) (StringRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if err := a.checkStrings("string", s); err != nil {
		return 0, err
	}
	r := a.intern(s)
	a.stringCount.Store(uint32(len(a.strings)))
	return StringRef(r), nil
}

// Parameter defines a parameter that ParameterInt or ParameterString
// events record values of.
func (a *Archive) Parameter(name string, t ParameterType) (ParameterRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if t > ParameterUint64 {
		return 0, fmt.Errorf("otf2: parameter %q: type %d is not string (0), int64 (1) or uint64 (2)", name, t)
	}
	if err := a.checkStrings("parameter name", name); err != nil {
		return 0, err
	}
	if uint64(len(a.parameters)) == undefined {
		return 0, fmt.Errorf("otf2: parameter %q: too many parameters", name)
	}
	a.parameters = append(a.parameters, parameterDef{name: a.intern(name), typ: t})
	a.stringCount.Store(uint32(len(a.strings)))
	a.parameterCount.Store(uint32(len(a.parameters)))
	return ParameterRef(len(a.parameters) - 1), nil
}

// Attribute defines an attribute of type t (TypeUint64, TypeInt64 or
// TypeString) that attribute lists give values of.
func (a *Archive) Attribute(name, description string, t ValueType) (AttributeRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if t != TypeUint64 && t != TypeInt64 && t != TypeString {
		return 0, fmt.Errorf("otf2: attribute %q: type %d is not uint64 (4), int64 (8) or string (11)", name, t)
	}
	if err := a.checkStrings("attribute name", name, "attribute description", description); err != nil {
		return 0, err
	}
	if uint64(len(a.attributes)) == undefined {
		return 0, fmt.Errorf("otf2: attribute %q: too many attributes", name)
	}
	a.attributes = append(a.attributes, attributeDef{name: a.intern(name), description: a.intern(description), typ: t})
	a.stringCount.Store(uint32(len(a.strings)))
	a.attributeTypes = append(a.attributeTypes, t)
	a.attributeCount.Store(uint32(len(a.attributes)))
	return AttributeRef(len(a.attributes) - 1), nil
}

// appendParameters appends the Attribute and Parameter definitions to
// traces.def with put.
func (a *Archive) appendParameters(p []byte, put func(id byte, p []byte) ([]byte, error)) ([]byte, error) {
	var err error
	for i, d := range a.attributes {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(d.name))
		p = append(p, byte(d.typ))
		p = appendCU32(p, uint32(d.description))
		if p, err = put(defAttribute, p); err != nil {
			return p, err
		}
	}
	for i, d := range a.parameters {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(d.name))
		p = append(p, byte(d.typ))
		if p, err = put(defParameter, p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// ParameterInt records value v of parameter p (of type ParameterInt64) in
// the region the location is in, as Score-P's SCOREP_USER_PARAMETER_INT64.
func (w *EventWriter) ParameterInt(ts uint64, p ParameterRef, v int64) error {
	if err := w.checkParameter(p, ParameterInt64); err != nil {
		return err
	}
	var buf [maxCU32 + maxCU64]byte
	return w.payloadEvent(ts, eventParameterInt, appendCI64(appendCU32(buf[:0], uint32(p)), v))
}

// ParameterString records value s of parameter p (of type ParameterString),
// as Score-P's SCOREP_USER_PARAMETER_STRING.
func (w *EventWriter) ParameterString(ts uint64, p ParameterRef, s StringRef) error {
	if err := w.checkParameter(p, ParameterString); err != nil {
		return err
	}
	if err := w.checkString(s); err != nil {
		return err
	}
	var buf [2 * maxCU32]byte
	return w.payloadEvent(ts, eventParameterString, appendCU32(appendCU32(buf[:0], uint32(p)), uint32(s)))
}

func (w *EventWriter) checkParameter(p ParameterRef, t ParameterType) error {
	if uint32(p) >= w.a.parameterCount.Load() {
		return w.undefined("parameter", uint64(p), w.a.parameterCount.Load())
	}
	w.a.mu.Lock()
	pt := w.a.parameters[p].typ
	w.a.mu.Unlock()
	if pt != t {
		return fmt.Errorf("otf2: location %d %q: parameter %d has type %d, the event type %d", w.ref, w.name, p, pt, t)
	}
	return nil
}

func (w *EventWriter) checkString(s StringRef) error {
	if uint32(s) >= w.a.stringCount.Load() {
		return w.undefined("string", uint64(s), w.a.stringCount.Load())
	}
	return nil
}

// payloadEvent writes an event with a length byte and payload p (shorter
// than 255 bytes).
func (w *EventWriter) payloadEvent(ts uint64, id byte, p []byte) error {
	if err := w.reserve(ts, recordBound(len(p))); err != nil {
		return err
	}
	b := w.file.buf[w.file.pos:]
	b[0], b[1] = id, byte(len(p))
	w.file.pos += 2 + copy(b[2:], p)
	w.events++
	return nil
}

// AttributeValue is one attribute of an attribute list: a number for an
// attribute of TypeUint64 or TypeInt64 (an int64 as its bits), a StringRef
// for one of TypeString.
type AttributeValue struct {
	Attribute AttributeRef
	Value     uint64
}

// maxAttributedEvent bounds the payload of an event that follows an
// attribute list: the largest this writer makes with one (an MpiIsend).
const maxAttributedEvent = mpiIP2PEstimate

// AttributeList writes the attributes of the next event, which must follow
// at the same time ts with a payload of at most maxAttributedEvent bytes:
// the list reserves room for both, so they stay in one chunk, as OTF2
// requires. At most 16 attributes.
func (w *EventWriter) AttributeList(ts uint64, attrs ...AttributeValue) error {
	if len(attrs) == 0 {
		return nil
	}
	if len(attrs) > 16 {
		return fmt.Errorf("otf2: location %d %q: %d attributes in one list, at most 16", w.ref, w.name, len(attrs))
	}
	var buf [maxCU32 + 16*(maxCU32+1+maxCU64)]byte
	p := appendCU32(buf[:0], uint32(len(attrs)))
	for _, at := range attrs {
		if uint32(at.Attribute) >= w.a.attributeCount.Load() {
			return w.undefined("attribute", uint64(at.Attribute), w.a.attributeCount.Load())
		}
		w.a.mu.Lock()
		t := w.a.attributeTypes[at.Attribute]
		w.a.mu.Unlock()
		p = appendCU32(p, uint32(at.Attribute))
		p = append(p, byte(t))
		switch t {
		case TypeString:
			if at.Value > math.MaxUint32 {
				return w.undefined("string", at.Value, w.a.stringCount.Load())
			}
			if err := w.checkString(StringRef(at.Value)); err != nil {
				return err
			}
			p = appendCU32(p, uint32(at.Value))
		case TypeInt64:
			p = appendCI64(p, int64(at.Value))
		default:
			p = appendCU64(p, at.Value)
		}
	}
	// Room for the event too, timestamp included, though the event at ts
	// writes none: its own reserve then never starts a new chunk.
	if err := w.reserve(ts, recordBound(len(p))+recordBound(maxAttributedEvent)+timestampLen); err != nil {
		return err
	}
	b := w.file.buf[w.file.pos:]
	b[0], b[1] = attributeListID, byte(len(p))
	w.file.pos += 2 + copy(b[2:], p)
	return nil
}
