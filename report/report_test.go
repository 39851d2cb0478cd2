package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var sections = []string{"facts", "profile", "timeline", "waitstates", "variation", "dynamics", "communication", "counters"}

func TestWriteSections(t *testing.T) {
	files := fixtures(t)
	page := string(writePage(t, files, Options{}))
	section := func(id string) string {
		i := strings.Index(page, `<section id="`+id+`">`)
		if i < 0 {
			t.Errorf("no section %s", id)
			return ""
		}
		j := strings.Index(page[i:], "</section>")
		if j < 0 {
			t.Fatalf("section %s does not end", id)
		}
		return page[i : i+j]
	}
	for _, id := range sections {
		if s := section(id); strings.Contains(s, `class="note unavailable"`) {
			t.Errorf("section %s: %s", id, s)
		}
	}
	if strings.Contains(page, "<pre>") {
		t.Error("the page shows an analysis as preformatted text")
	}
	for _, c := range []struct {
		section string
		want    []string
	}{
		{"facts", []string{"synthetic: 2 processes", `id="run-table"`, "<td>rank 0 worker 0</td>", "<td>rank 1 worker 1</td>", "reduction policy depth (on 1 of the 2 files",
			"not recorded: buffer full at depth 4", "keep-last: only the end of the run kept", "calls shorter than 1.000 µs"}},
		{"variation", []string{`<div class="figure scroll" id="variation-heatmap"><svg`, `<span class="k">iterations</span>`}},
		{"dynamics", []string{`<div class="figure scroll" id="dynamics-series"><svg`, "<p>Iterations: "}},
		{"waitstates", []string{"Wait states"}},
		{"communication", []string{`id="comm-matrix"><svg`, `id="comm-diagram"><svg`, "<td>rank 1: worker 0</td><td>rank 1: worker 1</td>",
			"The buffer shed"}}, // rank 0's messages were at the closed depth
		{"counters", []string{"These traces hold no counters"}},
		{"timeline", []string{`<canvas id="tl-canvas"`, "not recorded: buffer full at this depth", "recorded, then dropped to make room",
			"before the kept last part of the run", "began before the kept part"}},
		{"profile", []string{`<table id="profile-table"`, `id="cube-metrics"`, `id="cube-calls"`, `id="cube-system"`}},
	} {
		s := section(c.section)
		for _, want := range c.want {
			if !strings.Contains(s, want) {
				t.Errorf("section %s lacks %q", c.section, want)
			}
		}
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Errorf("page is not a whole HTML document")
	}
}

// The page needs nothing but itself: no scripts, styles, fonts or images
// from anywhere, and the only URLs are SVG's namespaces.
func TestSelfContained(t *testing.T) {
	page := string(writePage(t, fixtures(t), Options{}))
	for _, m := range regexp.MustCompile(`(?i)\b(src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[2], "#") && !strings.HasPrefix(m[2], "data:") {
			t.Errorf("%s=%q refers outside the page", m[1], m[2])
		}
	}
	for _, m := range regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"' )]*`).FindAllString(page, -1) {
		if !strings.HasPrefix(m, "http://www.w3.org/") {
			t.Errorf("URL %q in the page", m)
		}
	}
	for _, bad := range []string{"<link", "@import", "@font-face", "<iframe", "fetch(", "XMLHttpRequest", "<script src"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}

// What the page decodes is what the traces hold: every kept call of every
// location is drawn at every level, one by one or in a tile of the column
// where it starts; the buffer's closed depth, keep-last windows, truncated
// enters and filters are marked.
func TestTimelineData(t *testing.T) {
	files := fixtures(t)
	d, rows := parsePage(t, writePage(t, files, Options{}))
	tl := &d.Timeline
	if len(tl.Locations) != 4 || len(tl.Rows) != 16 {
		t.Fatalf("%d locations, %d rows; want 4 and 16", len(tl.Locations), len(tl.Rows))
	}
	l := lod{span: tl.Span, columns: tl.Columns, exactMin: tl.ExactMin}
	for _, c := range tl.Columns {
		l.widths = append(l.widths, float64(tl.Span)/float64(c))
	}
	r := testRun(t, files)
	row := 0
	for fi, f := range files {
		for k := range f.Locations {
			loc := &f.Locations[k]
			calls := map[int][]call{}
			var stack []call
			var e tracefile.Event
			it := f.Events(loc.ID)
			for it.Next(&e) {
				switch e.Kind {
				case encode.KindEnter:
					stack = append(stack, call{start: r.offsets[fi] + f.Nanos(e.Time), region: r.region(fi, e.Region)})
					if e.Truncated {
						stack[len(stack)-1].flags = flagTruncated
					}
				case encode.KindLeave:
					c := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					c.end = r.offsets[fi] + f.Nanos(e.Time)
					calls[len(stack)+1] = append(calls[len(stack)+1], c)
				}
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			for depth := 1; depth <= 4; depth++ {
				meta, got := tl.Rows[row], rows[row]
				row++
				if meta.Depth != depth || tl.Locations[meta.Loc].Label != r.label(fi, loc) {
					t.Fatalf("row %d is %s depth %d, want %s depth %d", row-1, tl.Locations[meta.Loc].Label, meta.Depth, r.label(fi, loc), depth)
				}
				checkDrawn(t, &l, calls[depth], got, meta)
			}
		}
	}

	// Rank 0 closed depth 4: hatched from the reduction on, labelled; its
	// events before were revoked.
	red := files[0].Reductions[0]
	for _, meta := range tl.Rows[:8] {
		if meta.Depth != 4 {
			if len(meta.Marks) != 0 {
				t.Errorf("rank 0 depth %d marked %+v", meta.Depth, meta.Marks)
			}
			continue
		}
		if len(meta.Marks) != 2 || meta.Marks[0].Kind != "revoked" || meta.Marks[1].Kind != "closed" ||
			meta.Marks[1].From != files[0].Nanos(red.Time) || meta.Marks[1].Label != "not recorded: buffer full at depth 4 from "+units.Duration(float64(files[0].Nanos(red.Time)))+" on" {
			t.Errorf("rank 0 depth 4 marks %+v, want revoked then closed at the reduction", meta.Marks)
		}
		if !strings.Contains(meta.Stats, "removed") || !strings.Contains(meta.Stats, "by depth") {
			t.Errorf("rank 0 depth 4 stats %q", meta.Stats)
		}
	}
	for _, loc := range tl.Locations[:2] {
		if !strings.Contains(strings.Join(loc.Notes, "\n"), "filtered: ") {
			t.Errorf("%s: notes %q say nothing of the duration filter", loc.Label, loc.Notes)
		}
	}
	// Rank 1 keeps the last window: every row hatched before it, and main
	// entered before it, starting at it.
	for i, meta := range tl.Rows[8:] {
		f, loc := files[1], &files[1].Locations[i/4]
		window := r.offsets[1] + f.Nanos(loc.WindowTime)
		if !loc.Windowed || len(meta.Marks) != 1 || meta.Marks[0].Kind != "window" || meta.Marks[0].To != window || meta.Marks[0].From != r.offsets[1] {
			t.Errorf("rank 1 %s depth %d: marks %+v, want the window up to %d", loc.Name, meta.Depth, meta.Marks, window)
		}
		if meta.Depth == 1 {
			ex := rows[8+i].exact
			if len(ex) != 1 || ex[0].start != window || ex[0].flags != flagTruncated || d.Regions[ex[0].region] != "main" {
				t.Errorf("rank 1 %s depth 1: %+v, want main truncated at the window %d", loc.Name, ex, window)
			}
		}
	}
}

// checkDrawn checks that every call is drawn at every level, and nothing
// else one by one.
func checkDrawn(t *testing.T, l *lod, calls []call, got decodedRow, meta tlRow) {
	t.Helper()
	exact := map[decodedCall]bool{}
	for _, c := range got.exact {
		exact[c] = true
	}
	nExact := 0
	for _, c := range calls {
		dur := c.end - c.start
		if float64(dur) >= l.exactMin {
			nExact++
			if !exact[decodedCall{c.start, dur, c.region, c.flags}] {
				t.Errorf("depth %d: call %+v is not exact", meta.Depth, c)
			}
		}
		for level, w := range l.widths {
			if float64(dur) >= l.exactMin && float64(dur) >= w {
				continue
			}
			col := min(int64(float64(c.start)/w), int64(l.columns[level]-1))
			found := false
			for _, tile := range got.tiles[level] {
				found = found || tile.col == col
			}
			if !found {
				t.Fatalf("depth %d level %d: call %+v has no tile in column %d", meta.Depth, level, c, col)
			}
		}
	}
	if nExact != len(got.exact) {
		t.Errorf("depth %d: %d exact calls, want %d", meta.Depth, len(got.exact), nExact)
	}
}

// The profile's rows for all locations sum the locations' rows, and these
// are the traces' flat profiles.
func TestProfileData(t *testing.T) {
	files := fixtures(t)
	d, _ := parsePage(t, writePage(t, files, Options{}))
	var p struct {
		Locations []string
		Times     []int64
		Total     int64
		Rows      [][]json.Number
	}
	dec := json.NewDecoder(bytes.NewReader(d.Profile))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if len(p.Locations) != 4 || p.Total != 2*files[0].Duration()+2*files[1].Duration() {
		t.Fatalf("locations %q, total %d", p.Locations, p.Total)
	}
	type key struct{ loc, region int64 }
	got := map[key][3]int64{}
	for _, row := range p.Rows {
		var v [5]int64
		for i := range v {
			v[i], _ = row[i].Int64()
		}
		got[key{v[0], v[1]}] = [3]int64{v[2], v[3], v[4]}
	}
	want := map[key][3]int64{}
	li := int64(0)
	r := testRun(t, files)
	for fi, f := range files {
		for _, l := range f.Locations {
			for _, e := range l.Profile {
				v := [3]int64{int64(e.Visits), f.TicksToNanos(e.Inclusive), f.TicksToNanos(e.Exclusive)}
				region := int64(r.region(fi, e.Region))
				want[key{li, region}] = v
				tot := want[key{-1, region}]
				for i := range tot {
					tot[i] += v[i]
				}
				want[key{-1, region}] = tot
			}
			li++
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d profile rows, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("location %d region %s: %v, want %v", k.loc, d.Regions[k.region], got[k], v)
		}
	}
}

// A timeline of more rows than the budget draws the shallow depths and
// says what it left out.
func TestTimelineBudget(t *testing.T) {
	files := fixtures(t)
	d, rows := parsePage(t, writePage(t, files, Options{MaxCells: 12 * minColumns, MaxIntervals: 100}))
	tl := &d.Timeline
	if len(tl.Rows) != 12 || len(rows) != 12 {
		t.Fatalf("%d rows, want 12", len(tl.Rows))
	}
	for _, meta := range tl.Rows {
		if meta.Depth > 3 {
			t.Errorf("depth %d drawn", meta.Depth)
		}
	}
	if len(tl.Omitted) != 1 || !strings.Contains(tl.Omitted[0], "calls below the 3 outermost calling depths are not drawn") {
		t.Errorf("omitted %q", tl.Omitted)
	}
	exact := 0
	for _, r := range rows {
		exact += len(r.exact)
	}
	if exact > 100 {
		t.Errorf("%d exact calls, budget 100", exact)
	}
	d, _ = parsePage(t, writePage(t, files, Options{MaxCells: 2 * minColumns}))
	if len(d.Timeline.Rows) != 2 || len(d.Timeline.Omitted) != 2 || !strings.Contains(d.Timeline.Omitted[1], "2 locations are not drawn") {
		t.Errorf("%d rows, omitted %q", len(d.Timeline.Rows), d.Timeline.Omitted)
	}
}

func TestWriteErrors(t *testing.T) {
	if err := Write(&bytes.Buffer{}, nil, Options{}); err == nil {
		t.Errorf("no files: no error")
	}
	// A bin whose records do not decode: the error names the file. Its
	// location's statistics keep just that bin, which Open checks.
	good := fixtures(t)[0]
	path := filepath.Join(t.TempDir(), "bad.hmb")
	tr := good.Trace
	tr.Locations = append([]tracefile.Location(nil), tr.Locations...)
	for i := range tr.Locations {
		tr.Locations[i].Levels = nil
	}
	tr.Locations[0].Levels = []tracefile.LevelStats{{Depth: 1, Class: tracefile.ClassRegion, Written: 1}}
	err := tracefile.WriteFile(path, &tr, func(put func(tracefile.Bin) error) error {
		return put(tracefile.Bin{Location: good.Locations[0].ID, Depth: 1, Class: tracefile.ClassRegion, Records: 1, Data: []byte{0xff, 0xff, 0xff, 0xff}})
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := open(t, path)
	err = Write(&bytes.Buffer{}, bad, Options{})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("bad bin: %v", err)
	}
	// A failing writer's error comes back.
	if err := Write(failingWriter{}, good0(t), Options{}); !errors.Is(err, errFull) {
		t.Errorf("failing writer: %v", err)
	}
}

var errFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

// good0 records a small trace of one location.
func good0(t *testing.T) []*tracefile.File {
	return open(t, synthetic{locations: 1, iterations: 20, rows: 3}.record(t, t.TempDir()))
}

// Counters, where a run read them, get their table with every region that
// read them, and the profile carries them.
func TestCounters(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "counters", Metrics: []string{"task-clock", "page-faults"}})
	if err != nil {
		t.Fatal(err)
	}
	work, wait := m.Region("work"), m.Region("wait")
	done := make(chan struct{})
	go func() {
		// Counters are read on the thread of the goroutine that made the
		// location.
		defer close(done)
		l := m.Location("worker")
		sink := 0
		for i := range 200 {
			l.Enter(work)
			for j := range 20000 {
				sink += i ^ j
			}
			l.Leave(work)
			l.Enter(wait)
			l.Leave(wait)
		}
		_ = sink
	}()
	<-done
	files := []*tracefile.File{tracetest.Finish(t, m)}
	if len(files[0].Header.Metrics) == 0 {
		t.Skipf("this machine counted nothing: %q", files[0].Header.MetricsMissing)
	}
	page := writePage(t, files, Options{})
	for _, want := range []string{`<table id="counter-table"`, "<th>task-clock incl.</th>", "<th>page-faults excl.</th>", "counted task-clock, page-faults, read with"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	d, _ := parsePage(t, page)
	var p struct {
		Metrics []string
		Rows    [][]any
	}
	if err := json.Unmarshal(d.Profile, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Metrics) != len(files[0].Header.Metrics) {
		t.Fatalf("metrics %q", p.Metrics)
	}
	for _, row := range p.Rows {
		if len(row) != 7 {
			t.Errorf("row %v has no counters", row)
			continue
		}
		if region := d.Regions[int(row[1].(float64))]; region == "work" && row[5].([]any)[0].(float64) <= 0 {
			t.Errorf("work counted no task-clock: %v", row)
		}
	}
}

func TestInlineSVG(t *testing.T) {
	svg := `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><linearGradient id="scale"/></defs>` +
		`<rect fill="url(#scale)"/><use xlink:href="#scale"/><use href="#scale"/><g data-grid="x"/></svg>`
	got := string(inlineSVG([]byte(svg), "fig", "a figure"))
	want := `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><linearGradient id="fig-scale"/></defs>` +
		`<rect fill="url(#fig-scale)"/><use xlink:href="#fig-scale"/><use href="#fig-scale"/><g data-grid="x"/></svg>`
	if got != want {
		t.Errorf("inlined:\n%s\nwant\n%s", got, want)
	}
	styled := string(inlineSVG([]byte(`<svg><style>text{fill:red}</style></svg>`), "fig", `a "figure"`))
	if !strings.HasPrefix(styled, `<img class="figure" alt="a &#34;figure&#34;" src="data:image/svg+xml;base64,`) {
		t.Errorf("styled SVG inlined as %s", styled)
	}
}

// Instructions per cycle come from the inclusive counts where both were
// counted; files merge their counters by name.
func TestCountersIPC(t *testing.T) {
	a := &tracefile.File{Path: "a.hmb", Trace: tracefile.Trace{
		Header:  tracefile.Header{Metrics: []string{"cycles", "instructions"}, MetricsPath: "rdpmc", TicksPerSecond: 1e9},
		Regions: []tracefile.Region{{ID: 1, Name: "solve"}, {ID: 2, Name: "idle"}},
		Locations: []tracefile.Location{{ID: 0, Name: "main", Profile: []tracefile.ProfileEntry{
			{Region: 1, Visits: 2, Inclusive: 100, Exclusive: 80, CounterInclusive: []uint64{1000, 2500}, CounterExclusive: []uint64{800, 2000}},
			{Region: 2, Visits: 1, Inclusive: 10, Exclusive: 10},
		}}},
	}}
	b := &tracefile.File{Path: "b.hmb", Trace: tracefile.Trace{
		Header:  tracefile.Header{Rank: 1, Metrics: []string{"instructions"}, TicksPerSecond: 1e9},
		Regions: []tracefile.Region{{ID: 1, Name: "solve"}},
		Locations: []tracefile.Location{{ID: 0, Name: "main", Multiplexed: true, Profile: []tracefile.ProfileEntry{
			{Region: 1, Visits: 1, Inclusive: 50, Exclusive: 50, CounterInclusive: []uint64{500}, CounterExclusive: []uint64{500}},
		}}},
	}}
	r := testRun(t, []*tracefile.File{a, b})
	prof := newProfile(r)
	if !prof.ipc || len(prof.metrics) != 2 {
		t.Fatalf("metrics %q, ipc %v", prof.metrics, prof.ipc)
	}
	var buf bytes.Buffer
	p := &page{w: bufio.NewWriter(&buf)}
	writeCounters(p, r, prof)
	p.w.Flush()
	got := buf.String()
	for _, want := range []string{
		// solve over both files: cycles only from a, instructions from
		// both, instructions per cycle from a alone.
		`<tr><td>solve</td><td data-v="1000">1,000</td><td data-v="800">800</td><td data-v="3000">3,000</td><td data-v="2500">2,500</td><td data-v="2.5">2.50</td></tr>`,
		"a.hmb: counted cycles, instructions, read with rdpmc.",
		"multiplexed by the kernel and extrapolated on main",
		"<th>IPC</th>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("counters lack %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<td>idle</td>") {
		t.Errorf("idle read no counters but has a row")
	}
	js := string(prof.appendJSON(nil))
	for _, want := range []string{`"metrics":["cycles","instructions"]`, `"ipc":true`, `[1,0,1,50,50,[null,500],[null,500],null]`, `[0,0,2,100,80,[1000,2500],[800,2000],2.5]`, `[-1,0,3,150,130,[1000,3000],[800,2500],2.5]`, `[0,1,1,10,10]`} {
		if !strings.Contains(js, want) {
			t.Errorf("profile JSON lacks %s: %s", want, js)
		}
	}
}

// TestLabels checks the timeline's location labels: by rank for the ranks
// of one run, by file when files share a rank (unrelated runs), the process
// said once ("rank 1", "rank 1 thread 2", never "rank 1: rank 1").
func TestLabels(t *testing.T) {
	file := func(name string, rank int) *tracefile.File {
		b := tracetest.NewBuilder(name, "host", rank, time.Unix(0, 0), "work")
		l := b.Location(fmt.Sprintf("rank %d", rank))
		l.Enter(10, 1)
		l.Leave(20)
		th := b.Location("thread 2")
		th.Enter(10, 1)
		th.Leave(20)
		return b.Write(t, t.TempDir())
	}
	x0, x1, y0 := file("x", 0), file("x", 1), file("y", 0)
	for _, tc := range []struct {
		files []*tracefile.File
		want  []string
	}{
		{[]*tracefile.File{x0}, []string{"rank 0", "thread 2"}},
		{[]*tracefile.File{x0, x1}, []string{"rank 0", "rank 0 thread 2", "rank 1", "rank 1 thread 2"}},
		{[]*tracefile.File{x0, y0}, []string{"x.0.hmb: rank 0", "x.0.hmb: thread 2", "y.0.hmb: rank 0", "y.0.hmb: thread 2"}},
	} {
		r := testRun(t, tc.files)
		var got []string
		for i, f := range tc.files {
			for k := range f.Locations {
				got = append(got, r.label(i, &f.Locations[k]))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("labels %q, want %q", got, tc.want)
		}
	}
}

// testRun is newRun for the tests.
func testRun(t testing.TB, files []*tracefile.File) *run {
	t.Helper()
	r, err := newRun(files)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
