package variation

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"github.com/hmbtrace/hmbtrace/internal/units"
)

// Layout of the hot/cold view, in SVG pixels.
const (
	svgPlotWidth  = 1000 // time axis
	svgMaxPlotH   = 1000 // rows; more locations than this share a pixel row
	svgMaxRowH    = 24
	svgVectorMax  = 5000 // segments drawn one by one; above, a raster image
	svgMarkers    = 10   // outstanding segments marked right of the plot
	svgTop        = 48
	svgFontSize   = 11
	svgLegendW    = 320
	svgBackground = "#eeeeee" // time not covered by a segment
)

// palette runs from cold (short) to hot (long): ColorBrewer's RdYlBu
// reversed, which stays readable for the common colour-vision deficiencies.
var palette = []color.RGBA{
	{0x31, 0x36, 0x95, 0xff}, {0x45, 0x75, 0xb4, 0xff}, {0x74, 0xad, 0xd1, 0xff}, {0xab, 0xd9, 0xe9, 0xff},
	{0xe0, 0xf3, 0xf8, 0xff}, {0xff, 0xff, 0xbf, 0xff}, {0xfe, 0xe0, 0x90, 0xff}, {0xfd, 0xae, 0x61, 0xff},
	{0xf4, 0x6d, 0x43, 0xff}, {0xd7, 0x30, 0x27, 0xff}, {0xa5, 0x00, 0x26, 0xff},
}

// heat returns the colour of f in [0, 1] on the palette.
func heat(f float64) color.RGBA {
	if !(f > 0) { // also NaN
		return palette[0]
	}
	if f >= 1 {
		return palette[len(palette)-1]
	}
	x := f * float64(len(palette)-1)
	i := int(x)
	a, b, t := palette[i], palette[i+1], x-float64(i)
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p) + t*(float64(q)-float64(p)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// WriteSVG writes Weber et al.'s hot/cold view: locations as rows, time as
// columns, each segment coloured by its SOS-time from blue (short) to red
// (long), with a time axis and a legend. Up to 5,000 segments are drawn one
// by one, each with a tooltip; more are rendered into an embedded raster
// image of one pixel per column where a pixel shows the longest SOS-time
// among the segments it covers, so that the file stays small at thousands
// of locations and the hot spots stay visible. Red triangles right of the
// plot mark the rows of the ten segments that stand out most (robust
// z-score at least DefaultMinScore).
func (v *Variation) WriteSVG(out io.Writer) error {
	if len(v.Segments) == 0 {
		return fmt.Errorf("analysis: no segments to draw")
	}
	w := bufio.NewWriterSize(out, 1<<16)
	nrows := len(v.Rows)
	group := (nrows + svgMaxPlotH - 1) / svgMaxPlotH // locations per pixel row
	prows := (nrows + group - 1) / group
	rowH := min(max(svgMaxPlotH/prows, 1), svgMaxRowH)
	plotH := prows * rowH

	labelChars := 0
	for _, r := range v.Rows {
		labelChars = max(labelChars, len([]rune(r.Label)))
	}
	left := min(max(labelChars, 8), 36)*7 + 16
	width := left + svgPlotWidth + 40
	axisY := svgTop + plotH
	legendY := axisY + 44
	height := legendY + 56

	t0, t1 := v.Segments[0].Start, v.Segments[0].End()
	lo, hi := v.Segments[0].SOS, v.Segments[0].SOS
	for _, s := range v.Segments {
		t0, t1 = min(t0, s.Start), max(t1, s.End())
		lo, hi = min(lo, s.SOS), max(hi, s.SOS)
	}
	span := float64(max(t1-t0, 1))
	xOf := func(t int64) float64 { return float64(left) + float64(t-t0)/span*svgPlotWidth }
	scale := func(sos int64) float64 {
		if hi == lo {
			return 0.5
		}
		return float64(sos-lo) / float64(hi-lo)
	}
	metric := "SOS-time"
	if len(v.SyncRegions) == 0 {
		metric = "segment duration (no synchronization region)"
	}

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n",
		width, height, width, height, svgFontSize)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(w, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", left,
		esc(fmt.Sprintf("%s of %s: %d segments on %d locations", metric, v.Region, len(v.Segments), nrows)))
	fmt.Fprintf(w, `<text x="%d" y="36">%s</text>`+"\n", left,
		esc(fmt.Sprintf("blue: short, red: long; median %s, MAD %s", units.Duration(v.Median), units.Duration(v.MAD))))
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left, svgTop, svgPlotWidth, plotH, svgBackground)

	if len(v.Segments) <= svgVectorMax && group == 1 {
		v.svgSegments(w, xOf, scale, rowH)
	} else if err := v.svgRaster(w, left, group, prows, rowH, t0, span, scale); err != nil {
		return err
	}

	// Markers right of the plot point at the rows of the segments that
	// stand out most, which a one-pixel row would hide at many locations.
	for i, sg := range v.Ranked() {
		if i == svgMarkers || sg.Score < DefaultMinScore {
			break
		}
		y := float64(svgTop) + (float64(sg.Row/group)+0.5)*float64(rowH)
		x := float64(left + svgPlotWidth + 3)
		fmt.Fprintf(w, `<path d="M%.1f %.1fl9 -5v10z" fill="%s"><title>%s</title></path>`+"\n", x, y, hexColor(palette[len(palette)-1]),
			esc(fmt.Sprintf("%s segment %d at %s: SOS-time %s, score %.1f", v.Rows[sg.Row].Label, sg.Index,
				units.Duration(float64(sg.Start)), units.Duration(float64(sg.SOS)), sg.Score)))
	}

	// Row labels: every row when they fit, else every step-th with a tick.
	step := niceStep(float64(svgFontSize+2) / float64(rowH))
	for pr := 0; pr < prows; pr += step {
		y := svgTop + pr*rowH + rowH/2
		r := v.Rows[pr*group]
		label := r.Label
		if group > 1 {
			label = fmt.Sprintf("%s +%d", label, min(group, nrows-pr*group)-1)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-6, y, esc(label))
		if step > 1 {
			fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", left-4, y, left, y)
		}
	}

	// Time axis.
	fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", left, axisY, left+svgPlotWidth, axisY)
	tick := niceStepF(span / 8)
	first := math.Ceil(float64(t0)/tick) * tick
	for k := 0.0; k <= 10; k++ { // counted, since t += tick may not move a huge t
		t := first + k*tick
		if t > float64(t1) {
			break
		}
		x := xOf(int64(t))
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000"/>`+"\n", x, axisY, x, axisY+5)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, axisY+17, esc(axisLabel(t, tick, float64(t1))))
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">time since the start</text>`+"\n", left+svgPlotWidth, axisY+32)

	// Legend: the colour scale with its end and middle values.
	fmt.Fprintln(w, `<defs><linearGradient id="heat">`)
	for i, c := range palette {
		fmt.Fprintf(w, `<stop offset="%.3f" stop-color="%s"/>`+"\n", float64(i)/float64(len(palette)-1), hexColor(c))
	}
	fmt.Fprintln(w, `</linearGradient></defs>`)
	fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left, legendY, esc(metric))
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="14" fill="url(#heat)" stroke="#000" stroke-width="0.5"/>`+"\n", left, legendY+6, svgLegendW)
	for i, f := range []float64{0, 0.5, 1} {
		anchor := [...]string{"start", "middle", "end"}[i]
		val := float64(lo) + f*float64(hi-lo)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="%s">%s</text>`+"\n", float64(left)+f*svgLegendW, legendY+34, anchor, esc(units.Duration(val)))
	}
	if len(v.Segments) > svgVectorMax || group > 1 {
		note := "each pixel shows the longest SOS-time of the segments it covers"
		if group > 1 {
			note += fmt.Sprintf("; a row holds %d locations", group)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left+svgLegendW+20, legendY+20, esc(note))
	}
	fmt.Fprintln(w, `</svg>`)
	return w.Flush()
}

// svgSegments draws every segment as a rectangle with a tooltip.
func (v *Variation) svgSegments(w *bufio.Writer, xOf func(int64) float64, scale func(int64) float64, rowH int) {
	gap := 0.0
	if rowH >= 6 {
		gap = 1 // a white line between neighbouring segments
	}
	fmt.Fprintln(w, `<g shape-rendering="crispEdges">`)
	for _, s := range v.Segments {
		x0, x1 := xOf(s.Start), xOf(s.End())
		wd := x1 - x0
		if wd >= 4 {
			wd -= gap
		}
		wd = max(wd, 0.5)
		fmt.Fprintf(w, `<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
			x0, svgTop+s.Row*rowH, wd, max(rowH-int(gap), 1), hexColor(heat(scale(s.SOS))),
			esc(fmt.Sprintf("%s segment %d: SOS-time %s, duration %s, score %.1f",
				v.Rows[s.Row].Label, s.Index, units.Duration(float64(s.SOS)), units.Duration(float64(s.Duration)), s.Score)))
	}
	fmt.Fprintln(w, `</g>`)
}

// svgRaster renders the segments into a PNG of one pixel per time column
// and location group, each pixel the longest SOS-time it covers, and embeds
// it.
func (v *Variation) svgRaster(w *bufio.Writer, left, group, prows, rowH int, t0 int64, span float64, scale func(int64) float64) error {
	cells := make([]float64, svgPlotWidth*prows)
	for i := range cells {
		cells[i] = -1
	}
	for _, s := range v.Segments {
		c0 := int(float64(s.Start-t0) / span * svgPlotWidth)
		c1 := int(math.Ceil(float64(s.End()-t0) / span * svgPlotWidth))
		c0 = min(max(c0, 0), svgPlotWidth-1)
		c1 = min(max(c1, c0+1), svgPlotWidth)
		row := cells[(s.Row/group)*svgPlotWidth:]
		f := scale(s.SOS)
		for x := c0; x < c1; x++ {
			row[x] = max(row[x], f)
		}
	}
	img := image.NewRGBA(image.Rect(0, 0, svgPlotWidth, prows))
	bg := color.RGBA{0xee, 0xee, 0xee, 0xff}
	for y := 0; y < prows; y++ {
		for x := 0; x < svgPlotWidth; x++ {
			c := bg
			if f := cells[y*svgPlotWidth+x]; f >= 0 {
				c = heat(f)
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
		return err
	}
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	fmt.Fprintf(w, `<image x="%d" y="%d" width="%d" height="%d" preserveAspectRatio="none" style="image-rendering:pixelated" href="%s" xlink:href="%s"/>`+"\n",
		left, svgTop, svgPlotWidth, prows*rowH, uri, uri)
	return nil
}

// niceStep returns the smallest of 1, 2, 5, 10, 20, 50, ... not below x.
func niceStep(x float64) int {
	for s := 1; ; s *= 10 {
		for _, m := range []int{1, 2, 5} {
			if float64(s*m) >= x {
				return s * m
			}
		}
	}
}

// axisLabel labels tick t (ns) of an axis of ticks step apart that ends at
// last: in one unit for the whole axis, that of last, with the decimals the
// step needs, so that "800 ms" is not followed by "1.000 s".
func axisLabel(t, step, last float64) string {
	unit, name := 1.0, "ns"
	switch a := math.Abs(last); {
	case a >= 1e9:
		unit, name = 1e9, "s"
	case a >= 1e6:
		unit, name = 1e6, "ms"
	case a >= 1e3:
		unit, name = 1e3, "µs"
	}
	decimals := max(0, int(-math.Floor(math.Log10(step/unit)+1e-9)))
	return fmt.Sprintf("%.*f %s", decimals, t/unit, name)
}

// niceStepF returns a step of 1, 2 or 5 times a power of ten near x (>= 1).
func niceStepF(x float64) float64 {
	if !(x > 1) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
