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

// depthAt is a depth a thread returned to, and when.
type depthAt struct {
	depth int
	at    int64
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
			// lows holds, for each call, the depths the master returned
			// to after it, each shallower than the one before, and when.
			lows [][]depthAt
		)
		it := f.Events(loc.ID)
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindEnter:
				if e.Region == id && callDepth == 0 {
					callDepth = e.Depth
					c.calls = append(c.calls, cutCall{enter: f.Nanos(e.Time), truncated: e.Truncated, stop: -1})
					lows = append(lows, nil)
				}
			case encode.KindLeave:
				n := len(c.calls)
				switch {
				case n == 0:
				case e.Depth == callDepth:
					c.calls[n-1].leave, callDepth = f.Nanos(e.Time), 0
					lows[n-1] = append(lows[n-1], depthAt{e.Depth - 1, c.calls[n-1].leave})
				case callDepth == 0 && e.Depth-1 < lows[n-1][len(lows[n-1])-1].depth:
					lows[n-1] = append(lows[n-1], depthAt{e.Depth - 1, f.Nanos(e.Time)})
				}
			}
		}
		if it.Err() != nil {
			return nil
		}
		// The iterations end where the master left the loop that calls
		// the collective, as its own Scanner ends them (keepLoopGaps):
		// a gap to the next call that returned above the loop's depth;
		// after the last call, the master's leaving the loop.
		gaps := max(len(c.calls)-1, 0)
		loop := loopDepth(gaps, func(i int) int { return lows[i][len(lows[i])-1].depth })
		for i := range c.calls {
			for _, l := range lows[i] {
				if l.depth < loop {
					c.calls[i].stop = l.at
					break
				}
			}
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
