package report

import (
	"bytes"
	"encoding/base64"
	"html"
	"regexp"
)

var (
	svgProlog = regexp.MustCompile(`^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?`)
	svgIDRef  = regexp.MustCompile(`(\bid="|url\(#|href="#)([^"()]*)`)
)

// inlineSVG returns an SVG document ready to sit in the page. Inline, its
// ids would share the page's one namespace with every other SVG (two
// legends called "scale" would both draw the first one's gradient), so they
// and the references to them get the prefix. An SVG with a style sheet or a
// script goes into an <img> instead: inline, its style would apply to the
// whole page.
func inlineSVG(svg []byte, prefix, alt string) []byte {
	svg = svgProlog.ReplaceAll(svg, nil)
	if bytes.Contains(svg, []byte("<style")) || bytes.Contains(svg, []byte("<script")) {
		var b bytes.Buffer
		b.WriteString(`<img class="figure" alt="`)
		b.WriteString(html.EscapeString(alt))
		b.WriteString(`" src="data:image/svg+xml;base64,`)
		b.WriteString(base64.StdEncoding.EncodeToString(svg))
		b.WriteString(`">`)
		return b.Bytes()
	}
	return svgIDRef.ReplaceAll(svg, []byte("${1}"+prefix+"-${2}"))
}
