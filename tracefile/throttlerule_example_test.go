package tracefile_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The rule the probes throttled by, applied to a region's counts: an
// accessor preempted in 3 of its 4,096 calls is switched off early; a
// region with 1 long call in 10 is kept until the late step, which
// allows 1 in 8.
func ExampleThrottleRule_Due() {
	rule := tracefile.ThrottleRule{LongTicks: 750, Early: 4096, Calls: 100000, EarlyShift: 8, LateShift: 3}
	fmt.Println(rule.Due(4096, 3))
	fmt.Println(rule.Due(50000, 5000))
	fmt.Println(rule.Due(100000, 10000))
	// Output:
	// true
	// false
	// true
}
