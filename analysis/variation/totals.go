package variation

import (
	"sort"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// RegionTotal is one region's exact flat profile summed over every location
// of every file. Files are merged by region name, as the ranks of one run
// define the same regions under different ids.
type RegionTotal struct {
	Name      string
	Visits    uint64
	Inclusive int64 // ns, each location's recursion counted once
	Exclusive int64 // ns
	Locations int   // locations that visited it
}

// Totals returns the regions of files with at least one visit, by
// aggregated inclusive time (largest first), then visits (most first), then
// name.
func Totals(files []*tracefile.File) []RegionTotal {
	byName := map[string]*RegionTotal{}
	for _, f := range files {
		for i := range f.Locations {
			for _, p := range f.Locations[i].Profile {
				if p.Visits == 0 {
					continue
				}
				name := f.RegionName(p.Region)
				t := byName[name]
				if t == nil {
					t = &RegionTotal{Name: name}
					byName[name] = t
				}
				t.Visits += p.Visits
				t.Inclusive += f.TicksToNanos(p.Inclusive)
				t.Exclusive += f.TicksToNanos(p.Exclusive)
				t.Locations++
			}
		}
	}
	out := make([]RegionTotal, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	sortTotals(out)
	return out
}

// sortTotals sorts totals as Totals returns them.
func sortTotals(out []RegionTotal) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Inclusive != out[j].Inclusive {
			return out[i].Inclusive > out[j].Inclusive
		}
		if out[i].Visits != out[j].Visits {
			return out[i].Visits > out[j].Visits
		}
		return out[i].Name < out[j].Name
	})
}
