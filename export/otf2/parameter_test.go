package otf2

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// writeParameters writes rounds of parameter events and attributed
// messages on two locations with the given event chunk size, and returns
// the archive's directory and the parameters', attributes' and string's
// references.
func writeParameters(t *testing.T, chunk, rounds int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	a, err := create(dir, Options{EventChunkSize: chunk, DefChunkSize: 256 << 10}, 512)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	node, err := a.SystemTreeNode("node", "machine", NoParent)
	ok(err)
	proc, err := a.LocationGroup("process", node)
	ok(err)
	w0, err := a.Location("thread 0", proc)
	ok(err)
	w1, err := a.Location("thread 1", proc)
	ok(err)
	comm, err := a.MPICommWorld("LOCS", []LocationRef{0, 1})
	ok(err)
	n, err := a.Parameter("n", ParameterInt64)
	ok(err)
	mode, err := a.Parameter("mode", ParameterString)
	ok(err)
	fast, err := a.DefineString("fast")
	ok(err)
	name, err := a.Attribute("channel", "", TypeString)
	ok(err)
	tok, err := a.Attribute("token", "", TypeUint64)
	ok(err)
	delta, err := a.Attribute("delta", "", TypeInt64)
	ok(err)
	if _, err := a.Parameter("bad", 7); err == nil {
		t.Error("a parameter of type 7 was accepted")
	}
	if _, err := a.Attribute("bad", "", TypeDouble); err == nil {
		t.Error("an attribute of type double was accepted")
	}
	if err := w0.ParameterInt(1, mode, 1); err == nil {
		t.Error("an int value of a string parameter was accepted")
	}
	if err := w0.AttributeList(1, AttributeValue{Attribute: 99}); err == nil {
		t.Error("an undefined attribute was accepted")
	}
	for i := uint64(0); i < uint64(rounds); i++ {
		ts := 10 + 10*i
		ok(w0.ParameterInt(ts, n, -int64(i)))
		ok(w0.ParameterString(ts, mode, fast))
		ok(w0.AttributeList(ts, AttributeValue{Attribute: name, Value: uint64(fast)}, AttributeValue{Attribute: tok, Value: i},
			AttributeValue{Attribute: delta, Value: uint64(-int64(i))}))
		ok(w0.MpiSend(ts, 1, comm, 3, 64))
		ok(w1.AttributeList(ts+5, AttributeValue{Attribute: tok, Value: i}))
		ok(w1.MpiRecv(ts+5, 0, comm, 3, 64))
	}
	ok(a.ClockProperties(1, 0, uint64(10*rounds+20)))
	ok(w0.Close())
	ok(w1.Close())
	ok(a.Close())
	return dir
}

// TestParametersAndAttributesChunks writes on 512-byte chunks, so that
// many records land at a chunk's end: an attribute list and its event
// always share a chunk, and every value reads back.
func TestParametersAndAttributesChunks(t *testing.T) {
	const rounds = 400
	dir := writeParameters(t, 512, rounds)
	for loc := 0; loc < 2; loc++ {
		data, err := os.ReadFile(filepath.Join(dir, "traces", fmt.Sprint(loc)+".evt"))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 20*512 {
			t.Fatalf("location %d: %d bytes, too few chunks to test", loc, len(data))
		}
		evs, err := decodeEventFile(data, 512)
		if err != nil {
			t.Fatalf("location %d: %v", loc, err)
		}
		var i uint64
		for _, e := range evs {
			switch e.kind {
			case "PARAMETER_INT64":
				if e.values[0] != 0 || int64(e.values[1]) != -int64(i) || e.attrs != nil {
					t.Fatalf("round %d: %+v", i, e)
				}
			case "PARAMETER_STRING":
				if e.values[0] != 1 || e.attrs != nil {
					t.Fatalf("round %d: %+v", i, e)
				}
			case "MPI_SEND":
				want := fmt.Sprint([]uint64{0, uint64(TypeString), e.attrs[2], 1, uint64(TypeUint64), i, 2, uint64(TypeInt64), uint64(-int64(i))})
				if fmt.Sprint(e.attrs) != want {
					t.Fatalf("round %d: send attributes %v, want %s", i, e.attrs, want)
				}
				i++
			case "MPI_RECV":
				if fmt.Sprint(e.attrs) != fmt.Sprint([]uint64{1, uint64(TypeUint64), i}) {
					t.Fatalf("round %d: receive attributes %v", i, e.attrs)
				}
				i++
			default:
				t.Fatalf("unexpected %+v", e)
			}
		}
		if i != rounds {
			t.Errorf("location %d: %d messages, want %d", loc, i, rounds)
		}
	}
}

// TestParametersAndAttributesPrinted: otf2-print reads the same on
// libotf2's smallest chunks (256 KiB), across several chunk boundaries.
func TestParametersAndAttributesPrinted(t *testing.T) {
	tracetest.RequireTool(t, "otf2-print", otf2print.DebianPackage)
	const rounds = 12000
	anchor := filepath.Join(writeParameters(t, 256<<10, rounds), "traces.otf2")
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	evs, err := otf2print.Events(anchor)
	if err != nil {
		t.Fatal(err)
	}
	next := [2]uint64{}
	var params int
	for _, e := range evs {
		switch e.Name {
		case "PARAMETER_INT64":
			if want := fmt.Sprintf(`Parameter: "n" <0>, Value: %d`, -int64(next[0])); e.Attributes != want {
				t.Fatalf("%q, want %q", e.Attributes, want)
			}
			params++
		case "PARAMETER_STRING":
			if !strings.HasPrefix(e.Attributes, `Parameter: "mode" <1>, Value: "fast" <`) {
				t.Fatalf("%q", e.Attributes)
			}
			params++
		case "MPI_SEND", "MPI_RECV":
			k := e.Location
			want := fmt.Sprintf(`("token" <1>; UINT64; %d)`, next[k])
			if len(e.More) != 1 || !strings.Contains(e.More[0], want) {
				t.Fatalf("%s on %d at %d: attributes %q, want %s", e.Name, k, e.Time, e.More, want)
			}
			if k == 0 && !strings.Contains(e.More[0], fmt.Sprintf(`("delta" <2>; INT64; %d)`, -int64(next[k]))) {
				t.Fatalf("send: attributes %q lack delta %d", e.More, -int64(next[k]))
			}
			next[k]++
		}
	}
	if next != [2]uint64{rounds, rounds} || params != 2*rounds {
		t.Errorf("read %v messages and %d parameters, want %d each side and %d", next, params, rounds, 2*rounds)
	}
}
