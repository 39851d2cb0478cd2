//go:build linux

package tracefile_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// liveMapping records into a surviving measurement and returns the bytes
// of its mapping as they stand, with the measurement still open.
func liveMapping(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "damaged", Survive: true, SurviveDir: dir, BufferSize: 16 << 10, BinSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	a, b := m.Region("a"), m.Region("b")
	loc := m.Location("main")
	for i := 0; i < 3000; i++ {
		loc.Enter(a)
		loc.Enter(b)
		loc.Send(loc, 1, 8)
		loc.Leave(b)
		loc.Leave(a)
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*.shm"))
	if len(found) != 1 {
		t.Fatalf("mappings %v", found)
	}
	data, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRecoverDamaged: a mapping that is truncated or has bytes changed
// anywhere gives an error or a trace that reads, never a panic and never
// events out of order.
func TestRecoverDamaged(t *testing.T) {
	orig := liveMapping(t)
	if _, err := tracefile.RecoverBytes(orig[:len(orig)-1], true); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a truncated mapping: %v", err)
	}
	if _, err := tracefile.RecoverBytes(orig[:100], true); err == nil {
		t.Error("the first 100 bytes of a mapping recovered")
	}
	// The used part of the file: header, the first entries, descriptors,
	// the log's start and the bins.
	r, err := tracefile.RecoverBytes(orig, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records == 0 {
		t.Fatal("nothing recovered from the intact mapping")
	}
	if rc := r.Trace.Recovered; rc == nil || rc.End != tracefile.EndRunning || r.Cause != rc.EndText() {
		t.Errorf("a live mapping read with force: recovered %+v, cause %q", rc, r.Cause)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, len(orig))
	for i := 0; i < 300; i++ {
		copy(b, orig)
		for k := 0; k < 1+rng.IntN(8); k++ {
			var at int
			switch rng.IntN(3) {
			case 0:
				at = rng.IntN(4096) // the header
			case 1:
				at = len(b) - 16<<10 + rng.IntN(16<<10) // the bins
			default:
				at = rng.IntN(len(b))
			}
			b[at] ^= byte(1 + rng.IntN(255))
		}
		r, err := tracefile.RecoverBytes(b, true)
		if err != nil {
			continue
		}
		data, err := r.Bytes()
		if err != nil {
			continue
		}
		f, err := tracefile.Read(strings.NewReader(string(data)), int64(len(data)))
		if err != nil {
			continue
		}
		for _, l := range f.Locations {
			it := f.Events(l.ID)
			var e tracefile.Event
			for it.Next(&e) {
			}
		}
	}
}

// TestRecoverLevelIndices: a level entry whose reason or class is out of
// range (a crashing program scribbled on its mapping) is an error naming
// the level, not an index panic in recover, summary and dump.
func TestRecoverLevelIndices(t *testing.T) {
	orig := liveMapping(t)
	v, err := survive.Read(orig)
	if err != nil || len(v.Levels) == 0 {
		t.Fatalf("levels %d: %v", len(v.Levels), err)
	}
	var e survive.LevelEntry
	at := int(v.Header.OffLevels)
	for _, c := range []struct {
		off  uintptr
		val  byte
		want string
	}{
		{unsafe.Offsetof(e.ClosedBy), 200, "closed by reason 200"},
		{unsafe.Offsetof(e.Class), 99, "event class 99"},
	} {
		b := append([]byte(nil), orig...)
		b[at+int(unsafe.Offsetof(e.Closed))] = 1
		b[at+int(c.off)] = c.val
		if _, err := tracefile.RecoverBytes(b, true); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error saying %q, got %v", c.want, err)
		}
	}
}

// TestRecoverHugeDepth: a mapping whose levels sit at a huge calling depth
// (below removed ancestors, or scribbled on) recovers in memory bounded by
// its records, and one deeper than a trace file can hold is an error
// naming the file, the level and the field.
func TestRecoverHugeDepth(t *testing.T) {
	orig := liveMapping(t)
	v, err := survive.Read(orig)
	if err != nil || len(v.Levels) == 0 {
		t.Fatalf("levels %d: %v", len(v.Levels), err)
	}
	var e survive.LevelEntry
	size, off := int(unsafe.Sizeof(e)), int(unsafe.Offsetof(e.Depth))
	deepen := func(delta uint32) []byte {
		b := append([]byte(nil), orig...)
		for i := range v.Levels {
			at := int(v.Header.OffLevels) + i*size + off
			d := *(*uint32)(unsafe.Pointer(&b[at])) + delta
			*(*uint32)(unsafe.Pointer(&b[at])) = d
		}
		return b
	}
	read := func(b []byte) (*tracefile.Recovery, int, error) {
		r, err := tracefile.RecoverBytes(b, true)
		if err != nil {
			return nil, 0, err
		}
		data, err := r.Bytes()
		if err != nil {
			return nil, 0, err
		}
		f, err := tracefile.Read(strings.NewReader(string(data)), int64(len(data)))
		if err != nil {
			return nil, 0, err
		}
		n := 0
		for _, l := range f.Locations {
			it := f.Events(l.ID)
			var e tracefile.Event
			for it.Next(&e) {
				n++
			}
			if it.Err() != nil {
				return nil, 0, it.Err()
			}
		}
		return r, n, nil
	}
	_, events, err := read(orig)
	if err != nil {
		t.Fatal(err)
	}
	base := testing.AllocsPerRun(1, func() { read(orig) })
	for _, delta := range []uint32{1e5, 1e7, 1e9} {
		b := deepen(delta)
		_, n, err := read(b)
		if err != nil || n != events {
			t.Fatalf("depth +%d: %d events of %d: %v", delta, n, events, err)
		}
		// Allocations, not bytes: the same events at any depth.
		if a := testing.AllocsPerRun(1, func() { read(b) }); a > base*1.1+100 {
			t.Errorf("depth +%d: %.0f allocations, %.0f at the recorded depth", delta, a, base)
		}
	}
	// Deeper than a trace file's depth field holds: refused, by name.
	path := filepath.Join(t.TempDir(), "scribbled.shm")
	if err := os.WriteFile(path, deepen(1<<31), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = tracefile.Recover(path, true)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "depth") || !strings.Contains(err.Error(), "level 0") {
		t.Errorf("a level at depth 2^31: %v", err)
	}
}
