package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The timeline's first cue, as in Vampir: a line from each send to its
// receive, and each collective operation drawn across its members. The
// locations keep their messages and collectives as their events stream by
// (a bounded number each); once every location drawn is read, the sends
// are paired with the receives and the collectives' members with each
// other, and the page gets at most maxMessages lines and maxCollectives
// operations, spread over the run.

const (
	// commBudget bounds the sends, receives and collectives the locations
	// keep for the timeline, over all of them: each keeps its first
	// commBudget/locations of each (at least minCommPerLocation), so that
	// a send and its receive are both kept or both not (MPI's order is the
	// same on both ends), and the memory does not grow with the events.
	commBudget         = 1 << 19
	minCommPerLocation = 256
	// maxMessages and maxCollectives bound what the page draws: zoomed
	// out, more lines than pixels say nothing more.
	maxMessages    = 20000
	maxCollectives = 5000
)

// commEvent is a message or collective as a location recorded it: 40
// bytes, as a run keeps up to commBudget of them of each kind.
type commEvent struct {
	t int64 // on the timeline's axis, ns
	// call is when the call that holds it was entered: a receive whose
	// call began before its send waited for it (a late sender).
	call int64
	row  int32 // the row (from 1) of the call it happened in
	// peer is the other end: its file and location index.
	peerFile, peerLoc int32
	comm              int32 // the communicator, run-wide (commKeys): the same on every member
	tag               uint32
	// region is the page's region of the call (collectives: the
	// collective's, on its first row).
	region int32
}

func (c *commEvent) peer() tracefile.Endpoint {
	return tracefile.Endpoint{File: int(c.peerFile), Loc: int(c.peerLoc)}
}

// commPerLocation is how many sends, receives and collectives each of n
// locations keeps.
func commPerLocation(n int) int {
	return max(commBudget/max(n, 1), minCommPerLocation)
}

// commTrack is what a location keeps of its messages and collectives.
type commTrack struct {
	sends, recvs, colls []commEvent
	limit               int // of each
	omitted             int // beyond limit
}

func (c *commTrack) keep(list *[]commEvent, e commEvent) {
	if len(*list) >= c.limit {
		c.omitted++
		return
	}
	*list = append(*list, e)
}

// message takes a message or collective event of the location; stack is
// its calls open at the event.
func (lt *locationTimeline) message(f *tracefile.File, e *tracefile.Event) {
	row := max(len(lt.stack), 1)
	ce := commEvent{t: lt.off + f.Nanos(e.Time), row: int32(row), tag: e.Tag, comm: lt.r.commKey(lt.fi, e.Comm)}
	ce.call = ce.t
	if n := len(lt.stack); n > 0 {
		ce.call = lt.stack[n-1].start
	}
	switch e.Kind {
	case encode.KindSend, encode.KindIsend, encode.KindRecv, encode.KindIrecv:
		end, ok, err := lt.r.peers.Resolve(lt.fi, e)
		if err != nil || !ok {
			return // a peer not among the files: the communication section counts them
		}
		ce.peerFile, ce.peerLoc = int32(end.File), int32(end.Loc)
		if e.Kind == encode.KindSend || e.Kind == encode.KindIsend {
			lt.comm.keep(&lt.comm.sends, ce)
		} else {
			lt.comm.keep(&lt.comm.recvs, ce)
		}
	case encode.KindCollective:
		// The record follows the collective's enter: the operation starts
		// with its call.
		if n := len(lt.stack); n > 0 {
			ce.t, ce.region = lt.stack[n-1].start, int32(lt.stack[n-1].region)
		} else {
			ce.region = -1
		}
		lt.comm.keep(&lt.comm.colls, ce)
	}
}

// commKey returns the run-wide index of communicator id of file i, the
// same on every member's file: the run's communicator (tracefile.
// ReadUnified), MPI_COMM_WORLD for id 0; -1 for an id the file does not
// define.
func (r *run) commKey(i int, id uint32) int32 {
	if id == 0 {
		return r.world
	}
	k := r.u.Comm(i, id)
	if k == 0 {
		return -1
	}
	if c := &r.u.Defs.Comms[k-1]; c.Name == "MPI_COMM_WORLD" && c.Parent == 0 && c.Remote == nil {
		return r.world // the world of a rank whose members differ
	}
	return int32(k)
}

// place is where a location's rows are on the page: its timeline location
// (a group's, for a member) and its first row and number of rows.
type place struct {
	loc, first, rows int
}

// connect pairs the sends of the locations drawn with their receives and
// the members of each collective, and puts what the page draws into tl.
// lts are the locations read, places where each is drawn.
func (tl *timeline) connect(r *run, lts []*locationTimeline, places map[tracefile.Endpoint]place) {
	rowOf := func(p place, row int) int { return p.first + min(row, p.rows) - 1 }
	type key struct {
		from, to tracefile.Endpoint
		comm     int32
		tag      uint32
	}
	type pending struct {
		t   int64
		row int
	}
	queue := map[key][]pending{}
	omitted := 0
	for _, lt := range lts {
		from := tracefile.Endpoint{File: lt.fi, Loc: lt.k}
		for _, s := range lt.comm.sends {
			k := key{from, s.peer(), s.comm, s.tag}
			queue[k] = append(queue[k], pending{s.t, int(s.row)})
		}
		omitted += lt.comm.omitted
	}
	type line struct {
		t0, t1     int64
		row0, row1 int
		late       bool
	}
	var lines []line
	total := 0
	for _, lt := range lts {
		to := tracefile.Endpoint{File: lt.fi, Loc: lt.k}
		pt, ok := places[to]
		if !ok {
			continue
		}
		for _, rv := range lt.comm.recvs {
			k := key{rv.peer(), to, rv.comm, rv.tag}
			q := queue[k]
			if len(q) == 0 {
				continue // its send was not kept, or its sender is not drawn
			}
			s := q[0]
			queue[k] = q[1:]
			pf, ok := places[rv.peer()]
			if !ok || pf.loc == pt.loc {
				continue // within a group's row: no line to draw
			}
			total++
			// The receiving call was waiting when the send happened: the
			// wait-state analysis calls it a late sender.
			lines = append(lines, line{s.t, rv.t, rowOf(pf, int(s.row)), rowOf(pt, int(rv.row)), rv.call < s.t})
		}
	}
	slices.SortFunc(lines, func(a, b line) int { return cmp.Or(cmp.Compare(a.t0, b.t0), cmp.Compare(a.row0, b.row0)) })
	lines = spread(lines, maxMessages)
	for _, l := range lines {
		// A late sender's receiving row is stored negated, -1 - row.
		row1 := int64(l.row1)
		if l.late {
			row1 = -1 - row1
		}
		tl.Messages = append(tl.Messages, int64(l.row0), l.t0, row1, l.t1)
	}
	if len(lines) < total {
		tl.Omitted = append(tl.Omitted, fmt.Sprintf("%s of the %s messages between the rows are drawn, spread evenly over the run: more would not show more at this width (zoom in; hmbtrace comm counts them all)",
			units.Count(uint64(len(lines))), units.Count(uint64(total))))
	}
	tl.collectives(r, lts, places, rowOf)
	if omitted > 0 {
		tl.Omitted = append(tl.Omitted, fmt.Sprintf("%s messages and collectives are not drawn: each location keeps the first %s of its sends, receives and collectives for the timeline",
			units.Count(uint64(omitted)), units.Count(uint64(lts[0].comm.limit))))
	}
}

// collectives pairs the members of each collective operation: the k-th
// on a communicator of each process is one operation, as MPI orders them.
func (tl *timeline) collectives(r *run, lts []*locationTimeline, places map[tracefile.Endpoint]place, rowOf func(place, int) int) {
	type member struct {
		t   int64
		row int
		reg int
	}
	// Per communicator and file, the operations in order of their start.
	byComm := map[int32]map[int][]member{}
	var comms []int32
	for _, lt := range lts {
		p, ok := places[tracefile.Endpoint{File: lt.fi, Loc: lt.k}]
		if !ok {
			continue
		}
		for _, c := range lt.comm.colls {
			files := byComm[c.comm]
			if files == nil {
				files = map[int][]member{}
				byComm[c.comm] = files
				comms = append(comms, c.comm)
			}
			files[lt.fi] = append(files[lt.fi], member{c.t, rowOf(p, int(c.row)), int(c.region)})
		}
	}
	slices.Sort(comms)
	type op struct {
		release int64
		region  int
		members []member
	}
	var ops []op
	short := 0
	for _, c := range comms {
		files := byComm[c]
		var keys []int
		n := -1
		for fi, list := range files {
			keys = append(keys, fi)
			slices.SortStableFunc(list, func(a, b member) int { return cmp.Compare(a.t, b.t) })
			if n < 0 || len(list) < n {
				n = len(list)
			}
			short += len(list)
		}
		slices.Sort(keys)
		if len(keys) < 2 {
			short -= max(n, 0)
			continue // one process: nothing to join
		}
		for j := range n {
			o := op{region: -1}
			byRow := map[int]int{} // a group's row shows its earliest member
			for _, fi := range keys {
				m := files[fi][j]
				o.release = max(o.release, m.t)
				if o.region < 0 {
					o.region = m.reg
				}
				if at, ok := byRow[m.row]; ok {
					o.members[at].t = min(o.members[at].t, m.t)
					continue
				}
				byRow[m.row] = len(o.members)
				o.members = append(o.members, m)
			}
			short -= len(keys)
			if len(o.members) > 1 {
				ops = append(ops, o)
			}
		}
	}
	total := len(ops)
	slices.SortStableFunc(ops, func(a, b op) int { return cmp.Compare(a.release, b.release) })
	ops = spread(ops, maxCollectives)
	for _, o := range ops {
		tl.Collectives = append(tl.Collectives, int64(o.region), o.release, int64(len(o.members)))
		for _, m := range o.members {
			tl.Collectives = append(tl.Collectives, int64(m.row), m.t)
		}
	}
	if len(ops) < total {
		tl.Omitted = append(tl.Omitted, fmt.Sprintf("%s of the %s collective operations are drawn, spread evenly over the run", units.Count(uint64(len(ops))), units.Count(uint64(total))))
	}
	if short > 0 {
		tl.Omitted = append(tl.Omitted, fmt.Sprintf("%s collective calls are not joined to their operation: their communicator's members recorded different numbers of them (events the buffer shed)", units.Count(uint64(short))))
	}
}

// spread keeps at most n of xs, evenly spaced, in their order.
func spread[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}
