package render

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/internal/textname"
)

// scale maps values to [0, 1] on a log scale when they span more than two
// decades, linearly otherwise.
type scale struct {
	lo, hi float64
	log    bool
}

func newScale(vals []float64) scale {
	s := scale{lo: math.Inf(1), hi: math.Inf(-1)}
	for _, v := range vals {
		if v > 0 {
			s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
		}
	}
	if math.IsInf(s.lo, 0) {
		s.lo, s.hi = 0, 1
	}
	s.log = s.lo > 0 && s.hi/s.lo > 100
	return s
}

func (s scale) at(v float64) float64 {
	if s.hi <= s.lo {
		return 1
	}
	if s.log {
		return (math.Log(v) - math.Log(s.lo)) / (math.Log(s.hi) - math.Log(s.lo))
	}
	return (v - s.lo) / (s.hi - s.lo)
}

func (s scale) value(t float64) float64 {
	if s.log {
		return math.Exp(math.Log(s.lo) + t*(math.Log(s.hi)-math.Log(s.lo)))
	}
	return s.lo + t*(s.hi-s.lo)
}

func humanize(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.4g", v)
}

// vectorLimit is the most nodes a matrix draws as one rectangle per cell;
// larger ones are drawn as an embedded image, one pixel per cell, so that
// the SVG stays a few MB at 1,000 nodes.
const vectorLimit = 200

// CommMatrixSVG draws the communication matrix: senders as rows,
// receivers as columns, each cell coloured by v, with a legend.
func CommMatrixSVG(w io.Writer, m *comm.Matrix, v comm.Value) error {
	n := len(m.Nodes)
	bw := bufio.NewWriter(w)
	vals := make([]float64, len(m.Cells))
	for i, c := range m.Cells {
		vals[i] = c.Amount(v)
	}
	sc := newScale(vals)
	const margin, legendW, titleH, maxLabel = 20.0, 90.0, 36.0, 300.0
	side := math.Min(800, math.Max(160, float64(n)*14))
	cell := side / math.Max(1, float64(n))
	// Every node is labelled at the side and, turned by 60°, on top when
	// the cells are large enough; else the first and the last at the side.
	labelled := n <= vectorLimit && cell >= 8
	fs := 11.0
	if labelled {
		fs = math.Min(11, cell*0.8)
	}
	names := make([]string, n)
	longest := 0.0
	for i, nd := range m.Nodes {
		names[i] = fitWidth(nd.Name, fs, maxLabel)
		if labelled || i == 0 || i == n-1 {
			longest = math.Max(longest, textWidth(names[i], fs))
		}
	}
	// Room for the labels: at the left as wide as the longest, on top as
	// high as it rises turned (sin 60° of its width, and its own height).
	labelW, top := math.Max(60, longest+8), 8.0
	if labelled {
		top = 0.87*longest + fs + 4
	}
	// The title is two lines, and the picture at least as wide as the
	// longer, and as the last top label reaches: a small matrix must not
	// clip either.
	title, subtitle := "Communication matrix", fmt.Sprintf("%s per sender (rows) and receiver (columns)", v)
	ox, oy := margin+labelW, margin+titleH+top
	width := math.Max(ox+side+math.Max(legendW, 0.5*longest+8)+margin, 2*margin+textWidth(subtitle, 11))
	height := oy + side + margin
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<title>Communication matrix: %s</title><rect width="100%%" height="100%%" fill="white"/>`+"\n", v)
	fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="14">%s</text>`+"\n", margin, margin+12, title)
	fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" fill="#444">%s</text>`+"\n", margin, margin+28, subtitle)
	fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f4f4f4" stroke="#999"/>`+"\n", ox, oy, side, side)
	if n <= vectorLimit {
		for _, c := range m.Cells {
			col := Traffic.At(sc.at(c.Amount(v)))
			fmt.Fprintf(bw, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s → %s: %d messages, %d bytes</title></rect>`+"\n",
				ox+float64(c.To)*cell, oy+float64(c.From)*cell, cell, cell, Hex(col),
				Esc(m.Nodes[c.From].Name), Esc(m.Nodes[c.To].Name), c.Messages, c.Bytes)
		}
		if labelled {
			for i := range m.Nodes {
				fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end" font-size="%.1f">%s</text>`+"\n", ox-4, oy+(float64(i)+0.7)*cell, fs, Esc(names[i]))
				fmt.Fprintf(bw, `<text transform="translate(%.1f,%.1f) rotate(-60)" font-size="%.1f">%s</text>`+"\n", ox+(float64(i)+0.6)*cell, oy-4, fs, Esc(names[i]))
			}
		}
	} else {
		img := image.NewRGBA(image.Rect(0, 0, n, n))
		for _, c := range m.Cells {
			img.Set(c.To, c.From, Traffic.At(sc.at(c.Amount(v))))
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return err
		}
		fmt.Fprintf(bw, `<image x="%.1f" y="%.1f" width="%.1f" height="%.1f" preserveAspectRatio="none" style="image-rendering:pixelated" href="data:image/png;base64,%s"/>`+"\n",
			ox, oy, side, side, base64.StdEncoding.EncodeToString(buf.Bytes()))
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			ox-4, oy+10, Esc(names[0]), ox-4, oy+side, Esc(names[n-1]))
	}
	legend(bw, sc, ox+side+20, oy, side, string(v))
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// legend draws a vertical colour scale with five labelled ticks.
func legend(w io.Writer, sc scale, x, y, h float64, title string) {
	fmt.Fprintf(w, `<defs><linearGradient id="scale" x1="0" y1="1" x2="0" y2="0">`)
	for i := 0; i <= 10; i++ {
		fmt.Fprintf(w, `<stop offset="%.1f" stop-color="%s"/>`, float64(i)/10, Hex(Traffic.At(float64(i)/10)))
	}
	fmt.Fprintln(w, `</linearGradient></defs>`)
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x, y-6, Esc(title))
	if sc.hi <= sc.lo {
		// Every cell has the same value, drawn in the colour of the top:
		// one swatch and one label, not a scale of five equal numbers.
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="14" height="14" fill="%s" stroke="#999"/>`+"\n", x, y, Hex(Traffic.At(sc.at(sc.hi))))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+18, y+11, humanize(sc.hi))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="9">all cells equal</text>`+"\n", x, y+28)
		return
	}
	fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="14" height="%.1f" fill="url(#scale)" stroke="#999"/>`+"\n", x, y, h)
	// Ticks whose labels would repeat the previous one's (a narrow range
	// in few digits) are left out.
	last := ""
	for i := 0; i <= 4; i++ {
		t := float64(i) / 4
		label := humanize(sc.value(t))
		if label == last {
			continue
		}
		last = label
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+18, y+h-t*h+4, label)
	}
	if sc.log {
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="9">log scale</text>`+"\n", x, y+h+14)
	}
}

// fitWidth returns s, or its beginning and end joined by an ellipsis when
// it would be wider than room at px: the picture grows for long names up
// to a point, and clips none.
func fitWidth(s string, px, room float64) string {
	keep := int(room / (0.6 * px))
	if keep < 3 {
		return s
	}
	return Shorten(s, keep)
}

// textWidth estimates the width of s in a sans-serif font of size px: a
// little more than most fonts need, so that what is sized by it is not
// clipped.
func textWidth(s string, px float64) float64 {
	return 0.6 * px * float64(len([]rune(s)))
}

// grid is the number of rows and columns of control points between the
// senders and the receivers.
const grid = 8

// bundleLimit is the most nodes the diagram draws one edge per pair for;
// beyond, pairs are aggregated into as many groups of neighbouring nodes,
// so that at 1,000 nodes the SVG holds thousands of paths, not a million.
const bundleLimit = 64

// CommDiagramSVG draws the sender/receiver diagram (Brendel et al. §V-B):
// senders on the left, receivers on the right, each edge routed through a
// grid of control points by YX routing that prefers diagonals (its rows
// change first, one diagonal step per column, then it runs straight),
// drawn as a quadratic B-spline coloured by sender, its width by messages,
// with additive blending so that shared paths glow.
func CommDiagramSVG(w io.Writer, m *comm.Matrix) error {
	n := len(m.Nodes)
	bw := bufio.NewWriter(w)
	groups := n
	if groups > bundleLimit {
		groups = bundleLimit
	}
	group := func(i int) int { return i * groups / max(n, 1) }
	type pair struct{ from, to int }
	agg := map[pair]uint64{}
	for _, c := range m.Cells {
		agg[pair{group(c.From), group(c.To)}] += c.Messages
	}
	var maxMsgs uint64
	for _, v := range agg {
		maxMsgs = max(maxMsgs, v)
	}
	const width, margin, labelW = 900.0, 24.0, 150.0
	height := math.Max(300, math.Min(1000, float64(groups)*18+2*margin+40))
	x0, x1 := margin+labelW, width-margin-labelW
	top, bottom := margin+40, height-margin
	yOf := func(g int) float64 {
		if groups == 1 {
			return (top + bottom) / 2
		}
		return top + (bottom-top)*float64(g)/float64(groups-1)
	}
	rowOf := func(y float64) int {
		r := int((y - top) / (bottom - top) * grid)
		return min(max(r, 0), grid-1)
	}
	rowY := func(r int) float64 { return top + (bottom-top)*(float64(r)+0.5)/grid }
	colX := func(c int) float64 { return x0 + (x1-x0)*(float64(c)+1)/(grid+1) }
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintln(bw, `<title>Sender/receiver diagram</title><rect width="100%" height="100%" fill="#0b0b14"/>`)
	fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="14" fill="#ddd">Senders (left) to receivers (right): edges bundled through a %d×%d grid, width by messages</text>`+"\n", margin, margin+10, grid, grid)
	label := func(g int) string {
		lo, hi := g*n/groups, (g+1)*n/groups-1
		if groups == n || lo >= hi {
			return m.Nodes[min(lo, n-1)].Name
		}
		return m.Nodes[lo].Name + " … " + m.Nodes[hi].Name
	}
	fmt.Fprintln(bw, `<g style="isolation:isolate">`)
	keys := make([]pair, 0, len(agg))
	for k := range agg {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.from < b.from || (a.from == b.from && a.to < b.to)
	})
	for _, k := range keys {
		msgs := agg[k]
		ys, yt := yOf(k.from), yOf(k.to)
		pts := [][2]float64{{x0, ys}}
		r, target := rowOf(ys), rowOf(yt)
		for c := 0; c < grid; c++ {
			pts = append(pts, [2]float64{colX(c), rowY(r)})
			switch { // YX routing: the row moves first, one diagonal step a column
			case r < target:
				r++
			case r > target:
				r--
			}
		}
		pts = append(pts, [2]float64{x1, yt})
		col := senderColour(k.from, groups)
		wd := 0.6 + 3.4*math.Sqrt(float64(msgs)/float64(max(maxMsgs, 1)))
		fmt.Fprintf(bw, `<path d="%s" fill="none" stroke="%s" stroke-width="%.2f" stroke-opacity="0.55" style="mix-blend-mode:screen"><title>%s → %s: %d messages</title></path>`+"\n",
			bspline(pts), col, wd, Esc(label(k.from)), Esc(label(k.to)), msgs)
	}
	fmt.Fprintln(bw, `</g>`)
	if groups <= 80 {
		for g := 0; g < groups; g++ {
			y := yOf(g)
			fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/><text x="%.1f" y="%.1f" text-anchor="end" fill="#ccc">%s</text>`+"\n", x0, y, senderColour(g, groups), x0-6, y+4, Esc(label(g)))
			fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="3" fill="#ccc"/><text x="%.1f" y="%.1f" fill="#ccc">%s</text>`+"\n", x1, y, x1+6, y+4, Esc(label(g)))
		}
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// senderColour spreads the senders over the hue circle.
func senderColour(i, n int) string {
	h := 360 * float64(i) / math.Max(1, float64(n))
	return fmt.Sprintf("hsl(%.0f,85%%,60%%)", h)
}

// bspline returns an SVG path of the quadratic uniform B-spline of the
// control points, clamped to the first and last: quadratic Bézier segments
// between the midpoints of consecutive control points.
func bspline(p [][2]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "M%.1f,%.1f", p[0][0], p[0][1])
	if len(p) == 2 {
		fmt.Fprintf(&b, " L%.1f,%.1f", p[1][0], p[1][1])
		return b.String()
	}
	mid := func(a, c [2]float64) [2]float64 { return [2]float64{(a[0] + c[0]) / 2, (a[1] + c[1]) / 2} }
	m := mid(p[0], p[1])
	fmt.Fprintf(&b, " L%.1f,%.1f", m[0], m[1])
	for i := 1; i < len(p)-1; i++ {
		e := mid(p[i], p[i+1])
		if i == len(p)-2 {
			e = p[i+1]
		}
		fmt.Fprintf(&b, " Q%.1f,%.1f %.1f,%.1f", p[i][0], p[i][1], e[0], e[1])
	}
	return b.String()
}

// CommTSV writes one line per communicating pair:
// <from>\t<to>\t<messages>\t<bytes>.
func CommTSV(w io.Writer, m *comm.Matrix) error {
	for _, c := range m.Cells {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%d\t%d\n", textname.Escape(m.Nodes[c.From].Name), textname.Escape(m.Nodes[c.To].Name), c.Messages, c.Bytes); err != nil {
			return err
		}
	}
	return nil
}
