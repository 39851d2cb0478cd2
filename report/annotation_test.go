package report

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestTimelinePoints: marks, parameters and channel messages reach the
// page as ticks on the row of the call they happened in, labelled as
// hmbtrace dump says them.
func TestTimelinePoints(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "points"})
	if err != nil {
		t.Fatal(err)
	}
	outer, inner := m.Region("outer"), m.Region("inner")
	jobs := m.Channel("jobs")
	a, b := m.Location("a"), m.Location("b")
	a.MarkName("start")
	tok := jobs.Send(a, 8)
	b.Enter(outer)
	b.EnterInt(inner, m.IntParam("n"), 5)
	jobs.Recv(b, tok, 8)
	b.Leave(inner)
	b.MarkName("done")
	b.Leave(outer)
	a.Enter(outer)
	a.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, _ := parsePage(t, writePage(t, []*tracefile.File{f}, Options{}))
	got := map[string][]string{}
	for _, r := range d.Timeline.Rows {
		loc := d.Timeline.Locations[r.Loc].Label
		for _, p := range r.Points {
			got[loc] = append(got[loc], p.Kind+" "+strings.Repeat(">", r.Depth)+" "+p.Label)
		}
	}
	want := map[string][]string{
		"a": {`mark > mark "start"`, `chan > chan "jobs" send #1, 8 bytes`},
		"b": {`mark > mark "done"`, `param >> param n = 5`, `chan >> chan "jobs" recv #1 from a, 8 bytes`}, // row by row
	}
	for loc, w := range want {
		if strings.Join(got[loc], "\n") != strings.Join(w, "\n") {
			t.Errorf("location %s:\n%s\nwant\n%s", loc, strings.Join(got[loc], "\n"), strings.Join(w, "\n"))
		}
	}
}
