package main

import (
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/mdcode"
)

// TestDocsOptions parses the options of every hmbtrace-instrument command
// line and every HMB_INSTRUMENT_FLAGS value the README and the guide show
// with hmbtrace-instrument's own parser: the pages cannot teach an option
// it does not take.
func TestDocsOptions(t *testing.T) {
	t.Setenv("HMB_FILTER_FILE", "")
	pages, err := mdcode.Pages("../..")
	if err != nil {
		t.Fatal(err)
	}
	flagsValue := regexp.MustCompile(`HMB_INSTRUMENT_FLAGS=("[^"]*"|'[^']*'|\S+)`)
	checked := 0
	for _, page := range pages {
		snippets, err := mdcode.Read(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range snippets {
			if s.Lang != "" && s.Lang != "sh" && s.Lang != "bash" && s.Lang != "inline" {
				continue
			}
			var lines [][]string
			words := strings.Fields(s.Text)
			for i, w := range words {
				if strings.HasPrefix(w, "#") {
					break
				}
				if path.Base(strings.Trim(w, `"'`)) == "hmbtrace-instrument" && i+1 < len(words) && strings.HasPrefix(words[i+1], "--") {
					var args []string
					for _, a := range words[i+1:] {
						if a == "|" || a == "&&" || a == ";" || strings.HasPrefix(a, "#") {
							break
						}
						args = append(args, strings.Trim(a, `"'`))
					}
					// Prose names an option by itself ("run
					// `hmbtrace-instrument --filter`"): a value and a
					// compiler are wanted only on a command line.
					if last := args[len(args)-1]; s.Lang == "inline" && strings.HasPrefix(last, "--") {
						if last == "--filter" {
							args = append(args, "FILE")
						}
						args = append(args, "cc")
					}
					lines = append(lines, args)
				}
			}
			for _, m := range flagsValue.FindAllStringSubmatch(s.Text, -1) {
				v := strings.Trim(m[1], `"'`)
				if v == "" || strings.ContainsAny(v, "$<>…") {
					continue
				}
				lines = append(lines, append(strings.Fields(v), "cc"))
			}
			for _, args := range lines {
				checked++
				if _, _, err := parseOptions(args); err != nil {
					t.Errorf("%s: hmbtrace-instrument %s: %v", s.Where(), strings.Join(args, " "), err)
				}
			}
		}
	}
	if checked < 2 {
		t.Errorf("checked %d option lists in %d pages: the scan misses them", checked, len(pages))
	}
}
