package chrome

import (
	"encoding/json"
	"testing"
)

func TestAppendMicros(t *testing.T) {
	for ns, want := range map[uint64]string{0: "0.000", 7: "0.007", 1000: "1.000", 1234567: "1234.567", 1<<64 - 1: "18446744073709551.615"} {
		if got := string(appendMicros(nil, ns)); got != want {
			t.Errorf("appendMicros(%d) = %s, want %s", ns, got, want)
		}
	}
}

// FuzzAppendString: any string becomes valid JSON that decodes to the
// string, each invalid UTF-8 byte as U+FFFD.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "main", "a \"quoted\" \\ name", "tab\tnew\nline\r", "\x00\x1f\x7f", "ü€𝄞", "\xff\xfe", "\u2028\u2029", "bad \xe2\x82 seq"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString([]byte("x"), s)
		if b[0] != 'x' {
			t.Fatal("appendString overwrote what was there")
		}
		b = b[1:]
		if !json.Valid(b) {
			t.Fatalf("%q: invalid JSON %s", s, b)
		}
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q encodes as %s, which decodes to %q, want %q", s, b, back, want)
		}
	})
}
