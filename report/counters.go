package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/units"
)

// writeCounters writes the counters section: what was counted and how, the
// counter sums per region over all locations (inclusive / exclusive, with
// instructions per cycle where both were counted), and per location what
// its measured regions counted.
func writeCounters(p *page, r *run, prof *profile) {
	p.printf("<section id=\"counters\">\n<h2>Counters</h2>\n")
	for _, f := range r.files {
		h := &f.Header
		var facts []string
		if len(h.Metrics) > 0 {
			how := h.MetricsPath
			if how == "" {
				how = "an unrecorded path"
			}
			facts = append(facts, fmt.Sprintf("counted %s, read with %s", strings.Join(h.Metrics, ", "), how))
		}
		for _, m := range h.MetricsMissing {
			facts = append(facts, "recorded without "+m)
		}
		var mux []string
		for i := range f.Locations {
			l := &f.Locations[i]
			if l.Multiplexed {
				mux = append(mux, l.Name)
			}
			if l.CountersMissing != "" {
				facts = append(facts, fmt.Sprintf("%s read no counters: %s", l.Name, l.CountersMissing))
			}
		}
		if len(mux) > 0 {
			facts = append(facts, "multiplexed by the kernel and extrapolated on "+strings.Join(mux, ", "))
		}
		if len(facts) > 0 {
			p.printf("<p>%s: %s.</p>\n", esc(f.Path), esc(strings.Join(facts, "; ")))
		}
	}
	if len(r.metrics) == 0 {
		p.printf("<p class=\"note\">These traces hold no counters: the runs did not ask for any (HMB_METRICS, e.g. HMB_METRICS=cycles,instructions or task-clock,page-faults).</p>\n</section>\n")
		return
	}
	// Regions over all locations: the profile's total rows.
	var rows []profileRow
	for _, row := range prof.rows {
		if row.loc < 0 && row.readsAnyCounters {
			rows = append(rows, row)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].excl > rows[j].excl })
	p.printf("<p>Counter sums of the regions that read counters, over all locations: inclusive / exclusive, as for time.</p>\n")
	p.printf("<div class=\"scroll\"><table id=\"counter-table\" class=\"sortable numeric small\"><thead><tr><th>region</th>")
	for _, m := range r.metrics {
		p.printf("<th>%s incl.</th><th>%s excl.</th>", esc(m), esc(m))
	}
	if prof.ipc {
		p.printf("<th>IPC</th>")
	}
	p.printf("</tr></thead><tbody>\n")
	for _, row := range rows {
		p.printf("<tr><td>%s</td>", esc(r.regions[row.region]))
		for g := range r.metrics {
			if row.counted[g] {
				p.printf("<td data-v=\"%d\">%s</td><td data-v=\"%d\">%s</td>", row.cincl[g], units.Count(row.cincl[g]), row.cexcl[g], units.Count(row.cexcl[g]))
			} else {
				p.printf("<td data-v=\"-1\">-</td><td data-v=\"-1\">-</td>")
			}
		}
		if prof.ipc {
			p.printf("%s", ipcCell(row))
		}
		p.printf("</tr>\n")
	}
	p.printf("</tbody></table></div>\n")

	// Per location: the exclusive sums add up to what its measured regions
	// counted.
	type locSum struct {
		excl    []uint64
		counted []bool
	}
	sums := make([]locSum, len(prof.locations))
	for _, row := range prof.rows {
		if row.loc < 0 || !row.readsAnyCounters {
			continue
		}
		s := &sums[row.loc]
		if s.excl == nil {
			s.excl, s.counted = make([]uint64, len(r.metrics)), make([]bool, len(r.metrics))
		}
		for g := range r.metrics {
			if row.counted[g] {
				s.excl[g] += row.cexcl[g]
				s.counted[g] = true
			}
		}
	}
	p.printf("<details><summary>Per location: what its measured regions counted</summary>\n<div class=\"scroll\"><table class=\"sortable numeric small\"><thead><tr><th>location</th>")
	for _, m := range r.metrics {
		p.printf("<th>%s</th>", esc(m))
	}
	p.printf("</tr></thead><tbody>\n")
	for li, s := range sums {
		p.printf("<tr><td>%s</td>", esc(prof.locations[li]))
		for g := range r.metrics {
			if s.counted != nil && s.counted[g] {
				p.printf("<td data-v=\"%d\">%s</td>", s.excl[g], units.Count(s.excl[g]))
			} else {
				p.printf("<td data-v=\"-1\">-</td>")
			}
		}
		p.printf("</tr>\n")
	}
	p.printf("</tbody></table></div></details>\n</section>\n")
}

// ipcCell is the instructions per cycle of a region's inclusive counts.
func ipcCell(row profileRow) string {
	ipc, ok := row.ipc()
	if !ok {
		return "<td data-v=\"-1\">-</td>"
	}
	return fmt.Sprintf("<td data-v=\"%g\">%.2f</td>", ipc, ipc)
}
