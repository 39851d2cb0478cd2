package summary_test

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func TestSummaryAnnotations(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "annot"})
	if err != nil {
		t.Fatal(err)
	}
	loc := m.Location("main")
	r := m.Region("solve")
	loc.EnterInt(r, m.IntParam("n"), 3)
	loc.ParamString(m.StringParam("mode"), "fast")
	loc.MarkName("converged")
	jobs := m.Channel("jobs")
	jobs.Recv(loc, jobs.Send(loc, 8), 8)
	loc.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	if err := summary.Write(&out, []*tracefile.File{f}); err != nil {
		t.Fatal(err)
	}
	want := "Annotations (hmbtrace dump lists them, hmbtrace comm the channel messages)\n" +
		"  marks: converged\n  region parameters: n (int), mode (string)\n  channels: jobs\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("summary lacks\n%s\nin\n%s", want, out.String())
	}
	// Marks and channel messages are in the message class, which no
	// matrix counts: they are not taken for messages of an old file.
	if s := out.String(); strings.Contains(s, "without an exact matrix") || !strings.Contains(s, "marks, channels  3 records kept in the message class") {
		t.Errorf("summary's message story:\n%s", s)
	}
}
