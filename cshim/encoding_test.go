package cshim_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestDirectEncoding compares the C direct path's encoder (hmb_put_enter,
// hmb_put_leave and their _slow parts in lib/direct.h and direct.c) with
// encode.Encoder byte for byte, record by record, on level streams that
// take every form of the token table: each region prediction slot and
// misses, deltas of every size, records at the previous one's time,
// sequence numbers off the default, times that go back (clamped), and bins
// started with and without an open region.
// encodingProgram builds cshim/testdata/c/encoding.c, the C direct path's
// encoders alone, and returns its path.
func encodingProgram(t *testing.T) string {
	t.Helper()
	tracetest.RequireTool(t, "gcc", "gcc")
	bin := filepath.Join(t.TempDir(), "encoding")
	lib := filepath.Join(root, "cshim", "lib")
	if out, err := exec.Command("gcc", "-O2", "-Wall", "-Werror", "-I", lib, "-o", bin,
		filepath.Join(root, "cshim", "testdata", "c", "encoding.c"), filepath.Join(lib, "direct.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc encoding.c: %v\n%s", err, out)
	}
	return bin
}

func TestDirectEncoding(t *testing.T) {
	bin := encodingProgram(t)
	rng := rand.New(rand.NewPCG(11, 12))
	var in strings.Builder
	var want []string
	var e encode.Encoder
	b := make([]byte, encode.MaxEnterLeaveSize+encode.MaxBinHeaderSize)
	forms := map[byte]bool{}
	for bins := 0; bins < 200; bins++ {
		tm := rng.Uint64N(1 << 40)
		open := uint32(rng.IntN(3))
		e = encode.NewEncoder(encode.All)
		e.StartBin(b, tm, open)
		fmt.Fprintf(&in, "B %d %d\n", tm, open)
		regions := 1 + rng.IntN(12)
		var seq uint32
		for i := 0; i < 300; i++ {
			switch rng.IntN(10) {
			case 0:
				seq++
			case 1:
				tm += 1 << (9 + rng.IntN(30))
				seq = 0
			case 2:
				tm -= uint64(rng.IntN(3)) // clamped to the stream's time
			default:
				tm += uint64(rng.IntN(1 << (4 + rng.IntN(9))))
				seq = 0
			}
			if rng.IntN(25) == 0 {
				seq = uint32(rng.Uint64N(1 << uint(rng.IntN(32))))
			}
			var n int
			if rng.IntN(2) == 0 {
				region := uint32(1 + rng.IntN(regions))
				if rng.IntN(30) == 0 {
					region = uint32(rng.Uint64N(1 << uint(rng.IntN(33))))
				}
				n = e.Enter(b, tm, seq, region)
				fmt.Fprintf(&in, "E %d %d %d\n", tm, seq, region)
			} else {
				n = e.Leave(b, tm, seq)
				fmt.Fprintf(&in, "L %d %d\n", tm, seq)
			}
			want = append(want, hex.EncodeToString(b[:n]))
			tok := b[0]
			if tok >= encode.TokSeqInline && tok < encode.TokSeqInline+0x20 && n > 1 {
				tok = b[1+len(uvarintPrefix(b, tok))]
			}
			forms[formOf(tok)] = true
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("C wrote %d records, Go %d", len(got), len(want))
	}
	lines := strings.Split(in.String(), "\n")
	rec := 0
	for _, l := range lines {
		if l == "" || l[0] == 'B' {
			continue
		}
		if got[rec] != want[rec] {
			t.Fatalf("record %d (%s): C % x, Go % x", rec, l, unhex(got[rec]), unhex(want[rec]))
		}
		rec++
	}
	// The streams must have taken every form, or the test proves less
	// than it says.
	for _, f := range []byte{encode.TokPredLeave, encode.TokPredLeave12, encode.TokPredLeaveLong, encode.TokPredEnter,
		encode.TokPredEnterSlot, encode.TokPredEnterSlotLong, encode.TokPredEnterSlotNow, encode.TokPredEnterRegion, encode.TokPredEnterNow} {
		if !forms[f] {
			t.Errorf("no record of form 0x%02X among %d", f, len(want))
		}
	}
}

// uvarintPrefix returns the bytes of a SEQ prefix's value after its token.
func uvarintPrefix(b []byte, tok byte) []byte {
	if tok != encode.TokSeqInline {
		return nil
	}
	i := 1
	for b[i]&0x80 != 0 {
		i++
	}
	return b[1 : i+1]
}

// formOf maps a token of the predicted table to the first token of its form.
func formOf(tok byte) byte {
	switch {
	case tok < encode.TokPredLeave12:
		return encode.TokPredLeave
	case tok < encode.TokPredEnter:
		return encode.TokPredLeave12
	case tok < encode.TokPredEnterSlot:
		return encode.TokPredEnter
	case tok < encode.TokPredEnterSlotLong:
		return encode.TokPredEnterSlot
	case tok < encode.TokPredLeaveLong:
		return encode.TokPredEnterSlotLong
	case tok > encode.TokPredEnterSlotNow && tok < encode.TokSeqInline:
		return encode.TokPredEnterSlotNow
	}
	return tok
}

func unhex(s string) []byte {
	b, _ := hex.DecodeString(s)
	return bytes.Clone(b)
}
