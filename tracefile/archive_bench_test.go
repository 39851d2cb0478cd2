package tracefile

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"
)

// bigBins returns n bins of size bytes (not decoded by the writers).
func bigBins(n, size int) []Bin {
	bins := make([]Bin, n)
	data := bytes.Repeat([]byte{0x5a}, size)
	for i := range bins {
		bins[i] = Bin{Location: 1, Depth: 0, Class: 0, Records: 1, Data: data}
	}
	return bins
}

// BenchmarkWriteSlot writes a 16 MiB trace into an archive's slot, as a
// rank does at its exit, against WriteFile of the same trace (rank files).
func BenchmarkWriteSlot(b *testing.B) {
	tr, _ := sample(b)
	bins := bigBins(256, 64<<10)
	put := func(put func(Bin) error) error {
		for _, bin := range bins {
			if err := put(bin); err != nil {
				return err
			}
		}
		return nil
	}
	var buf bytes.Buffer
	Write(&buf, tr, put)
	size := int64(buf.Len())
	b.Run("slot", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(size)
		for i := 0; b.Loop(); i++ {
			b.StopTimer() // the leader's part, once per group
			path := filepath.Join(dir, fmt.Sprintf("r%d.hmbrun", i))
			c := SlotCapacity(size)
			offs, err := CreateArchive(path, ArchivePlan{Name: "r", World: 1, Groups: 1, Ranks: []int{0}, Capacity: []int64{c}, Start: time.Now()})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := WriteSlot(path, offs[0], c, 0, func(w io.Writer) error { return Write(w, tr, put) }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(size)
		for i := 0; b.Loop(); i++ {
			if err := WriteFile(filepath.Join(dir, fmt.Sprintf("r.%d.hmb", i)), tr, put); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpenArchiveRank opens an archive of 1024 ranks and reads one
// rank's trace: the prelude, index, 1024 slot headers and that slot.
func BenchmarkOpenArchiveRank(b *testing.B) {
	tr, _ := sample(b)
	var buf bytes.Buffer
	Write(&buf, tr, func(func(Bin) error) error { return nil })
	const ranks = 1024
	plan := ArchivePlan{Name: "r", World: ranks, Groups: 1, EventsNone: true}
	for r := 0; r < ranks; r++ {
		plan.Ranks = append(plan.Ranks, r)
		plan.Capacity = append(plan.Capacity, 4096)
	}
	path := filepath.Join(b.TempDir(), "r.hmbrun")
	offs, err := CreateArchive(path, plan)
	if err != nil {
		b.Fatal(err)
	}
	for r := 0; r < ranks; r++ {
		tr.Header.Rank = r
		if err := WriteSlot(path, offs[r], 4096, r, func(w io.Writer) error {
			return Write(w, tr, func(func(Bin) error) error { return nil })
		}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		a, err := OpenArchive(path)
		if err != nil {
			b.Fatal(err)
		}
		f, err := a.OpenRank(ranks / 2)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		a.Close()
	}
}
