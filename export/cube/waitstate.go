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

// The metric paths of the critical path and of the delay costs in
// Scalasca's tree (Böhme et al.); scalascaNames holds their unique names.
const (
	PathCriticalPath = "Critical path"
	PathImbalance    = PathCriticalPath + " > Critical-path imbalance"
)

// delayPaths are the delay costs' parents by the pattern of the waits they
// caused; " > Short-term" and " > Long-term" follow.
var delayPaths = [waitstate.NumPatterns]string{
	waitstate.LateSender:           "Delay costs > MPI > Point-to-point > Late Sender",
	waitstate.LateSenderWrongOrder: "Delay costs > MPI > Point-to-point > Late Sender",
	waitstate.LateReceiver:         "Delay costs > MPI > Point-to-point > Late Receiver",
	waitstate.WaitNxN:              "Delay costs > MPI > Collective > N x N",
	waitstate.WaitBarrier:          "Delay costs > MPI > Collective > Barrier",
	waitstate.LateBroadcast:        "Delay costs > MPI > Collective > 1 x N",
	waitstate.EarlyReduce:          "Delay costs > MPI > Collective > N x 1",
	waitstate.OMPBarrier:           "Delay costs > OpenMP > Barrier",
	waitstate.OMPImplicitBarrier:   "Delay costs > OpenMP > Barrier",
}

// callOf returns the profile's call path of r's call path i, nil if the
// profile has none.
func (p *Profile) callOf(r *waitstate.Result, i int) *Cnode {
	if i < 0 || i >= len(r.Paths) {
		return nil
	}
	var names []string
	for j := i; j >= 0; j = r.Paths[j].Parent {
		names = append(names, r.Paths[j].Region)
	}
	for a, b := 0, len(names)-1; a < b; a, b = a+1, b-1 {
		names[a], names[b] = names[b], names[a]
	}
	return p.FindCall(names...)
}

// addUp adds v to m and to each of its ancestors: a metric's value
// includes its sub-metrics'.
func addUp(m *Metric, c *Cnode, l *Location, v float64) {
	for ; m != nil; m = m.Parent {
		m.Add(c, l, v)
	}
}

// AddCriticalPath books r's critical path as Scalasca's "Critical path"
// metric (its time per call path and location, seconds) with the
// critical-path imbalance below it: a region's imbalance shared over its
// cells on the path in proportion to their time. Time whose call path or
// location the profile lacks is left out and returned, ns.
func (p *Profile) AddCriticalPath(r *waitstate.Result) (leftOut int64, err error) {
	cp := r.CriticalPath
	if cp == nil || len(cp.Values) == 0 {
		return 0, nil
	}
	m, err := p.MetricPath(PathCriticalPath)
	if err != nil {
		return 0, err
	}
	imb, err := p.MetricPath(PathImbalance)
	if err != nil {
		return 0, err
	}
	m.Descr = "Critical path: the run's longest chain of activities without a wait, from the end of the last location back (hmbtrace waitstate, Böhme et al.)"
	imb.Descr = "Critical-path imbalance: the critical path's time in a region less the region's mean time per location, when positive"
	ratio := map[string]float64{}
	for _, g := range cp.Regions {
		if g.Path > 0 {
			ratio[g.Region] = float64(g.Imbalance) / float64(g.Path)
		}
	}
	for _, v := range cp.Values {
		c := p.callOf(r, v.Path)
		var l *Location
		if v.Loc >= 0 && v.Loc < len(r.Locations) {
			l = p.FileLocation(r.Locations[v.Loc].File, r.Locations[v.Loc].Loc)
		}
		if c == nil || l == nil {
			leftOut += v.Time
			continue
		}
		s := float64(v.Time) / 1e9
		m.Add(c, l, s)
		if f := ratio[v.Region]; f > 0 {
			imb.Add(c, l, s*f)
		}
	}
	return leftOut, nil
}

// AddDelayCosts books r's delay costs in Scalasca's "Delay costs" tree:
// by the pattern of the waits caused, short-term and long-term, per call
// path and late location, seconds. Costs whose call path or location the
// profile lacks are left out and returned, ns.
func (p *Profile) AddDelayCosts(r *waitstate.Result) (leftOut int64, err error) {
	for _, d := range r.DelayCosts {
		path := delayPaths[d.Pattern] + " > Short-term"
		if d.LongTerm {
			path = delayPaths[d.Pattern] + " > Long-term"
		}
		m, err := p.MetricPath(path)
		if err != nil {
			return leftOut, err
		}
		c := p.callOf(r, d.Path)
		var l *Location
		if d.Loc >= 0 && d.Loc < len(r.Locations) {
			l = p.FileLocation(r.Locations[d.Loc].File, r.Locations[d.Loc].Loc)
		}
		if c == nil || l == nil {
			leftOut += d.Time
			continue
		}
		addUp(m, c, l, float64(d.Time)/1e9)
	}
	return leftOut, nil
}

// exportWaitStates adds the wait states of files to p, with the critical
// path and the delay costs, noting time left out.
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
	for _, add := range []struct {
		what string
		f    func(*waitstate.Result) (int64, error)
	}{{"critical path", p.AddCriticalPath}, {"delay costs", p.AddDelayCosts}} {
		left, err := add.f(r)
		if err != nil {
			return err
		}
		if left > 0 {
			p.Attrs = append(p.Attrs, [2]string{NoteAttr + " " + add.what, fmt.Sprintf("%d ns of the %s are not booked: their call paths are not in the profile", left, add.what)})
		}
	}
	return nil
}
