package convert

import (
	"maps"
	"sync"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
)

// Writing the locations on several workers. Each location has its own
// event file, so the workers write in parallel; what makes the archive the
// same as a sequential export's is the definitions made on first use (a
// region id the file does not define, the communicator of locations, the
// MPI communicators of files that define none, an RMA group) and the names
// of tasks whose creation the buffer shed: their references and names
// depend on the order of the events that need them. Such work is done on
// the shared exporter under one lock, and only by the lowest location not
// yet finished: a worker that needs a definition not yet made waits until
// every location before its own is finished, or until that location made
// it. Then the definitions come in the order of a sequential export,
// location by location. Everything else a
// location needs was defined before the events (definitions, OpenMP plan)
// and is only read, and the counts of each location are added up at the end.

// shared is what the workers' exporters share.
type shared struct {
	mu     sync.Mutex
	order  *parallel.Order
	master *exporter // its sh is nil: it does the work itself
}

// locations writes the events of every location, on procs workers.
func (x *exporter) locations(procs int) error {
	type where struct{ file, loc int }
	var locs []where
	for i, f := range x.files {
		for k := range f.Locations {
			locs = append(locs, where{i, k})
		}
	}
	x.ahead = procs > len(locs)
	if procs <= 1 {
		for _, l := range locs {
			if err := x.location(l.file, l.loc, x.writers[l.file][l.loc]); err != nil {
				return err
			}
		}
		return nil
	}
	sh := &shared{master: x}
	sh.order = parallel.NewOrder(len(locs), &sh.mu)
	stats := make([]Stats, len(locs))
	err := parallel.Do(procs, len(locs), func(n int) error {
		defer func() {
			sh.mu.Lock()
			sh.order.Finish(n)
			sh.mu.Unlock()
		}()
		l := locs[n]
		return sh.forLocation(n, l.file, &stats[n]).location(l.file, l.loc, x.writers[l.file][l.loc])
	})
	for k := range stats {
		x.st.add(&stats[k])
	}
	return err
}

// forLocation returns the exporter of the n-th location, of file i, which
// counts into st.
func (sh *shared) forLocation(n, i int, st *Stats) *exporter {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.master
	lx := *m
	lx.sh, lx.n, lx.st = sh, n, st
	lx.skipped, lx.open, lx.values = map[uint64]bool{}, nil, nil
	// Its own copy of its file's region references; a miss asks the
	// master (region).
	lx.own, lx.regionRefs, lx.ownRefs = i, nil, maps.Clone(m.regionRefs[i])
	lx.regions = nil
	// The MPI communicators as far as defined. Made on first use, they
	// are of files that define no communicators; then no member misses a
	// file and none is left out, so mpi.partial is false and skipRequests
	// has nothing to do whether or not they are defined yet.
	lx.mpi = m.mpi
	// Its file's lane team if defined; a miss asks the master (lane.go).
	lx.lanes, lx.ownLane = nil, m.lanes[i]
	return &lx
}

// region is exporter.region for a worker's exporter lx.
func (sh *shared) region(lx *exporter, i int, id uint32) (otf2.RegionRef, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.master
	sh.order.WaitFor(lx.n, func() bool { _, ok := m.regionRefs[i][id]; return ok })
	ref, ok := m.regionRefs[i][id]
	if !ok {
		var err error
		if ref, err = m.region(i, id); err != nil {
			return 0, err
		}
		sh.order.Notify()
	}
	if i == lx.own {
		lx.ownRefs[id] = ref
	}
	return ref, nil
}

// defineComm gives lx the communicator of locations, defined by the first
// location that needs it.
func (sh *shared) defineComm(lx *exporter) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.master
	sh.order.WaitFor(lx.n, func() bool { return m.hasComm })
	if !m.hasComm {
		if err := m.defineComm(); err != nil {
			return err
		}
		sh.order.Notify()
	}
	lx.comm, lx.hasComm = m.comm, true
	return nil
}

// defineMPI gives lx the MPI communicators, defined by the first location
// that needs them.
func (sh *shared) defineMPI(lx *exporter) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.master
	sh.order.WaitFor(lx.n, func() bool { return m.mpi != nil })
	if m.mpi == nil {
		if err := m.defineMPI(); err != nil {
			return err
		}
		sh.order.Notify()
	}
	lx.mpi = m.mpi
	return nil
}

// rmaGroup is exporter.rmaGroup for a worker's exporter lx.
func (sh *shared) rmaGroup(lx *exporter, i int, id uint32) (otf2.GroupRef, bool, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.master
	if g := m.files[i].RmaGroup(id); g != nil && m.rma != nil {
		key := ranksKey(g.Members)
		sh.order.WaitFor(lx.n, func() bool { _, ok := m.rma.groups[key]; return ok })
		defer sh.order.Notify()
	}
	return m.rmaGroup(i, id)
}

// add adds the counts of o, one location's, to s.
func (s *Stats) add(o *Stats) {
	s.Locations += o.Locations
	s.Events += o.Events
	s.ClosedAtEnd += o.ClosedAtEnd
	s.MessagesWithoutPeer += o.MessagesWithoutPeer
	s.Collectives += o.Collectives
	s.CollectivesLeftOut += o.CollectivesLeftOut
	s.RootsNotExported += o.RootsNotExported
	s.CommMembersNotExported += o.CommMembersNotExported
	s.UndefinedComms += o.UndefinedComms
	s.InvalidComms = append(s.InvalidComms, o.InvalidComms...)
	s.ThreadTeams += o.ThreadTeams
	s.TasksWithoutTeam += o.TasksWithoutTeam
	s.TaskEvents += o.TaskEvents
	s.TaskEventsLeftOut += o.TaskEventsLeftOut
	s.TasksWithoutCreation += o.TasksWithoutCreation
	s.LaneTeams += o.LaneTeams
	s.LaneTaskEvents += o.LaneTaskEvents
	s.LaneTasksCompletedAtEnd += o.LaneTasksCompletedAtEnd
	s.RmaOperations += o.RmaOperations
	s.RmaLeftOut += o.RmaLeftOut
	s.Marks += o.Marks
	s.Parameters += o.Parameters
	s.ChannelMessages += o.ChannelMessages
	s.AnnotationsLeftOut += o.AnnotationsLeftOut
}
