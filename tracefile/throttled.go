package tracefile

import "sort"

// ThrottledRegion is a region the probes switched off during the run, over
// the locations that did.
type ThrottledRegion struct {
	Region      uint32
	Name        string
	Locations   int    // locations that throttled it
	FirstAt     int64  // ns since the start of the measurement, the earliest location's
	Visits      uint64 // visits timed before it was throttled, summed
	VisitsAfter uint64 // visits counted but not timed after it, summed
}

// Throttled lists the regions throttled on any location, the earliest
// first, then by name.
func (t *Trace) Throttled() []ThrottledRegion {
	byID := map[uint32]*ThrottledRegion{}
	var out []*ThrottledRegion
	for i := range t.Locations {
		for _, e := range t.Locations[i].Profile {
			if !e.Throttled {
				continue
			}
			at := int64(0)
			if e.ThrottledAt > t.Header.StartTicks {
				at = t.TicksToNanos(e.ThrottledAt - t.Header.StartTicks)
			}
			r := byID[e.Region]
			if r == nil {
				r = &ThrottledRegion{Region: e.Region, Name: t.RegionName(e.Region), FirstAt: at}
				byID[e.Region] = r
				out = append(out, r)
			}
			r.Locations++
			r.FirstAt = min(r.FirstAt, at)
			r.Visits += e.Visits
			r.VisitsAfter += e.VisitsAfter
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].FirstAt != out[j].FirstAt {
			return out[i].FirstAt < out[j].FirstAt
		}
		return out[i].Name < out[j].Name
	})
	res := make([]ThrottledRegion, len(out))
	for i, r := range out {
		res[i] = *r
	}
	return res
}
