package tracefile

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/encode"
)

// startWindow skips every record of the location up to its window start
// (the keep-last policy revoked their neighbours) and returns the enters
// of the calls open at that point, outermost first, marked Truncated and
// timed at the window start, as runtime/trace reports regions that began
// before its window.
func (it *Events) startWindow() ([]Event, error) {
	w := it.loc
	after := func(r *encode.Record) bool {
		return r.Time > w.WindowTime || (r.Time == w.WindowTime && r.Seq > w.WindowSeq)
	}
	open := map[int]uint32{} // region open at the window start, by depth
	var kept []*stream
	for _, s := range it.heap {
		calls := s.lv.class.Calls()
		var cur uint32
		if calls {
			cur = s.dec.OpenRegion()
		}
		ok := true
		for ok && !after(&s.head) {
			switch s.head.Kind {
			case encode.KindEnter:
				cur = s.head.Region
			case encode.KindLeave:
				cur = 0
			}
			var err error
			if ok, err = s.advance(it.f); err != nil {
				return nil, err
			}
		}
		if ok {
			kept = append(kept, s)
		}
		if !calls {
			continue
		}
		if ok && s.head.Kind == encode.KindLeave && cur == 0 {
			return nil, fmt.Errorf("%s: location %q: leave at depth %d after the window start, but no region is known open there", it.f.Path, w.Name, s.lv.depth)
		}
		if ok && s.head.Kind == encode.KindEnter && cur != 0 {
			return nil, fmt.Errorf("%s: location %q: enter at depth %d after the window start while a call is open there", it.f.Path, w.Name, s.lv.depth)
		}
		if cur != 0 {
			open[s.lv.depth] = cur
		}
	}
	it.heap = it.heap[:0]
	for _, s := range kept {
		it.push(s)
	}
	var evs []Event
	for d := 1; d <= len(open); d++ {
		region, ok := open[d]
		if !ok {
			return nil, fmt.Errorf("%s: location %q: calls open at the window start are not nested (nothing open at depth %d of %d)", it.f.Path, w.Name, d, len(open))
		}
		evs = append(evs, Event{Kind: encode.KindEnter, Time: w.WindowTime, Seq: w.WindowSeq, Depth: d,
			Class: ClassRegion, Region: region, Truncated: true})
	}
	return evs, nil
}
