package mdcode

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is a Markdown link of a page: [text](Target).
type Link struct {
	File   string
	Line   int
	Target string
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Links returns the links of the page at path outside code, in order.
func Links(path string) ([]Link, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Link
	fence := ""
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence = f
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripSpans(line), -1) {
			out = append(out, Link{File: path, Line: i + 1, Target: m[1]})
		}
	}
	return out, nil
}

// stripSpans removes a line's inline code spans, whose brackets are no
// links.
func stripSpans(line string) string {
	for _, s := range spans(line) {
		line = strings.Replace(line, "`"+s+"`", "", 1)
	}
	return line
}

// Anchors returns the anchors of the page's headings as GitHub makes them:
// lower case, punctuation but hyphens dropped, spaces as hyphens; a
// repeated one gets -1, -2, ...
func Anchors(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence = f
			continue
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := Slug(title)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out, nil
}

// Slug is a heading's anchor as GitHub makes it.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
