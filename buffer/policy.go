package buffer

import (
	"fmt"
	"strings"
)

// Policy decides what a full buffer sheds (Wagner, section 2.3).
type Policy uint8

// The reduction policies.
const (
	// PolicyDepth closes the deepest calling depth across all locations.
	// When only depth 1 is left, it stops recording instead of discarding
	// the whole trace.
	PolicyDepth Policy = iota
	// PolicyClass closes event classes in a configured order of importance,
	// least important first, then falls back to PolicyDepth.
	PolicyClass
	// PolicyFirst keeps the first events and stops recording when full.
	PolicyFirst
	// PolicyLast keeps the last events, revoking the oldest bins: a flight
	// recorder.
	PolicyLast
)

var policyNames = [...]string{"depth", "class", "first", "last"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// ParsePolicy reads depth, class, first or last.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown reduction policy %q (want %s)", s, strings.Join(policyNames[:], ", "))
}

// DefaultClassOrder is the order PolicyClass closes classes in when none is
// configured: counters first, then messages, then collectives. Enter/leave is
// never closed by class; depth reduction takes over when the others are gone.
var DefaultClassOrder = []Class{ClassMetric, ClassMessage, ClassCollective}

// Reduction is one reduction step, as the summary reports it.
type Reduction struct {
	Reason Reason // ByDepth, ByClass, ByFirst or ByLast
	Depth  int    // ByDepth: every depth >= Depth was closed
	Class  Class  // ByClass: the class closed
	Time   uint64 // reduced time of the record that triggered it
	// Bins and Records count what was revoked at once: the sealed bins
	// and the current bins of the location that reduced. Other current
	// bins follow when their owners see the reduction (Pending), and their
	// records are counted in the levels' statistics. ByLast steps are merged into one
	// entry whose Steps says how many there were.
	Bins    int
	Records uint64
	Steps   int
	// Pending counts the current bins of the closed levels that their
	// owners held, and hand back at their next probe: freed too, later.
	Pending int
}
