package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// deepen rewrites the trace at path with every level, bin and reduction
// moved delta depths down, as if the program ran at that calling depth
// with the ancestors' levels removed: a valid file, checksum and all.
func deepen(t *testing.T, path string, delta int, out string) string {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := f.Trace
	f.Close()
	tr.Locations = append([]tracefile.Location(nil), tr.Locations...)
	for i := range tr.Locations {
		l := &tr.Locations[i]
		l.Levels = append([]tracefile.LevelStats(nil), l.Levels...)
		for j := range l.Levels {
			l.Levels[j].Depth += delta
		}
	}
	tr.Reductions = append([]tracefile.Reduction(nil), tr.Reductions...)
	for i := range tr.Reductions {
		if tr.Reductions[i].Reason == tracefile.ByDepth {
			tr.Reductions[i].Depth += delta
		}
	}
	bins := rawBins(t, path)
	for i := range bins {
		bins[i].Depth += delta
	}
	err = tracefile.WriteFile(out, &tr, func(put func(tracefile.Bin) error) error {
		for _, b := range bins {
			if err := put(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawBins returns the BIN sections of a trace file as written.
func rawBins(t *testing.T, path string) []tracefile.Bin {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const secBin, secEnd = 5, 0xFF
	var bins []tracefile.Bin
	for off := 10; off < len(data); {
		kind := data[off]
		length, n := binary.Uvarint(data[off+1:])
		if n <= 0 {
			t.Fatalf("offset %d: bad section length", off)
		}
		body := off + 1 + n
		if kind == secEnd {
			break
		}
		if kind == secBin {
			var v [5]uint64
			p := body
			for i := range v {
				x, k := binary.Uvarint(data[p:])
				if k <= 0 {
					t.Fatalf("offset %d: bad bin header", p)
				}
				v[i], p = x, p+k
			}
			bins = append(bins, tracefile.Bin{Location: uint32(v[0]), Depth: int(v[1]), Class: tracefile.Class(v[2]),
				Records: uint32(v[3]), Data: bytes.Clone(data[p : p+int(v[4])])})
		}
		off = body + int(length)
	}
	return bins
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHugeDepthEveryCommand reads a real trace moved to calling depths of
// 10^5, 10^7 and 10^9 (its ancestors' levels removed) with every command:
// each reads it in memory bounded by its events, not by the depth value.
func TestHugeDepthEveryCommand(t *testing.T) {
	deltas := []int{1e5, 1e7, 1e9}
	if s := os.Getenv("DEEP_TEST_DEPTHS"); s != "" {
		deltas = nil
		for _, f := range strings.Fields(s) {
			d, _ := strconv.Atoi(f)
			deltas = append(deltas, d)
		}
	}
	// One worker: the allocations of several depend on how far the
	// others ran ahead (an exporter's chunk in flight), not on depth.
	t.Setenv("HMB_TOOL_PROCS", "1")
	good := recordDeep(t)
	dir := t.TempDir()
	k := 0
	commands := func(p string) [][]string {
		k++
		dir := filepath.Join(dir, strconv.Itoa(k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return [][]string{
			{"summary", p},
			{"summary", "-tsv", p},
			{"dump", p},
			{"export", "-format", "chrome", "-o", filepath.Join(dir, "x.json"), p},
			{"export", "-format", "pprof", "-o", filepath.Join(dir, "x.pprof"), p},
			{"export", "-format", "otf2", "-o", filepath.Join(dir, "x.otf2"), p},
			{"variation", p},
			{"score", p},
			{"comm", p},
			{"dynamics", p},
			{"report", "-o", filepath.Join(dir, "x.html"), p},
		}
	}
	var base []uint64 // bytes allocated by each command at the recorded depth
	for _, args := range commands(good) {
		var out, errOut bytes.Buffer
		base = append(base, 0)
		base[len(base)-1] = allocated(func() {
			if rc := run(args, &out, &errOut); rc != 0 {
				t.Fatalf("hmbtrace %v of the trace at its own depth: exit %d: %s", args, rc, errOut.String())
			}
		})
	}
	for _, delta := range deltas {
		p := deepen(t, good, delta, filepath.Join(dir, "deep.hmb"))
		for i, args := range commands(p) {
			var out, errOut bytes.Buffer
			var rc int
			start := time.Now()
			n := allocated(func() { rc = run(args, &out, &errOut) })
			t.Logf("depth +%d: %v: %d bytes (%d at the recorded depth), %v", delta, args[:min(3, len(args))], n, base[i], time.Since(start))
			if rc != 0 {
				t.Errorf("depth +%d: hmbtrace %v: exit %d: %s", delta, args, rc, errOut.String())
				continue
			}
			// At most 1 MB over the recorded depth's reading: per-depth
			// structures of the depths that occur, not of the value
			// (a stack slot per removed depth was 40 MB at +10^7).
			if b := base[i]; n > b+1<<20 {
				t.Errorf("depth +%d: hmbtrace %v allocated %d bytes, the trace at its own depth %d", delta, args[:2], n, b)
			}
			if args[0] == "report" {
				html, err := os.ReadFile(args[2])
				if err != nil || !strings.Contains(string(html), "depth "+strconv.Itoa(delta+1)+":") {
					t.Errorf("depth +%d: the report has no row of depth %d (%v)", delta, delta+1, err)
				}
			}
			if args[0] == "dump" && !strings.Contains(out.String(), "\t"+strconv.Itoa(delta+1)+"\n") {
				t.Errorf("depth +%d: dump does not show the depth %d:\n%s", delta, delta+1, out.String())
			}
		}
	}
}

// recordDeep records a small trace of two locations, a loop of nested
// calls at the top level, to be moved to a huge depth.
func recordDeep(t *testing.T) string {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "t", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	iter, solve, kernel := m.Region("iter"), m.Region("solve"), m.Region("kernel")
	now := m.Now()
	for _, l := range []*measure.Location{m.Location("alpha"), m.Location("beta")} {
		t := now
		for i := 0; i < 20; i++ {
			t += 10
			l.EnterAt(iter, t)
			l.EnterAt(solve, t+1)
			l.EnterAt(kernel, t+2)
			l.LeaveAt(kernel, t+5+uint64(i%3))
			l.LeaveAt(solve, t+8)
			l.LeaveAt(iter, t+9)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}
