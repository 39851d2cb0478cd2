package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// widths are the window widths every picture is checked at: a wide screen
// and half of it, where the report's figures shrink to fit.
var widths = []int{1400, 700}

// svgCheckScript measures every text of every SVG on the page as the
// browser laid it out (its box turned as the text is) and reports those
// that the picture clips and those that overlap another text of the same
// picture. Boxes hold the line's leading, so two boxes overlap only when
// they do by more than a third of the smaller one's height across the
// text, and by more than a pixel along it: a separating-axis test on the
// turned boxes, so that rotated labels are checked too.
const svgCheckScript = `
var out = {};
document.querySelectorAll("div.figure").forEach(function (div) {
  var svg = div.querySelector("svg"), res = { texts: 0, clipped: [], overlaps: [] };
  out[div.id] = res;
  if (!svg) return;
  var box = svg.getBoundingClientRect(), items = [];
  svg.querySelectorAll("text").forEach(function (t) {
    if (t.textContent.trim() === "") return;
    res.texts++;
    var b = t.getBBox(), m = t.getScreenCTM(), pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(function (p) {
      var q = svg.createSVGPoint(); q.x = p[0]; q.y = p[1]; q = q.matrixTransform(m); return [q.x, q.y];
    });
    var xs = pts.map(function (p) { return p[0]; }), ys = pts.map(function (p) { return p[1]; });
    var len = function (a, b) { return Math.hypot(b[0] - a[0], b[1] - a[1]); };
    var w = len(pts[0], pts[1]), h = len(pts[1], pts[2]);
    var r = { text: t.textContent, pts: pts, w: w, h: h,
      u: w > 0 ? [(pts[1][0] - pts[0][0]) / w, (pts[1][1] - pts[0][1]) / w] : [1, 0],
      v: h > 0 ? [(pts[2][0] - pts[1][0]) / h, (pts[2][1] - pts[1][1]) / h] : [0, 1],
      left: Math.min.apply(null, xs), right: Math.max.apply(null, xs), top: Math.min.apply(null, ys), bottom: Math.max.apply(null, ys) };
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) res.clipped.push(r.text);
    items.push(r);
  });
  var proj = function (r, ax) {
    var d = r.pts.map(function (p) { return p[0] * ax[0] + p[1] * ax[1]; });
    return [Math.min.apply(null, d), Math.max.apply(null, d)];
  };
  var overlap = function (a, b) {
    var minH = Math.min(a.h, b.h);
    return [[a.u, 1], [a.v, minH / 3], [b.u, 1], [b.v, minH / 3]].every(function (axis) {
      var p = proj(a, axis[0]), q = proj(b, axis[0]);
      return Math.min(p[1], q[1]) - Math.max(p[0], q[0]) > axis[1];
    });
  };
  items.sort(function (a, b) { return a.top - b.top; });
  for (var i = 0; i < items.length; i++) {
    for (var j = i + 1; j < items.length && items[j].top < items[i].bottom; j++) {
      var a = items[i], b = items[j];
      if (Math.min(a.right, b.right) <= Math.max(a.left, b.left)) continue;
      if (overlap(a, b)) res.overlaps.push(a.text + " | " + b.text);
    }
  }
});
document.getElementById("svgcheck").textContent = JSON.stringify(out);
`

// svgResult is what the script says of one picture.
type svgResult struct {
	Texts    int
	Clipped  []string
	Overlaps []string
}

var svgCheckPre = regexp.MustCompile(`<pre id="svgcheck">([^<]*)</pre>`)

// checkSVGs shows each picture of svgs (by name) as the report does, at
// each of widths, and fails on texts that are clipped or overlap; it keeps
// a screenshot of each picture at each width in the artifacts.
func checkSVGs(t *testing.T, svgs map[string][]byte, names []string) {
	t.Helper()
	dir := artifacts(t)
	css, err := os.ReadFile(filepath.Join("assets", "report.css"))
	if err != nil {
		t.Fatal(err)
	}
	page := func(only string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>%s</style></head><body>\n", css)
		for _, name := range names {
			if only != "" && name != only {
				continue
			}
			// Raw, as the commands write the files, in the report's frame.
			fmt.Fprintf(&b, "<div class=\"figure scroll\" id=\"%s\">%s</div>\n", html.EscapeString(name), svgProlog.ReplaceAll(svgs[name], nil))
		}
		fmt.Fprintf(&b, "<pre id=\"svgcheck\"></pre><script>%s</script></body></html>\n", svgCheckScript)
		return b.String()
	}
	path := filepath.Join(dir, "svgs.html")
	if err := os.WriteFile(path, []byte(page("")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range widths {
		size := fmt.Sprintf("--window-size=%d,900", w)
		dom, _ := browse(t, "file://"+path, "--dump-dom", size)
		m := svgCheckPre.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("width %d: the check wrote nothing:\n%.2000s", w, dom)
		}
		var res map[string]svgResult
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &res); err != nil {
			t.Fatalf("width %d: %v", w, err)
		}
		for _, name := range names {
			r, ok := res[name]
			switch {
			case !ok || r.Texts == 0:
				t.Errorf("width %d: %s has no text the browser laid out", w, name)
			case len(r.Clipped) > 0:
				t.Errorf("width %d: %s clips %d texts: %q", w, name, len(r.Clipped), r.Clipped[:min(len(r.Clipped), 5)])
			}
			if len(r.Overlaps) > 0 {
				t.Errorf("width %d: %s has %d overlapping texts: %q", w, name, len(r.Overlaps), r.Overlaps[:min(len(r.Overlaps), 5)])
			}
		}
		for _, name := range names {
			one := filepath.Join(dir, fmt.Sprintf("svg-%s-%d.html", name, w))
			if err := os.WriteFile(one, []byte(page(name)), 0o644); err != nil {
				t.Fatal(err)
			}
			screenshot(t, one, "", filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w)), size)
		}
	}
}

// TestSVGsInChromium draws every picture the report and the commands make,
// from a run with an imbalance, messages and a slow phase, and from a run
// whose messages all have the same count, and checks their texts in the
// browser at two widths.
func TestSVGsInChromium(t *testing.T) {
	tracetest.Chromium(t)
	files := fixtures(t)
	svgs := map[string][]byte{}
	draw := func(name string, write func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		svgs[name] = b.Bytes()
	}
	v, err := variation.Analyze(files, variation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	draw("variation", func(b *bytes.Buffer) error { return render.VariationSVG(b, v) })
	m, err := comm.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	draw("matrix", func(b *bytes.Buffer) error { return render.CommMatrixSVG(b, m, comm.Messages) })
	draw("matrix-bytes", func(b *bytes.Buffer) error { return render.CommMatrixSVG(b, m, comm.Bytes) })
	draw("diagram", func(b *bytes.Buffer) error { return render.CommDiagramSVG(b, m) })
	eq, err := comm.FromFiles([]*tracefile.File{ring(t, 4, 200, "worker ")})
	if err != nil {
		t.Fatal(err)
	}
	draw("matrix-equal", func(b *bytes.Buffer) error { return render.CommMatrixSVG(b, eq, comm.Messages) })
	// Many nodes with long names: small turned labels, shortened ones.
	many, err := comm.FromFiles([]*tracefile.File{ring(t, 60, 3, "solver::halo_exchange_with_a_very_long_template_name<double> worker ")})
	if err != nil {
		t.Fatal(err)
	}
	draw("matrix-many", func(b *bytes.Buffer) error { return render.CommMatrixSVG(b, many, comm.Messages) })
	names := []string{"variation", "matrix", "matrix-bytes", "diagram", "matrix-equal", "matrix-many"}
	if res, err := trend.Analyze(files, trend.Options{}); err == nil && len(res.Findings) > 0 {
		draw("dynamics", func(b *bytes.Buffer) error { return render.DynamicsSVG(b, res, 6) })
		names = append(names, "dynamics")
	}
	checkSVGs(t, svgs, names)
	// The matrix of equal counts has one label for its one colour.
	if got := strings.Count(string(svgs["matrix-equal"]), ">200<"); got != 1 {
		t.Errorf("the matrix of equal counts labels 200 %d times; want once", got)
	}
}

// ring records n locations, named prefix and their number, that each send
// count messages to the next.
func ring(t *testing.T, n, count int, prefix string) *tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "ring", Clock: "monotonic"})
	if err != nil {
		t.Fatal(err)
	}
	locs := make([]*measure.Location, n)
	for i := range locs {
		locs[i] = m.Location(fmt.Sprintf("%s%d", prefix, i))
	}
	for k := 0; k < count; k++ {
		for i, l := range locs {
			l.Send(locs[(i+1)%n], 1, 64)
		}
	}
	time.Sleep(time.Millisecond)
	return tracetest.Finish(t, m)
}

// TestReportWidthsInChromium loads the report at two widths and at zooms
// from the whole run to a few µs: the page's self-check fails on axis
// labels that run together, are cut off or mix units.
func TestReportWidthsInChromium(t *testing.T) {
	tracetest.Chromium(t)
	files := fixtures(t)
	dir := artifacts(t)
	path := filepath.Join(dir, "report-widths.html")
	if err := os.WriteFile(path, writePage(t, files, Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range widths {
		size := fmt.Sprintf("--window-size=%d,900", w)
		for _, zoom := range []int{1, 3, 7, 60, 2000} {
			c := load(t, path, fmt.Sprintf("#zoom=%d&at=0.37", zoom), size)
			if len(c.Timeline.Axis) < 2 {
				t.Errorf("width %d, zoom %d: axis labels %q; want at least two", w, zoom, c.Timeline.Axis)
			}
			t.Logf("width %d, zoom %d: %q", w, zoom, c.Timeline.Axis)
		}
		screenshot(t, path, "#zoom=3&at=0.37&only=timeline", filepath.Join(dir, fmt.Sprintf("timeline-%d.png", w)), size)
	}
}
