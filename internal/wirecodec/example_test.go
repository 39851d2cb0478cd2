package wirecodec_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// A form is written field by field and read back with each field named;
// a decoder reads on after an error and checks once, at the end.
func Example() {
	var w wirecodec.Writer
	w.String("solve")
	w.Varint(-42)
	w.Strings([]string{"cycles", "instructions"})

	r := wirecodec.MakeReader(w, 0)
	name := r.String("region name")
	line := r.Int("region line", -1000, 1000)
	metrics := r.Strings("metrics")
	r.Done()
	fmt.Println(name, line, metrics, r.Err())

	// The same bytes cut short: the error names the field, the reason and
	// where the field starts.
	r = wirecodec.MakeReader(w[:len(w)-3], 0)
	r.String("region name")
	r.Int("region line", -1000, 1000)
	r.Strings("metrics")
	if err := r.Err(); err != nil {
		fmt.Printf("at byte %d: %v\n", err.(*wirecodec.Error).Offset, err)
	}
	// Output:
	// solve -42 [cycles instructions] <nil>
	// at byte 15: metrics: string of 12 bytes runs past the end (9 left)
}
