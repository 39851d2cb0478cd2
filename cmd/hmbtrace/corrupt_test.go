package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// duplicateFirstBin returns the trace with its first BIN section written
// twice and the checksum recomputed: a corruption no checksum catches.
func duplicateFirstBin(t *testing.T, data []byte) []byte {
	t.Helper()
	const secBin, secEnd = 5, 0xFF
	for off := 10; off < len(data); {
		kind := data[off]
		length, n := binary.Uvarint(data[off+1:])
		if n <= 0 {
			t.Fatalf("offset %d: bad section length", off)
		}
		end := off + 1 + n + int(length)
		if kind == secEnd {
			break
		}
		if kind == secBin {
			out := append([]byte{}, data[:end]...)
			out = append(out, data[off:end]...)
			out = append(out, data[end:len(data)-4]...)
			return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
		}
		off = end
	}
	t.Fatal("no BIN section")
	return nil
}

// TestDuplicatedBinEveryCommand checks that every command refuses a trace
// with a BIN section duplicated, naming the offset, instead of counting
// its bins twice or showing time going backwards.
func TestDuplicatedBinEveryCommand(t *testing.T) {
	good := record(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "dup.hmb")
	if err := os.WriteFile(bad, duplicateFirstBin(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"summary", bad},
		{"dump", bad},
		{"export", "-format", "chrome", "-o", filepath.Join(dir, "x.json"), bad},
		{"export", "-format", "pprof", "-o", filepath.Join(dir, "x.pprof"), bad},
		{"variation", bad},
		{"score", bad},
		{"comm", bad},
		{"dynamics", bad},
		{"report", "-o", filepath.Join(dir, "x.html"), bad},
	} {
		var out, errOut bytes.Buffer
		rc := run(args, &out, &errOut)
		if rc == 0 || !strings.Contains(errOut.String(), "dup.hmb: offset") {
			t.Errorf("hmbtrace %v: exit %d, stderr %q; want an error naming the offset", args[0], rc, errOut.String())
		}
	}
	// The same file before the corruption reads.
	var out, errOut bytes.Buffer
	if rc := run([]string{"summary", good}, &out, &errOut); rc != 0 {
		t.Fatalf("summary of the good trace: exit %d: %s", rc, errOut.String())
	}
}
