package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// hmbtrace runs the command and returns its stdout; a non-zero exit fails.
func hmbtrace(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if rc := run(args, &out, &errOut); rc != 0 {
		t.Fatalf("hmbtrace %v: exit %d: %s", args, rc, errOut.String())
	}
	return out.String()
}

// recordMessages writes a trace of three locations with nested regions and
// messages, at explicit times, and returns its path.
func recordMessages(t *testing.T) string {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "msg", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	main, halo, compute := m.Region("main"), m.Region("send halo"), m.RegionAt("compute", "compute.go", 12)
	locs := []*measure.Location{m.Location("main"), m.Location("worker 0"), m.Location("worker 1")}
	t0 := m.Now()
	for i, l := range locs {
		peer := locs[(i+1)%len(locs)]
		from := locs[(i+len(locs)-1)%len(locs)]
		base := t0 + uint64(i)*13
		l.EnterAt(main, base+10)
		for k := uint64(0); k < 3; k++ {
			at := base + 100*(k+1)
			l.EnterAt(halo, at)
			l.MessageAt(measure.Message{Peer: uint64(peer.ID()), Tag: uint32(k), Bytes: 1024}, at+1)
			l.MessageAt(measure.Message{Recv: true, Peer: uint64(from.ID()), Tag: uint32(k), Bytes: 1024}, at+2)
			l.LeaveAt(halo, at+3)
			l.EnterAt(compute, at+3) // at the same time as the leave
			l.LeaveAt(compute, at+50)
		}
		l.LeaveAt(main, base+500)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}

// runTool runs a command under a timeout and returns its stdout; a non-zero
// exit or anything on stderr fails.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 {
		t.Fatalf("%s %v: %v, stderr: %s", name, args, err, errOut.String())
	}
	return out.String()
}

var (
	printedLocation = regexp.MustCompile(`^LOCATION +(\d+) +Name: "(.*)" <\d+>, Type`)
	printedRegion   = regexp.MustCompile(`^Region: "(.*)" <\d+>$`)
	printedMessage  = regexp.MustCompile(`^(?:Receiver|Sender): \d+ \("(.*)" <\d+>\), Communicator: .*, Tag: (\d+), Length: (\d+)$`)
)

// TestExportOTF2 exports a trace with messages and checks it with
// otf2-print: -Werror accepts it with an empty stderr, and the events it
// prints per location are those of hmbtrace dump.
func TestExportOTF2(t *testing.T) {
	otf2Print := tracetest.RequireTool(t, "otf2-print", "otf2-tools")
	path := recordMessages(t)
	dir := filepath.Join(t.TempDir(), "archive")
	if out := hmbtrace(t, "export", "-format", "otf2", "-o", dir, path); !strings.Contains(out, "3 locations, 60 events") {
		t.Errorf("export says %q", out)
	}
	anchor := filepath.Join(dir, "traces.otf2")
	runTool(t, otf2Print, "-Werror", "--silent", anchor)

	names := map[string]string{} // location reference -> name
	for _, line := range strings.Split(runTool(t, otf2Print, "-G", "--silent", anchor), "\n") {
		if m := printedLocation.FindStringSubmatch(line); m != nil {
			names[m[1]] = m[2]
		}
	}
	got := map[string][]string{}
	rows := false
	for _, line := range strings.Split(runTool(t, otf2Print, anchor), "\n") {
		if !rows {
			rows = strings.HasPrefix(line, "-----")
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		attrs := strings.TrimSpace(line[71:])
		loc := names[f[1]]
		switch f[0] {
		case "ENTER", "LEAVE":
			m := printedRegion.FindStringSubmatch(attrs)
			if m == nil {
				t.Fatalf("region of %q", line)
			}
			got[loc] = append(got[loc], fmt.Sprintf("%s\t%s\t%s", f[2], f[0], m[1]))
		case "MPI_SEND", "MPI_RECV":
			m := printedMessage.FindStringSubmatch(attrs)
			if m == nil {
				t.Fatalf("message of %q", line)
			}
			got[loc] = append(got[loc], fmt.Sprintf("%s\t%s\t%s\t%s\t%s", f[2], strings.TrimPrefix(f[0], "MPI_"), m[1], m[2], m[3]))
		default:
			t.Fatalf("unexpected event %q", line)
		}
	}
	want := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(hmbtrace(t, "dump", path)), "\n") {
		f := strings.Split(line, "\t")
		switch f[2] {
		case "ENTER", "LEAVE": // location, time, kind, region, depth
			want[f[0]] = append(want[f[0]], strings.Join(f[1:4], "\t"))
		default: // location, time, kind, peer, tag, bytes
			want[f[0]] = append(want[f[0]], strings.Join(f[1:], "\t"))
		}
	}
	if len(want) != 3 {
		t.Fatalf("dump shows %d locations", len(want))
	}
	for loc, w := range want {
		if g := got[loc]; strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("location %s: otf2-print shows\n%s\nhmbtrace dump shows\n%s", loc, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	}
}

// summaryRow is a region's line of hmbtrace summary.
type summaryRow struct{ visits, excl string }

func summaryRows(t *testing.T, out string) map[string]summaryRow {
	t.Helper()
	rows := map[string]summaryRow{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "visits":
			in = true
		case in && len(f) == 0:
			return rows
		case in:
			if len(f) < 8 {
				t.Fatalf("summary row %q", line)
			}
			rows[strings.Join(f[7:], " ")] = summaryRow{visits: strings.ReplaceAll(f[0], ",", ""), excl: f[3] + " " + f[4]}
		}
	}
	return rows
}

// TestExportPprofHeat runs the heat example (full timer resolution, no
// reductions), exports its trace as a pprof profile, and reads it with `go
// tool pprof -top`: every region shows the exclusive time and the visits
// that hmbtrace summary prints.
func TestExportPprofHeat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/heat")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	dir := t.TempDir()
	heat := exec.Command(tracetest.BuildExample(t, "heat"), "-iters", "10", "-n", "256", "-workers", "2", "-quiet")
	heat.Env = append(os.Environ(), "HMB_OUTPUT="+dir, "HMB_TIMER_SHIFT=0", "HMB_CLOCK=monotonic")
	if out, err := heat.CombinedOutput(); err != nil {
		t.Fatalf("examples/heat: %v\n%s", err, out)
	}
	trace := filepath.Join(dir, "heat.0.hmb")
	rows := summaryRows(t, hmbtrace(t, "summary", trace))
	if len(rows) < 10 {
		t.Fatalf("summary shows %d regions", len(rows))
	}
	prof := filepath.Join(dir, "heat.pb.gz")
	hmbtrace(t, "export", "-format", "pprof", "-o", prof, trace)
	for _, index := range []string{"time", "calls"} {
		top := runTool(t, goTool, "tool", "pprof", "-top", "-unit=ns", "-nodefraction=0", "-sample_index="+index, prof)
		flat := map[string]int64{}
		in := false
		for _, line := range strings.Split(top, "\n") {
			f := strings.Fields(line)
			if len(f) == 5 && f[0] == "flat" {
				in = true
				continue
			}
			if !in || len(f) < 6 {
				continue
			}
			v, err := strconv.ParseInt(strings.TrimSuffix(f[0], "ns"), 10, 64)
			if err != nil {
				t.Fatalf("pprof line %q: %v", line, err)
			}
			flat[strings.Join(f[5:], " ")] = v
		}
		for name, r := range rows {
			got, want := strconv.FormatInt(flat[name], 10), r.visits
			if index == "time" {
				got, want = units.Duration(float64(flat[name])), r.excl
			}
			if got != want {
				t.Errorf("%s: pprof -sample_index=%s flat %s, summary %s", name, index, got, want)
			}
		}
		if len(flat) != len(rows) {
			t.Errorf("pprof -top shows %d regions, summary %d:\n%s", len(flat), len(rows), top)
		}
	}
}

// A Chrome file too large for the viewers gets a note saying so.
func TestExportChromeLarge(t *testing.T) {
	path := recordMessages(t)
	out := filepath.Join(t.TempDir(), "trace.json")
	if got := hmbtrace(t, "export", "-format", "chrome", "-o", out, path); strings.Contains(got, "note:") {
		t.Errorf("a small file got a note:\n%s", got)
	}
	defer func(old int64) { chromeLarge = old }(chromeLarge)
	chromeLarge = 100
	if got := hmbtrace(t, "export", "-format", "chrome", "-o", out, path); !strings.Contains(got, "of JSON: chrome://tracing loads") {
		t.Errorf("no note for a large file:\n%s", got)
	}
}

// TestExportChrome checks that the JSON parses and that each thread's
// B and E events balance.
func TestExportChrome(t *testing.T) {
	path := recordMessages(t)
	out := filepath.Join(t.TempDir(), "trace.json")
	hmbtrace(t, "export", "-format", "chrome", "-o", out, path)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Tid int    `json:"tid"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s does not parse: %v", out, err)
	}
	open := map[int]int{}
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "B":
			open[e.Tid]++
		case "E":
			if open[e.Tid]--; open[e.Tid] < 0 {
				t.Fatalf("thread %d: E without B", e.Tid)
			}
		}
	}
	if len(open) != 3 {
		t.Errorf("%d threads with regions, want 3", len(open))
	}
	for tid, n := range open {
		if n != 0 {
			t.Errorf("thread %d: %d B events without E", tid, n)
		}
	}
	// Writing again replaces the file.
	hmbtrace(t, "export", "-format", "chrome", "-o", out, path)
}

// brokenTrace writes a trace file that opens but whose events do not nest,
// so that an export fails after it started writing, and returns its path.
func brokenTrace(t *testing.T, dir string) string {
	t.Helper()
	b := tracetest.NewBuilder("broken", "", 0, time.Unix(0, 0), "main")
	good := b.Location("good")
	good.Enter(10, 1)
	good.Leave(20)
	broken := b.Location("broken")
	broken.Put(1, tracefile.ClassRegion, encode.Record{Kind: encode.KindEnter, Time: 10, Region: 1})
	broken.Put(3, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: 20})
	return b.Write(t, dir).Path
}

// TestExportErrors: bad input is a one-line error and a non-zero exit, and
// no output is left behind.
func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	good := record(t)
	data, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.hmb")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	broken := brokenTrace(t, dir)
	existing := filepath.Join(dir, "existing")
	os.Mkdir(existing, 0o755)
	os.WriteFile(filepath.Join(existing, "keep"), []byte("x"), 0o644)

	out := filepath.Join(dir, "out")
	cases := []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"-format", "otf2", "-o", out, filepath.Join(dir, "missing.hmb")}, "no such file", false},
		{[]string{"-format", "otf2", "-o", out, trunc}, "trunc.hmb: offset", false},
		{[]string{"-format", "pprof", "-o", out, trunc}, "trunc.hmb: offset", false},
		{[]string{"-format", "otf2", "-o", existing, good}, existing + " already exists", false},
		{[]string{"-format", "otf2", "-o", out, good, broken}, "do not nest", false},
		{[]string{"-format", "pprof", "-o", out, good, broken}, "do not nest", false},
		{[]string{"-format", "chrome", "-o", out, good, broken}, "do not nest", false},
		{[]string{"-format", "pprof", "-o", existing, good}, existing + " is a directory", false},
		{[]string{"-format", "svg", "-o", out, good}, `unknown format "svg"`, true},
		{[]string{"-o", out, good}, "want -format", true},
		{[]string{"-format", "otf2", good}, "want -o OUT", true},
		{[]string{"-format", "otf2", "-o", out}, "want at least one trace file", true},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		rc := run(append([]string{"export"}, c.args...), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if rc != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("export %v: exit %d, stderr %q; want exit 1 and %q", c.args, rc, stderr.String(), c.want)
		}
		if want := map[bool]int{false: 1, true: 2}[c.usage]; len(lines) != want {
			t.Errorf("export %v: %d lines on stderr, want %d: %q", c.args, len(lines), want, stderr.String())
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("export %v left %s behind", c.args, out)
			os.RemoveAll(out)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("export %v left %s behind", c.args, e.Name())
			}
		}
		if entries, _ := os.ReadDir(existing); len(entries) != 1 {
			t.Errorf("export %v changed %s: %v", c.args, existing, entries)
		}
	}
}
