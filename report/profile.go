package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// profile is the exact flat profile for the page's sortable table: one row
// per location and region, and one per region over all locations.
type profile struct {
	metrics   []string
	ipc       bool // instructions and cycles were both counted
	locations []string
	times     []int64 // per location: the run's length, ns
	total     int64   // location-time of all locations, ns
	rows      []profileRow
	// all is the number of locations when locations are groups of them
	// (groups.go), else 0.
	all int
	// units place the locations (or groups) in the system tree: host,
	// process, and the location's own name under it; unitOf is the
	// location index of each file's locations.
	units  []systemUnit
	unitOf [][]int
}

// systemUnit is a leaf of the system tree as Cube has it (machine, node,
// process, thread): here host, process and location.
type systemUnit struct {
	Host string `json:"host"`
	Proc string `json:"proc"`
	Name string `json:"name"`
}

// profileRow is one region on one location (loc -1: all locations).
type profileRow struct {
	loc, region      int
	visits           uint64
	incl, excl       int64 // ns
	cincl, cexcl     []uint64
	counted          []bool // per metric: the location's file counted it
	readsAnyCounters bool
	// Instructions and cycles, inclusive, of the locations that counted
	// both: instructions per cycle is their ratio.
	ipcInstructions, ipcCycles uint64
}

// ipc returns the row's instructions per cycle, false when it has none.
func (r *profileRow) ipc() (float64, bool) {
	if r.ipcCycles == 0 {
		return 0, false
	}
	return float64(r.ipcInstructions) / float64(r.ipcCycles), true
}

func newProfile(r *run) *profile {
	p := &profile{metrics: r.metrics}
	has := map[string]bool{}
	for _, m := range r.metrics {
		has[m] = true
	}
	p.ipc = has["instructions"] && has["cycles"]
	ins, cyc := slices.Index(r.metrics, "instructions"), slices.Index(r.metrics, "cycles")
	totals := map[int]*profileRow{}
	var order []int
	nm := len(r.metrics)
	// A run drawn in groups has a row per group and region, its members'
	// sums, and a group's time is its members' (groups.go).
	var groupRows map[[2]int]int
	if g := r.groups; g != nil {
		groupRows = map[[2]int]int{}
		for _, f := range r.files {
			p.all += len(f.Locations)
		}
		for _, gr := range g.groups {
			p.locations = append(p.locations, fmt.Sprintf("%s (%d locations, summed)", gr.label, len(gr.members)))
			p.times = append(p.times, 0)
			p.units = append(p.units, systemUnit{Proc: fmt.Sprintf("%s (%d locations)", gr.label, len(gr.members))})
		}
	}
	p.unitOf = make([][]int, len(r.files))
	for fi, f := range r.files {
		dur := f.Duration()
		p.unitOf[fi] = make([]int, len(f.Locations))
		for k := range f.Locations {
			l := &f.Locations[k]
			li := len(p.locations)
			if r.groups != nil {
				li = r.groups.of[fi][k]
				p.times[li] += dur
			} else {
				p.locations = append(p.locations, r.label(fi, l))
				p.times = append(p.times, dur)
				u := systemUnit{Host: f.Header.Host, Proc: r.label(fi, l)}
				if len(r.files) > 1 || r.byFile {
					u.Proc, u.Name = r.group(fi), r.ownName(fi, l)
					if len(f.Locations) == 1 {
						u.Name = ""
					}
				}
				p.units = append(p.units, u)
			}
			p.unitOf[fi][k] = li
			p.total += dur
			for _, e := range l.Profile {
				row := profileRow{loc: li, region: r.region(fi, e.Region), visits: e.Visits,
					incl: f.TicksToNanos(e.Inclusive), excl: f.TicksToNanos(e.Exclusive)}
				if len(e.CounterInclusive) > 0 && nm > 0 {
					row.readsAnyCounters = true
					row.cincl, row.cexcl, row.counted = make([]uint64, nm), make([]uint64, nm), make([]bool, nm)
					for i, v := range e.CounterInclusive {
						if i >= len(r.metricIndex[fi]) || i >= len(e.CounterExclusive) {
							break
						}
						g := r.metricIndex[fi][i]
						row.cincl[g], row.cexcl[g], row.counted[g] = v, e.CounterExclusive[i], true
					}
					if p.ipc && row.counted[ins] && row.counted[cyc] {
						row.ipcInstructions, row.ipcCycles = row.cincl[ins], row.cincl[cyc]
					}
				}
				if groupRows != nil {
					key := [2]int{li, row.region}
					if at, ok := groupRows[key]; ok {
						p.rows[at].add(&row, nm)
					} else {
						groupRows[key] = len(p.rows)
						p.rows = append(p.rows, profileRow{loc: li, region: row.region})
						p.rows[len(p.rows)-1].add(&row, nm)
					}
				} else {
					p.rows = append(p.rows, row)
				}
				t := totals[row.region]
				if t == nil {
					t = &profileRow{loc: -1, region: row.region}
					totals[row.region] = t
					order = append(order, row.region)
				}
				t.add(&row, nm)
			}
		}
	}
	for _, region := range order {
		p.rows = append(p.rows, *totals[region])
	}
	return p
}

// add adds row's visits, times and counters to t.
func (t *profileRow) add(row *profileRow, nm int) {
	t.visits += row.visits
	t.ipcInstructions += row.ipcInstructions
	t.ipcCycles += row.ipcCycles
	t.incl += row.incl
	t.excl += row.excl
	if row.readsAnyCounters {
		if !t.readsAnyCounters {
			t.readsAnyCounters = true
			t.cincl, t.cexcl, t.counted = make([]uint64, nm), make([]uint64, nm), make([]bool, nm)
		}
		for g := range nm {
			if row.counted[g] {
				t.cincl[g] += row.cincl[g]
				t.cexcl[g] += row.cexcl[g]
				t.counted[g] = true
			}
		}
	}
}

// appendJSON appends the profile as the page reads it:
//
//	{"metrics":[...],"ipc":bool,"locations":[...],"times":[...],"total":ns,
//	 "rows":[[loc,region,visits,incl,excl,[cincl...],[cexcl...],ipc],...]}
//
// with null for a counter the location's file did not count (and for ipc
// where there is none), and the counter arrays and ipc left out for regions
// that read no counters. Rows are arrays, not objects: a run of many
// locations has many of them.
func (p *profile) appendJSON(b []byte) []byte {
	b = append(b, `{"metrics":`...)
	b = appendStrings(b, p.metrics)
	b = append(b, `,"ipc":`...)
	b = strconv.AppendBool(b, p.ipc)
	b = append(b, `,"locations":`...)
	b = appendStrings(b, p.locations)
	if p.all > 0 {
		b = append(b, `,"all":`...)
		b = strconv.AppendInt(b, int64(p.all), 10)
	}
	units, _ := json.Marshal(p.units) // strings always marshal
	b = append(b, `,"units":`...)
	b = append(b, units...)
	b = append(b, `,"times":[`...)
	for i, t := range p.times {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, t, 10)
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, p.total, 10)
	b = append(b, `,"rows":[`...)
	for i, r := range p.rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(r.loc), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.region), 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, r.visits, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.incl, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.excl, 10)
		if r.readsAnyCounters {
			b = append(b, ',')
			b = appendCounters(b, r.cincl, r.counted)
			b = append(b, ',')
			b = appendCounters(b, r.cexcl, r.counted)
			if ipc, ok := r.ipc(); ok {
				b = append(b, ',')
				b = strconv.AppendFloat(b, ipc, 'g', 6, 64)
			} else if p.ipc {
				b = append(b, ",null"...)
			}
		}
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

func appendCounters(b []byte, v []uint64, counted []bool) []byte {
	b = append(b, '[')
	for i := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if counted[i] {
			b = strconv.AppendUint(b, v[i], 10)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, ']')
}
