// Package convert exports hmbtrace trace files as one OTF2 archive: a
// location group per file (process), an OTF2 location per hmbtrace
// location, regions with file and line, counters as metrics and messages as
// MPI point-to-point events. It streams each location's events from the
// reader into its event writer, so memory does not grow with the trace.
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
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// CommName names the communicator over all exported locations that the
// messages' MpiSend and MpiRecv events refer to: a location's rank in it is
// its OTF2 location reference.
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
	// is not an exported location: a rank of a file not exported (or of
	// several), or an undefined location id.
	MessagesWithoutPeer uint64
	// Collectives counts the collective operations (MPI_Bcast, ...) whose
	// root and bytes the archive does not carry: they are exported as
	// their regions, with the MPI paradigm and a collective role, but
	// without MpiCollectiveBegin/End records, which need the operation's
	// communicator, a thing the trace does not record.
	Collectives uint64
}

// Export writes the files as one OTF2 archive in dir, which must not exist:
// dir/traces.otf2 is what readers open. Times are nanoseconds since the
// start of the earliest file (see timeline). On any error nothing is left
// behind, dir included. A zero Options gives libotf2's chunk sizes and the
// creator "hmbtrace".
func Export(dir string, files []*tracefile.File, opt otf2.Options) (st Stats, err error) {
	if len(files) == 0 {
		return st, errors.New("otf2 export: no trace files")
	}
	if opt.Creator == "" {
		opt.Creator = "hmbtrace"
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
	x := &exporter{a: a, files: files, tl: newTimeline(files), st: &st}
	if err := x.define(); err != nil {
		return st, fmt.Errorf("otf2 export: %w", err)
	}
	for i, f := range files {
		for k := range f.Locations {
			if err := x.location(i, &f.Locations[k], x.writers[i][k]); err != nil {
				return st, fmt.Errorf("otf2 export: %w", err)
			}
		}
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

type regionKey struct {
	name, file string
	line       int
}

// exporter holds the definitions made for the files and the state shared by
// the locations' event loops.
type exporter struct {
	a     *otf2.Archive
	files []*tracefile.File
	tl    timeline
	st    *Stats

	regions    map[regionKey]otf2.RegionRef
	regionRefs []map[uint32]otf2.RegionRef // per file: region id -> reference
	members    map[string]otf2.MetricMemberRef
	classes    map[string]otf2.MetricRef
	metric     []otf2.MetricRef // per file; valid if the file has metrics
	writers    [][]*otf2.EventWriter
	peers      *tracefile.Peers

	comm    otf2.CommRef
	hasComm bool
	values  []otf2.MetricValue
	open    []otf2.RegionRef
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
	x.regions = map[regionKey]otf2.RegionRef{}
	x.members = map[string]otf2.MetricMemberRef{}
	x.classes = map[string]otf2.MetricRef{}
	x.regionRefs = make([]map[uint32]otf2.RegionRef, len(x.files))
	x.metric = make([]otf2.MetricRef, len(x.files))
	x.writers = make([][]*otf2.EventWriter, len(x.files))
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
		x.regionRefs[i] = map[uint32]otf2.RegionRef{}
		for _, r := range f.Regions {
			if _, err := x.region(i, r.ID); err != nil {
				return err
			}
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
	return nil
}

// region returns the reference of region id of file i, defining it on
// first use. Regions of several files with the same name, file and line
// are one region; an id the file does not define (which the reader lets
// through) becomes a region named after it.
func (x *exporter) region(i int, id uint32) (otf2.RegionRef, error) {
	if ref, ok := x.regionRefs[i][id]; ok {
		return ref, nil
	}
	f := x.files[i]
	key := regionKey{name: f.RegionName(id)}
	for _, r := range f.Regions {
		if r.ID == id {
			key.file, key.line = r.File, r.Line
			break
		}
	}
	ref, ok := x.regions[key]
	if !ok {
		line := uint32(0)
		if key.line > 0 && uint64(key.line) <= math.MaxUint32 {
			line = uint32(key.line)
		}
		role, paradigm := regionKind(key.name)
		var err error
		ref, err = x.a.Region(otf2.RegionDef{Name: key.name, File: key.file, BeginLine: line,
			Role: role, Paradigm: paradigm})
		if err != nil {
			return 0, fmt.Errorf("%s: region %d: %w", f.Path, id, err)
		}
		x.regions[key] = ref
	}
	x.regionRefs[i][id] = ref
	return ref, nil
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
func (x *exporter) location(i int, l *tracefile.Location, w *otf2.EventWriter) error {
	f := x.files[i]
	x.open = x.open[:0]
	var e tracefile.Event
	var last uint64
	it := f.Events(l.ID)
	for it.Next(&e) {
		ts := x.tl.at(i, f, e.Time)
		last = ts
		if err := x.event(i, w, &e, ts); err != nil {
			return fmt.Errorf("%s: location %q: %v at %d ns: %w", f.Path, l.Name, e.Kind, ts, err)
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for n := len(x.open); n > 0; n-- {
		if err := w.Leave(last, x.open[n-1]); err != nil {
			return err
		}
		x.st.ClosedAtEnd++
	}
	x.st.Events += w.Events()
	return w.Close()
}

func (x *exporter) event(i int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	switch e.Kind {
	case encode.KindEnter:
		r, err := x.region(i, e.Region)
		if err != nil {
			return err
		}
		x.open = append(x.open, r)
		return w.Enter(ts, r)
	case encode.KindLeave:
		if len(x.open) == 0 {
			return errors.New("leave with no region open")
		}
		r := x.open[len(x.open)-1]
		x.open = x.open[:len(x.open)-1]
		return w.Leave(ts, r)
	case encode.KindSend, encode.KindRecv:
		end, ok, err := x.peers.Resolve(i, e)
		if err != nil {
			return err
		}
		if !ok {
			x.st.MessagesWithoutPeer++
			return nil
		}
		peer := x.writers[end.File][end.Loc].Ref()
		if !x.hasComm {
			if err := x.defineComm(); err != nil {
				return err
			}
		}
		if e.Kind == encode.KindSend {
			return w.MpiSend(ts, uint32(peer), x.comm, e.Tag, e.Bytes)
		}
		return w.MpiRecv(ts, uint32(peer), x.comm, e.Tag, e.Bytes)
	case encode.KindCollective:
		x.st.Collectives++ // its region's enter and leave are exported
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
	return fmt.Errorf("unknown event kind %d", e.Kind)
}

// regionKind gives the OTF2 role and paradigm of a region by its name: the
// MPI functions (those hmbtrace's PMPI wrappers record, and any other
// "MPI_" name) belong to the MPI paradigm, collectives with their
// collective role, so that OTF2 tools colour and group them as MPI.
func regionKind(name string) (otf2.RegionRole, otf2.Paradigm) {
	if !strings.HasPrefix(name, "MPI_") {
		return otf2.RoleFunction, otf2.ParadigmUser
	}
	if role, ok := mpiRoles[name]; ok {
		return role, otf2.ParadigmMPI
	}
	return otf2.RoleFunction, otf2.ParadigmMPI
}

var mpiRoles = map[string]otf2.RegionRole{
	"MPI_Barrier": otf2.RoleBarrier,
	"MPI_Bcast":   otf2.RoleCollOne2All, "MPI_Scatter": otf2.RoleCollOne2All, "MPI_Scatterv": otf2.RoleCollOne2All,
	"MPI_Gather": otf2.RoleCollAll2One, "MPI_Gatherv": otf2.RoleCollAll2One, "MPI_Reduce": otf2.RoleCollAll2One,
	"MPI_Allreduce": otf2.RoleCollAll2All, "MPI_Allgather": otf2.RoleCollAll2All, "MPI_Allgatherv": otf2.RoleCollAll2All,
	"MPI_Alltoall": otf2.RoleCollAll2All, "MPI_Alltoallv": otf2.RoleCollAll2All, "MPI_Alltoallw": otf2.RoleCollAll2All,
	"MPI_Reduce_scatter": otf2.RoleCollAll2All, "MPI_Reduce_scatter_block": otf2.RoleCollAll2All,
	"MPI_Scan": otf2.RoleCollOther, "MPI_Exscan": otf2.RoleCollOther,
	"MPI_Send": otf2.RolePoint2Point, "MPI_Ssend": otf2.RolePoint2Point, "MPI_Bsend": otf2.RolePoint2Point,
	"MPI_Rsend": otf2.RolePoint2Point, "MPI_Recv": otf2.RolePoint2Point, "MPI_Isend": otf2.RolePoint2Point,
	"MPI_Irecv": otf2.RolePoint2Point, "MPI_Sendrecv": otf2.RolePoint2Point, "MPI_Wait": otf2.RolePoint2Point,
	"MPI_Waitall": otf2.RolePoint2Point, "MPI_Waitany": otf2.RolePoint2Point, "MPI_Waitsome": otf2.RolePoint2Point,
	"MPI_Test": otf2.RolePoint2Point, "MPI_Testall": otf2.RolePoint2Point, "MPI_Testany": otf2.RolePoint2Point,
	"MPI_Testsome": otf2.RolePoint2Point,
}

// defineComm defines the communicator of all exported locations, rank i
// being location reference i, at the first message: traces without
// messages get no communicator.
func (x *exporter) defineComm() error {
	ranks := make([]otf2.LocationRef, 0, x.st.Locations)
	for _, ws := range x.writers {
		for _, w := range ws {
			ranks = append(ranks, w.Ref())
		}
	}
	c, err := x.a.MPICommWorld(CommName, ranks)
	if err != nil {
		return err
	}
	x.comm, x.hasComm = c, true
	return nil
}
