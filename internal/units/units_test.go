package units

import (
	"fmt"
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Count(0), "0"},
		{Count(999), "999"},
		{Count(1000), "1,000"},
		{Count(1234567), "1,234,567"},
		{Count(math.MaxUint64), "18,446,744,073,709,551,615"},
		{Duration(0), "0.0 ns"},
		{Duration(999.94), "999.9 ns"},
		{Duration(1000), "1.000 µs"},
		{Duration(-2.5e6), "-2.500 ms"},
		{Duration(3e9), "3.000 s"},
		{Duration(math.Inf(1)), "+Inf"},
		{Duration(math.NaN()), "NaN"},
		{Size(0), "0 B"},
		{Size(1023), "1023 B"},
		{Size(1024), "1.0 KiB"},
		{Size(64 << 20), "64.0 MiB"},
		{Size(3 << 30), "3.0 GiB"},
		{Share(1, 3), "33.3%"},
		{Share(5, 0), "-"},
		{Share(5, -1), "-"},
		{Rate(2.4e9), "2.400 GHz"},
		{Rate(999.5e6), "999.5 MHz"},
		{Plural(1, "location", "locations"), "1 location"},
		{Plural(0, "location", "locations"), "0 locations"},
		{Plural(12, "location was", "locations were"), "12 locations were"},
		{Plural(-1, "rank", "ranks"), "-1 ranks"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func Example() {
	fmt.Println(Count(12345678), Duration(1.5e6), Size(3<<20), Share(1, 8), Rate(3e9))
	// Output: 12,345,678 1.500 ms 3.0 MiB 12.5% 3.000 GHz
}

func ExamplePlural() {
	fmt.Println(Plural(1, "location", "locations") + ", " + Plural(3, "process", "processes"))
	// Output: 1 location, 3 processes
}
