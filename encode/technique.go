package encode

import (
	"fmt"
	"strings"
)

// Techniques is a set of the encoding techniques of Wagner, section 2.2.
// Timer resolution reduction, the fifth technique, is a shift applied to
// timestamps before they reach the encoder; it is recorded next to the set.
type Techniques uint8

// The techniques; each can be switched off to measure its contribution.
const (
	// SplitTiming stores no time for a record whose timestamp equals the
	// previous record's of the same stream.
	SplitTiming Techniques = 1 << iota
	// LEB128 stores integers as unsigned LEB128 varints instead of fixed width.
	LEB128
	// Delta stores timestamps and counter values as differences to the
	// previous record of the same stream.
	Delta
	// Tokens carries small values (time deltas, region ids, sequence
	// numbers) inside the token byte.
	Tokens
	// Predict codes an enter's region as its place among the four regions
	// its stream entered last, and spends the token values that region ids
	// took on shorter leaves (predict.go). It takes effect together with
	// Tokens, Delta and LEB128 only. Files written before it have the bit
	// clear and keep the first token table.
	Predict

	// All is every technique: the default and the only sensible choice
	// outside of measurements.
	All = SplitTiming | LEB128 | Delta | Tokens | Predict
)

var techniqueNames = [...]struct {
	t    Techniques
	name string
}{
	{SplitTiming, "split-timing"},
	{LEB128, "leb128"},
	{Delta, "delta"},
	{Tokens, "tokens"},
	{Predict, "predict"},
}

// String lists the techniques in the set, e.g. "split-timing,leb128".
func (t Techniques) String() string {
	var parts []string
	for _, n := range techniqueNames {
		if t&n.t != 0 {
			parts = append(parts, n.name)
		}
	}
	if t&^All != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint8(t&^All)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// ParseTechniques reads a set written by String ("none" is the empty set).
func ParseTechniques(s string) (Techniques, error) {
	if s == "none" {
		return 0, nil
	}
	var t Techniques
	for _, p := range strings.Split(s, ",") {
		found := false
		for _, n := range techniqueNames {
			if p == n.name {
				t |= n.t
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("encode: unknown technique %q (want split-timing, leb128, delta, tokens, predict or none)", p)
		}
	}
	return t, nil
}

// Valid reports whether the set holds only known techniques.
func (t Techniques) Valid() bool { return t&^All == 0 }

// Off returns the techniques of All that a trace written with t had
// switched off. A trace of the first token table (every technique but
// Predict) is not said to lack Predict: that is the set of every file
// written before Predict existed, and its bins are the ones Predict's
// switch writes.
func (t Techniques) Off() Techniques {
	off := All &^ t
	if off == Predict {
		return 0
	}
	return off
}
