package report

import (
	"bytes"
	"fmt"
	"html/template"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// analysisPlans are the heat map's and the dynamics' cuts of the run into
// segments, decided before the events are read.
type analysisPlans struct {
	variation *segmentPlan
	// trend is nil when the files have phase series: the dynamics are
	// made of those, and read no event.
	trend *segmentPlan
}

// planAnalyses plans the segments of r's files; the time-dominant region
// is chosen once for both when the heat map has no extra patterns.
func planAnalyses(r *run, opt Options) *analysisPlans {
	pl := variation.NewPlanner(r.files, r.procs)
	p := &analysisPlans{variation: planSegments(pl, opt.Variation.Region, opt.Variation.Sync)}
	if !phased(r.files) {
		// trend.Analyze cuts its segments without the extra patterns.
		p.trend = planSegments(pl, opt.Dynamics.Region, filter.Patterns{})
	}
	return p
}

func (p *analysisPlans) segmentPlans() []*segmentPlan {
	if p.trend == nil {
		return []*segmentPlan{p.variation}
	}
	return []*segmentPlan{p.variation, p.trend}
}

// phased reports whether a location of files has a phase series, of which
// trend.Analyze makes the dynamics.
func phased(files []*tracefile.File) bool {
	for _, f := range files {
		for i := range f.Locations {
			if f.Locations[i].Phase != nil {
				return true
			}
		}
	}
	return false
}

// analyses renders the sections of the other packages' analyses: the
// variation heat map, the dynamics findings and the communication views.
// An analysis that these traces do not allow says why in its section.
func analyses(r *run, opt Options, plans *analysisPlans) [][]byte {
	return [][]byte{variationSection(r, opt, plans), dynamicsSection(r, opt, plans), commSection(r, opt)}
}

// execTo writes the page template's part name with data to b. Its data
// are of the template's types, and b takes any length, so it does not fail
// but by a mistake in the template, which TestGolden of cmd/hmbtrace and
// the tests of this package show.
func execTo(b *bytes.Buffer, name string, data any) {
	if err := pageTemplate.ExecuteTemplate(b, name, data); err != nil {
		fmt.Fprintf(b, "<p class=\"note unavailable\">%s</p>\n", template.HTMLEscapeString(err.Error()))
	}
}

// section starts a section's HTML.
func section(id, title, intro string) *bytes.Buffer {
	var b bytes.Buffer
	execTo(&b, "section-head", struct{ ID, Title, Intro string }{id, title, intro})
	return &b
}

func unavailable(b *bytes.Buffer, what string, err error) []byte {
	execTo(b, "unavailable", struct{ What, Err string }{what, render.ErrorText(err)})
	return b.Bytes()
}

// figure writes an SVG drawn by write, inlined.
func figure(b *bytes.Buffer, id, alt string, write func(*bytes.Buffer) error) error {
	var svg bytes.Buffer
	if err := write(&svg); err != nil {
		return err
	}
	execTo(b, "figure", struct {
		ID  string
		SVG template.HTML
	}{id, inlineSVG(svg.Bytes(), id, alt)})
	return nil
}

func variationSection(r *run, _ Options, plans *analysisPlans) []byte {
	b := section("variation", "Variation", "The run cut into segments at the invocations of one region, each coloured by its synchronization-oblivious segment time (Weber et al.): hot segments took longer than the others without waiting for anyone.")
	p := plans.variation
	if p.err != nil {
		return unavailable(b, "variation heat map", p.err)
	}
	v, err := p.set.variation(p.plan, r.files)
	if err != nil {
		return unavailable(b, "variation heat map", err)
	}
	names := r.analysisNames()
	for i := range v.Rows {
		if name, ok := names[v.Rows[i].Label]; ok {
			v.Rows[i].Label = name
		}
	}
	if g := p.set.groupText(); g != "" {
		execTo(b, "note", g)
	}
	drawn := v
	if g := r.groups; g != nil {
		drawn = g.variation(r, v)
		execTo(b, "note", "The heat map shows the "+g.text()+": a group's segment spans its members' segments of the same invocation that overlap in time, coloured by the hottest of them; the list below names the locations.")
	}
	if err := figure(b, "variation-heatmap", "hot/cold view", func(w *bytes.Buffer) error { return render.VariationSVG(w, drawn) }); err != nil {
		return unavailable(b, "variation heat map", err)
	}
	variationFindings(b, v, 20)
	b.WriteString("</section>\n")
	return b.Bytes()
}

func dynamicsSection(r *run, opt Options, plans *analysisPlans) []byte {
	b := section("dynamics", "Dynamics", "How the run changes over its iterations: peaks, dips, steps and trends per region, location and metric, worst degradations first (Oleynik, chapter 6).")
	res, err := dynamicsOf(r, opt, plans.trend)
	if err != nil {
		return unavailable(b, "dynamics findings", err)
	}
	names := r.analysisNames()
	for _, s := range res.Series {
		if name, ok := names[s.Location]; ok {
			s.Location = name
		}
	}
	dynamicsFindings(b, res, opt.Findings)
	if len(res.Findings) > 0 {
		if err := figure(b, "dynamics-series", "series with the worst findings", func(w *bytes.Buffer) error { return render.DynamicsSVG(w, res, min(opt.Findings, 6)) }); err != nil {
			return unavailable(b, "dynamics plot", err)
		}
	}
	b.WriteString("</section>\n")
	return b.Bytes()
}

// dynamicsOf makes the dynamics of the phase series when p is nil, else of
// p's segments.
func dynamicsOf(r *run, opt Options, p *segmentPlan) (*trend.Result, error) {
	topt := opt.Dynamics
	topt.Procs = r.procs
	if p == nil {
		return trend.Analyze(r.files, topt)
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.set.trend(p.plan, r.files, topt)
}

func commSection(r *run, _ Options) []byte {
	b := section("communication", "Communication", "Who sent what to whom, counted at the sender: the matrix of messages per sender and receiver, and the sender/receiver diagram (Brendel et al.), whose edges share paths so that heavy traffic glows.")
	m, err := comm.FromFilesProcs(r.files, r.procs)
	if err != nil {
		return unavailable(b, "communication views", err)
	}
	msgs, nbytes := m.Totals()
	if len(m.Cells) == 0 {
		execTo(b, "comm-none", struct {
			Nodes int
			Shed  string
		}{len(m.Nodes), shedMessages(r, m)})
		return b.Bytes()
	}
	head := struct {
		Nodes, Pairs          int
		Messages, Bytes, Shed string
		Unmatched             string
	}{Nodes: len(m.Nodes), Pairs: len(m.Cells), Messages: units.Count(msgs), Bytes: units.Size(float64(nbytes)), Shed: strings.TrimSpace(shedMessages(r, m))}
	if m.Unmatched > 0 {
		head.Unmatched = units.Count(m.Unmatched)
	}
	execTo(b, "comm-head", head)
	drawn := m
	if g := r.groups; g != nil {
		drawn = g.matrix(r, m)
		execTo(b, "note", "The matrix and the diagram show the "+g.text()+": a cell sums what one group's locations sent the other's; the pairs below are locations.")
	}
	b.WriteString("<div class=\"pair\">")
	if err := figure(b, "comm-matrix", "communication matrix", func(w *bytes.Buffer) error { return render.CommMatrixSVG(w, drawn, comm.Messages) }); err != nil {
		return unavailable(b, "communication matrix", err)
	}
	if err := figure(b, "comm-diagram", "sender/receiver diagram", func(w *bytes.Buffer) error { return render.CommDiagramSVG(w, drawn) }); err != nil {
		return unavailable(b, "sender/receiver diagram", err)
	}
	b.WriteString("</div>\n")
	cells := append([]comm.Cell(nil), m.Cells...)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Bytes > cells[j].Bytes })
	type pair struct {
		From, To                          string
		Messages, Bytes                   uint64
		Mean                              string
		MessagesText, BytesText, MeanText string
	}
	var pairs struct {
		Top   int
		Cells []pair
	}
	const shown = 50
	if len(cells) > shown {
		pairs.Top = shown
		cells = cells[:shown]
	}
	for _, c := range cells {
		mean := float64(c.Bytes) / float64(max(c.Messages, 1))
		pairs.Cells = append(pairs.Cells, pair{m.Nodes[c.From].Name, m.Nodes[c.To].Name, c.Messages, c.Bytes, fmt.Sprintf("%g", mean),
			units.Count(c.Messages), units.Count(c.Bytes), units.Size(mean)})
	}
	execTo(b, "comm-pairs", pairs)
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

// analysisNames maps the analyses' names of the locations ("1:rank 1") to
// the page's ("rank 1"), so that the page names each location one way.
func (r *run) analysisNames() map[string]string {
	m := map[string]string{}
	for _, ref := range variation.Locations(r.files) {
		m[ref.Label] = r.label(ref.File, ref.Location)
	}
	return m
}
