// Package render formats what the analyses compute, as text, TSV and SVG:
// one escaper, one set of colour ramps, one axis labeller and the units of
// internal/units for all of them. The analyses return data only.
package render

import (
	"bytes"
	"encoding/xml"
)

// Esc escapes s for SVG and HTML text and attribute values. Invalid UTF-8
// becomes U+FFFD, so that a name read from a damaged trace still leaves a
// well-formed document.
func Esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
