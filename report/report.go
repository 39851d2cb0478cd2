package report

import (
	"bufio"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

//go:embed assets/report.css
var css string

//go:embed assets/report.js
var script string

//go:embed assets/page.tmpl
var pageText string

// pageTemplate holds the page's frame and the run's facts; html/template
// escapes what they show by its context.
var pageTemplate = template.Must(template.New("page").Parse(pageText))

// Options tune the report. The zero value means the defaults.
type Options struct {
	// Title heads the page; "" names it after the traces.
	Title string
	// Variation says how the variation heat map cuts the run into segments.
	Variation variation.Options
	// Dynamics tunes the dynamics findings.
	Dynamics trend.Options
	// Findings is how many dynamics findings to list; 0 means 10.
	Findings int
	// MaxIntervals bounds the calls the timeline keeps one by one, over
	// all rows; shorter calls are summed into tiles. 0 means
	// DefaultMaxIntervals.
	MaxIntervals int
	// MaxCells bounds the tiles of the timeline's finest level, over all
	// rows; it also sets how many rows (location depths) are drawn at
	// most: MaxCells/256. 0 means DefaultMaxCells.
	MaxCells int
	// Now stamps the page; the zero time means time.Now.
	Now time.Time
	// Rows is how many timeline rows (a location's calling depths) the
	// page draws before it draws consecutive ranks (or the locations of
	// one file) in groups; 0 means DefaultRows. The profile, the heat map,
	// the communication views and the tables per location then show the
	// groups as well.
	Rows int
	// Procs is the number of workers reading the locations and making the
	// analyses, in place of Variation.Procs and Dynamics.Procs; 0 means
	// HMB_TOOL_PROCS, else GOMAXPROCS. The page is the same for any.
	Procs int
}

// Write writes the report of files as one self-contained HTML page: the run's
// facts, the profile, the timeline, the variation heat map, the dynamics
// findings, the communication views and the counters. It reads every event
// of every location once for the timeline, the heat map and the dynamics
// together, on Options.Procs workers (and again for the communication matrix
// of files without an exact one, and for the choice of the time-dominant
// region when a candidate's waiting must be measured); the memory it takes
// is bounded by the timeline's budget and the segments' (segments.go),
// not by the events. An analysis that cannot be made of these traces (no
// iterations, no messages) says so in its section; an unreadable trace is an
// error.
func Write(w io.Writer, files []*tracefile.File, opt Options) error {
	if len(files) == 0 {
		return errors.New("no trace files")
	}
	if opt.MaxIntervals <= 0 {
		opt.MaxIntervals = DefaultMaxIntervals
	}
	if opt.MaxCells <= 0 {
		opt.MaxCells = DefaultMaxCells
	}
	if opt.Findings <= 0 {
		opt.Findings = 10
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	procs, err := parallel.Procs(opt.Procs)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r, err := newRun(files)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r.procs = procs
	if opt.Rows <= 0 {
		opt.Rows = DefaultRows
	}
	r.groups = planGroups(r, opt.Rows)
	plans := planAnalyses(r, opt)
	// The wait states first: what their replay holds is garbage before
	// the timeline's pass builds its own.
	waits, werr := waitsOf(r)
	tl, err := readAll(r, planTimeline(r, opt.MaxIntervals, opt.MaxCells), plans.segmentPlans())
	if err != nil {
		return err
	}
	prof := newProfile(r)
	tree := newCallTree(r, r.trees, func(fi, k int) int { return prof.unitOf[fi][k] }, waits)
	sections := analyses(r, opt, plans)

	bw := bufio.NewWriterSize(w, 1<<16)
	p := &page{w: bw}
	writeHead(p, r, opt)
	writeFacts(p, r, waits)
	writeProfileSection(p, r, tree)
	writeTimelineSection(p, r, tl, opt)
	p.write(waitSection(r, waits, werr, opt.Findings))
	for _, s := range sections {
		p.write(s)
	}
	writeCounters(p, r, prof)
	writeData(p, r, prof, tree, tl)
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

// writeHead writes the document's head with the style sheet, and the page's
// header: title, what it covers, the sections.
func writeHead(p *page, r *run, opt Options) {
	title := opt.Title
	if title == "" {
		var names []string
		for _, f := range r.files {
			names = append(names, filepath.Base(f.Path))
		}
		if len(names) > 3 {
			// Named by its first and last file, as long for 10⁴ as for 3.
			names = []string{fmt.Sprintf("%s … %s (%d files)", names[0], names[len(names)-1], len(names))}
		}
		title = "hmbtrace report: " + strings.Join(names, ", ")
	}
	locations := 0
	for _, f := range r.files {
		locations += len(f.Locations)
	}
	type link struct{ ID, Name string }
	p.execute("head", struct {
		Title            string
		CSS              template.CSS
		Files, Locations int
		Span, Stamp      string
		Nav              []link
	}{title, template.CSS(css), len(r.files), locations, units.Duration(float64(r.span)), opt.Now.Format("2006-01-02 15:04:05 MST"),
		[]link{{"facts", "Run"}, {"profile", "Profile"}, {"timeline", "Timeline"}, {"waitstates", "Wait states"},
			{"variation", "Variation"}, {"dynamics", "Dynamics"}, {"communication", "Communication"}, {"counters", "Counters"}}})
}

// writeProfileSection writes the profile's frame and says where its call
// tree comes from; the script fills the panes and the table from the page's
// data.
func writeProfileSection(p *page, r *run, tree *callTree) {
	data := struct{ Over, Source string }{Over: "processes and threads"}
	if len(r.files) == 1 {
		data.Over = "locations"
	}
	if r.groups != nil {
		data.Over = "groups of ranks"
	}
	switch {
	case tree.locations == 0:
		data.Source = "No location has calls."
	case tree.exact == tree.locations:
		data.Source = "The call tree is the exact call-path profile the measurement kept (HMB_CALLPATHS): every call, including those the buffer shed."
	case tree.exact > 0:
		data.Source = fmt.Sprintf("The call tree is the exact call-path profile on %d of the %d locations (HMB_CALLPATHS); on the others it is made of the calls the trace kept, without those the buffer shed (the flat profile below has them).", tree.exact, tree.locations)
	default:
		data.Source = "The call tree is made of the calls the trace kept: those the buffer shed are not in it (the flat profile below counts them; HMB_CALLPATHS=1 keeps the exact call-path profile)."
	}
	if tree.omitted > 0 {
		data.Source += fmt.Sprintf(" %s calls on paths beyond the %d a location's tree holds are counted in their caller's path.", units.Count(tree.omitted), maxPathsPerLocation)
	}
	p.execute("profile", data)
}

// writeTimelineSection writes the timeline's frame: its help, toolbar,
// canvas, legend and what the budget left out; the script draws it.
func writeTimelineSection(p *page, r *run, tl *timeline, opt Options) {
	type key struct{ Name, Color string }
	data := struct {
		ExactMin              string
		Omitted               []string
		Grouped               string
		Kinds                 []key
		Messages, Collectives bool
		Late                  bool // a late sender's message is drawn
		// The buffer's marks drawn, by kind, and the ends of calls.
		Marks           map[string]bool
		Truncated, Open bool
	}{ExactMin: units.Duration(tl.ExactMin), Omitted: tl.Omitted, Messages: len(tl.Messages) > 0, Collectives: len(tl.Collectives) > 0}
	data.Marks = map[string]bool{}
	for _, row := range tl.Rows {
		for _, m := range row.Marks {
			data.Marks[m.Kind] = true
		}
	}
	data.Truncated, data.Open = tl.truncated, tl.open
	if r.groups != nil {
		// A group's row draws no marks of its own: name them all.
		for _, k := range []string{"closed", "revoked", "window", "stopped"} {
			data.Marks[k] = true
		}
		data.Truncated, data.Open = true, true
	}
	for m := 2; m < len(tl.Messages); m += 4 {
		data.Late = data.Late || tl.Messages[m] < 0
	}
	// The legend names the paradigms the run has, in their order.
	var has [numKinds]bool
	for _, k := range r.kinds {
		has[k] = true
	}
	for k, info := range kindInfo {
		if has[k] {
			data.Kinds = append(data.Kinds, key{info.Name, info.Color})
		}
	}
	if g := r.groups; g != nil {
		data.Grouped = g.text() + "; -rows N to change (hmbtrace report draws up to N rows, here " + fmt.Sprint(opt.Rows) + ", before it groups). " +
			"A group's row shows per tile the region most of its members spent the most time in; the tooltip says how many of them did."
	}
	p.execute("timeline", data)
}

// writeData writes the self-check's place, the data the script reads (the
// regions, the profile and the timeline's metadata as JSON, the timeline's
// encoding in base64) and the script.
func writeData(p *page, r *run, prof *profile, tree *callTree, tl *timeline) {
	p.printf("<pre id=\"selfcheck\" hidden></pre>\n")
	meta, err := json.Marshal(tl)
	if err != nil && p.err == nil {
		p.err = err
	}
	data := append([]byte(`{"regions":`), appendStrings(nil, r.regions)...)
	data = append(data, `,"short":[`...)
	for i, f := range shortForms(r.regions) {
		if i > 0 {
			data = append(data, ',')
		}
		data = appendStrings(data, f)
	}
	data = append(data, ']')
	data = append(data, `,"kinds":[`...)
	for i, k := range r.kinds {
		if i > 0 {
			data = append(data, ',')
		}
		data = strconv.AppendInt(data, int64(k), 10)
	}
	data = append(data, `],"paradigms":`...)
	kinds, _ := json.Marshal(kindInfo) // names and colours always marshal
	data = append(data, kinds...)
	data = append(data, `,"profile":`...)
	data = prof.appendJSON(data)
	data = append(data, `,"tree":`...)
	data = tree.appendJSON(data)
	data = append(data, `,"timeline":`...)
	data = append(data, meta...)
	data = append(data, '}')
	p.printf("<script type=\"application/json\" id=\"report-data\">")
	p.write(data)
	p.printf("</script>\n<script type=\"application/octet-stream\" id=\"timeline-data\">")
	if p.err == nil {
		enc := base64.NewEncoder(base64.StdEncoding, p.w)
		if _, err := enc.Write(tl.data); err != nil {
			p.err = err
		} else if err := enc.Close(); err != nil {
			p.err = err
		}
	}
	p.printf("</script>\n<script>\n%s</script>\n</body>\n</html>\n", script)
}

// page writes HTML and keeps the first error.
type page struct {
	w   *bufio.Writer
	err error
}

func (p *page) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// execute writes the page template's part name with data.
func (p *page) execute(name string, data any) {
	if p.err == nil {
		p.err = pageTemplate.ExecuteTemplate(p.w, name, data)
	}
}

func (p *page) write(b []byte) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

// appendStrings appends a JSON array of strings that is safe inside a
// <script> element: encoding/json escapes <, > and &.
func appendStrings(b []byte, s []string) []byte {
	if s == nil {
		s = []string{}
	}
	j, _ := json.Marshal(s) // strings always marshal
	return append(b, j...)
}

// shortWidths are the widths, in characters, of the shortened region
// names the timeline draws in a call too narrow for the whole name: the
// widest that fits, else the last cut at its end.
var shortWidths = []int{64, 40, 24}

// maxShortRegions bounds the regions whose shortened names the page
// carries: past it, the timeline cuts names at their end.
const maxShortRegions = 1 << 16

// shortForms returns the regions' names shortened to each of shortWidths
// as summary and score shorten them (textname.Distinct: the function's
// own name kept, different names shown differently), or none past
// maxShortRegions.
func shortForms(regions []string) [][]string {
	if len(regions) > maxShortRegions {
		return nil
	}
	out := make([][]string, len(shortWidths))
	for i, w := range shortWidths {
		out[i] = textname.Distinct(regions, w)
	}
	return out
}
