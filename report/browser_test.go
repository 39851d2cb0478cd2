package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// artifacts is where the test keeps its screenshots: $HMB_ARTIFACTS when
// set, else a temporary directory. It logs which.
func artifacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("HMB_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifacts in %s", dir)
	return dir
}

// browse runs headless Chromium on url with a fresh profile and the given
// extra flags, and returns its output and its log (stderr).
func browse(t testing.TB, url string, flags ...string) (stdout, log string) {
	t.Helper()
	bin := tracetest.Chromium(t)
	dir := t.TempDir()
	size := "--window-size=1400,900" // unless flags give another
	for _, f := range flags {
		if strings.HasPrefix(f, "--window-size=") {
			size = f
		}
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--force-device-scale-factor=1", size, "--user-data-dir=" + filepath.Join(dir, "profile")}
	for _, f := range flags {
		if !strings.HasPrefix(f, "--window-size=") {
			args = append(args, f)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, url, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// selfCheck is what the page writes into #selfcheck after it rendered.
type selfCheck struct {
	OK          bool
	Errors      []string
	Sections    map[string]bool
	ProfileRows int
	Heights     map[string]float64 // each section's height in px
	Cube        struct{ Nodes, Metrics, Calls, System int }
	Timeline    struct {
		Rows, Level, Exact, Tiles int
		Messages, MessagesDrawn   int
		CollectivesDrawn          int
		MessageTip                string // the tooltip over the first message's line
		DrawMs, DecodeMs          float64
		V0, V1, PxTime            float64
		Axis                      []string // the axis labels drawn
	}
	Probes      []*hitResult
	Interaction *struct {
		WheelZoom, DragPixels, ButtonZoom   float64
		Reset, SortedByVisits, SortedByName bool
		StaticSorted                        bool
		LocationRows                        int
		Hover                               string
	}
}

// hitResult is what the page says is drawn at a row and time.
type hitResult struct {
	Kind, Region, Location, Shed, Label string
	Text                                string // the tooltip's text
	Depth                               int
	Start, Duration, Calls, Coverage    float64
	Truncated, Open                     bool
}

var selfCheckPre = regexp.MustCompile(`<pre id="selfcheck"[^>]*>([^<]*)</pre>`)

// load opens the page at path with fragment, and returns its self-check;
// it fails on anything the browser logged from the page's console, on the
// errors the page reports and on missing sections.
func load(t testing.TB, path, fragment string, flags ...string) *selfCheck {
	t.Helper()
	c, console := loadRaw(t, path, fragment, flags...)
	for _, line := range console {
		t.Errorf("browser console: %s", line)
	}
	if !c.OK || len(c.Errors) > 0 {
		t.Errorf("%s%s: the page reports errors: %q", path, fragment, c.Errors)
	}
	for _, id := range sections {
		if !c.Sections[id] {
			t.Errorf("%s%s: section %s missing or empty", path, fragment, id)
		}
	}
	return c
}

// loadRaw opens the page and returns its self-check and what the browser
// logged from its console.
func loadRaw(t testing.TB, path, fragment string, flags ...string) (*selfCheck, []string) {
	t.Helper()
	dom, log := browse(t, "file://"+path+fragment, append([]string{"--enable-logging=stderr", "--v=0", "--dump-dom"}, flags...)...)
	var console []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, line)
		}
	}
	m := selfCheckPre.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("%s%s: no self-check in the DOM", path, fragment)
	}
	var c selfCheck
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &c); err != nil {
		t.Fatalf("self-check %q: %v", m[1], err)
	}
	return &c, console
}

// screenshot takes a screenshot of the page's timeline alone.
func screenshot(t testing.TB, path, fragment, out string, flags ...string) image.Image {
	t.Helper()
	browse(t, "file://"+path+fragment, append([]string{"--screenshot=" + out}, flags...)...)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", out)
	return img
}

// colourful counts the pixels of img that are saturated colours: drawn
// calls and tiles, not text, lines or background.
func colourful(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl)>>8, min(r, g, bl)>>8
			if hi-lo > 60 {
				n++
			}
		}
	}
	return n
}

func differing(a, b image.Image) int {
	n := 0
	bb := a.Bounds().Intersect(b.Bounds())
	for y := bb.Min.Y; y < bb.Max.Y; y++ {
		for x := bb.Min.X; x < bb.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// probePoints picks points of rows to ask the page about, and what it must
// answer for them at the level and pixel size the page reported: the middle
// of calls drawn one by one and at least 4 pixels wide, the middle of tiles
// with no such call within 2 pixels, and shed stretches with nothing drawn
// within 2 pixels.
func probePoints(tl *timeline, rows []decodedRow, regions []string, level int, pxTime, v0, v1 float64) (points []string, want []*hitResult) {
	w := float64(tl.Span) / float64(tl.Columns[level])
	drawn := func(r decodedRow, t float64) bool {
		for _, c := range r.exact {
			if float64(c.dur) >= w && float64(c.start)-2*pxTime <= t && t <= float64(c.start+c.dur)+2*pxTime {
				return true
			}
		}
		return false
	}
	tileAt := func(r decodedRow, t float64) bool {
		for _, tile := range r.tiles[level] {
			if math.Abs((float64(tile.col)+0.5)*w-t) < w/2+2*pxTime {
				return true
			}
		}
		return false
	}
	add := func(row int, t float64, h *hitResult) bool {
		if t <= v0 || t >= v1 {
			return false
		}
		points = append(points, fmt.Sprintf("%d:%.3f", row, t))
		h.Location, h.Depth = tl.Locations[tl.Rows[row].Loc].Label, tl.Rows[row].Depth
		want = append(want, h)
		return true
	}
	for ri, r := range rows {
		n := 0
		for k, c := range r.exact {
			if float64(c.dur) >= w && float64(c.dur) >= 4*pxTime && n < 10 && k%3 == 0 &&
				add(ri, float64(c.start)+float64(c.dur)/2, &hitResult{Kind: "call", Region: regions[c.region], Start: float64(c.start), Duration: float64(c.dur),
					Truncated: c.flags&flagTruncated != 0, Open: c.flags&flagOpen != 0}) {
				n++
			}
		}
		n = 0
		for k, tile := range r.tiles[level] {
			mid := (float64(tile.col) + 0.5) * w
			if k%7 == 0 && n < 10 && !drawn(r, mid) &&
				add(ri, mid, &hitResult{Kind: "tile", Region: regions[tile.region], Start: float64(tile.col) * w, Duration: w,
					Calls: float64(tile.calls), Coverage: float64(tile.coverage) / 255}) {
				n++
			}
		}
		for _, m := range tl.Rows[ri].Marks {
			for _, f := range []float64{0.25, 0.5, 0.75} {
				t := float64(m.From) + f*float64(m.To-m.From)
				if !drawn(r, t) && !tileAt(r, t) {
					add(ri, t, &hitResult{Kind: "shed", Shed: m.Kind, Label: m.Label})
				}
			}
		}
	}
	return points, want
}

func sameHit(got, want *hitResult) bool {
	if got == nil {
		return false
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(b), 1) }
	return got.Kind == want.Kind && got.Region == want.Region && got.Location == want.Location && got.Depth == want.Depth &&
		got.Shed == want.Shed && got.Label == want.Label && near(got.Start, want.Start) && near(got.Duration, want.Duration) &&
		got.Calls == want.Calls && near(got.Coverage, want.Coverage) && got.Truncated == want.Truncated && got.Open == want.Open
}

// The report loads in headless Chromium without an error, with every
// section; at two zoom levels of the timeline, the page's own decoding
// says what is drawn where as the Go decoding of the same data does, and
// the screenshots show the calls.
func TestReportInChromium(t *testing.T) {
	tracetest.Chromium(t)
	files := fixtures(t)
	dir := artifacts(t)
	page := writePage(t, files, Options{})
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	d, rows := parsePage(t, page)
	var shots []image.Image
	kinds := map[string]int{}
	// Both views centre on the moment rank 0 closed depth 4.
	at := float64(files[0].Nanos(files[0].Reductions[0].Time)) / float64(d.Timeline.Span)
	for _, zoom := range []int{1, 8} {
		frag := fmt.Sprintf("#zoom=%d&at=%.6f", zoom, at)
		first := load(t, path, frag)
		if first.Timeline.Rows != len(d.Timeline.Rows) {
			t.Fatalf("zoom %d: page decoded %d rows, want %d", zoom, first.Timeline.Rows, len(d.Timeline.Rows))
		}
		if want := float64(d.Timeline.Span) / float64(zoom); math.Abs(first.Timeline.V1-first.Timeline.V0-want) > 1e-6*want {
			t.Errorf("zoom %d: the page shows %.0f ns, want %.0f", zoom, first.Timeline.V1-first.Timeline.V0, want)
		}
		points, want := probePoints(&d.Timeline, rows, d.Regions, first.Timeline.Level, first.Timeline.PxTime, first.Timeline.V0, first.Timeline.V1)
		c := load(t, path, frag+"&probe="+strings.Join(points, ","))
		if c.Timeline.Level != first.Timeline.Level || len(c.Probes) != len(want) {
			t.Fatalf("zoom %d: level %d then %d, %d answers to %d probes", zoom, first.Timeline.Level, c.Timeline.Level, len(c.Probes), len(want))
		}
		for i := range want {
			kinds[want[i].Kind]++
			if !sameHit(c.Probes[i], want[i]) {
				t.Errorf("zoom %d: at %s the page draws %+v, want %+v", zoom, points[i], c.Probes[i], want[i])
			}
			if what := want[i].Region + want[i].Label; c.Probes[i] != nil && !strings.Contains(c.Probes[i].Text, what) {
				t.Errorf("zoom %d: at %s the tooltip says %q, not %q", zoom, points[i], c.Probes[i].Text, what)
			}
		}
		t.Logf("zoom %d: level %d, %d calls and %d tiles drawn in %.0f ms, data decoded in %.0f ms, %d probes",
			zoom, c.Timeline.Level, c.Timeline.Exact, c.Timeline.Tiles, c.Timeline.DrawMs, c.Timeline.DecodeMs, len(points))
		if c.Timeline.Exact == 0 || c.Timeline.Tiles == 0 {
			t.Errorf("zoom %d: %d calls and %d tiles drawn", zoom, c.Timeline.Exact, c.Timeline.Tiles)
		}
		img := screenshot(t, path, frag+"&only=timeline", filepath.Join(dir, fmt.Sprintf("timeline-zoom%d.png", zoom)))
		if n := colourful(img); n < 20000 {
			t.Errorf("zoom %d: the timeline screenshot has %d coloured pixels", zoom, n)
		}
		shots = append(shots, img)
	}
	// A user's wheel, drag, buttons, hover and clicks on the tables.
	c := load(t, path, "#interact=1")
	if in := c.Interaction; in == nil || in.WheelZoom <= 1.1 || math.Abs(in.DragPixels-100) > 1 || math.Abs(in.ButtonZoom-2) > 1e-9 || !in.Reset ||
		!in.SortedByVisits || !in.SortedByName || !in.StaticSorted || in.LocationRows == 0 || !strings.Contains(in.Hover, "depth 1") {
		t.Errorf("interaction: %+v", in)
	}
	if kinds["call"] == 0 || kinds["tile"] == 0 || kinds["shed"] == 0 {
		t.Errorf("probes of each kind: %v", kinds)
	}
	if n := differing(shots[0], shots[1]); n < 10000 {
		t.Errorf("the two zoom levels differ in %d pixels", n)
	}
}

// nastyTrace records names that are HTML and script, a location that
// records nothing, and a run too short for any analysis.
func nastyTrace(t *testing.T) []*tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "nasty", Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Region(nastyRegion)
	l := m.Location(nastyLocation)
	m.Location("idle")
	t0 := m.Now()
	l.EnterAt(r, t0+10)
	l.LeaveAt(r, t0+500)
	return []*tracefile.File{tracetest.Finish(t, m)}
}

const (
	nastyRegion   = `</script><script>alert("region")</script>`
	nastyLocation = `<img src=x onerror=alert(1)> & "worker"`
)

// Names are text wherever they appear, and a trace with nothing to analyse
// still makes a page that loads without an error.
func TestNastyTraceInChromium(t *testing.T) {
	tracetest.Chromium(t)
	files := nastyTrace(t)
	page := writePage(t, files, Options{})
	if bytes.Contains(page, []byte(nastyRegion)) || bytes.Contains(page, []byte(nastyLocation)) {
		t.Errorf("a name went into the page unescaped")
	}
	path := filepath.Join(t.TempDir(), "nasty.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	_, rows := parsePage(t, page)
	if len(rows) != 2 || len(rows[0].exact) != 1 {
		t.Fatalf("timeline rows %+v", rows)
	}
	call := rows[0].exact[0]
	c := load(t, path, fmt.Sprintf("#interact=1&probe=0:%d", call.start+call.dur/2))
	if c.ProfileRows != 1 || c.Timeline.Rows != 2 {
		t.Errorf("%d profile rows, %d timeline rows; want 1 and 2", c.ProfileRows, c.Timeline.Rows)
	}
	if len(c.Probes) != 1 || c.Probes[0] == nil || c.Probes[0].Region != nastyRegion || c.Probes[0].Location != nastyLocation {
		t.Errorf("probe: %+v", *c.Probes[0])
	}
	for _, note := range []string{"No variation heat map", "No dynamics findings", "No messages"} {
		if !bytes.Contains(page, []byte(note)) {
			t.Errorf("page lacks %q", note)
		}
	}
}

// A page whose timeline data is damaged says so in its self-check and on
// the console: the checks above can fail.
func TestBrokenPageIsCaught(t *testing.T) {
	tracetest.Chromium(t)
	page := writePage(t, good0(t), Options{})
	start := bytes.Index(page, []byte(`id="timeline-data">`)) + len(`id="timeline-data">`)
	end := start + bytes.Index(page[start:], []byte("</script>"))
	broken := append(append(append([]byte(nil), page[:start]...), "AAAA"...), page[end:]...)
	path := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	c, console := loadRaw(t, path, "")
	if c.OK || len(c.Errors) == 0 || !strings.Contains(c.Errors[0], "timeline") {
		t.Errorf("damaged page: self-check %+v", c)
	}
	if len(console) == 0 || !strings.Contains(console[0], "timeline row 0") {
		t.Errorf("damaged page: console %q", console)
	}
}
