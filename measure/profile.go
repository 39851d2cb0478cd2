package measure

import (
	"unsafe"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// profEntry is a region's line of a location's flat profile.
type profEntry struct {
	visits, incl, excl uint64
	after              uint64 // visits since the region was throttled: counted, not timed
	throttledAt        uint64 // ticks of the leave that throttled it
	longCalls          uint64 // calls at least as long as the throttling bound (throttle.go)
	active             uint32 // open instances: inclusive time counts the outermost only
	off                uint8  // why the probes skip the region: offNone, offFiltered, offThrottled or offUndefined
	// class follows off: the assembly enter tests both as one 16-bit word
	// (TestProbeAsmLayout).
	class   buffer.Class
	counted bool // reads counters (HMB_METRICS_REGIONS)
}

// The values of profEntry.off. A probe tests off != offNone before it reads
// the clock: one load and a compare for every region, measured or not.
const (
	offNone      uint8 = iota
	offFiltered        // excluded by the filter file: not measured at all
	offThrottled       // switched off at run time: visits counted in after
	offUndefined       // an id past the last region defined when the page was made
)

// The profile is a table of pages of profPageSize regions, made when a
// probe first meets a region of the page: a location's memory grows with
// the regions it visits, not with the regions defined (Wagner's HMB bounds
// the events; this bounds the definitions' share per location). Growing
// it never copies entries, so the C probes' pointers into a page stay
// valid and only the small table of pages is ever replaced.
const (
	profPageBits = 6
	profPageSize = 1 << profPageBits
)

// profPage is one page of a location's profile. The C probes read e in
// place (direct.h: struct hmb_go_prof).
type profPage struct {
	e [profPageSize]profEntry
	// m holds the counter sums of the page's regions: region r's
	// inclusive sums at [(r%profPageSize)*2n:], exclusive n after them.
	m []uint64
}

// entry returns region r's profile entry, or nil if its page is not made.
func (l *Location) entry(r Region) *profEntry {
	i := uint(r) >> profPageBits
	if i < uint(len(l.prof)) {
		if pg := l.prof[i]; pg != nil {
			return &pg.e[r&(profPageSize-1)]
		}
	}
	return nil
}

// sums returns region r's counter sums (inclusive, then exclusive), nil
// without counters. Its page must exist.
func (l *Location) sums(r uint32) []uint64 {
	m := l.prof[r>>profPageBits].m
	if m == nil {
		return nil
	}
	n := 2 * l.nmet
	i := int(r&(profPageSize-1)) * n
	return m[i : i+n]
}

// define makes region r's entry current: its page made, its flags taken
// from the region's definition. It returns nil, counted as a usage error,
// if r is not defined.
//
//go:noinline
func (l *Location) define(r Region) *profEntry {
	i := int(r >> profPageBits)
	var defs [profPageSize]regionDef
	first := Region(i << profPageBits)
	n := l.m.pageDefs(first, defs[:])
	if r == 0 || int(r-first) >= n {
		l.usage.UnknownRegion++
		l.noteUsage(usageUnknownRegion, uint32(r), 0)
		return nil
	}
	if i >= len(l.prof) {
		// Doubling: the tables replaced stay pinned for C if it probes this
		// location, which is at most the size of the last one again.
		dir := make([]*profPage, max(2*len(l.prof), i+1, 4))
		copy(dir, l.prof)
		l.prof = dir
		l.pinNew(unsafe.Pointer(&dir[0]))
	}
	pg := l.prof[i]
	if pg == nil {
		pg = new(profPage)
		for k := range pg.e {
			pg.e[k].off = offUndefined
		}
		if l.src != nil {
			pg.m = make([]uint64, profPageSize*2*l.nmet)
		}
		l.prof[i] = pg
		l.pinNew(unsafe.Pointer(pg))
	}
	for k := 0; k < n; k++ {
		e := &pg.e[k]
		if e.off != offUndefined || first+Region(k) == 0 {
			continue // defined already: a throttled region keeps its state
		}
		d := &defs[k]
		e.off = offNone
		if d.filtered {
			e.off = offFiltered
		}
		e.counted = d.counted
		e.class = buffer.ClassRegion
		if d.paradigm.Runtime() {
			e.class = buffer.ClassParadigm
		}
	}
	return &pg.e[r-first]
}

// forEachEntry calls f for every region the location's profile holds an
// entry for, in id order.
func (l *Location) forEachEntry(f func(r uint32, e *profEntry)) {
	for i, pg := range l.prof {
		if pg == nil {
			continue
		}
		for k := range pg.e {
			if id := uint32(i<<profPageBits + k); id != 0 {
				f(id, &pg.e[k])
			}
		}
	}
}

// maxEntry returns one past the largest region id the profile can hold.
func (l *Location) maxEntry() int { return len(l.prof) << profPageBits }
