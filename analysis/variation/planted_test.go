package variation_test

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"strconv"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// planted is a bulk-synchronous run: every iteration each location computes
// for 10-12 steps, then waits in a barrier for the slowest. The slow
// segments are (location, iteration) pairs that compute for 30 steps
// instead, which makes everybody wait in those iterations.
type planted struct {
	locations, iterations int
	slow                  map[[2]int]bool
}

func (p planted) calls() (map[string][]call, []string) {
	locs := map[string][]call{}
	var order []string
	for l := 0; l < p.locations; l++ {
		order = append(order, fmt.Sprintf("rank %d", l))
	}
	var t uint64
	iters := make([][]call, p.locations)
	for it := 0; it < p.iterations; it++ {
		compute := make([]uint64, p.locations)
		var slowest uint64
		for l := range compute {
			compute[l] = 10 + uint64(l*7+it*3)%3
			if p.slow[[2]int{l, it}] {
				compute[l] = 30
			}
			slowest = max(slowest, compute[l])
		}
		end := t + slowest + 1
		for l := range compute {
			iters[l] = append(iters[l], c("iteration", t, end,
				c("compute", t, t+compute[l]), c("barrier wait", t+compute[l], end)))
		}
		t = end
	}
	for l, name := range order {
		locs[name] = []call{c("main", 0, t+1, iters[l]...)}
	}
	return locs, order
}

func (p planted) record(t testing.TB) *tracefile.File {
	locs, order := p.calls()
	return recordCalls(t, measure.Config{}, unit, locs, order...)
}

var plantedSlow = map[[2]int]bool{{5, 7}: true, {5, 19}: true, {5, 31}: true}

func TestPlantedSlowSegmentsRankFirst(t *testing.T) {
	f := planted{locations: 8, iterations: 40, slow: plantedSlow}.record(t)
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	if v.Region != "iteration" {
		t.Fatalf("segment region %q; want iteration", v.Region)
	}
	ranked := v.Ranked()
	got := map[[2]int]bool{}
	for _, s := range ranked[:len(plantedSlow)] {
		got[[2]int{s.Row, s.Index}] = true
		if s.Score < DefaultMinScore {
			t.Errorf("planted segment %s/%d scores %.2f, below %g", v.Rows[s.Row].Label, s.Index, s.Score, DefaultMinScore)
		}
	}
	for k := range plantedSlow {
		if !got[k] {
			t.Errorf("planted segment rank %d iteration %d is not among the first %d: %+v", k[0], k[1], len(plantedSlow), ranked[:len(plantedSlow)])
		}
	}
	if next := ranked[len(plantedSlow)]; next.Score >= DefaultMinScore {
		t.Errorf("segment %s/%d also stands out with %.2f", v.Rows[next.Row].Label, next.Index, next.Score)
	}

	// The report lists exactly the planted segments.
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 20); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "stand out (robust z-score >= 3.5): 3 of 320") {
		t.Errorf("report:\n%s", out.String())
	}

	// Without the barrier as a synchronization region, every location is
	// slow in the planted iterations: durations alone do not find the cause.
	plain, err := Analyze([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[int]bool{}
	for _, s := range plain.Ranked()[:8] {
		rows[s.Row] = true
	}
	if len(rows) < 2 {
		t.Errorf("plain durations single out one location: %v", rows)
	}
}

func TestTSV(t *testing.T) {
	f := planted{locations: 3, iterations: 4, slow: map[[2]int]bool{{1, 2}: true}}.record(t)
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.VariationTSV(&out, v); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d lines; want 12:\n%s", len(lines), out.String())
	}
	var start0 int64
	for i, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("line %q: %d fields", line, len(f))
		}
		if want := fmt.Sprintf("rank %d", i/4); f[0] != want || f[1] != strconv.Itoa(i%4) {
			t.Errorf("line %d: %q %q; want %q %d", i, f[0], f[1], want, i%4)
		}
		start, err1 := strconv.ParseInt(f[2], 10, 64)
		sos, err2 := strconv.ParseInt(f[3], 10, 64)
		score, err3 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("line %q: %v %v %v", line, err1, err2, err3)
		}
		s := v.Segments[i]
		if i == 0 {
			start0 = start
		}
		if start != s.Start || sos != s.SOS || fmt.Sprintf("%.3f", score) != fmt.Sprintf("%.3f", s.Score) {
			t.Errorf("line %q does not match %+v", line, s)
		}
		if i%4 == 0 && start != start0 {
			t.Errorf("line %d: rows start at %d and %d", i, start0, start)
		}
	}
	if v.Segments[6].SOS != 30*unit {
		t.Errorf("planted SOS %d", v.Segments[6].SOS)
	}
}

// plotWidth is the hot/cold view's time axis in pixels (render.VariationSVG).
const plotWidth = 1000

// svgDoc is what the tests read back from an SVG.
type svgDoc struct {
	Width, Height int
	Rects         []svgRect
	Images        []string // href of each image
	Texts         []string
	Titles        []string // tooltips of every element
}

type svgRect struct {
	X, Width float64
	Y        int
	Fill     string
	Title    string
}

// parseSVG checks that r is well-formed XML with an svg root and collects
// its rectangles, images and texts.
func parseSVG(t *testing.T, r io.Reader) svgDoc {
	t.Helper()
	dec := xml.NewDecoder(r)
	var doc svgDoc
	var stack []string
	var cur *svgRect
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name && a.Name.Space == "" {
				return a.Value
			}
		}
		return ""
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v", e.Name)
				}
				doc.Width, _ = strconv.Atoi(attr(e, "width"))
				doc.Height, _ = strconv.Atoi(attr(e, "height"))
			}
			stack = append(stack, e.Name.Local)
			switch e.Name.Local {
			case "rect":
				x, _ := strconv.ParseFloat(attr(e, "x"), 64)
				wd, _ := strconv.ParseFloat(attr(e, "width"), 64)
				y, _ := strconv.Atoi(attr(e, "y"))
				doc.Rects = append(doc.Rects, svgRect{X: x, Width: wd, Y: y, Fill: attr(e, "fill")})
				cur = &doc.Rects[len(doc.Rects)-1]
			case "image":
				doc.Images = append(doc.Images, attr(e, "href"))
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if e.Name.Local == "rect" {
				cur = nil
			}
		case xml.CharData:
			switch {
			case len(stack) > 0 && stack[len(stack)-1] == "title":
				doc.Titles = append(doc.Titles, string(e))
				if cur != nil {
					cur.Title += string(e)
				}
			case len(stack) > 0 && stack[len(stack)-1] == "text":
				doc.Texts = append(doc.Texts, string(e))
			}
		}
	}
	if doc.Width <= 0 || doc.Height <= 0 {
		t.Fatalf("SVG size %d×%d", doc.Width, doc.Height)
	}
	return doc
}

func hasText(doc svgDoc, s string) bool {
	for _, t := range doc.Texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// hot is the palette's red end; cold is its blue quarter, where red is low.
func hot(fill string) bool { return fill == render.Hex(render.HotCold.Hot()) }
func cold(fill string) bool {
	if len(fill) != 7 || fill[0] != '#' {
		return false
	}
	red, err := strconv.ParseUint(fill[1:3], 16, 8)
	return err == nil && red < 0x80
}

// At a few locations, every segment is a rectangle with a tooltip; the
// planted ones are red and the rest blue.
func TestSVGFewLocations(t *testing.T) {
	f := planted{locations: 4, iterations: 40, slow: map[[2]int]bool{{2, 7}: true, {2, 19}: true}}.record(t)
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.VariationSVG(&out, v); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, &out)
	var segs []svgRect
	for _, r := range doc.Rects {
		if r.Title != "" {
			segs = append(segs, r)
		}
	}
	if len(segs) != 160 {
		t.Fatalf("%d segment rectangles; want 160", len(segs))
	}
	for _, r := range segs {
		planted := strings.HasPrefix(r.Title, "rank 2 segment 7:") || strings.HasPrefix(r.Title, "rank 2 segment 19:")
		if planted != hot(r.Fill) || (!planted && !cold(r.Fill)) {
			t.Errorf("segment %q has colour %s", r.Title, r.Fill)
		}
		if r.Width < 4 {
			t.Errorf("segment %q is %.1f px wide", r.Title, r.Width)
		}
	}
	for _, want := range []string{"rank 0", "rank 3", "SOS-time", "time since the start", "iteration"} {
		if !hasText(doc, want) {
			t.Errorf("SVG lacks the text %q", want)
		}
	}
	if len(doc.Images) != 0 {
		t.Errorf("raster image at 4 locations")
	}
}

// At 1,000 locations the view is a raster image: small, and the planted
// segment is still a red pixel.
func TestSVGThousandLocations(t *testing.T) {
	if testing.Short() {
		t.Skip("records 1,000 locations")
	}
	const locations, iterations = 1000, 60
	slow := map[[2]int]bool{{617, 33}: true}
	f := planted{locations: locations, iterations: iterations, slow: slow}.record(t)
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	if r := v.Ranked()[0]; r.Row != 617 || r.Index != 33 {
		t.Errorf("first ranked %+v", r)
	}
	var out bytes.Buffer
	if err := render.VariationSVG(&out, v); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 4<<20 {
		t.Errorf("SVG of %d bytes; want a few MB at most", out.Len())
	}
	t.Logf("SVG at %d locations × %d segments: %d bytes", locations, iterations, out.Len())
	doc := parseSVG(t, bytes.NewReader(out.Bytes()))
	if len(doc.Images) != 1 {
		t.Fatalf("%d images; want the raster", len(doc.Images))
	}
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(doc.Images[0], prefix) {
		t.Fatalf("image href %.40q", doc.Images[0])
	}
	data, err := base64.StdEncoding.DecodeString(doc.Images[0][len(prefix):])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != plotWidth || b.Dy() != locations {
		t.Fatalf("raster %v; want %d×%d", b, plotWidth, locations)
	}
	hotAt := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return r>>8 == uint32(render.HotCold.Hot().R) && g>>8 == uint32(render.HotCold.Hot().G) && b>>8 == uint32(render.HotCold.Hot().B)
	}
	var hotPixels []image.Point
	for y := 0; y < locations; y++ {
		for x := 0; x < plotWidth; x++ {
			if hotAt(x, y) {
				hotPixels = append(hotPixels, image.Pt(x, y))
			}
		}
	}
	if len(hotPixels) == 0 {
		t.Fatal("no red pixel")
	}
	seg := v.Segments[617*iterations+33]
	t0 := v.Segments[0].Start
	span := float64(v.Segments[len(v.Segments)-1].End() - t0)
	x0, x1 := int(float64(seg.Start-t0)/span*plotWidth), int(float64(seg.End()-t0)/span*plotWidth)+1
	for _, p := range hotPixels {
		if p.Y != 617 || p.X < x0 || p.X > x1 {
			t.Errorf("red pixel at %v; the planted segment is row 617, x %d-%d", p, x0, x1)
			break
		}
	}
	for _, want := range []string{"rank 0", "rank 500", "longest SOS-time"} {
		if !hasText(doc, want) {
			t.Errorf("SVG lacks the text %q", want)
		}
	}
	if len(doc.Titles) != 1 || !strings.HasPrefix(doc.Titles[0], "rank 617 segment 33 ") {
		t.Errorf("markers %q; want one for rank 617 segment 33", doc.Titles)
	}
}
