package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"example.com/m/...", "example.com/m", true},
		{"example.com/m/...", "example.com/m/a/b", true},
		{"example.com/m/...", "example.com/mx", false},
		{"example.com/m", "example.com/m/a", false},
		{"example.com/.../internal", "example.com/a/b/internal", true},
		{"main", "main", true},
	} {
		if got := matchPattern(c.pattern, c.path); got != c.want {
			t.Errorf("matchPattern(%q, %q) = %v", c.pattern, c.path, got)
		}
	}
	s := &state{Patterns: []string{"..."}}
	if s.selected("github.com/hmbtrace/hmbtrace/measure") || !s.selected("example.com/m") {
		t.Error("hmbtrace itself must never be selected, everything else by ...")
	}
}

func TestRelevantFlags(t *testing.T) {
	got := relevantFlags(strings.Fields("-o out -tags foo,bar -race -v -gcflags=all=-N -ldflags -s -mod vendor ./... -tags late"))
	want := "-tags=foo,bar -race -gcflags=all=-N -mod=vendor"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestApplyRewrites(t *testing.T) {
	for _, c := range []struct{ path, rules, want string }{
		{"/w/b001/x.go", "/w/b001=>", "x.go"},
		{"/src/m/a.go", "/w/b001=>;/src/m=>example.com/m", "example.com/m/a.go"},
		{"/src/mx/a.go", "/src/m=>example.com/m", "/src/mx/a.go"},
		{"/src/m", "/src/m=>example.com/m", "example.com/m"},
	} {
		if got, _ := applyRewrites(c.path, c.rules); got != c.want {
			t.Errorf("applyRewrites(%q, %q) = %q, want %q", c.path, c.rules, got, c.want)
		}
	}
}

// The export data hash ignores the build ID in the archive's header.
func TestPkgDef(t *testing.T) {
	archive := func(id string) []byte {
		def := "go object linux amd64\nbuild id \"" + id + "\"\n\n$$B\nxyz\n$$\n"
		return []byte(fmt.Sprintf("!<arch>\n%-16s%-12s%-6s%-6s%-8s%-10d`\n%s", "__.PKGDEF", "0", "0", "0", "644", len(def), def))
	}
	a, b := pkgDef(archive("A/1")), pkgDef(archive("B/2"))
	if string(a) != string(b) || string(a) != "\n$$B\nxyz\n$$\n" {
		t.Errorf("pkgDef: %q vs %q", a, b)
	}
	if c := []byte("not an archive"); string(pkgDef(c)) != string(c) {
		t.Errorf("pkgDef of a plain file: %q", pkgDef(c))
	}
}

func TestChdirFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-C", "d", "-o", "x"}, "d"},
		{[]string{"-C=d"}, "d"},
		{[]string{"--C=d"}, "d"},
		{[]string{"-o", "x", "-C", "d"}, ""},
		{nil, ""},
	} {
		if got := chdirFlag(c.args); got != c.want {
			t.Errorf("chdirFlag(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestCoverWarning: a -cover build says that the covered packages get no
// regions, where it wrote no trace and said nothing.
func TestCoverWarning(t *testing.T) {
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"-cover", "./..."}, true},
		{[]string{"-v", "-coverprofile=c.out", "."}, true},
		{[]string{"--covermode", "atomic", "."}, true},
		{[]string{"-run", "X", "."}, false},
		{[]string{"-run", "X", "-cover", "."}, true}, // -run's value is no package
		{[]string{".", "-cover"}, false},             // an argument of the test binary
	} {
		if w := coverWarning(c.args); (w != "") != c.warn || c.warn && !strings.Contains(w, "no regions") {
			t.Errorf("%v: %q", c.args, w)
		}
	}
}
