package report

import (
	"bytes"
	"encoding/base64"
	"html/template"
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
func inlineSVG(svg []byte, prefix, alt string) template.HTML {
	svg = svgProlog.ReplaceAll(svg, nil)
	if bytes.Contains(svg, []byte("<style")) || bytes.Contains(svg, []byte("<script")) {
		var b bytes.Buffer
		// The source is a whole attribute: html/template would write the
		// base64's "+" as "&#43;" in a URL, the same to a browser but
		// three times the bytes.
		execTo(&b, "figure-img", struct {
			Alt string
			Src template.HTMLAttr
		}{alt, template.HTMLAttr(`src="data:image/svg+xml;base64,` + base64.StdEncoding.EncodeToString(svg) + `"`)})
		return template.HTML(b.String())
	}
	// The SVG comes from package render, which escapes every name it
	// shows: it is trusted HTML here.
	return template.HTML(svgIDRef.ReplaceAll(svg, []byte("${1}"+prefix+"-${2}")))
}
