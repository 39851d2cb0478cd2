package variation

import (
	"sync"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// rankCut is where one rank's iterations are cut when only its master
// thread calls the collective that carries them (Plan.ByRank): the times
// of the master's calls, which cut the rank's other threads too, as the
// threads of one process share its clock.
type rankCut struct {
	calls []cutCall
	// visits is the master's calls in its exact flat profile: what a
	// location cut at them counts as invocations.
	visits uint64
}

// cutCall is one outermost call of the collective on the master thread.
type cutCall struct {
	enter, leave int64 // ns
	truncated    bool  // its enter began before the kept window
	// stop is when the master next left the code that calls the
	// collective, before its next call: the end of the iterations
	// (-1 when it did not).
	stop int64
}

// readRankCut reads the calls of region on the location of f that calls
// it, the rank's master; nil when no location of f calls it or its events
// cannot be read (the master's own scan then reports that error).
func readRankCut(f *tracefile.File, region string) *rankCut {
	var id uint32
	for _, r := range f.Regions {
		if r.Name == region {
			id = r.ID
		}
	}
	if id == 0 {
		return nil
	}
	for i := range f.Locations {
		loc := &f.Locations[i]
		var visits uint64
		for _, p := range loc.Profile {
			if p.Region == id {
				visits += p.Visits
			}
		}
		if visits == 0 {
			continue
		}
		c := &rankCut{visits: visits}
		var (
			e         tracefile.Event
			callDepth int // the depth of the open outermost call, 0 if none
			segDepth  int // the depth of the first call
		)
		it := f.Events(loc.ID)
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindEnter:
				if e.Region == id && callDepth == 0 {
					if len(c.calls) == 0 {
						segDepth = e.Depth
					}
					callDepth = e.Depth
					c.calls = append(c.calls, cutCall{enter: f.Nanos(e.Time), truncated: e.Truncated, stop: -1})
				}
			case encode.KindLeave:
				n := len(c.calls)
				switch {
				case n == 0:
				case e.Depth == callDepth:
					c.calls[n-1].leave, callDepth = f.Nanos(e.Time), 0
				case e.Depth < segDepth && c.calls[n-1].stop < 0:
					// Leaving the code that calls the collective ends
					// the iterations, as the master's own Scanner ends
					// them.
					c.calls[n-1].stop = f.Nanos(e.Time)
				}
			}
		}
		if it.Err() != nil {
			return nil
		}
		return c
	}
	return nil
}

// rankCuts holds the rankCut of each file of a plan, read once, whichever
// location's Scanner asks first: the locations are scanned in parallel.
type rankCuts struct {
	mu     sync.Mutex
	byFile map[*tracefile.File]*rankCutOnce
}

type rankCutOnce struct {
	once sync.Once
	cut  *rankCut
}

func newRankCuts() *rankCuts { return &rankCuts{byFile: map[*tracefile.File]*rankCutOnce{}} }

// of returns the rankCut of region in f.
func (rc *rankCuts) of(f *tracefile.File, region string) *rankCut {
	if rc == nil {
		return readRankCut(f, region)
	}
	rc.mu.Lock()
	o := rc.byFile[f]
	if o == nil {
		o = &rankCutOnce{}
		rc.byFile[f] = o
	}
	rc.mu.Unlock()
	o.once.Do(func() { o.cut = readRankCut(f, region) })
	return o.cut
}
