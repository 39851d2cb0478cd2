package report

import (
	"bufio"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

//go:embed assets/report.css
var css string

//go:embed assets/report.js
var script string

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
}

// Write writes the report of files as one self-contained HTML page: the run's
// facts, the profile, the timeline, the variation heat map, the dynamics
// findings, the communication views and the counters. It reads every event
// of every location a few times (timeline, variation, dynamics,
// communication). An analysis that cannot be made of these traces (no
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
	r := newRun(files)
	tl, err := buildTimeline(r, opt.MaxIntervals, opt.MaxCells)
	if err != nil {
		return err
	}
	prof := newProfile(r)
	sections := analyses(r, opt)

	bw := bufio.NewWriterSize(w, 1<<16)
	p := &page{w: bw}
	writeHead(p, r, opt)
	writeFacts(p, r)
	writeProfileSection(p)
	writeTimelineSection(p, tl)
	for _, s := range sections {
		p.write(s)
	}
	writeCounters(p, r, prof)
	writeData(p, r, prof, tl)
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
		title = "hmbtrace report: " + strings.Join(names, ", ")
	}
	locations := 0
	for _, f := range r.files {
		locations += len(f.Locations)
	}
	p.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	p.printf("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p.printf("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(title), css)
	p.printf("<header>\n<h1>%s</h1>\n<p class=\"lead\">%d trace file%s, %d locations, %s of run, written %s by hmbtrace report.</p>\n",
		esc(title), len(r.files), plural(len(r.files)), locations, esc(units.Duration(float64(r.span))), esc(opt.Now.Format("2006-01-02 15:04:05 MST")))
	p.printf("<nav>")
	for _, s := range []struct{ id, name string }{{"facts", "Run"}, {"profile", "Profile"}, {"timeline", "Timeline"},
		{"variation", "Variation"}, {"dynamics", "Dynamics"}, {"communication", "Communication"}, {"counters", "Counters"}} {
		p.printf("<a href=\"#%s\">%s</a> ", s.id, s.name)
	}
	p.printf("</nav>\n<noscript><p class=\"note\">The profile table and the timeline need JavaScript.</p></noscript>\n</header>\n")
}

// writeProfileSection writes the profile's frame; the script fills the
// table from the page's data.
func writeProfileSection(p *page) {
	p.printf("<section id=\"profile\">\n<h2>Profile</h2>\n")
	p.printf("<p>The exact flat profile: every call the probes saw, including those the buffer shed. Inclusive time counts a recursion once; %% is of the location's run (of all locations' runs for the total). Click a column to sort.</p>\n")
	p.printf("<p><label>Location <select id=\"profile-location\"></select></label></p>\n")
	p.printf("<div class=\"scroll\"><table id=\"profile-table\" class=\"sortable numeric\"></table></div>\n</section>\n")
}

// writeTimelineSection writes the timeline's frame: its help, toolbar,
// canvas, legend and what the budget left out; the script draws it.
func writeTimelineSection(p *page, tl *timeline) {
	p.printf("<section id=\"timeline\">\n<h2>Timeline</h2>\n")
	p.printf("<p>Each location's calls by calling depth. Wheel or the buttons zoom, dragging pans, hovering names what is under the pointer. Calls at least %s long are drawn one by one; shorter ones are summed per column into tiles coloured by the region that spent the most time there (fainter where they cover less of it). Hatched stretches are where the buffer shed events. A link to the page ending in #zoom=8&amp;at=0.25 opens it on an eighth of the run around its first quarter.</p>\n",
		esc(units.Duration(tl.ExactMin)))
	p.printf("<div class=\"tl-toolbar\"><button type=\"button\" id=\"tl-out\" title=\"zoom out\">&minus;</button><button type=\"button\" id=\"tl-in\" title=\"zoom in\">+</button><button type=\"button\" id=\"tl-reset\">whole run</button> <span id=\"tl-status\"></span></div>\n")
	p.printf("<div class=\"tl-wrap\" id=\"tl-wrap\"><canvas id=\"tl-canvas\" width=\"800\" height=\"200\"></canvas><div id=\"tl-tip\" hidden></div></div>\n")
	p.printf("<p class=\"tl-legend\"><span class=\"hatch closed\"></span> depth closed: dropped at the probe from then on <span class=\"hatch revoked\"></span> revoked when the depth closed <span class=\"hatch window\"></span> before the keep-last window <span class=\"hatch stopped\"></span> recording stopped (keep first) <span class=\"trunc-key\"></span> entered before the window <span class=\"open-key\"></span> never left</p>\n")
	for _, o := range tl.Omitted {
		p.printf("<p class=\"note\">%s</p>\n", esc(o))
	}
	p.printf("<div id=\"tl-notes\"></div>\n</section>\n")
}

// writeData writes the self-check's place, the data the script reads (the
// regions, the profile and the timeline's metadata as JSON, the timeline's
// encoding in base64) and the script.
func writeData(p *page, r *run, prof *profile, tl *timeline) {
	p.printf("<pre id=\"selfcheck\" hidden></pre>\n")
	meta, err := json.Marshal(tl)
	if err != nil && p.err == nil {
		p.err = err
	}
	data := append([]byte(`{"regions":`), appendStrings(nil, r.regions)...)
	data = append(data, `,"profile":`...)
	data = prof.appendJSON(data)
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

func (p *page) write(b []byte) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

func esc(s string) string { return html.EscapeString(s) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
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
