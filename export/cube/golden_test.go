package cube

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The golden archives in testdata passed cube_sanity and were printed by
// cube_dump (cubelib 4.9 of Score-P 8.4); their texts sit beside them:
//
//	NAME.cubex       the archive Write wrote
//	NAME.dump.txt    cube_dump -w NAME.cubex           (the three trees)
//	NAME.excl.csv    cube_dump -m all -s csv2 -x excl -z excl NAME.cubex
//	NAME.incl.csv    cube_dump -m all -s csv2 -x incl -z incl NAME.cubex
//	NAME.sanity.txt  cube_sanity NAME.cubex
//
// `go test ./export/cube -run TestCubeTools -update`, with the tools at
// hand (CUBELIB or PATH), rewrites them.
var update = flag.Bool("update", false, "rewrite the golden archives and the cube tools' texts in testdata")

// goldens are the profiles of the golden archives.
var goldens = []struct {
	name  string
	build func(t testing.TB) *Profile
}{
	{"ring", func(t testing.TB) *Profile {
		p, err := FromFiles(ring(t), 1)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"waitstate", func(t testing.TB) *Profile { return waitProfile(t, ring(t)) }},
	// A real run: the C Jacobi example on two MPI ranks, traced with
	// -finstrument-functions and the MPI wrappers (cmd/hmbtrace's golden).
	{"mpi", func(t testing.TB) *Profile {
		var files []*tracefile.File
		for r := 0; r < 2; r++ {
			files = append(files, tracetest.Open(t, filepath.Join("testdata", "mpi", fmt.Sprintf("mpi-jacobi.%d.hmb", r))))
		}
		p, err := FromFiles(files, 2)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
}

func archiveOf(t testing.TB, p *Profile) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden runs everywhere, with or without cubelib: the writer still
// writes the archives that passed the tools, byte for byte, and the reader
// reads them as the tools printed them.
func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			p := g.build(t)
			got := archiveOf(t, p)
			want, err := os.ReadFile(filepath.Join("testdata", g.name+".cubex"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the archive differs from testdata/%s.cubex, which the cube tools checked (-update with cubelib at hand rewrites it)", g.name)
			}
			q, err := Read(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			shapeOf(p).compare(t, shapeOf(q), 0)
			dumped(t, g.name, "excl").compare(t, flavourShape(q, false), 1e-5)
			dumped(t, g.name, "incl").compare(t, flavourShape(q, true), 1e-5)
		})
	}
}

// dumped is the shape cube_dump printed for golden name, with the values
// of flavour excl or incl.
func dumped(t *testing.T, name, flavour string) shape {
	t.Helper()
	tree, err := os.ReadFile(filepath.Join("testdata", name+".dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join("testdata", name+"."+flavour+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseDump(string(tree), string(csv))
	if err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
	return s
}

var (
	dumpMetric = regexp.MustCompile(`^((?:[ |]*\|-)?)(.*)  \( id=(\d+), ([^,]*), ([^,]*), ([^,]*), `)
	dumpCnode  = regexp.MustCompile(`^((?:[ |]*\|-)?)(.*)  \[ \( id=(\d+),   mod=.*\), (-?\d+), (-?\d+), paradigm=(.*), role=(.*), url=.*, descr=.*, mode=(.*)\]$`)
	dumpSTN    = regexp.MustCompile(`^(?:[ |]*\|-)?(.*) \(id=(\d+), class=(.*), description=.* \)$`)
	dumpGroup  = regexp.MustCompile(`^[ |]*\|-(.*) \(id=(\d+), type=(process|thread), rank=(\d+) ?\)$`)
)

// parseDump reads cube_dump's tree sections (-w) and its csv2 values into
// a shape. A tree line's depth is its indentation: two spaces a level,
// besides the bars.
func parseDump(tree, csv string) (shape, error) {
	s := shape{values: map[string]float64{}}
	depth := func(prefix string) int { return strings.Count(prefix, " ") / 2 }
	section := ""
	uniqOf := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(tree))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ====") || strings.HasPrefix(line, " ----") {
			section = line
			continue
		}
		switch {
		case strings.Contains(section, "METRIC DIMENSION"):
			if m := dumpMetric.FindStringSubmatch(line); m != nil {
				s.metrics = append(s.metrics, fmt.Sprintf("%d %s %s %s %s", depth(m[1]), m[4], m[2], m[5], m[6]))
				uniqOf[m[4]] = true
			}
		case strings.Contains(section, "CALL TREE"):
			if m := dumpCnode.FindStringSubmatch(line); m != nil {
				s.cnodes = append(s.cnodes, fmt.Sprintf("%d %s %s %s paradigm=%s role=%s mod=%s", depth(m[1]), m[2], m[4], m[5], m[6], m[7], m[8]))
			} else if strings.TrimSpace(line) != "" {
				return s, fmt.Errorf("call tree line %q not understood", line)
			}
		case strings.Contains(section, "SYSTEM DIMENSION"):
			if m := dumpGroup.FindStringSubmatch(line); m != nil {
				s.system = append(s.system, fmt.Sprintf("%s %s rank=%s", map[string]string{"process": "process", "thread": "thread"}[m[3]], m[1], m[4]))
			} else if m := dumpSTN.FindStringSubmatch(line); m != nil {
				s.system = append(s.system, m[3]+" "+m[1])
			} else if strings.TrimSpace(line) != "" {
				return s, fmt.Errorf("system tree line %q not understood", line)
			}
		}
	}
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) < 2 {
		return s, fmt.Errorf("csv of %d lines", len(lines))
	}
	head := strings.Split(lines[0], ",")
	if len(head) < 3 || strings.TrimSpace(head[0]) != "Cnode ID" || strings.TrimSpace(head[1]) != "Thread ID" {
		return s, fmt.Errorf("csv header %q", lines[0])
	}
	for _, h := range head[2:] {
		if !uniqOf[h] {
			return s, fmt.Errorf("csv column %q is not a metric of the tree", h)
		}
	}
	for _, line := range lines[1:] {
		f := strings.Split(line, ",")
		if len(f) != len(head) {
			return s, fmt.Errorf("csv line %q: %d fields, want %d", line, len(f), len(head))
		}
		for i, h := range head[2:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(f[2+i]), 64)
			if err != nil {
				return s, fmt.Errorf("csv line %q: %v", line, err)
			}
			if v != 0 {
				s.values[fmt.Sprintf("%s %s %s", h, strings.TrimSpace(f[0]), strings.TrimSpace(f[1]))] = v
			}
		}
	}
	return s, nil
}

// flavourShape is p's shape with its values as cube_dump -x excl -z excl
// (incl false) or -x incl -z incl (incl true) prints them: a metric's own
// share, its value less its sub-metrics', at each call path itself; or its
// value, which includes its sub-metrics', summed over the call path's
// subtree.
func flavourShape(p *Profile, incl bool) shape {
	s := shapeOf(p)
	s.values = map[string]float64{}
	cnodes, locs := p.Cnodes(), p.Locations()
	own := func(m *Metric, c *Cnode, l *Location) float64 {
		v := m.Value(c, l)
		if !incl {
			for _, k := range m.Children {
				v -= k.Value(c, l)
			}
		}
		return v
	}
	var sub func(m *Metric, c *Cnode, l *Location) float64
	sub = func(m *Metric, c *Cnode, l *Location) float64 {
		v := own(m, c, l)
		if incl {
			for _, k := range c.Children {
				v += sub(m, k, l)
			}
		}
		return v
	}
	for _, m := range p.MetricList() {
		for i, c := range cnodes {
			for j, l := range locs {
				if v := sub(m, c, l); v != 0 {
					s.values[fmt.Sprintf("%s %d %d", m.Uniq, i, j)] = v
				}
			}
		}
	}
	return s
}

// findTool returns the path of a cubelib tool: under $CUBELIB/bin, else on
// PATH; "" if there is none.
func findTool(name string) string {
	if dir := os.Getenv("CUBELIB"); dir != "" {
		p := filepath.Join(dir, "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// toolCheck checks an archive a test wrote with cube_sanity and cube_dump
// when they are at hand, and does nothing otherwise: the tests that call
// it test more than that.
func toolCheck(t *testing.T, archive []byte) {
	t.Helper()
	sanity, dump := findTool("cube_sanity"), findTool("cube_dump")
	if sanity == "" || dump == "" {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "t.cubex")
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sanity, "-o", filepath.Join(dir, "details"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("cube_sanity: %v: %s", err, out)
	}
	if bad := failedChecks(normalize(string(out), dir)); len(bad) > 0 {
		t.Errorf("cube_sanity: failed %q", bad)
	}
	if out, err := exec.Command(dump, "-m", "all", "-s", "csv2", path).CombinedOutput(); err != nil {
		t.Errorf("cube_dump: %v: %s", err, out)
	}
}

// cubeTool returns the path of a cubelib tool; the test is skipped
// without it.
func cubeTool(t *testing.T, name string) string {
	t.Helper()
	if p := findTool(name); p != "" {
		return p
	}
	t.Skipf("%s not found: set CUBELIB to a cubelib install prefix or put its bin on PATH (docs/guide.md, \"CUBE4\", says how to build it)", name)
	return ""
}

// TestCubeTools checks every archive the tests write with the real cube
// tools: cube_sanity finds nothing, and cube_dump prints what the golden
// texts hold.
func TestCubeTools(t *testing.T) {
	sanity, dump := cubeTool(t, "cube_sanity"), cubeTool(t, "cube_dump")
	dir := t.TempDir()
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join(dir, g.name+".cubex")
			if err := os.WriteFile(path, archiveOf(t, g.build(t)), 0o644); err != nil {
				t.Fatal(err)
			}
			details := filepath.Join(dir, g.name+".sanity.out")
			texts := map[string][]string{
				".sanity.txt": {sanity, "-o", details, path},
				".dump.txt":   {dump, "-w", path},
				".excl.csv":   {dump, "-m", "all", "-s", "csv2", "-x", "excl", "-z", "excl", path},
				".incl.csv":   {dump, "-m", "all", "-s", "csv2", "-x", "incl", "-z", "incl", path},
			}
			for _, ext := range []string{".sanity.txt", ".dump.txt", ".excl.csv", ".incl.csv"} {
				args := texts[ext]
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = dir
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s: %v: %s%s", strings.Join(args, " "), err, out.String(), errOut.String())
				}
				got := normalize(out.String(), dir)
				if ext == ".sanity.txt" {
					// cube_sanity exits 0 and says OK whatever it found:
					// each check's line counts the items that passed.
					d, _ := os.ReadFile(details)
					if bad := failedChecks(got); len(bad) > 0 || bytes.Contains(d, []byte("FAIL")) {
						t.Errorf("cube_sanity %s: failed %q:\n%s", path, bad, normalize(string(d), dir))
					}
				}
				golden := filepath.Join("testdata", g.name+ext)
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if got != string(want) {
					t.Errorf("%s printed\n%s\nwant (%s)\n%s", strings.Join(args, " "), got, golden, want)
				}
			}
			if *update {
				if err := os.WriteFile(filepath.Join("testdata", g.name+".cubex"), archiveOf(t, g.build(t)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// normalize takes the temporary directory, carriage returns and terminal
// colours out of the tools' texts.
func normalize(s, dir string) string {
	s = strings.ReplaceAll(s, dir+string(filepath.Separator), "")
	s = strings.ReplaceAll(s, "\r", "")
	return ansi.ReplaceAllString(s, "")
}

var (
	ansi        = regexp.MustCompile("\x1b\\[[0-9;]*m")
	sanityCount = regexp.MustCompile(`^\s*(.*?) \.\.\. (\d+) / (\d+)`)
)

// failedChecks returns the checks of cube_sanity's summary that did not
// pass every item.
func failedChecks(summary string) []string {
	var bad []string
	n := 0
	for _, line := range strings.Split(summary, "\n") {
		if m := sanityCount.FindStringSubmatch(line); m != nil {
			n++
			if m[2] != m[3] {
				bad = append(bad, m[1]+": "+m[2]+" / "+m[3])
			}
		}
	}
	if n == 0 {
		bad = append(bad, "no check in the summary")
	}
	return bad
}
