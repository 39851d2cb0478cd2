package measure

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
)

// The C shim's direct probes (cshim/lib/direct.h) write a location in
// place. Their view of it is not written by hand: this file derives
// cshim/lib/golayout.h from the Go types and constants, with a static
// assertion per field, so that a change on the Go side that C does not
// follow stops the C build instead of corrupting a trace. `go generate
// ./measure` rewrites the header; TestGoLayout fails while it is stale.

var updateGoLayout = flag.Bool("update-golayout", false, "rewrite cshim/lib/golayout.h from the Go types")

const goLayoutPath = "../cshim/lib/golayout.h"

// cStruct is one Go struct mirrored in C: its fields from the first up to
// and including last ("" for all of them, then its size is asserted too).
// Fields of the struct types in flatten are spliced in where they stand,
// so that C reaches an Encoder's time as lv->time.
type cStruct struct {
	name    string // the C struct's tag
	doc     string
	typ     reflect.Type
	last    string
	flatten []reflect.Type
}

// cConst is a Go constant C uses, under its C name.
type cConst struct {
	name  string
	value uint64
	doc   string // a comment opening a group of constants, "" inside one
}

func goLayoutStructs() []cStruct {
	return []cStruct{
		{name: "hmb_go_frame", doc: "measure.frame: an open region on a location's stack", typ: reflect.TypeFor[frame]()},
		{name: "hmb_go_prof", doc: "measure.profEntry: a region's line of the profile", typ: reflect.TypeFor[profEntry]()},
		{name: "hmb_go_prof_page", doc: "the head of measure.profPage", typ: reflect.TypeFor[profPage](), last: "e"},
		{name: "hmb_go_commline", doc: "measure.commLine: one peer's line of the communication matrix (comm.go)", typ: reflect.TypeFor[commLine]()},
		{name: "hmb_go_location", doc: "measure.probeState, the head of measure.Location", typ: reflect.TypeFor[probeState]()},
		{name: "hmb_go_hierarchy", doc: "the head of buffer.Hierarchy", typ: reflect.TypeFor[buffer.Hierarchy](), last: "ClassClosed"},
		{name: "hmb_go_level", doc: "the head of buffer.Level, with its encode.Encoder's fields in place", typ: reflect.TypeFor[buffer.Level](),
			last: "mark", flatten: []reflect.Type{reflect.TypeFor[encode.Encoder]()}},
	}
}

func goLayoutConsts() []cConst {
	return []cConst{
		{name: "HMB_FRAME_DROPPED", value: uint64(frameDropped), doc: "measure's frame states (frame.state)"},
		{name: "HMB_FRAME_PENDING", value: uint64(framePending)},
		{name: "HMB_FRAME_WRITTEN", value: uint64(frameWritten)},

		{name: "HMB_PROF_PAGE_BITS", value: profPageBits, doc: "measure's profile: pages of 1 << HMB_PROF_PAGE_BITS entries, and why a probe skips a region (profEntry.off)"},
		{name: "HMB_PROF_PAGE", value: profPageSize},
		{name: "HMB_OFF_NONE", value: uint64(offNone)},
		{name: "HMB_OFF_FILTERED", value: uint64(offFiltered)},
		{name: "HMB_OFF_THROTTLED", value: uint64(offThrottled)},
		{name: "HMB_OFF_UNDEFINED", value: uint64(offUndefined)},

		{name: "HMB_THROTTLE_EARLY_SHIFT", value: throttleEarlyShift, doc: "measure's throttling rule (throttle.go): the share of long calls each step allows"},
		{name: "HMB_THROTTLE_LATE_SHIFT", value: throttleLateShift},

		{name: "HMB_TECH_ALL", value: uint64(encode.All), doc: "encode: every technique, and the records' largest sizes"},
		{name: "HMB_MAX_ENTER_LEAVE", value: encode.MaxEnterLeaveSize},
		{name: "HMB_MAX_MESSAGE", value: encode.MaxMessageSize},
		{name: "HMB_MAX_COLLECTIVE", value: encode.MaxCollectiveSize},

		{name: "HMB_TOK_PRED_LEAVE", value: encode.TokPredLeave, doc: "the tokens of encode/record.go and encode/predict.go"},
		{name: "HMB_TOK_PRED_LEAVE12", value: encode.TokPredLeave12},
		{name: "HMB_TOK_PRED_LEAVE_LONG", value: encode.TokPredLeaveLong},
		{name: "HMB_TOK_PRED_ENTER", value: encode.TokPredEnter},
		{name: "HMB_TOK_PRED_ENTER_SLOT", value: encode.TokPredEnterSlot},
		{name: "HMB_TOK_PRED_ENTER_SLOT_LONG", value: encode.TokPredEnterSlotLong},
		{name: "HMB_TOK_PRED_ENTER_SLOT_NOW", value: encode.TokPredEnterSlotNow},
		{name: "HMB_TOK_PRED_ENTER_REGION", value: encode.TokPredEnterRegion},
		{name: "HMB_TOK_PRED_ENTER_NOW", value: encode.TokPredEnterNow},
		{name: "HMB_TOK_SEQ_INLINE", value: encode.TokSeqInline},
		{name: "HMB_TOK_SEND", value: encode.TokSend},
		{name: "HMB_TOK_RECV", value: encode.TokRecv},
		{name: "HMB_TOK_SEND_RANK", value: encode.TokSendRank},
		{name: "HMB_TOK_COLL", value: encode.TokColl},
		{name: "HMB_TOK_SEND_RANK_COMM", value: encode.TokSendRankComm},
		{name: "HMB_TOK_ISEND_RANK", value: encode.TokIsendRank},
		{name: "HMB_TOK_IRECV_RANK", value: encode.TokIrecvRank},
		{name: "HMB_TOK_ISEND_COMPLETE", value: encode.TokIsendComplete},
		{name: "HMB_TOK_IRECV_REQUEST", value: encode.TokIrecvRequest},
		{name: "HMB_TOK_REQUEST_CANCELLED", value: encode.TokRequestCancelled},
		{name: "HMB_TOK_COLL_REQUEST", value: encode.TokCollRequest},
		{name: "HMB_TOK_COLL_COMM", value: encode.TokCollComm},
		{name: "HMB_TOK_COLL_COMPLETE", value: encode.TokCollComplete},
		{name: "HMB_TOK_RMA", value: encode.TokRma},
	}
}

// goLayoutRmaFields are the bits of encode's RMA field masks, and the
// masks by kind as a C initializer (HMB_RMA_FIELDS_INIT, indexed by the
// kind minus HMB_RMA_FIELDS_FIRST).
func goLayoutRmaFields() ([]cConst, string) {
	var cs []cConst
	for i, n := range encode.RmaFieldNames {
		cs = append(cs, cConst{name: "HMB_RMA_F_" + n, value: 1 << i})
	}
	cs[0].doc = "encode.RmaFieldNames: the fields of an RMA record, in the order they are stored"
	first := encode.KindRmaWinCreate
	cs = append(cs, cConst{name: "HMB_RMA_FIELDS_FIRST", value: uint64(first)})
	var init []string
	for k := first; k.IsRma(); k++ {
		init = append(init, fmt.Sprintf("%#x", encode.RmaFields(k)))
	}
	return cs, "{" + strings.Join(init, ", ") + "}"
}

// goLayoutEnums are the enumerations C shares with Go, written out whole.
func goLayoutEnums() []cConst {
	var cs []cConst
	for c := encode.Class(0); c < encode.NumClasses; c++ {
		cs = append(cs, cConst{name: "HMB_CLASS_" + cIdent(c.String()), value: uint64(c)})
	}
	cs = append(cs, cConst{name: "HMB_NUM_CLASSES", value: uint64(encode.NumClasses)})
	cs[0].doc = "encode.Class: the event classes"
	first := len(cs)
	for r := encode.Reason(0); r < encode.NumReasons; r++ {
		cs = append(cs, cConst{name: "HMB_BY_" + cIdent(r.String()), value: uint64(r)})
	}
	cs = append(cs, cConst{name: "HMB_NUM_REASONS", value: uint64(encode.NumReasons)})
	cs[first].doc = "encode.Reason: why events were removed"
	return cs
}

// cIdent turns a name as Go prints it ("enter/leave") into an upper-case C
// identifier's part ("REGION" for the one class whose name is not a word).
func cIdent(s string) string {
	if s == encode.ClassRegion.String() {
		return "REGION"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToUpper(r)
		}
		return '_'
	}, s)
}

// cFieldName is a Go field's name in C: snake case, and cls for class,
// which C++ reserves.
func cFieldName(s string) string {
	if s == "class" {
		return "cls"
	}
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// cType is the C type of a Go field's type: t's name and the array suffix.
func cType(t reflect.Type, named map[reflect.Type]string) (string, string, error) {
	if n, ok := named[t]; ok {
		return "struct " + n, "", nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Uint8:
		return "uint8_t", "", nil
	case reflect.Int8:
		return "int8_t", "", nil
	case reflect.Uint16:
		return "uint16_t", "", nil
	case reflect.Int16:
		return "int16_t", "", nil
	case reflect.Uint32:
		return "uint32_t", "", nil
	case reflect.Int32:
		return "int32_t", "", nil
	case reflect.Uint64, reflect.Uint:
		return "uint64_t", "", nil
	case reflect.Int64, reflect.Int:
		return "int64_t", "", nil
	case reflect.Uintptr:
		return "uintptr_t", "", nil
	case reflect.Slice:
		return "struct hmb_go_slice", "", nil
	case reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func:
		return "void *", "", nil
	case reflect.Pointer:
		if e := t.Elem(); e.Kind() != reflect.Struct && e.Kind() != reflect.Array {
			base, suf, err := cType(e, named)
			if err == nil && suf == "" {
				return base + " *", "", nil
			}
		}
		return "void *", "", nil
	case reflect.Array:
		base, suf, err := cType(t.Elem(), named)
		return base, fmt.Sprintf("[%d]%s", t.Len(), suf), err
	}
	return "", "", fmt.Errorf("no C type for Go type %s", t)
}

// cField is one field of a C struct and its Go offset.
type cField struct {
	name, typ, suffix string
	off               uintptr
}

func (s cStruct) fields(named map[reflect.Type]string) ([]cField, error) {
	var out []cField
	var walk func(t reflect.Type, base uintptr) (bool, error)
	walk = func(t reflect.Type, base uintptr) (bool, error) {
		for i := range t.NumField() {
			f := t.Field(i)
			flat := false
			for _, ft := range s.flatten {
				flat = flat || f.Type == ft
			}
			if flat {
				if done, err := walk(f.Type, base+f.Offset); done || err != nil {
					return done, err
				}
				continue
			}
			typ, suf, err := cType(f.Type, named)
			if err != nil {
				return false, fmt.Errorf("%s.%s: %w", s.typ, f.Name, err)
			}
			out = append(out, cField{name: cFieldName(f.Name), typ: typ, suffix: suf, off: base + f.Offset})
			if f.Name == s.last {
				return true, nil
			}
		}
		return false, nil
	}
	done, err := walk(s.typ, 0)
	if err == nil && s.last != "" && !done {
		err = fmt.Errorf("%s has no field %s", s.typ, s.last)
	}
	return out, err
}

// goLayoutHeader returns the text of cshim/lib/golayout.h.
func goLayoutHeader() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`/*
 * golayout.h - the C probes' view of the Go objects they write in place
 * (see direct.h). Generated by go generate ./measure from the Go types and
 * constants (measure/golayout_test.go); do not edit. A Go change that this
 * file does not follow fails its static assertions, and TestGoLayout while
 * the file is stale.
 */
#ifndef HMBTRACE_GOLAYOUT_H
#define HMBTRACE_GOLAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* A Go slice's header. */
struct hmb_go_slice {
	void *ptr;
	int64_t len, cap;
};
`)
	fmt.Fprintf(&b, "_Static_assert(sizeof(struct hmb_go_slice) == %d, \"Go slice header\");\n", reflect.TypeFor[[]byte]().Size())
	named := map[reflect.Type]string{}
	for _, s := range goLayoutStructs() {
		fs, err := s.fields(named)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\n/* %s */\nstruct %s {\n", s.doc, s.name)
		for _, f := range fs {
			sep := " "
			if strings.HasSuffix(f.typ, "*") {
				sep = ""
			}
			fmt.Fprintf(&b, "\t%s%s%s%s;\n", f.typ, sep, f.name, f.suffix)
		}
		b.WriteString("};\n")
		for _, f := range fs {
			fmt.Fprintf(&b, "_Static_assert(offsetof(struct %s, %s) == %d, \"%s.%s\");\n", s.name, f.name, f.off, s.typ, f.name)
		}
		if s.last == "" {
			fmt.Fprintf(&b, "_Static_assert(sizeof(struct %s) == %d, \"size of %s\");\n", s.name, s.typ.Size(), s.typ)
		}
		named[s.typ] = s.name
	}
	rmaBits, rmaInit := goLayoutRmaFields()
	for _, group := range [][]cConst{goLayoutEnums(), goLayoutConsts(), rmaBits} {
		for i, c := range group {
			if c.doc != "" {
				if i > 0 {
					b.WriteString("};\n")
				}
				fmt.Fprintf(&b, "\n/* %s */\nenum {\n", c.doc)
			}
			fmt.Fprintf(&b, "\t%s = %#x,\n", c.name, c.value)
		}
		b.WriteString("};\n")
	}
	fmt.Fprintf(&b, "\n/* encode.RmaFields of each RMA kind from HMB_RMA_FIELDS_FIRST on */\n#define HMB_RMA_FIELDS_INIT %s\n", rmaInit)
	b.WriteString("\n#endif\n")
	return b.Bytes(), nil
}

func TestGoLayout(t *testing.T) {
	want, err := goLayoutHeader()
	if err != nil {
		t.Fatal(err)
	}
	if *updateGoLayout {
		if err := os.WriteFile(goLayoutPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(goLayoutPath)
	if err != nil {
		t.Fatalf("%v: run go generate ./measure", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: the Go layout or constants changed; run go generate ./measure", goLayoutPath)
	}
}

func TestCFieldName(t *testing.T) {
	for in, want := range map[string]string{"lastTR": "last_tr", "ClassClosed": "class_closed", "class": "cls",
		"sentB": "sent_b", "PLimit": "p_limit", "ID": "id", "throttledAt": "throttled_at", "e": "e"} {
		if got := cFieldName(in); got != want {
			t.Errorf("cFieldName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGoLayoutAssertsBite compiles the header as C, as it is and with one
// field of the location moved, which must fail: the check the C build
// relies on.
func TestGoLayoutAssertsBite(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	h, err := goLayoutHeader()
	if err != nil {
		t.Fatal(err)
	}
	compile := func(src []byte) error {
		cmd := exec.Command(cc, "-std=c11", "-fsyntax-only", "-x", "c", "-")
		cmd.Stdin = bytes.NewReader(src)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := compile(h); err != nil {
		t.Fatalf("the generated header does not compile: %v", err)
	}
	moved := bytes.Replace(h, []byte("\tuint32_t run;\n\tuint8_t shift;\n"), []byte("\tuint8_t shift;\n\tuint32_t run;\n"), 1)
	if bytes.Equal(moved, h) {
		t.Fatal("the location's run and shift fields are not where the test expects them")
	}
	if err := compile(moved); err == nil {
		t.Fatal("a header whose location has two fields swapped compiles")
	} else if !strings.Contains(err.Error(), "measure.probeState.run") {
		t.Fatalf("the failure does not name the field: %v", err)
	}
}
