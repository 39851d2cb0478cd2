package mdcode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsLinks checks every relative link of the README and the guide's
// pages: its file exists, and its #anchor is a heading of that page.
func TestDocsLinks(t *testing.T) {
	pages, err := Pages("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, page := range pages {
		links, err := Links(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			if strings.Contains(l.Target, "://") || strings.HasPrefix(l.Target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(l.Target, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: %s: %v", l.File, l.Line, l.Target, err)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			anchors, err := Anchors(target)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading #%s", l.File, l.Line, l.Target, target, anchor)
			}
		}
	}
	if n < 20 {
		t.Errorf("%d relative links in %d pages: the scan misses them", n, len(pages))
	}
}

func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Use it from C, C++ and Fortran":                 "use-it-from-c-c-and-fortran",
		"Go's runtime in the trace":                      "gos-runtime-in-the-trace",
		"hmbtrace-instrument and -flto":                  "hmbtrace-instrument-and--flto",
		"CUBE4 for CubeGUI and the cube tools":           "cube4-for-cubegui-and-the-cube-tools",
		"score: what measuring costs, and a filter file": "score-what-measuring-costs-and-a-filter-file",
	} {
		if got := Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}
