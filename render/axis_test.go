package render

import "testing"

// TestAxisLabel checks that a time axis keeps one unit and the decimals its
// step needs.
func TestAxisLabel(t *testing.T) {
	for _, c := range []struct {
		t, step, last float64
		want          string
	}{
		{800e6, 200e6, 1.2e9, "0.8 s"},
		{1e9, 200e6, 1.2e9, "1.0 s"},
		{10e6, 5e6, 45e6, "10 ms"},
		{12.5e3, 0.5e3, 20e3, "12.5 µs"},
		{20, 10, 90, "20 ns"},
		{18.485e6, 5e3, 18.5e6, "18.485 ms"},
	} {
		if got := axisLabel(c.t, c.step, c.last); got != c.want {
			t.Errorf("axisLabel(%g, %g, %g) = %q; want %q", c.t, c.step, c.last, got, c.want)
		}
	}
}
