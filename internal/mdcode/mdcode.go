// Package mdcode finds the code a Markdown page shows: the lines of its
// fenced blocks and its inline code spans. The docs tests (measure's for
// HMB_* variables, cmd/hmbtrace's for commands and flags) read the README
// and the guide through it, so that the pages cannot name a command, a
// flag or a variable that does not exist.
package mdcode

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Snippet is one line of a fenced block or one inline code span.
type Snippet struct {
	File string // the page's path
	Line int    // 1-based
	Text string
	// Lang is the fenced block's language ("sh", "c", "go", "" for none),
	// "inline" for a code span.
	Lang string
}

// Where returns "file:line" for messages.
func (s Snippet) Where() string {
	return s.File + ":" + strconv.Itoa(s.Line)
}

// Pages returns the Markdown pages of the product's documentation under
// root (the module's root): README.md and docs/*.md, sorted.
func Pages(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(pages)
	return append([]string{filepath.Join(root, "README.md")}, pages...), nil
}

// Read returns the snippets of the page at path, in their order.
func Read(path string) ([]Snippet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Snippet
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	fence, lang := "", ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
				continue
			}
			out = append(out, Snippet{File: path, Line: n, Text: line, Lang: lang})
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence, lang = f, strings.TrimSpace(trimmed[len(f):])
			continue
		}
		for _, s := range spans(line) {
			out = append(out, Snippet{File: path, Line: n, Text: s, Lang: "inline"})
		}
	}
	return out, sc.Err()
}

// fenceOf returns the fence a line opens (``` or ~~~, or longer), "" if
// none.
func fenceOf(s string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(s) && s[n] == c {
			n++
		}
		if n >= 3 {
			return s[:n]
		}
	}
	return ""
}

// spans returns the inline code spans of a line: text between runs of
// backticks of equal length, without the one space Markdown strips.
func spans(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		tick := line[i : i+n]
		rest := line[i+n:]
		j := strings.Index(rest, tick)
		for j >= 0 && j+n < len(rest) && rest[j+n] == '`' {
			// A longer run is not the closing one.
			k := strings.Index(rest[j+n+1:], tick)
			if k < 0 {
				j = -1
				break
			}
			j += n + 1 + k
		}
		if j < 0 {
			break
		}
		s := rest[:j]
		if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' {
			s = s[1 : len(s)-1]
		}
		out = append(out, s)
		i += n + j + n
	}
	return out
}
