package variation_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// FuzzAnalyze feeds every file the reader accepts to the analyses and their
// writers: none may panic or loop, whatever the file says. The seeds are
// traces written now (so they follow the current format), besides the
// committed corpus.
func FuzzAnalyze(f *testing.F) {
	for _, tf := range []*tracefile.File{
		figure3(f, "MPI_Barrier"),
		planted{locations: 3, iterations: 5, slow: map[[2]int]bool{{1, 2}: true}}.record(f),
		hotHelper(f, measure.Config{BufferSize: 4 << 10, BinSize: 256}),
	} {
		data, err := os.ReadFile(tf.Path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	sync, err := filter.ParsePatternList("barrier*, MPI*")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := tracefile.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		files := []*tracefile.File{tf}
		opts := []Options{{}, {Sync: sync}}
		if len(tf.Regions) > 0 {
			opts = append(opts, Options{Region: tf.Regions[len(tf.Regions)-1].Name, Sync: sync})
		}
		for _, o := range opts {
			v, err := Analyze(files, o)
			if err != nil {
				continue
			}
			for _, s := range v.Segments {
				if s.Row < 0 || s.Row >= len(v.Rows) || s.SOS != s.Duration-s.Sync {
					t.Fatalf("segment %+v of %d rows", s, len(v.Rows))
				}
			}
			if err := render.VariationText(io.Discard, v, DefaultMinScore, 5); err != nil {
				t.Fatal(err)
			}
			if err := render.VariationTSV(io.Discard, v); err != nil {
				t.Fatal(err)
			}
			if err := render.VariationSVG(io.Discard, v); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []score.Property{score.TotalOverhead, score.PrologOverhead} {
			s, err := score.Compute(files, score.Options{Property: p})
			if err != nil {
				continue
			}
			if err := render.ScoreText(io.Discard, s); err != nil {
				t.Fatal(err)
			}
			render.ScoreFilter(io.Discard, s) // names a filter file cannot hold are an error, not a panic
		}
	})
}

// FuzzAnalyzeRun records a run that the input scripts, two bytes an
// operation, and analyses it: nestings, recursion, equal timestamps,
// unbalanced leaves and messages in any order. The first byte of a pair picks
// the operation and region or location, the second the time step.
func FuzzAnalyzeRun(f *testing.F) {
	f.Add([]byte{0x01, 10, 0x02, 5, 0x40, 1, 0x40, 2, 0x02, 5, 0x40, 1, 0x40, 3})
	f.Add([]byte{0x03, 1, 0x01, 0, 0x41, 0, 0x81, 7, 0x03, 1, 0x40, 1, 0x40, 0, 0xC1, 2, 0x01, 1})
	f.Add([]byte{0x05, 1, 0x05, 1, 0x05, 1, 0x40, 0, 0x40, 0, 0x40, 0, 0xC0, 1, 0x00, 255, 0x40, 9})
	sync, err := filter.ParsePatternList("r2, r5")
	if err != nil {
		f.Fatal(err)
	}
	names := []string{"r0", "r1", "r2", "r3", "r4", "r5", "MPI_Barrier", "r7"}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) == 0 || len(script) > 4096 {
			return
		}
		m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "fuzz", Clock: "monotonic",
			TimerShift: int(script[0]%3) - 1, BufferSize: 8 << 10, BinSize: 256})
		if err != nil {
			t.Fatal(err)
		}
		locs := []*measure.Location{m.Location("l0"), m.Location("l1"), m.Location("l2")}
		stacks := make([][]measure.Region, len(locs))
		cur, now := 0, m.Now()
		for i := 0; i+1 < len(script); i += 2 {
			op, arg := script[i], script[i+1]
			now += uint64(arg)
			l := locs[cur]
			switch op >> 6 {
			case 0: // enter region op&7
				r := m.Region(names[op&7])
				l.EnterAt(r, now)
				stacks[cur] = append(stacks[cur], r)
			case 1: // leave the innermost region, or op&7 if asked
				if s := stacks[cur]; len(s) > 0 {
					r := s[len(s)-1]
					if op&0x20 != 0 {
						r = m.Region(names[op&7])
					}
					l.LeaveAt(r, now)
					stacks[cur] = s[:len(s)-1]
				}
			case 2: // a message to another location
				l.MessageAt(measure.Message{Recv: op&1 != 0, Peer: uint64(locs[int(op>>1)%len(locs)].ID()), Tag: uint32(op), Bytes: uint64(arg)}, now)
			case 3: // switch location
				cur = int(op&0x3f) % len(locs)
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		tf, err := tracefile.Open(m.Path())
		if err != nil {
			t.Fatalf("the reader rejects what measure wrote: %v", err)
		}
		defer tf.Close()
		files := []*tracefile.File{tf}
		for _, o := range []Options{{}, {Sync: sync}, {Region: "r1", Sync: sync}, {Region: "r2"}} {
			v, err := Analyze(files, o)
			if err != nil {
				continue
			}
			for _, s := range v.Segments {
				if s.Sync < 0 || s.Sync > s.Duration || s.SOS != s.Duration-s.Sync {
					t.Fatalf("segment %+v: sync time outside the segment", s)
				}
			}
			if err := render.VariationText(io.Discard, v, DefaultMinScore, 5); err != nil {
				t.Fatal(err)
			}
			if err := render.VariationSVG(io.Discard, v); err != nil {
				t.Fatal(err)
			}
		}
		s, err := score.Compute(files, score.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fs := s.Files[0]
		if fs.Removed == 0 && fs.Reencoded != fs.FileBytes {
			t.Fatalf("unreduced trace: re-encoded %d bytes, the file holds %d", fs.Reencoded, fs.FileBytes)
		}
		if err := render.ScoreText(io.Discard, s); err != nil {
			t.Fatal(err)
		}
		if err := render.ScoreFilter(io.Discard, s); err != nil {
			t.Fatal(err)
		}
	})
}
