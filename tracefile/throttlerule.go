package tracefile

import (
	"fmt"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// secThrottleRule holds the rule the probes throttled regions by and, per
// location, the long calls of each region that had any: what a reader
// needs to say why a region was or was not throttled.
const secThrottleRule = 0x2C

// ThrottleRule is the rule by which the probes switched regions off
// (HMB_THROTTLE): a call is long when its inclusive time reaches LongTicks;
// a region with at least Early visits is switched off when at most one
// call in 1<<EarlyShift was long, and with at least Calls visits when at
// most one in 1<<LateShift was. ProfileEntry.LongCalls counts the long
// calls.
type ThrottleRule struct {
	LongTicks             uint64
	Early, Calls          uint64
	EarlyShift, LateShift uint8
}

// Due reports whether the rule switches off a region of the given visits
// and long calls, as the probes decide it at a leave.
func (r *ThrottleRule) Due(visits, long uint64) bool {
	return visits >= r.Early && (long<<r.EarlyShift <= visits || visits >= r.Calls && long<<r.LateShift <= visits)
}

func encodeThrottleRule(r *ThrottleRule, ls []Location) []byte {
	if r == nil {
		return nil
	}
	var p wirecodec.Writer
	p.Uvarint(r.LongTicks)
	p.Uvarint(r.Early)
	p.Uvarint(r.Calls)
	p.U8(r.EarlyShift)
	p.U8(r.LateShift)
	n := 0
	for i := range ls {
		prof, _ := ls[i].profile()
		for e := range prof {
			if e.LongCalls > 0 {
				n++
			}
		}
	}
	p.Uvarint(uint64(n))
	for i := range ls {
		prof, _ := ls[i].profile()
		for e := range prof {
			if e.LongCalls > 0 {
				p.Uvarint(uint64(ls[i].ID))
				p.Uvarint(uint64(e.Region))
				p.Uvarint(e.LongCalls)
			}
		}
	}
	return p
}

func (fl *File) decodeThrottleRule(f *fields) {
	r := &ThrottleRule{LongTicks: f.Uvarint("long call ticks"), Early: f.Uvarint("early visits"), Calls: f.Uvarint("late visits")}
	r.EarlyShift, r.LateShift = f.U8("early shift"), f.U8("late shift")
	if f.OK() && (r.EarlyShift > 32 || r.LateShift > 32) {
		f.Fail("throttle rule", fmt.Sprintf("shares 1 in 2^%d and 2^%d: at most 2^32", r.EarlyShift, r.LateShift))
	}
	fl.ThrottleRule = r
	n := f.Count("long calls", 3)
	for i := 0; i < n && f.OK(); i++ {
		loc, id, long := f.U32("long calls' location"), f.U32("long calls' region"), f.Uvarint("long calls")
		if !f.OK() {
			return
		}
		l := fl.Location(loc)
		if l == nil {
			f.Fail("long calls' location", fmt.Sprintf("location %d is not defined", loc))
			return
		}
		k := slices.IndexFunc(l.Profile, func(e ProfileEntry) bool { return e.Region == id })
		if k < 0 {
			f.Fail("long calls' region", fmt.Sprintf("region %d is not in location %d's profile", id, loc))
			return
		}
		l.Profile[k].LongCalls = long
	}
}
