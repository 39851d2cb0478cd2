package cshim_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestOpenMPLongNames runs testdata/openmp/longnames.cc: four parallel
// constructs, each with a loop, in one function whose C++ name is some
// 19 KB long. GCC's outlined bodies differ only in the name's end
// ("[clone ._omp_fn.2]"), so each construct must keep its whole name to
// stay a region of its own (trial 3: miniVite's four merged into one).
// Clang, with -g, names them by their lines.
func TestOpenMPLongNames(t *testing.T) {
	build := library(t)
	src := filepath.Join(root, "cshim", "testdata", "openmp", "longnames.cc")
	for _, c := range []struct {
		cxx   string
		debug bool
	}{{"g++", false}, {"g++", true}, {"clang++", true}} {
		name := c.cxx
		if c.debug {
			name += "-g"
		}
		t.Run(name, func(t *testing.T) {
			tracetest.RequireTool(t, c.cxx, map[string]string{"g++": "g++", "clang++": "clang and libomp-dev"}[c.cxx])
			dir := t.TempDir()
			p := program{path: filepath.Join(dir, "longnames"), out: filepath.Join(dir, "hmb-out")}
			pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-omp")
			if err != nil {
				t.Fatalf("pkg-config --cflags --libs hmbtrace-omp: %v\n%s", err, pc)
			}
			args := []string{"-O2", "-fopenmp", "-o", p.path, src}
			if c.debug {
				args = append(args, "-g")
			}
			args = append(args, strings.Fields(string(pc))...)
			if msg, err := run(dir, nil, c.cxx, args...); err != nil {
				t.Fatalf("%s %s: %v\n%s", c.cxx, strings.Join(args, " "), err, msg)
			}
			const rounds, threads = 3, 2
			out, _ := p.run(t, []string{fmt.Sprintf("OMP_NUM_THREADS=%d", threads), "OMP_WAIT_POLICY=passive", "KMP_BLOCKTIME=0"})
			if !strings.Contains(out, "sum 14985000") {
				t.Fatalf("output %q, want sum 14985000", out)
			}
			enters := checkTrace(t, dump(t, filepath.Join(p.out, "longnames.0.hmb")), nil, nil)
			// The regions of each kind: one per construct, each entered
			// every round, by the team's master or by every thread.
			for _, k := range []struct {
				prefix string
				per    int
			}{
				{"!$omp parallel ", rounds},
				{"!$omp implicit task ", rounds * threads},
				{"!$omp for ", rounds * threads},
			} {
				var names []string
				for r, n := range enters {
					if strings.HasPrefix(r, k.prefix) {
						names = append(names, r)
						if n != k.per {
							t.Errorf("%s entered %d times, want %d", short(r), n, k.per)
						}
					}
				}
				if len(names) != 4 {
					t.Errorf("%d %q... regions, want 4, one per construct: %v", len(names), k.prefix, shortAll(names))
				}
				if c.cxx != "g++" || k.prefix == "!$omp for " && c.debug {
					continue // named by the line only
				}
				// GCC's outlined body, whole: the clone suffix, and with -g the line after it.
				end := regexp.MustCompile(`^` + regexp.QuoteMeta(k.prefix) + `double compute<Pack<std::map<.+\) \[clone \._omp_fn\.([0-3])\]( @longnames\.cc:[0-9]+| @longnames\+0x[0-9a-f]+)?$`)
				seen := map[string]bool{}
				for _, r := range names {
					m := end.FindStringSubmatch(r)
					if m == nil || strings.HasPrefix(m[2], " @longnames.cc:") != c.debug || len(r) < 10000 {
						t.Errorf("region %s (%d bytes): want compute<...> (over 10000 bytes) [clone ._omp_fn.<n>]%s", short(r), len(r), map[bool]string{true: " @longnames.cc:<line>"}[c.debug])
						continue
					}
					seen[m[1]] = true
				}
				if len(seen) != len(names) {
					t.Errorf("%q... regions of %d outlined bodies, want one each: %v", k.prefix, len(seen), shortAll(names))
				}
			}
		})
	}
}

// short is a region name cut for a message: its start and its end.
func short(name string) string {
	if len(name) <= 160 {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q...%q", name[:80], name[len(name)-80:])
}

func shortAll(names []string) []string {
	sort.Strings(names)
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = short(n)
	}
	return s
}
