package render

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hmbtrace/hmbtrace/analysis/trend"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// crowded returns a result with two series whose features sit a few
// iterations apart, of every kind, with long names: what makes labels
// collide ("peakpeakpeak").
func crowded() *trend.Result {
	r := &trend.Result{Source: trend.Source{Region: "a very long progress loop name that goes on and on and on"}, MinShare: 0.01}
	kinds := []dynamics.Kind{dynamics.Peak, dynamics.Dip, dynamics.StepUp, dynamics.StepDown, dynamics.TrendUp, dynamics.TrendDown}
	for k := 0; k < 2; k++ {
		s := &trend.Series{Region: strings.Repeat("region_with_a_long_name_", 6) + fmt.Sprint(k), Location: "rank 12: thread 7",
			Metric: "time per iteration", Unit: "ns", Width: 1, Iterations: 300, Loop: 3e8}
		for i := 0; i < 300; i++ {
			s.Values = append(s.Values, 1e6+1e5*math.Sin(float64(i)/3))
		}
		r.Series = append(r.Series, s)
		r.Analyses = append(r.Analyses, dynamics.Analysis{N: 300})
		var rel []dynamics.Feature
		for i := 0; i < 60; i++ {
			f := dynamics.Feature{Kind: kinds[(i+k)%len(kinds)], From: 5 * i, To: 5*i + i%3, Severity: float64(1e6 + i)}
			rel = append(rel, f)
			r.Findings = append(r.Findings, trend.Finding{Series: s, Feature: f, From: uint64(f.From), To: uint64(f.To), Severity: f.Severity})
		}
		r.Relevant = append(r.Relevant, rel)
		r.Quiet = append(r.Quiet, "")
	}
	return r
}

type box struct {
	x0, y0, x1, y1 float64
	text           string
}

func (a box) intersects(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// textBoxes returns a conservative box of every text element of an SVG:
// each character as wide as charWidth at its size, the height of the font.
func textBoxes(t *testing.T, svg []byte) (boxes []box, width float64) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var cur *box
	var size float64
	var anchor string
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			if e.Name.Local == "svg" {
				width, _ = strconv.ParseFloat(attr["width"], 64)
			}
			if e.Name.Local == "text" {
				x, _ := strconv.ParseFloat(attr["x"], 64)
				y, _ := strconv.ParseFloat(attr["y"], 64)
				size = 11
				if s, ok := attr["font-size"]; ok {
					size, _ = strconv.ParseFloat(s, 64)
				}
				anchor = attr["text-anchor"]
				cur = &box{x0: x, y0: y - size, y1: y + 0.25*size}
				depth = 0
			} else if cur != nil {
				depth++
			}
		case xml.CharData:
			if cur != nil && depth == 0 {
				cur.text += string(e)
			}
		case xml.EndElement:
			if cur != nil && depth > 0 {
				depth--
				continue
			}
			if e.Name.Local == "text" && cur != nil {
				w := float64(utf8.RuneCountInString(cur.text)) * 0.62 * size
				if anchor == "end" {
					cur.x0 -= w
				}
				cur.x1 = cur.x0 + w
				boxes = append(boxes, *cur)
				cur = nil
			}
		}
	}
	return boxes, width
}

// No two texts of the dynamics SVG overlap, on crowded input, and all lie
// within the picture; labels left out are counted on the panel.
func TestSVGLabelsDoNotOverlap(t *testing.T) {
	var b bytes.Buffer
	if err := DynamicsSVG(&b, crowded(), 4); err != nil {
		t.Fatal(err)
	}
	boxes, width := textBoxes(t, b.Bytes())
	labels := 0
	for i, a := range boxes {
		if a.x0 < 0 || a.x1 > width {
			t.Errorf("text %q runs out of the picture: [%.1f, %.1f] of %.0f", a.text, a.x0, a.x1, width)
		}
		if a.text == "peak" || a.text == "dip" || strings.Contains(a.text, "step") || strings.Contains(a.text, "trend") && !strings.Contains(a.text, "phase") {
			labels++
		}
		for _, c := range boxes[i+1:] {
			if a.intersects(c) {
				t.Errorf("texts %q and %q overlap: %+v %+v", a.text, c.text, a, c)
			}
		}
	}
	if labels < 20 {
		t.Errorf("only %d labels placed in two crowded panels", labels)
	}
	if !bytes.Contains(b.Bytes(), []byte("more features unlabelled")) {
		t.Error("the labels left out are not counted")
	}
}

// The labels' lanes never overlap whatever the spans.
func TestPlaceLabels(t *testing.T) {
	starts := []float64{0, 1, 2, 3, 50, 51, 52, 400, 895}
	texts := []string{"peak", "dip", "step up", "upward trend", "peak", "downward trend", "dip", "step down", "peak"}
	lanes, xs := placeLabels(starts, texts, 900)
	for i := range texts {
		if lanes[i] < 0 {
			continue
		}
		wi := float64(utf8.RuneCountInString(texts[i])) * charWidth
		if xs[i]+wi > 900 {
			t.Errorf("label %d runs past the right edge", i)
		}
		for j := i + 1; j < len(texts); j++ {
			wj := float64(utf8.RuneCountInString(texts[j])) * charWidth
			if lanes[j] == lanes[i] && xs[i] < xs[j]+wj && xs[j] < xs[i]+wi {
				t.Errorf("labels %d and %d share lane %d and overlap", i, j, lanes[i])
			}
		}
	}
	if lanes[0] != 0 || lanes[1] != 1 || lanes[2] != 2 || lanes[3] != -1 {
		t.Errorf("lanes %v: want the first three stacked and the fourth left out", lanes)
	}
}

var checkPre = regexp.MustCompile(`(?s)<pre id="check">(.*?)</pre>`)

// In Chromium, at two widths, no two rendered texts of the crowded SVG
// overlap (their real bounding boxes, whatever the font), and none leaves
// the picture. Screenshots go to $HMB_ARTIFACTS when it is set.
func TestSVGInChromium(t *testing.T) {
	bin := tracetest.Chromium(t)
	dir := os.Getenv("HMB_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := DynamicsSVG(&b, crowded(), 4); err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><meta charset="utf-8"><body style="margin:0">
<div style="width:100%">` + strings.Replace(b.String(), "<svg ", `<svg style="width:100%;height:auto" `, 1) + `</div>
<pre id="check"></pre>
<script>
const svg = document.querySelector("svg"), outer = svg.getBoundingClientRect();
const rs = [...svg.querySelectorAll("text")].map(e => [e.getBoundingClientRect(), e.textContent]);
const bad = [];
for (let i = 0; i < rs.length; i++) {
  const [a, ta] = rs[i];
  if (a.left < outer.left - 0.5 || a.right > outer.right + 0.5) bad.push("outside: " + ta);
  for (let j = i + 1; j < rs.length; j++) {
    const [c, tc] = rs[j];
    if (a.left < c.right - 0.5 && c.left < a.right - 0.5 && a.top < c.bottom - 0.5 && c.top < a.bottom - 0.5) bad.push(ta + " / " + tc);
  }
}
document.getElementById("check").textContent = JSON.stringify({texts: rs.length, bad: bad});
</script>`
	path := filepath.Join(dir, "dynamics-crowded.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1400, 640} {
		run := func(extra ...string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prof := t.TempDir()
			args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
				"--force-device-scale-factor=1", fmt.Sprintf("--window-size=%d,1000", w), "--user-data-dir=" + prof}, extra...)
			cmd := exec.CommandContext(ctx, bin, append(args, "file://"+path)...)
			cmd.Env = append(os.Environ(), "HOME="+prof)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("chromium at width %d: %v", w, err)
			}
			return string(out)
		}
		m := checkPre.FindStringSubmatch(run("--dump-dom"))
		if m == nil {
			t.Fatalf("width %d: no check result in the DOM", w)
		}
		var c struct {
			Texts int
			Bad   []string
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &c); err != nil {
			t.Fatal(err)
		}
		if c.Texts < 30 || len(c.Bad) > 0 {
			t.Errorf("width %d: %d texts, overlapping or outside: %q", w, c.Texts, c.Bad)
		}
		shot := filepath.Join(dir, fmt.Sprintf("dynamics-crowded-%d.png", w))
		run("--screenshot=" + shot)
		t.Logf("width %d: %d texts, none overlapping; screenshot %s", w, c.Texts, shot)
	}
}
