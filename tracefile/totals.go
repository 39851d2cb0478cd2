package tracefile

import "sort"

// Totals is what the locations of a trace recorded and what became of it,
// summed over the locations: the buffer's story as hmbtrace summary and
// the report tell it. Recorded = Kept + FilteredName + FilteredDuration +
// the sum of Removed in a sound file.
type Totals struct {
	Recorded         uint64
	Kept             uint64
	FilteredName     uint64
	FilteredDuration uint64
	KeptByClass      [NumClasses]uint64
	Removed          ByReason // at the probe or later
	Usage            UsageErrors
	// Depths has an entry for each calling depth a level of the trace is
	// at, in increasing order: sparse, so a file's depth numbers (up to
	// 2^30) never size an allocation.
	Depths []DepthTotals
}

// DepthTotals is what happened at one calling depth, all locations and
// classes together.
type DepthTotals struct {
	Depth   int
	Kept    uint64
	Removed ByReason
	Closed  bool // closed by the depth policy
}

// Totals sums the statistics of the trace's locations.
func (t *Trace) Totals() Totals {
	var s Totals
	at := map[int]int{} // depth -> index in s.Depths
	for i := range t.Locations {
		l := &t.Locations[i]
		s.Recorded += l.Recorded
		s.FilteredName += l.FilteredName
		s.FilteredDuration += l.FilteredDuration
		s.Usage.Add(l.Usage)
		for _, lv := range l.Levels {
			kept := lv.Kept()
			s.Kept += kept
			s.KeptByClass[lv.Class] += kept
			i, ok := at[lv.Depth]
			if !ok {
				i = len(s.Depths)
				at[lv.Depth] = i
				s.Depths = append(s.Depths, DepthTotals{Depth: lv.Depth})
			}
			d := &s.Depths[i]
			d.Kept += kept
			for r, v := range lv.Removed() {
				d.Removed[r] += v
				s.Removed[r] += v
			}
			d.Closed = d.Closed || (lv.Closed && lv.By == ByDepth)
		}
	}
	sort.Slice(s.Depths, func(i, j int) bool { return s.Depths[i].Depth < s.Depths[j].Depth })
	return s
}
