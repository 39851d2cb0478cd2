package dynamics

import (
	"encoding/binary"
	"math"
	"testing"
)

// seriesFromBytes reads a series from fuzz input: each pair of bytes is a
// signed 16-bit sample, scaled by the first byte so that both tiny and huge
// values occur; a first byte of 255 switches to raw float64 samples, NaN and
// infinities included.
func seriesFromBytes(data []byte) []float64 {
	if len(data) == 0 {
		return nil
	}
	mode, data := data[0], data[1:]
	var x []float64
	if mode == 255 {
		for len(data) >= 8 {
			x = append(x, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		return x
	}
	scale := math.Ldexp(1, int(mode)-128)
	for len(data) >= 2 {
		x = append(x, float64(int16(binary.LittleEndian.Uint16(data)))*scale)
		data = data[2:]
	}
	return x
}

// FuzzAnalyze checks that no input makes Analyze panic or return features
// outside the series, and that bad input is an error and nothing else.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{128, 1, 0, 2, 0, 3, 0})
	step := []byte{120}
	for i := 0; i < 64; i++ {
		v := int16(i % 3)
		if i >= 30 {
			v += 40
		}
		step = binary.LittleEndian.AppendUint16(step, uint16(v))
	}
	f.Add(step)
	raw := []byte{255}
	for _, v := range []float64{1, 2, math.NaN(), 4, math.Inf(1), 1e308, -1e308, 5e-324} {
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
	}
	f.Add(raw)
	f.Fuzz(func(t *testing.T, data []byte) {
		x := seriesFromBytes(data)
		if len(x) > 4096 {
			x = x[:4096]
		}
		finite := true
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				finite = false
			}
		}
		a, err := Analyze(x, Options{})
		if !finite {
			if err == nil {
				t.Fatal("non-finite series accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("finite series rejected: %v", err)
		}
		var total float64
		nonNegative := true
		for _, v := range x {
			total += math.Abs(v)
			nonNegative = nonNegative && v >= 0
		}
		for i, ft := range a.Features {
			if ft.From < 0 || ft.To >= len(x) || ft.From > ft.To || ft.Kind < Peak || ft.Kind > Periodic {
				t.Fatalf("feature %v outside a series of %d", ft, len(x))
			}
			if math.IsNaN(ft.Severity) || nonNegative && math.Abs(ft.Severity) > total*(1+1e-9) {
				t.Fatalf("feature %v: cost NaN or above the total %g", ft, total)
			}
			if i > 0 && ft.From < a.Features[i-1].From {
				t.Fatalf("features out of order: %v", a.Features)
			}
		}
	})
}

// FuzzHaar checks the round trip and energy conservation on any finite
// series whose energy does not overflow.
func FuzzHaar(f *testing.F) {
	f.Add([]byte{128, 1, 0, 2, 0, 3, 0})
	f.Add([]byte{200, 255, 127, 0, 128, 7, 0, 9, 0, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		x := seriesFromBytes(data)
		var sum, peak float64
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e150 {
				return
			}
			sum += v * v
			peak = max(peak, math.Abs(v))
		}
		tr := Haar(x)
		y := tr.Inverse()
		if len(y) != len(x) {
			t.Fatalf("inverse has %d samples, want %d", len(y), len(x))
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-12*peak*float64(Levels(len(x))+1) {
				t.Fatalf("sample %d: %v back as %v", i, x[i], y[i])
			}
		}
		// Squares below the smallest normal number are subnormal and keep
		// only a few bits: allow a few of their units per sample.
		tol := 1e-12*sum*float64(Levels(len(x))+1) + 64*math.SmallestNonzeroFloat64*float64(len(x)+1)
		if e := tr.Energy().Total; math.Abs(e-sum) > tol {
			t.Fatalf("energy %v, sum of squares %v", e, sum)
		}
	})
}
