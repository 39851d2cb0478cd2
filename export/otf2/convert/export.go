// Package convert exports hmbtrace trace files as one OTF2 archive: a
// location group per file (process), an OTF2 location per hmbtrace
// location, regions with file and line, counters as metrics, and MPI as
// OTF2 means it: communicators, point-to-point messages (blocking and
// non-blocking, with request ids) on their communicator, collectives with
// their operation, communicator, root and bytes, OpenMP's thread teams
// and tasks, and the tasks of Go's lanes as tasks of a thread team per
// process (lane.go). It streams each location's events from the reader
// into its event writer, so memory does not grow with the trace.
//
// It is apart from package otf2 so that the OTF2 writer itself stays free of
// hmbtrace's own packages: the writer knows the format, this package knows
// both models.
package convert

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// CommName names the communicator of the messages between locations of
// one process (Go's goroutines, hmb_send with a location peer): a location's
// rank in it is its OTF2 location reference. MPI messages are on the MPI
// communicators.
const CommName = "COMM_LOCATIONS"

// Stats says what an export wrote and what it had to add or leave out.
type Stats struct {
	Locations int
	Events    uint64 // event records written, metric records included
	// ClosedAtEnd counts the leaves added for regions still open at the end
	// of a location's events (a trace written for a signal), each at the
	// location's last timestamp.
	ClosedAtEnd uint64
	// MessagesWithoutPeer counts the messages left out because their peer
	// is not an exported location (a rank of a file not exported, or of
	// several; an undefined location id) or not a member of the message's
	// communicator.
	MessagesWithoutPeer uint64
	// Collectives counts the collective operations written as
	// MpiCollectiveBegin/End or NonBlockingCollectiveComplete.
	Collectives uint64
	// CollectivesLeftOut counts the collective records left out: their
	// operation is not known (the record's region is not an MPI collective,
	// or the region was shed by the buffer) or their communicator is not.
	CollectivesLeftOut uint64
	// RootsNotExported counts collectives written without their root
	// (OTF2's undefined rank) because the root's file is not exported.
	RootsNotExported uint64
	// CommMembersNotExported counts the members left out of communicator
	// groups because their file is not exported: only exported ranks have
	// an OTF2 rank.
	CommMembersNotExported uint64
	// UndefinedComms counts the communicator ids that records name but
	// their file does not define, or not validly (see InvalidComms); their
	// events are left out.
	UndefinedComms uint64
	// InvalidComms says which communicator definitions were left out and
	// why: a rank twice among the members, a parent left out.
	InvalidComms []string
	// ThreadTeams counts the OpenMP thread teams defined as communicators
	// (one per set of locations); TasksWithoutTeam the implicit tasks
	// written without ThreadTeamBegin/End because no parallel region
	// encloses them unambiguously, or the forking thread's own implicit
	// task is missing from its region (see openmp.go).
	ThreadTeams      int
	TasksWithoutTeam uint64
	// TaskEvents counts the OpenMP explicit tasks' events written
	// (ThreadTaskCreate, ThreadTaskSwitch, ThreadTaskComplete);
	// TaskEventsLeftOut those left out because no thread team is known
	// for them (see TasksWithoutTeam), and lane task records left out
	// (see LaneTaskEvents). TasksWithoutCreation counts the
	// tasks whose creation the buffer shed: they are named after the first
	// thread that runs them (see task.go).
	TaskEvents           uint64
	TaskEventsLeftOut    uint64
	TasksWithoutCreation uint64
	// LaneTeams counts the thread teams defined for the tasks of Go's
	// lanes, one per file that has them; LaneTaskEvents the events
	// written for those tasks (ThreadTaskCreate, ThreadTaskSwitch,
	// ThreadTaskComplete; see lane.go). A lane task record whose number
	// OTF2 cannot hold counts in TaskEventsLeftOut.
	// LaneTasksCompletedAtEnd counts the lane tasks whose completion the
	// trace lacks (they held their lane when the measurement closed),
	// completed at their lane's last event (or at the next task's switch,
	// in a file not written by measure).
	LaneTeams               int
	LaneTaskEvents          uint64
	LaneTasksCompletedAtEnd uint64

	// RmaOperations counts the RMA operations written (RmaPut, RmaGet,
	// RmaAtomic); RmaLeftOut the RMA records left out because they name a
	// window whose communicator is not exported (or no window), a target
	// not in the window's communicator, an undefined RMA group, or a type
	// OTF2 does not have (see rma.go).
	RmaOperations uint64
	RmaLeftOut    uint64

	// Annotations (annotation.go): the marks, region parameters and
	// channel messages written (a channel message counts at its send and
	// at its receive); AnnotationsLeftOut those that name a mark,
	// parameter, string or channel their file does not define (a trace
	// recovered from a mapping keeps no such definitions).
	Marks, Parameters, ChannelMessages uint64
	AnnotationsLeftOut                 uint64
}

// Export writes the files as one OTF2 archive in dir, which must not exist:
// dir/traces.otf2 is what readers open. Times are nanoseconds since the
// start of the earliest file (see timeline). On any error nothing is left
// behind, dir included. A zero Options gives the creator "hmbtrace",
// libotf2's definition chunk size, and event chunks sized so that a reader
// of the archive holds one of every location within a gigabyte, down to
// the least libotf2 reads (otf2.EventChunkSizeFor: libotf2's 1 MiB up to
// 1024 locations, 256 KiB from 4096). The locations are written by HMB_TOOL_PROCS or
// GOMAXPROCS workers.
func Export(dir string, files []*tracefile.File, opt otf2.Options) (st Stats, err error) {
	procs, err := parallel.Procs(0)
	if err != nil {
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	return ExportProcs(dir, files, opt, procs)
}

// ExportProcs is Export with procs workers, each writing one location's
// event file at a time. The archive is the same byte for byte for any
// number (see parallel.go); its memory grows by one event chunk and one
// location's reading buffers per worker.
func ExportProcs(dir string, files []*tracefile.File, opt otf2.Options, procs int) (st Stats, err error) {
	if len(files) == 0 {
		return st, errors.New("otf2 export: no trace files")
	}
	if opt.Creator == "" {
		opt.Creator = "hmbtrace"
	}
	if opt.EventChunkSize == 0 {
		locs := 0
		for _, f := range files {
			locs += len(f.Locations)
		}
		opt.EventChunkSize = otf2.EventChunkSizeFor(locs)
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return st, fmt.Errorf("otf2 export: %s already exists", dir)
		}
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	a, err := otf2.Create(dir, opt)
	if err != nil {
		os.Remove(dir)
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	defer func() {
		if err != nil {
			a.Abort()
			os.RemoveAll(dir) // we made it; Abort leaves the directory itself
		}
	}()
	x := &exporter{a: a, files: files, tl: newTimeline(files), st: &st, skipped: map[uint64]bool{},
		lanes: make([]laneTeam, len(files))}
	if err := x.define(); err != nil {
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	if err := x.planOpenMP(procs); err != nil {
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	if err := x.locations(procs); err != nil {
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	_, last, _ := a.TimeRange()
	if err := a.ClockProperties(1e9, 0, max(x.tl.end, last)+1); err != nil {
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	if err := a.Close(); err != nil {
		return st, fmt.Errorf("otf2 export: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return st, nil
}

// regionKey is a region no file defines: the name the tools give it.
type regionKey struct{ name string }

// exporter holds the definitions made for the files and the state shared by
// the locations' event loops.
type exporter struct {
	a     *otf2.Archive
	files []*tracefile.File
	tl    timeline
	st    *Stats

	// u is the run's definitions (tracefile.ReadUnified): the regions and
	// communicators exported, each once, and each file's ids of them.
	u *tracefile.Unified
	// regions are the regions of ids no file defines, by the name the
	// tools give them (region#id).
	regions    map[regionKey]otf2.RegionRef
	regionRefs []map[uint32]otf2.RegionRef // per file: region id -> reference
	members    map[string]otf2.MetricMemberRef
	classes    map[string]otf2.MetricRef
	metric     []otf2.MetricRef // per file; valid if the file has metrics
	writers    [][]*otf2.EventWriter
	peers      *tracefile.Peers

	mpi     *mpiComms       // nil until the first MPI definition is needed
	rma     *rmaDefs        // windows (rma.go); nil without MPI definitions
	skipped map[uint64]bool // the location's requests left out, whose completion is too
	comm    otf2.CommRef
	hasComm bool
	// userIndex is a location's index in the user paradigm's
	// COMM_LOCATIONS group, nil until defined (userLocations).
	userIndex map[otf2.LocationRef]uint64
	values    []otf2.MetricValue
	open      []openRegion

	annot *annotationDefs // nil without annotations (annotation.go)

	omp                      []*ompPlan // per file; nil for a file without OpenMP parallel regions
	parallels, implicitTasks int        // entered so far on the location being exported
	loc                      int        // the location being exported, an index of its file's
	lastTeam                 teamOfLoc  // of the location's last implicit task with a team
	run                      taskRun    // the explicit tasks the location runs (task.go)

	lanes        []laneTeam   // per file: the team of its lanes' tasks (lane.go)
	inLaneTeam   bool         // the location being exported began its file's lane team
	laneTeamRef  otf2.CommRef // that team
	laneTaskOpen uint32       // the lane task running on the location (its generation), 0 if none

	// sh is set on a worker's exporter of one location, the n-th of the
	// export (see parallel.go); nil on the sequential path.
	sh *shared
	n  int
	// own is, on a worker's exporter, the file of its location: it keeps
	// that file's region references and lane team (ownRefs, ownLane), not
	// a copy of the slices over every file, which, made for every
	// location, would make the export's allocations quadratic in the
	// ranks.
	own     int
	ownRefs map[uint32]otf2.RegionRef
	ownLane laneTeam
	// ahead reads each location's events on a goroutine of their own:
	// there are more workers than locations.
	ahead bool
}

// openRegion is a region open on the location being exported, with the
// collective operation that ends before its leave, if any.
type openRegion struct {
	ref   otf2.RegionRef
	depth int // its calling depth: removed ancestors make it more than its place
	coll  *pendingColl
	// An OpenMP parallel region forked a team (ThreadJoin after its
	// leave); an implicit task is in a team (ThreadTeamEnd after it).
	fork     bool
	hasTeam  bool
	team     otf2.CommRef
	teamRank uint32 // the location's rank in team
}

type pendingColl struct {
	op             otf2.CollectiveOp
	comm           otf2.CommRef
	root           uint32
	sent, received uint64
}

// define makes the definitions: the system tree (a root, one node per
// host), a location group per file, its locations, regions and metrics.
func (x *exporter) define() error {
	a := x.a
	root, err := a.SystemTreeNode(x.files[0].Header.Name, "machine", otf2.NoParent)
	if err != nil {
		return err
	}
	hosts := map[string]otf2.SystemTreeNodeRef{}
	if x.u, err = tracefile.ReadUnified(x.files); err != nil {
		return err
	}
	x.regions = map[regionKey]otf2.RegionRef{}
	x.members = map[string]otf2.MetricMemberRef{}
	x.classes = map[string]otf2.MetricRef{}
	x.regionRefs = make([]map[uint32]otf2.RegionRef, len(x.files))
	x.metric = make([]otf2.MetricRef, len(x.files))
	x.writers = make([][]*otf2.EventWriter, len(x.files))
	// The run's regions, each once, defined with the first file that has
	// it, in its order: the archive's definitions come in the order they
	// did when each file's regions were merged by themselves.
	refs := make([]otf2.RegionRef, len(x.u.Defs.Regions))
	defined := make([]bool, len(x.u.Defs.Regions))
	for i, f := range x.files {
		h := &f.Header
		node, ok := hosts[h.Host]
		if !ok {
			if node, err = a.SystemTreeNode(h.Host, "node", root); err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			hosts[h.Host] = node
		}
		group, err := a.LocationGroup(fmt.Sprintf("Rank %d", h.Rank), node)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		x.regionRefs[i] = make(map[uint32]otf2.RegionRef, len(f.Regions))
		for _, fr := range f.Regions {
			r, k := x.u.Region(i, fr.ID)
			if r == nil {
				continue
			}
			if !defined[k-1] {
				if refs[k-1], err = x.defineRegion(r.Name, r.File, r.Line, r.Paradigm); err != nil {
					return fmt.Errorf("%s: region %d: %w", f.Path, fr.ID, err)
				}
				defined[k-1] = true
			}
			x.regionRefs[i][fr.ID] = refs[k-1]
		}
		if err := x.defineMetrics(i); err != nil {
			return err
		}
		for _, l := range f.Locations {
			w, err := a.Location(l.Name, group)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			x.writers[i] = append(x.writers[i], w)
			x.st.Locations++
		}
	}
	x.peers = tracefile.NewPeers(x.files)
	if err := x.defineAnnotations(); err != nil {
		return err
	}
	for _, f := range x.files {
		if len(f.Comms) > 0 {
			// An MPI run: its communicators are defined whether or not
			// events use them, and its windows.
			if err := x.defineMPI(); err != nil {
				return err
			}
			return x.defineRma()
		}
	}
	return nil
}

// region returns the reference of region id of file i: the run's region
// it is (tracefile.ReadUnified), which define made. An id the file does
// not define (which the reader lets through) becomes a region named after
// it, defined on first use.
func (x *exporter) region(i int, id uint32) (otf2.RegionRef, error) {
	if ref, ok := x.refsOf(i)[id]; ok {
		return ref, nil
	}
	if x.sh != nil {
		return x.sh.region(x, i, id)
	}
	f := x.files[i]
	key := regionKey{name: f.RegionName(id)}
	ref, ok := x.regions[key]
	if !ok {
		var err error
		if ref, err = x.defineRegion(key.name, "", 0, tracefile.ParadigmUser); err != nil {
			return 0, fmt.Errorf("%s: region %d: %w", f.Path, id, err)
		}
		x.regions[key] = ref
	}
	x.regionRefs[i][id] = ref
	return ref, nil
}

// refsOf returns the region references of file i that x holds: on a
// worker's exporter, those of its own file only (nil for another).
func (x *exporter) refsOf(i int) map[uint32]otf2.RegionRef {
	if x.sh != nil {
		if i == x.own {
			return x.ownRefs
		}
		return nil
	}
	return x.regionRefs[i]
}

// defineRegion defines a region of the archive.
func (x *exporter) defineRegion(name, file string, line int, paradigm tracefile.Paradigm) (otf2.RegionRef, error) {
	l := uint32(0)
	if line > 0 && uint64(line) <= math.MaxUint32 {
		l = uint32(line)
	}
	role, par := regionKind(name, paradigm)
	return x.a.Region(otf2.RegionDef{Name: name, File: file, BeginLine: l, Role: role, Paradigm: par})
}

// defineMetrics defines the counters of file i: a metric member per counter
// name (shared by the files), a metric class per list of counters. The
// values are counts since the location's counters were opened.
func (x *exporter) defineMetrics(i int) error {
	names := x.files[i].Header.Metrics
	if len(names) == 0 {
		return nil
	}
	key := strings.Join(names, "\x00")
	if c, ok := x.classes[key]; ok {
		x.metric[i] = c
		return nil
	}
	refs := make([]otf2.MetricMemberRef, len(names))
	for k, name := range names {
		m, ok := x.members[name]
		if !ok {
			var err error
			m, err = x.a.MetricMember(otf2.MetricMemberDef{Name: name, Description: "perf event " + name,
				Unit: "#", Type: otf2.MetricTypeOther, Mode: otf2.MetricAccumulatedStart, ValueType: otf2.TypeUint64,
				Base: otf2.BaseDecimal})
			if err != nil {
				return fmt.Errorf("%s: %w", x.files[i].Path, err)
			}
			x.members[name] = m
		}
		refs[k] = m
	}
	c, err := x.a.MetricClass(refs, otf2.MetricSynchronous, otf2.RecorderCPU)
	if err != nil {
		return fmt.Errorf("%s: %w", x.files[i].Path, err)
	}
	x.classes[key] = c
	x.metric[i] = c
	return nil
}

// location writes the events of location l of file i and closes its
// writer. Regions still open at the end are left at the last timestamp.
func (x *exporter) location(i, k int, w *otf2.EventWriter) error {
	f := x.files[i]
	l := &f.Locations[k]
	x.open = x.open[:0]
	x.parallels, x.implicitTasks, x.loc, x.lastTeam, x.run = 0, 0, k, teamOfLoc{}, taskRun{}
	x.inLaneTeam, x.laneTaskOpen = false, 0
	clear(x.skipped)
	if err := x.skipRequests(i, l); err != nil {
		return err
	}
	var e tracefile.Event
	var last uint64
	it := f.EventsWith(l.ID, x.ahead)
	defer it.Close()
	for it.Next(&e) {
		ts := x.tl.at(i, f, e.Time)
		last = ts
		if err := x.event(i, k, w, &e, ts); err != nil {
			return fmt.Errorf("%s: location %q: %v at %d ns: %w", f.Path, l.Name, e.Kind, ts, err)
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for n := len(x.open); n > 0; n-- {
		if err := x.leave(w, last); err != nil {
			return err
		}
		x.st.ClosedAtEnd++
	}
	if x.laneTaskOpen != 0 {
		if err := x.completeLaneTask(w, last); err != nil {
			return err
		}
	}
	if x.inLaneTeam {
		if err := w.ThreadTeamEnd(last, x.laneTeamRef); err != nil {
			return err
		}
	}
	x.st.Events += w.Events()
	return w.Close()
}

// leave leaves the innermost open region, ending its collective operation
// first.
func (x *exporter) leave(w *otf2.EventWriter, ts uint64) error {
	o := x.open[len(x.open)-1]
	x.open = x.open[:len(x.open)-1]
	if c := o.coll; c != nil {
		if err := w.MpiCollectiveEnd(ts, c.op, c.comm, c.root, c.sent, c.received); err != nil {
			return err
		}
	}
	if err := w.Leave(ts, o.ref); err != nil {
		return err
	}
	if o.hasTeam {
		if err := w.ThreadTeamEnd(ts, o.team); err != nil {
			return err
		}
	}
	if o.fork {
		return w.ThreadJoin(ts, otf2.ParadigmOpenMP)
	}
	return nil
}

func (x *exporter) event(i, k int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	switch e.Kind {
	case encode.KindEnter:
		r, err := x.region(i, e.Region)
		if err != nil {
			return err
		}
		o := openRegion{ref: r, depth: e.Depth}
		if err := x.ompEnter(i, k, e.Region, &o, w, ts); err != nil {
			return err
		}
		x.open = append(x.open, o)
		return w.Enter(ts, r)
	case encode.KindLeave:
		if len(x.open) == 0 {
			return errors.New("leave with no region open")
		}
		return x.leave(w, ts)
	case encode.KindSend, encode.KindRecv, encode.KindIsend, encode.KindIrecv:
		c, peer, ok, err := x.p2p(i, e)
		if err != nil || !ok {
			if err == nil && e.Kind == encode.KindIsend {
				// Its completion is left out with it.
				x.skipped[e.Request] = true
			}
			return err
		}
		switch e.Kind {
		case encode.KindSend:
			return w.MpiSend(ts, peer, c, e.Tag, e.Bytes)
		case encode.KindRecv:
			return w.MpiRecv(ts, peer, c, e.Tag, e.Bytes)
		case encode.KindIsend:
			return w.MpiIsend(ts, peer, c, e.Tag, e.Bytes, e.Request)
		}
		return w.MpiIrecv(ts, peer, c, e.Tag, e.Bytes, e.Request)
	case encode.KindIsendComplete:
		if x.skipped[e.Request] {
			delete(x.skipped, e.Request)
			return nil
		}
		return w.MpiIsendComplete(ts, e.Request)
	case encode.KindIrecvRequest:
		if x.skipped[e.Request] {
			// Its receive is left out; the receive counts it.
			delete(x.skipped, e.Request)
			return nil
		}
		return w.MpiIrecvRequest(ts, e.Request)
	case encode.KindRequestCancelled:
		if x.skipped[e.Request] {
			delete(x.skipped, e.Request)
			return nil
		}
		return w.MpiRequestCancelled(ts, e.Request)
	case encode.KindCollective:
		return x.collective(i, w, e, ts)
	case encode.KindCollRequest:
		return w.NonBlockingCollectiveRequest(ts, e.Request)
	case encode.KindCollComplete:
		op, c, root, ok, err := x.collectiveOp(i, e)
		if err != nil || !ok {
			return err
		}
		x.st.Collectives++
		return w.NonBlockingCollectiveComplete(ts, op, c, root, e.Bytes, e.Received, e.Request)
	case encode.KindTaskCreate, encode.KindTaskSwitch, encode.KindTaskComplete:
		return x.task(i, w, e, ts)
	case encode.KindTaskSuspend:
		// OTF2 has no event for it: the task's regions were left before
		// it, and the switch that follows says which task runs now.
		return nil
	case encode.KindMetric:
		names := x.files[i].Header.Metrics
		if len(e.Values) != len(names) {
			return fmt.Errorf("metric record with %d values, the header names %d counters", len(e.Values), len(names))
		}
		x.values = x.values[:0]
		for _, v := range e.Values {
			x.values = append(x.values, otf2.Uint64Value(v))
		}
		return w.Metric(ts, x.metric[i], x.values)
	}
	if e.Kind.IsRma() {
		return x.rmaEvent(i, w, e, ts)
	}
	if e.Kind.IsAnnotation() {
		return x.annotation(i, w, e, ts)
	}
	return fmt.Errorf("unknown event kind %d", e.Kind)
}

// p2p returns the communicator of a point-to-point record of file i and
// the peer's rank in it: for a world rank, on the record's MPI
// communicator; for a location of the same process, on the communicator
// of locations. ok is false, and the message counted as left out, if the
// peer has no exported location or is not a member of the communicator.
func (x *exporter) p2p(i int, e *tracefile.Event) (c otf2.CommRef, rank uint32, ok bool, err error) {
	end, ok, err := x.peers.Resolve(i, e)
	if err != nil || !ok {
		x.st.MessagesWithoutPeer++
		return 0, 0, false, err
	}
	if !e.PeerRank {
		if !x.hasComm {
			if x.sh != nil {
				err = x.sh.defineComm(x)
			} else {
				err = x.defineComm()
			}
			if err != nil {
				return 0, 0, false, err
			}
		}
		return x.comm, uint32(x.writers[end.File][end.Loc].Ref()), true, nil
	}
	mc, ok, err := x.commOf(i, e.Comm)
	if err != nil || !ok {
		x.st.MessagesWithoutPeer++
		return 0, 0, false, err
	}
	if rank, ok = mc.rankOf(int64(e.Peer), x.files[i].Header.Rank); !ok {
		x.st.MessagesWithoutPeer++
	}
	return mc.ref, rank, ok, nil
}

// skipRequests marks the receive requests of location l of file i whose
// receive will be left out, its peer not being an exported member of its
// communicator, so that their MpiIrecvRequest is left out too and no
// request stays open. Only an export without some ranks or with invalid
// communicators can have them, so only then does it read the location's
// events a second time.
func (x *exporter) skipRequests(i int, l *tracefile.Location) error {
	if x.mpi == nil || !x.mpi.partial {
		return nil
	}
	f := x.files[i]
	var e tracefile.Event
	it := f.Events(l.ID)
	for it.Next(&e) {
		if e.Kind != encode.KindIrecv || !e.PeerRank {
			continue
		}
		if _, ok, err := x.peers.Resolve(i, &e); err != nil {
			return err
		} else if !ok {
			x.skipped[e.Request] = true
			continue
		}
		c := x.mpi.fileComm(x.u, i, e.Comm)
		if c == nil {
			x.skipped[e.Request] = true
			continue
		}
		if _, ok := c.rankOf(int64(e.Peer), f.Header.Rank); !ok {
			x.skipped[e.Request] = true
		}
	}
	return it.Err()
}

// collective starts the collective operation of a collective record: its
// MpiCollectiveBegin now, inside the operation's region, and its
// MpiCollectiveEnd before that region's leave. The operation is the
// region's: if the buffer shed the region's enter and leave, nothing names
// it and the record is counted as left out.
func (x *exporter) collective(i int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	if len(x.open) == 0 || x.open[len(x.open)-1].depth != e.Depth || x.open[len(x.open)-1].coll != nil {
		x.st.CollectivesLeftOut++
		return nil
	}
	op, c, root, ok, err := x.collectiveOp(i, e)
	if err != nil || !ok {
		return err
	}
	x.open[len(x.open)-1].coll = &pendingColl{op: op, comm: c, root: root, sent: e.Bytes, received: e.Received}
	x.st.Collectives++
	return w.MpiCollectiveBegin(ts)
}

// collectiveOp returns the operation of a collective record of file i (by
// the name of its region), its communicator and root; ok is false, and the
// record counted as left out, if either is unknown.
func (x *exporter) collectiveOp(i int, e *tracefile.Event) (op otf2.CollectiveOp, c otf2.CommRef, root uint32, ok bool, err error) {
	f, ok := mpiFunction(x.files[i].RegionName(e.Region))
	if !ok || !f.coll {
		x.st.CollectivesLeftOut++
		return 0, 0, 0, false, nil
	}
	mc, ok, err := x.commOf(i, e.Comm)
	if err != nil || !ok {
		x.st.CollectivesLeftOut++
		return 0, 0, 0, false, err
	}
	return f.op, mc.ref, x.root(i, mc, e.Root), true, nil
}

// root returns the rank in c of the world rank root (negative: none).
func (x *exporter) root(i int, c *comm, root int64) uint32 {
	if root < 0 {
		return otf2.NoRoot
	}
	r, ok := c.rankOf(root, x.files[i].Header.Rank)
	if !ok {
		x.st.RootsNotExported++
		return otf2.NoRoot
	}
	return r
}

// defineComm defines the communicator of all exported locations, rank i
// being location reference i, at the first message between locations:
// traces without such messages get no such communicator. Its group is of
// the user paradigm: OTF2 allows one COMM_LOCATIONS group per paradigm, and
// MPI's lists ranks, not locations.
func (x *exporter) defineComm() error {
	if err := x.userLocations(); err != nil {
		return err
	}
	ranks := make([]uint64, 0, x.st.Locations)
	for _, ws := range x.writers {
		for _, w := range ws {
			ranks = append(ranks, x.userIndex[w.Ref()])
		}
	}
	g, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmUser, Members: ranks})
	if err != nil {
		return err
	}
	c, err := x.a.Comm(CommName, g, otf2.NoComm)
	if err != nil {
		return err
	}
	x.comm, x.hasComm = c, true
	return nil
}

// userLocations defines the user paradigm's COMM_LOCATIONS group, of all
// exported locations in the order of their references, at its first use:
// the communicator of locations and the lanes' thread teams (lane.go)
// index it.
func (x *exporter) userLocations() error {
	if x.userIndex != nil {
		return nil
	}
	index := map[otf2.LocationRef]uint64{}
	var locs []uint64
	for _, ws := range x.writers {
		for _, w := range ws {
			index[w.Ref()] = uint64(len(locs))
			locs = append(locs, uint64(w.Ref()))
		}
	}
	if _, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommLocations, Paradigm: otf2.ParadigmUser, Members: locs}); err != nil {
		return err
	}
	x.userIndex = index
	return nil
}
