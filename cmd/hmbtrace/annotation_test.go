package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
)

// TestDumpAnnotations: dump shows marks, parameters and channel messages
// with the region they are in, and a receive names its sender.
func TestDumpAnnotations(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "annot"})
	if err != nil {
		t.Fatal(err)
	}
	solve := m.Region("solve")
	jobs := m.Channel("jobs\tq")
	a, b := m.Location("alpha"), m.Location("beta")
	tok := jobs.Send(a, 64)
	b.EnterInt(solve, m.IntParam("n"), -7)
	b.ParamString(m.StringParam("mode"), "fast \"x\"")
	jobs.Recv(b, tok, 64)
	b.MarkName("done")
	b.Leave(solve)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"dump", m.Path()}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	got := regexp.MustCompile(`(?m)^([^\t]*)\t\d+\t`).ReplaceAllString(strings.TrimSpace(out.String()), "$1\tT\t")
	want := strings.Join([]string{
		"alpha\tT\tCHAN_SEND\tregion#0\t0\tjobs\\tq\ttoken=1\tbytes=64",
		"beta\tT\tENTER\tsolve\t1",
		"beta\tT\tPARAM_INT\tsolve\t1\tn=-7",
		"beta\tT\tPARAM_STRING\tsolve\t1\tmode=\"fast \\\"x\\\"\"",
		"beta\tT\tCHAN_RECV\tsolve\t1\tjobs\\tq\ttoken=1\tfrom=alpha\tbytes=64",
		"beta\tT\tMARK\tsolve\t1\tdone",
		"beta\tT\tLEAVE\tsolve\t1",
	}, "\n")
	if got != want {
		t.Errorf("dump:\n%s\nwant:\n%s", got, want)
	}
	out.Reset()
	if rc := run([]string{"comm", m.Path()}, &out, &errOut); rc != 0 {
		t.Fatalf("comm: exit %d: %s", rc, errOut.String())
	}
	if !regexp.MustCompile(`alpha +beta +1 +64`).MatchString(out.String()) {
		t.Errorf("comm does not show the channel message alpha -> beta:\n%s", out.String())
	}
}
