package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/units"
)

// writeCounters writes the counters section: what was counted and how, the
// counter sums per region over all locations (inclusive / exclusive, with
// instructions per cycle where both were counted), and per location what
// its measured regions counted.
func writeCounters(p *page, r *run, prof *profile) {
	type fileNote struct{ Path, Facts string }
	type cell struct{ V, Text string }
	type row struct {
		Name  string
		Cells []cell
	}
	var data struct {
		Files              []fileNote
		Metrics            []string
		IPC                bool
		Regions, Locations []row
	}
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
			data.Files = append(data.Files, fileNote{f.Path, strings.Join(facts, "; ")})
		}
	}
	if r.groups != nil {
		// Many files say the same: once for each run of them.
		var names, texts []string
		for _, fn := range data.Files {
			names, texts = append(names, filepath.Base(fn.Path)), append(texts, fn.Facts)
		}
		names, texts = mergeRuns(names, texts)
		data.Files = data.Files[:0]
		for i := range names {
			data.Files = append(data.Files, fileNote{names[i], texts[i]})
		}
	}
	data.Metrics, data.IPC = r.metrics, prof.ipc
	if len(r.metrics) == 0 {
		p.execute("counters", data)
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
	for _, pr := range rows {
		rw := row{Name: r.regions[pr.region]}
		for g := range r.metrics {
			if pr.counted[g] {
				rw.Cells = append(rw.Cells, cell{fmt.Sprint(pr.cincl[g]), units.Count(pr.cincl[g])}, cell{fmt.Sprint(pr.cexcl[g]), units.Count(pr.cexcl[g])})
			} else {
				rw.Cells = append(rw.Cells, cell{"-1", "-"}, cell{"-1", "-"})
			}
		}
		if prof.ipc {
			if ipc, ok := pr.ipc(); ok {
				rw.Cells = append(rw.Cells, cell{fmt.Sprintf("%g", ipc), fmt.Sprintf("%.2f", ipc)})
			} else {
				rw.Cells = append(rw.Cells, cell{"-1", "-"})
			}
		}
		data.Regions = append(data.Regions, rw)
	}

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
	for li, sum := range sums {
		rw := row{Name: prof.locations[li]}
		for g := range r.metrics {
			if sum.counted != nil && sum.counted[g] {
				rw.Cells = append(rw.Cells, cell{fmt.Sprint(sum.excl[g]), units.Count(sum.excl[g])})
			} else {
				rw.Cells = append(rw.Cells, cell{"-1", "-"})
			}
		}
		data.Locations = append(data.Locations, rw)
	}
	p.execute("counters", data)
}
