package cshim

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The messages of a round come split by sender; a record cut short or a
// sender twice is an error, except backward, where a sender's messages
// join.
func TestSplitRecords(t *testing.T) {
	rec := func(from uint32, b string) []byte {
		out := binary.LittleEndian.AppendUint32(nil, from)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		return append(out, b...)
	}
	all := append(rec(3, "abc"), rec(5, "")...)
	got, err := splitRecords(all, false)
	if err != nil || len(got) != 2 || !bytes.Equal(got[3], []byte("abc")) || len(got[5]) != 0 {
		t.Errorf("splitRecords: %q, %v", got, err)
	}
	for cut := 1; cut < len(all); cut++ {
		if cut == len(rec(3, "abc")) {
			continue // a whole record
		}
		if _, err := splitRecords(all[:cut], false); err == nil {
			t.Errorf("cut to %d of %d bytes: no error", cut, len(all))
		}
	}
	if _, err := splitRecords(append(rec(3, "a"), rec(3, "b")...), false); err == nil {
		t.Error("two messages of rank 3: no error")
	}
	// Backward, a sender's messages join in their order.
	if got, err := splitRecords(append(append(rec(3, "ab"), rec(5, "x")...), rec(3, "c")...), true); err != nil || string(got[3]) != "abc" || string(got[5]) != "x" {
		t.Errorf("joined: %q, %v", got, err)
	}
}

// The backward rounds' output ends with the rank's status, a record to
// rank world that the C side reads (hmbtrace_mpi.c: replay_async) and an
// older driver stops at: one byte, 1 once the rank awaits no cost.
func TestAppendSettled(t *testing.T) {
	const world = 4
	msg := binary.LittleEndian.AppendUint32(nil, 2)
	msg = binary.LittleEndian.AppendUint32(msg, 3)
	msg = append(msg, 7, 8, 9)
	for _, settled := range []bool{false, true} {
		out := appendSettled(bytes.Clone(msg), world, settled)
		rest := out[len(msg):]
		if len(rest) != 9 || binary.LittleEndian.Uint32(rest) != world || binary.LittleEndian.Uint32(rest[4:]) != 1 {
			t.Fatalf("settled %v: status record % x, want rank %d, length 1, one byte", settled, rest, world)
		}
		if got := rest[8] == 1; got != settled || rest[8] > 1 {
			t.Errorf("settled %v: status byte %d", settled, rest[8])
		}
		if !bytes.Equal(out[:len(msg)], msg) {
			t.Errorf("settled %v: the messages before the status changed: % x", settled, out[:len(msg)])
		}
	}
}
