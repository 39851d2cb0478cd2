package variation_test

import (
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// wireSeeds are the wire forms of a hybrid run's two ranks' parts:
// their choices and segments, and the merge of each.
func wireSeeds(tb testing.TB) [][]byte {
	files := rankFiles(tb, tracetest.ShapeRun{Shape: tracetest.ShapeHybrid, Ranks: 2, Threads: 2, Iterations: 6})
	var out [][]byte
	add := func(v any) {
		b, err := EncodeWire(v)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	var choice *Choice
	for _, f := range files {
		c, err := LocalChoice(f)
		if err != nil {
			tb.Fatal(err)
		}
		add(c)
		if choice == nil {
			choice = c
		} else {
			choice.Merge(c)
		}
	}
	add(choice)
	cut, err := choice.Cut()
	if err != nil {
		tb.Fatal(err)
	}
	var segs *Segments
	for _, f := range files {
		s, err := cut.Local(f)
		if err != nil {
			tb.Fatal(err)
		}
		add(s)
		if segs == nil {
			segs = s
		} else {
			segs.Merge(s)
		}
	}
	add(segs)
	return out
}

// FuzzDecodeWire feeds any bytes to the wire forms' decoders: none may
// panic, a segment's row is one of the part's, and what one reads encodes
// to bytes that read back to the same JSON. Its corpus (testdata) holds
// wireSeeds' merged choice and segments, a truncated and a corrupted part:
// recording the seeds in every fuzzing worker took the workers' time.
func FuzzDecodeWire(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Choice
		if DecodeWire(data, &c) == nil {
			sameThroughWire(t, &c, &Choice{})
		}
		var s Segments
		if DecodeWire(data, &s) == nil {
			for _, seg := range s.Segments {
				if seg.Row < 0 || seg.Row >= len(s.Rows) {
					t.Fatalf("segment of row %d of %d read", seg.Row, len(s.Rows))
				}
			}
			sameThroughWire(t, &s, &Segments{})
		}
		var k Cut
		if DecodeWire(data, &k) == nil {
			sameThroughWire(t, &k, &Cut{})
		}
	})
}

// TestCutThroughWire checks that the Cut the ranks read from its wire form
// cuts every rank's segments as the root's Cut does, and that the wire
// forms do not read one another.
func TestCutThroughWire(t *testing.T) {
	for _, shape := range []tracetest.ShapeRun{
		{Shape: tracetest.ShapeHybrid, Ranks: 2, Threads: 2, Iterations: 6},
		{Shape: tracetest.ShapeExchange, Ranks: 3, Iterations: 5},
	} {
		files := rankFiles(t, shape)
		var choice *Choice
		for _, f := range files {
			c, err := LocalChoice(f)
			if err != nil {
				t.Fatal(err)
			}
			if choice == nil {
				choice = c
			} else {
				choice.Merge(c)
			}
		}
		cut, err := choice.Cut()
		if err != nil {
			t.Fatal(err)
		}
		b, err := EncodeWire(cut)
		if err != nil {
			t.Fatal(err)
		}
		var got Cut
		if err := DecodeWire(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Plan.Region != cut.Plan.Region || got.Plan.Between != cut.Plan.Between ||
			got.Plan.ByRank != cut.Plan.ByRank || got.Axis != cut.Axis {
			t.Fatalf("%v: the Cut read back cuts %q (between %v, by rank %v, axis %+v), want %q (%v, %v, %+v)", shape.Shape,
				got.Plan.Region, got.Plan.Between, got.Plan.ByRank, got.Axis,
				cut.Plan.Region, cut.Plan.Between, cut.Plan.ByRank, cut.Axis)
		}
		for _, f := range files {
			want, err1 := cut.Local(f)
			have, err2 := got.Local(f)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			wj, _ := Encode(want)
			hj, _ := Encode(have)
			if string(wj) != string(hj) {
				t.Fatalf("%v: rank %d's segments by the Cut read back:\n%s\nby the root's:\n%s", shape.Shape, f.Header.Rank, hj, wj)
			}
		}
		var c Choice
		var s Segments
		if DecodeWire(b, &c) == nil || DecodeWire(b, &s) == nil || DecodeWire(b[:len(b)-1], &got) == nil {
			t.Fatal("a Cut's wire form read as a choice or as segments, or without its last byte")
		}
	}
}

// sameThroughWire checks that v encodes to a wire form that reads back
// into out with v's JSON.
func sameThroughWire(t *testing.T, v, out any) {
	t.Helper()
	b, err := EncodeWire(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeWire(b, out); err != nil {
		t.Fatal(err)
	}
	want, err1 := Encode(v)
	got, err2 := Encode(out)
	if err1 != nil || err2 != nil || string(got) != string(want) {
		t.Fatalf("through the wire form: %s (%v)\nwant %s (%v)", got, err2, want, err1)
	}
}

// TestWireFormsKeepParts checks the seeds: each part read back from its
// wire form is the part written, and neither form reads the other's.
func TestWireFormsKeepParts(t *testing.T) {
	seeds := wireSeeds(t)
	if len(seeds) != 6 {
		t.Fatalf("%d seeds, want 6", len(seeds))
	}
	for i, b := range seeds {
		var c Choice
		var s Segments
		errC, errS := DecodeWire(b, &c), DecodeWire(b, &s)
		if (errC == nil) == (errS == nil) {
			t.Fatalf("seed %d read as a choice (%v) and as segments (%v)", i, errC, errS)
		}
		if errC == nil {
			sameThroughWire(t, &c, &Choice{})
		} else {
			if len(s.Segments) == 0 {
				t.Fatalf("seed %d: no segments", i)
			}
			sameThroughWire(t, &s, &Segments{})
		}
		if err := DecodeWire(b[:len(b)-1], &c); err == nil && DecodeWire(b[:len(b)-1], &s) == nil {
			t.Fatalf("seed %d read without its last byte", i)
		}
	}
}

// FuzzDecodeInSitu feeds any bytes to the reader of the in-situ analysis
// an archive holds (its segments in their wire form, or, in archives
// written before, as JSON): none may panic, and a segment read is of one
// of the analysis' rows, which the renderers index by it. Its corpus
// (testdata) holds an analysis of both forms, truncated and corrupted.
func FuzzDecodeInSitu(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var in InSitu
		if Decode(data, &in) != nil || in.Variation == nil {
			return
		}
		for _, seg := range in.Variation.Segments {
			if seg.Row < 0 || seg.Row >= len(in.Variation.Rows) {
				t.Fatalf("segment of row %d of %d read", seg.Row, len(in.Variation.Rows))
			}
		}
	})
}
