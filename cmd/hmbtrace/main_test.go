package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/summary"
)

// record writes a small trace: two locations, nested regions, fixed times.
func record(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "t", TimerShift: measure.NoTimerShift, Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	main, solve := m.Region("main"), m.Region("solve")
	a, b := m.Location("alpha"), m.Location("beta")
	t0 := m.Now()
	a.EnterAt(main, t0+100)
	a.EnterAt(solve, t0+200)
	a.LeaveAt(solve, t0+300)
	a.LeaveAt(main, t0+400)
	b.EnterAt(solve, t0+150)
	b.LeaveAt(solve, t0+250)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}

func TestDump(t *testing.T) {
	path := record(t)
	var out, errOut bytes.Buffer
	if rc := run([]string{"dump", path}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"alpha\t%d\tENTER\tmain\t1",
		"alpha\t%d\tENTER\tsolve\t2",
		"alpha\t%d\tLEAVE\tsolve\t2",
		"alpha\t%d\tLEAVE\tmain\t1",
		"beta\t%d\tENTER\tsolve\t1",
		"beta\t%d\tLEAVE\tsolve\t1",
	}
	if len(lines) != len(want) {
		t.Fatalf("dump:\n%s", out.String())
	}
	// Times are ns since the start: the monotonic clock makes them the
	// offsets above minus the small gap between Start and Now.
	var base int64 = -1
	offsets := []int64{100, 200, 300, 400, 150, 250}
	for i, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("line %q has %d fields", line, len(f))
		}
		var ns int64
		if _, err := fmt.Sscan(f[1], &ns); err != nil {
			t.Fatalf("time %q: %v", f[1], err)
		}
		if base < 0 {
			base = ns - offsets[0]
		}
		if ns-base != offsets[i] {
			t.Errorf("line %d: time %d, want base+%d (base %d)", i, ns, offsets[i], base)
		}
		f[1] = "%d"
		if got := strings.Join(f, "\t"); got != want[i] {
			t.Errorf("line %d: %q, want %q", i, got, want[i])
		}
	}
}

func TestSummary(t *testing.T) {
	path := record(t)
	var out, errOut bytes.Buffer
	if rc := run([]string{"summary", path}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	s := out.String()
	for _, want := range []string{
		"2 locations",
		"solve",
		"events recorded  6",
		"events kept      6 (100.0%)",
		"bytes/event",
		"reductions       none: the whole run fit",
		"usage errors     none",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hmb")
	os.WriteFile(bad, []byte("HMBTRACE\x01\x00garbage"), 0o644)
	good := record(t)
	data, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.hmb")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	cases := []struct {
		args []string
		rc   int
		want string
	}{
		{nil, 2, "usage: hmbtrace"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"dump"}, 1, "want one trace file"},
		{[]string{"summary"}, 1, "want at least one trace file"},
		{[]string{"dump", filepath.Join(dir, "missing.hmb")}, 1, "no such file"},
		{[]string{"summary", bad}, 1, "bad.hmb: offset"},
		{[]string{"dump", trunc}, 1, "trunc.hmb: offset"},
		{[]string{"dump", "-x", good}, 1, "flag provided but not defined"},
		{[]string{"summary", "-width", "-3", good}, 1, "-width -3: want 0 (full names) or more"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		rc := run(c.args, &out, &errOut)
		if rc != c.rc || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("hmbtrace %v: exit %d, stderr %q; want exit %d and %q", c.args, rc, errOut.String(), c.rc, c.want)
		}
	}
}

func TestComm(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Location("a"), m.Location("b")
	a.Send(b, 3, 100)
	b.Recv(a, 3, 100)
	b.Send(a, 4, 50)
	m.Close()
	var out, errOut bytes.Buffer
	svg := filepath.Join(dir, "m.svg")
	if rc := run([]string{"comm", "-tsv", "-matrix", svg, "-diagram", filepath.Join(dir, "d.svg"), m.Path()}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	if got, want := out.String(), "a\tb\t1\t100\nb\ta\t1\t50\n"; got != want {
		t.Errorf("comm -tsv:\n%s\nwant\n%s", got, want)
	}
	for _, p := range []string{svg, filepath.Join(dir, "d.svg")} {
		if b, err := os.ReadFile(p); err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if rc := run([]string{"comm", "-value", "volume", m.Path()}, &out, &errOut); rc != 1 {
		t.Errorf("bad -value: exit %d", rc)
	}
}

func TestDynamics(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "d", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	step := m.Phase("step")
	loc := m.Location("main")
	now := m.Now()
	for i := 0; i < 200; i++ {
		d := uint64(10_000 + (i*7919)%97)
		if i >= 120 {
			d += 20_000 // a step up at iteration 120
		}
		loc.EnterAt(step, now)
		loc.LeaveAt(step, now+d)
		now += d + 10
	}
	m.Close()
	var out, errOut bytes.Buffer
	if rc := run([]string{"dynamics", "-tsv", m.Path()}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	if !strings.Contains(out.String(), "step\tmain\ttime per iteration\tstep up\t119\t120\t") {
		t.Errorf("dynamics -tsv:\n%s", out.String())
	}
	svg := filepath.Join(dir, "d.svg")
	out.Reset()
	if rc := run([]string{"dynamics", "-svg", svg, m.Path()}, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "a step up") {
		t.Fatalf("exit %d: %s%s", rc, out.String(), errOut.String())
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("svg: %v", err)
	}
}

// TestDirectory reads the rank files of a directory as one run, in rank
// order, and names an empty directory in its error.
func TestDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, rank := range []int{10, 2} {
		m, err := measure.Start(measure.Config{Output: dir, Name: "run", Rank: rank})
		if err != nil {
			t.Fatal(err)
		}
		l := m.Location("main")
		r := m.Region("work")
		l.Enter(r)
		l.Leave(r)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a trace"), 0o666); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"summary", dir}, &out, &errOut); rc != 0 {
		t.Fatalf("summary %s: rc %d: %s", dir, rc, errOut.String())
	}
	s := out.String()
	i2, i10 := strings.Index(s, "run.2.hmb: run, rank 2"), strings.Index(s, "run.10.hmb: run, rank 10")
	if i2 < 0 || i10 < 0 || i2 > i10 {
		t.Errorf("want rank 2's file, then rank 10's:\n%s", s)
	}
	if !strings.Contains(s, "Regions per rank (inclusive time over 2 ranks") {
		t.Errorf("no per-rank table:\n%s", s)
	}
	empty := t.TempDir()
	out.Reset()
	errOut.Reset()
	if rc := run([]string{"summary", empty}, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), empty+": a directory with no trace files (*.hmb)") {
		t.Errorf("summary of an empty directory: rc %d, %q", rc, errOut.String())
	}
}

// summary cuts long names in its tables unless -width 0; -tsv and dump
// print them whole.
func TestSummaryNames(t *testing.T) {
	long := "__advec_mom_kernel_mod_MOD_" + strings.Repeat("x", 100)
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "names"})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Location("main")
	r := m.Region(long)
	l.Enter(r)
	l.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := m.Path()
	cut := render.Shorten(long, summary.DefaultNameWidth)
	if s := runOK(t, "summary", path); !strings.Contains(s, "  "+cut+"\n") || strings.Contains(s, long) {
		t.Errorf("summary does not print %q alone:\n%s", cut, s)
	}
	if s := runOK(t, "summary", "-width", "20", path); !strings.Contains(s, "  "+render.Shorten(long, 20)+"\n") {
		t.Errorf("summary -width 20 does not print %q:\n%s", render.Shorten(long, 20), s)
	}
	if s := runOK(t, "summary", "-width", "0", path); !strings.Contains(s, "  "+long+"\n") {
		t.Errorf("summary -width 0 does not print the full name:\n%s", s)
	}
	if s := runOK(t, "summary", "-tsv", path); !strings.HasPrefix(s, long+"\t1\t") || strings.Count(s, "\n") != 1 {
		t.Errorf("summary -tsv:\n%s", s)
	}
	if s := runOK(t, "dump", path); strings.Count(s, "\t"+long+"\t") != 2 {
		t.Errorf("dump does not print the full name twice:\n%s", s)
	}
}
