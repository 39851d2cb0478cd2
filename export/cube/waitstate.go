package cube

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// waitPaths are the metric paths of the wait-state patterns in Scalasca's
// metric tree, under the paths FromFiles books the calls' time at.
var waitPaths = [waitstate.NumPatterns]string{
	waitstate.LateSender:           PathP2P + " > Late Sender",
	waitstate.LateSenderWrongOrder: PathP2P + " > Late Sender > Messages in Wrong Order",
	waitstate.LateReceiver:         PathP2P + " > Late Receiver",
	waitstate.WaitNxN:              PathCollective + " > Wait at N x N",
	waitstate.WaitBarrier:          PathMPIBarrier + " > Wait at Barrier",
	waitstate.LateBroadcast:        PathCollective + " > Late Broadcast",
	waitstate.EarlyReduce:          PathCollective + " > Early Reduce",
	waitstate.OMPBarrier:           PathOpenMPBarrier + " > Wait at Explicit Barrier",
	waitstate.OMPImplicitBarrier:   PathOpenMPBarrier + " > Wait at Implicit Barrier",
}

// AddWaitStates books the wait states r found in the files p was built
// from (FromFiles, the same files in the same order) as metrics of
// Scalasca's tree, each in its call path and location. A wait is never
// more than the call it waited in, but the call paths of the two analyses
// can differ (a call the profile holds under another path, or whose time
// the metric tree books elsewhere, as an MPI_Wait that completes a
// collective): such time is left out, to keep every metric within its
// parent as CUBE requires, and counted in the returned total, ns.
func (p *Profile) AddWaitStates(r *waitstate.Result) (leftOut int64, err error) {
	paths := make([][]string, len(r.Paths))
	for i, c := range r.Paths {
		if c.Parent >= 0 {
			paths[i] = append(append([]string(nil), paths[c.Parent]...), c.Region)
		} else {
			paths[i] = []string{c.Region}
		}
	}
	// Parents first, so that a child's room is what its parent holds.
	for pat := waitstate.Pattern(0); pat < waitstate.NumPatterns; pat++ {
		vals := r.Pattern(pat)
		if len(vals) == 0 {
			continue
		}
		m, err := p.MetricPath(waitPaths[pat])
		if err != nil {
			return leftOut, err
		}
		m.Descr = fmt.Sprintf("%s: %s (hmbtrace waitstate)", m.Display, pat.Metric())
		parent := m.Parent
		for _, v := range vals {
			if v.Path < 0 || v.Path >= len(paths) || v.Loc < 0 || v.Loc >= len(r.Locations) {
				leftOut += v.Time
				continue
			}
			cn := p.FindCall(paths[v.Path]...)
			loc := r.Locations[v.Loc]
			l := p.FileLocation(loc.File, loc.Loc)
			if cn == nil || l == nil || parent == nil {
				leftOut += v.Time
				continue
			}
			// The parent's own time here: Late Sender's for wrong
			// order, which is part of it and booked before it.
			room := parent.Value(cn, l)
			for _, c := range parent.Children {
				room -= c.Value(cn, l)
			}
			s := float64(v.Time) / 1e9
			if s > room {
				leftOut += v.Time - int64(max(room, 0)*1e9)
				s = max(room, 0)
			}
			if s > 0 {
				m.Add(cn, l, s)
			}
		}
	}
	return leftOut, nil
}

// exportWaitStates adds the wait states of files to p when the files hold
// any communication or OpenMP barrier to replay, noting time left out.
func exportWaitStates(p *Profile, files []*tracefile.File, procs int) error {
	r, err := waitstate.Analyze(files, waitstate.Options{Procs: procs})
	if err != nil {
		return err
	}
	left, err := p.AddWaitStates(r)
	if err != nil {
		return err
	}
	if left > 0 {
		p.Attrs = append(p.Attrs, [2]string{NoteAttr + " wait states", fmt.Sprintf("%d ns of waits are not booked: their call paths differ between the profile and the replay", left)})
	}
	return nil
}
