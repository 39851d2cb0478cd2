package report

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// analyses renders the sections of the other packages' analyses: the
// variation heat map, the dynamics findings and the communication views.
// An analysis that these traces do not allow says why in its section.
func analyses(r *run, opt Options) [][]byte {
	var out [][]byte
	for _, s := range []func(*run, Options) []byte{variationSection, dynamicsSection, commSection} {
		out = append(out, s(r, opt))
	}
	return out
}

// section starts a section's HTML.
func section(id, title, intro string) *bytes.Buffer {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<section id=\"%s\">\n<h2>%s</h2>\n", id, esc(title))
	if intro != "" {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(intro))
	}
	return &b
}

func unavailable(b *bytes.Buffer, what string, err error) []byte {
	fmt.Fprintf(b, "<p class=\"note unavailable\">No %s for these traces: %s</p>\n</section>\n", esc(what), esc(err.Error()))
	return b.Bytes()
}

// figure writes an SVG drawn by write, inlined.
func figure(b *bytes.Buffer, id, alt string, write func(*bytes.Buffer) error) error {
	var svg bytes.Buffer
	if err := write(&svg); err != nil {
		return err
	}
	fmt.Fprintf(b, "<div class=\"figure scroll\" id=\"%s\">", id)
	b.Write(inlineSVG(svg.Bytes(), id, alt))
	b.WriteString("</div>\n")
	return nil
}

// text writes a package's text output as preformatted text.
func text(b *bytes.Buffer, write func(*bytes.Buffer) error) error {
	var t bytes.Buffer
	if err := write(&t); err != nil {
		return err
	}
	fmt.Fprintf(b, "<pre>%s</pre>\n", esc(t.String()))
	return nil
}

func variationSection(r *run, opt Options) []byte {
	b := section("variation", "Variation", "The run cut into segments at the invocations of one region, each coloured by its synchronization-oblivious segment time (Weber et al.): hot segments took longer than the others without waiting for anyone.")
	v, err := variation.Analyze(r.files, opt.Variation)
	if err != nil {
		return unavailable(b, "variation heat map", err)
	}
	if err := figure(b, "variation-heatmap", "hot/cold view", func(w *bytes.Buffer) error { return render.VariationSVG(w, v) }); err != nil {
		return unavailable(b, "variation heat map", err)
	}
	if err := text(b, func(w *bytes.Buffer) error { return render.VariationText(w, v, variation.DefaultMinScore, 20) }); err != nil {
		return unavailable(b, "variation report", err)
	}
	b.WriteString("</section>\n")
	return b.Bytes()
}

func dynamicsSection(r *run, opt Options) []byte {
	b := section("dynamics", "Dynamics", "How the run changes over its iterations: peaks, dips, steps and trends per region, location and metric, worst degradations first (Oleynik, chapter 6).")
	res, err := trend.Analyze(r.files, opt.Dynamics)
	if err != nil {
		return unavailable(b, "dynamics findings", err)
	}
	if err := text(b, func(w *bytes.Buffer) error { return render.DynamicsText(w, res, opt.Findings) }); err != nil {
		return unavailable(b, "dynamics findings", err)
	}
	if len(res.Findings) > 0 {
		if err := figure(b, "dynamics-series", "series with the worst findings", func(w *bytes.Buffer) error { return render.DynamicsSVG(w, res, min(opt.Findings, 6)) }); err != nil {
			return unavailable(b, "dynamics plot", err)
		}
	}
	b.WriteString("</section>\n")
	return b.Bytes()
}

func commSection(r *run, _ Options) []byte {
	b := section("communication", "Communication", "Who sent what to whom, counted at the sender: the matrix of messages per sender and receiver, and the sender/receiver diagram (Brendel et al.), whose edges share paths so that heavy traffic glows.")
	m, err := comm.FromFiles(r.files)
	if err != nil {
		return unavailable(b, "communication views", err)
	}
	msgs, nbytes := m.Totals()
	if len(m.Cells) == 0 {
		fmt.Fprintf(b, "<p class=\"note\">No messages between the %d locations of these traces.%s</p>\n</section>\n", len(m.Nodes), shedMessages(r, m))
		return b.Bytes()
	}
	fmt.Fprintf(b, "<p>%d locations, %d communicating pairs, %s messages, %s.</p>\n", len(m.Nodes), len(m.Cells), units.Count(msgs), esc(units.Size(float64(nbytes))))
	if s := shedMessages(r, m); s != "" {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", esc(strings.TrimSpace(s)))
	}
	if m.Unmatched > 0 {
		fmt.Fprintf(b, "<p class=\"note\">%s messages name a peer that is not in these files.</p>\n", units.Count(m.Unmatched))
	}
	b.WriteString("<div class=\"pair\">")
	if err := figure(b, "comm-matrix", "communication matrix", func(w *bytes.Buffer) error { return render.CommMatrixSVG(w, m, comm.Messages) }); err != nil {
		return unavailable(b, "communication matrix", err)
	}
	if err := figure(b, "comm-diagram", "sender/receiver diagram", func(w *bytes.Buffer) error { return render.CommDiagramSVG(w, m) }); err != nil {
		return unavailable(b, "sender/receiver diagram", err)
	}
	b.WriteString("</div>\n")
	cells := append([]comm.Cell(nil), m.Cells...)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Bytes > cells[j].Bytes })
	const shown = 50
	if len(cells) > shown {
		fmt.Fprintf(b, "<p>The %d pairs that exchange the most bytes:</p>\n", shown)
		cells = cells[:shown]
	}
	b.WriteString("<table class=\"sortable numeric small\"><thead><tr><th>from</th><th>to</th><th>messages</th><th>bytes</th><th>mean size</th></tr></thead><tbody>\n")
	for _, c := range cells {
		mean := float64(c.Bytes) / float64(max(c.Messages, 1))
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td data-v=\"%d\">%s</td><td data-v=\"%d\">%s</td><td data-v=\"%g\">%s</td></tr>\n",
			esc(m.Nodes[c.From].Name), esc(m.Nodes[c.To].Name), c.Messages, units.Count(c.Messages), c.Bytes, units.Count(c.Bytes), mean, esc(units.Size(mean)))
	}
	b.WriteString("</tbody></table>\n</section>\n")
	return b.Bytes()
}

// shedMessages says how many message events the buffers removed, if any,
// and whether the matrix still counts their messages: it does for senders
// whose files hold an exact matrix, not for those counted from events.
func shedMessages(r *run, m *comm.Matrix) string {
	var n uint64
	for _, f := range r.files {
		for i := range f.Locations {
			for _, lv := range f.Locations[i].Levels {
				if lv.Class == tracefile.ClassMessage {
					n += lv.Removed().Total()
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	if m.Counted == 0 {
		return fmt.Sprintf(" The buffer shed %s message events (%s sends among them): they are not in the trace, but the matrix counts their messages, exactly, as they were taken at the probe.",
			units.Count(n), units.Count(m.Shed))
	}
	return fmt.Sprintf(" The buffer shed %s message events: they are not in the trace, and %d of %d senders are counted from the events kept (their files have no exact matrix), so their cells miss those messages.",
		units.Count(n), m.Counted, m.Counted+m.Exact)
}
