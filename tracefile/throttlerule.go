package tracefile

import (
	"fmt"
	"slices"
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
	var p payload
	p.uvarint(r.LongTicks)
	p.uvarint(r.Early)
	p.uvarint(r.Calls)
	p.u8(r.EarlyShift)
	p.u8(r.LateShift)
	n := 0
	for i := range ls {
		prof, _ := ls[i].profile()
		for e := range prof {
			if e.LongCalls > 0 {
				n++
			}
		}
	}
	p.uvarint(uint64(n))
	for i := range ls {
		prof, _ := ls[i].profile()
		for e := range prof {
			if e.LongCalls > 0 {
				p.uvarint(uint64(ls[i].ID))
				p.uvarint(uint64(e.Region))
				p.uvarint(e.LongCalls)
			}
		}
	}
	return p
}

func (fl *File) decodeThrottleRule(f *fields) {
	r := &ThrottleRule{LongTicks: f.uvarint("long call ticks"), Early: f.uvarint("early visits"), Calls: f.uvarint("late visits")}
	r.EarlyShift, r.LateShift = f.u8("early shift"), f.u8("late shift")
	if f.err == nil && (r.EarlyShift > 32 || r.LateShift > 32) {
		f.fail("throttle rule", fmt.Sprintf("shares 1 in 2^%d and 2^%d: at most 2^32", r.EarlyShift, r.LateShift))
	}
	fl.ThrottleRule = r
	n := f.count("long calls", 3)
	for i := 0; i < n && f.err == nil; i++ {
		loc, id, long := f.u32("long calls' location"), f.u32("long calls' region"), f.uvarint("long calls")
		if f.err != nil {
			return
		}
		l := fl.Location(loc)
		if l == nil {
			f.fail("long calls' location", fmt.Sprintf("location %d is not defined", loc))
			return
		}
		k := slices.IndexFunc(l.Profile, func(e ProfileEntry) bool { return e.Region == id })
		if k < 0 {
			f.fail("long calls' region", fmt.Sprintf("region %d is not in location %d's profile", id, loc))
			return
		}
		l.Profile[k].LongCalls = long
	}
}
