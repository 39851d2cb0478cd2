package render

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
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

// WriteSVG writes Weber et al.'s hot/cold view: locations as rows, time as
// columns, each segment coloured by its SOS-time from blue (short) to red
// (long), with a time axis and a legend. Up to 5,000 segments are drawn one
// by one, each with a tooltip; more are rendered into an embedded raster
// image of one pixel per column where a pixel shows the longest SOS-time
// among the segments it covers, so that the file stays small at thousands
// of locations and the hot spots stay visible. Red triangles right of the
// plot mark the rows of the ten segments that stand out most (robust
// z-score at least variation.DefaultMinScore).
func VariationSVG(out io.Writer, v *variation.Variation) error {
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
		Esc(fmt.Sprintf("%s of %s: %d segments on %d locations", metric, v.Region, len(v.Segments), nrows)))
	fmt.Fprintf(w, `<text x="%d" y="36">%s</text>`+"\n", left,
		Esc(fmt.Sprintf("blue: short, red: long; median %s, MAD %s", units.Duration(v.Median), units.Duration(v.MAD))))
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left, svgTop, svgPlotWidth, plotH, svgBackground)

	if len(v.Segments) <= svgVectorMax && group == 1 {
		svgSegments(w, v, xOf, scale, rowH)
	} else if err := svgRaster(w, v, left, group, prows, rowH, t0, span, scale); err != nil {
		return err
	}

	// Markers right of the plot point at the rows of the segments that
	// stand out most, which a one-pixel row would hide at many locations.
	for i, sg := range v.Ranked() {
		if i == svgMarkers || sg.Score < variation.DefaultMinScore {
			break
		}
		y := float64(svgTop) + (float64(sg.Row/group)+0.5)*float64(rowH)
		x := float64(left + svgPlotWidth + 3)
		fmt.Fprintf(w, `<path d="M%.1f %.1fl9 -5v10z" fill="%s"><title>%s</title></path>`+"\n", x, y, Hex(HotCold.Hot()),
			Esc(fmt.Sprintf("%s segment %d at %s: SOS-time %s, score %.1f", v.Rows[sg.Row].Label, sg.Index,
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
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-6, y, Esc(label))
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
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, axisY+17, Esc(axisLabel(t, tick, float64(t1))))
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">time since the start</text>`+"\n", left+svgPlotWidth, axisY+32)

	// Legend: the colour scale with its end and middle values.
	fmt.Fprintln(w, `<defs><linearGradient id="heat">`)
	for i, c := range HotCold.stops {
		fmt.Fprintf(w, `<stop offset="%.3f" stop-color="%s"/>`+"\n", float64(i)/float64(len(HotCold.stops)-1), Hex(c))
	}
	fmt.Fprintln(w, `</linearGradient></defs>`)
	fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left, legendY, Esc(metric))
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="14" fill="url(#heat)" stroke="#000" stroke-width="0.5"/>`+"\n", left, legendY+6, svgLegendW)
	for i, f := range []float64{0, 0.5, 1} {
		anchor := [...]string{"start", "middle", "end"}[i]
		val := float64(lo) + f*float64(hi-lo)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="%s">%s</text>`+"\n", float64(left)+f*svgLegendW, legendY+34, anchor, Esc(units.Duration(val)))
	}
	if len(v.Segments) > svgVectorMax || group > 1 {
		note := "each pixel shows the longest SOS-time of the segments it covers"
		if group > 1 {
			note += fmt.Sprintf("; a row holds %d locations", group)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left+svgLegendW+20, legendY+20, Esc(note))
	}
	fmt.Fprintln(w, `</svg>`)
	return w.Flush()
}

// svgSegments draws every segment as a rectangle with a tooltip.
func svgSegments(w *bufio.Writer, v *variation.Variation, xOf func(int64) float64, scale func(int64) float64, rowH int) {
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
			x0, svgTop+s.Row*rowH, wd, max(rowH-int(gap), 1), Hex(HotCold.At(scale(s.SOS))),
			Esc(fmt.Sprintf("%s segment %d: SOS-time %s, duration %s, score %.1f",
				v.Rows[s.Row].Label, s.Index, units.Duration(float64(s.SOS)), units.Duration(float64(s.Duration)), s.Score)))
	}
	fmt.Fprintln(w, `</g>`)
}

// svgRaster renders the segments into a PNG of one pixel per time column
// and location group, each pixel the longest SOS-time it covers, and embeds
// it.
func svgRaster(w *bufio.Writer, v *variation.Variation, left, group, prows, rowH int, t0 int64, span float64, scale func(int64) float64) error {
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
				c = HotCold.At(f)
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
