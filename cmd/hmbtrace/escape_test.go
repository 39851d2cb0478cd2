package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestOddNamesStayOneLine records regions and a location whose names hold
// a tab, a newline, a backslash, a control character and invalid UTF-8,
// and checks that the file keeps them as bytes while dump, summary and
// summary -tsv show them escaped: one event a line, one region a row.
func TestOddNamesStayOneLine(t *testing.T) {
	names := map[string]string{ // name: how the commands show it
		"tab\there":      `tab\there`,
		"two\nlines":     `two\nlines`,
		`C:\dir`:         `C:\\dir`,
		"bell\a":         `bell\x07`,
		"bad\xffutf8":    `bad\xffutf8`,
		"plain_région":   "plain_région",
		"cr\rreturn\x7f": `cr\rreturn\x7f`,
	}
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "odd"})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Location("loc\tone\n")
	for name := range names {
		r := m.Region(name)
		l.Enter(r)
		l.Leave(r)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := m.Path()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, r := range f.Regions {
		kept[r.Name] = true
	}
	f.Close()
	for name := range names {
		if !kept[name] {
			t.Errorf("the file lost the bytes of %q: regions %v", name, kept)
		}
	}

	check := func(cmd, out string, fields int) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, line := range lines {
			if !utf8.ValidString(line) || strings.ContainsAny(line, "\r\a\x7f") {
				t.Errorf("%s: line %q is not printable text", cmd, line)
			}
			if fields > 0 && strings.Count(line, "\t") != fields-1 {
				t.Errorf("%s: line %q has %d fields, want %d", cmd, line, strings.Count(line, "\t")+1, fields)
			}
		}
		for _, shown := range names {
			if !strings.Contains(out, shown) {
				t.Errorf("%s does not show %q:\n%s", cmd, shown, out)
			}
		}
	}
	dump := runOK(t, "dump", path)
	check("dump", dump, 5)
	if n := strings.Count(dump, "\n"); n != 2*len(names) {
		t.Errorf("dump: %d lines, want %d", n, 2*len(names))
	}
	if !strings.HasPrefix(dump, `loc\tone\n`+"\t") {
		t.Errorf("dump: the location's name is not escaped:\n%s", dump)
	}
	check("summary -tsv", runOK(t, "summary", "-tsv", path), 4)
	sum := runOK(t, "summary", "-width", "0", path)
	check("summary", sum, 0)
	// The profile table: each region's row ends with its escaped name,
	// after the same columns.
	col := -1
	for _, shown := range names {
		for _, line := range strings.Split(sum, "\n") {
			if strings.HasSuffix(line, "  "+shown) {
				if c := len([]rune(line)) - len([]rune(shown)); col < 0 {
					col = c
				} else if c != col {
					t.Errorf("summary: %q starts at column %d, others at %d:\n%s", shown, c, col, sum)
				}
			}
		}
	}
	if col < 0 {
		t.Errorf("summary: no profile row found:\n%s", sum)
	}
}
