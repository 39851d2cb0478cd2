package variation_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// screenshot renders the SVG with headless Chromium at one device pixel per
// SVG pixel.
func screenshot(t *testing.T, svg []byte, width, height int) image.Image {
	t.Helper()
	bin := tracetest.Chromium(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "view.svg"), filepath.Join(dir, "view.png")
	if err := os.WriteFile(in, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"),
		fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+out, "file://"+in)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// like reports whether c is within a few levels of want per channel.
func like(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(x uint32, y uint8) bool { v := int(x>>8) - int(y); return v >= -12 && v <= 12 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

func svgSize(t *testing.T, svg []byte) (int, int) {
	doc := parseSVG(t, bytes.NewReader(svg))
	return doc.Width, doc.Height
}

// The layout of render.VariationSVG, in SVG pixels, that the screenshot is
// read by: a change there fails this test rather than passing unnoticed.
const (
	svgMaxPlotH = 1000
	svgMaxRowH  = 24
	svgTop      = 48
	svgLegendW  = 320
)

// In a browser, the planted segment is red where the SVG puts it and the
// others are blue, at 4 locations (vector) and at 1,000 (raster).
func TestSVGRendersInChromium(t *testing.T) {
	sync, _ := filter.ParsePatternList("barrier wait")
	for _, n := range []int{4, 1000} {
		if n == 1000 && testing.Short() {
			continue
		}
		slowRow := n * 6 / 10
		f := planted{locations: n, iterations: 40, slow: map[[2]int]bool{{slowRow, 21}: true}}.record(t)
		v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
		if err != nil {
			t.Fatal(err)
		}
		var svg bytes.Buffer
		if err := render.VariationSVG(&svg, v); err != nil {
			t.Fatal(err)
		}
		w, h := svgSize(t, svg.Bytes())
		img := screenshot(t, svg.Bytes(), w, h)
		if b := img.Bounds(); b.Dx() < w || b.Dy() < h {
			t.Fatalf("%d locations: screenshot %v smaller than the SVG's %d×%d", n, b, w, h)
		}

		// Where the SVG puts segments: the plot's left edge is the first
		// segment's start; rows are rowH high from svgTop.
		prows := n
		rowH := min(max(svgMaxPlotH/prows, 1), svgMaxRowH)
		labelChars := len(fmt.Sprintf("rank %d", n-1))
		left := min(max(labelChars, 8), 36)*7 + 16
		t0, span := v.Segments[0].Start, float64(v.Segments[len(v.Segments)-1].End()-v.Segments[0].Start)
		center := func(s Segment) (int, int) {
			x := float64(left) + (float64(s.Start-t0)+float64(s.Duration)/2)/span*plotWidth
			return int(x), svgTop + s.Row*rowH + rowH/2
		}
		slow := v.Segments[slowRow*40+21]
		hotColor, coldColor := render.HotCold.Hot(), render.HotCold.Cold()
		if x, y := center(slow); !like(img.At(x, y), hotColor) {
			t.Errorf("%d locations: planted segment at (%d, %d) renders as %v", n, x, y, img.At(x, y))
		}
		for _, s := range []Segment{v.Segments[0], v.Segments[len(v.Segments)-1], v.Segments[slowRow*40+3]} {
			x, y := center(s)
			r, _, b, _ := img.At(x, y).RGBA()
			if r>>8 >= 0x80 || b>>8 < r>>8+0x20 { // blue, maybe darkened by the axis line next to it
				t.Errorf("%d locations: ordinary segment %s/%d at (%d, %d) renders as %v", n, v.Rows[s.Row].Label, s.Index, x, y, img.At(x, y))
			}
		}
		// The legend's gradient runs from the cold to the hot end.
		legendY := svgTop + n*rowH + 44 + 13
		if !like(img.At(left+2, legendY), coldColor) || !like(img.At(left+svgLegendW-2, legendY), hotColor) {
			t.Errorf("%d locations: legend ends render as %v and %v", n, img.At(left+2, legendY), img.At(left+svgLegendW-2, legendY))
		}
		if !strings.Contains(svg.String(), "rank 0") {
			t.Errorf("no row label")
		}
	}
}
