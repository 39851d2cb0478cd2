package tracetest

import (
	"cmp"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Builder writes a trace file event by event, for what the probes cannot
// be made to record on this machine (counters without a PMU, other hosts)
// or must not record (streams that do not nest). Times are reduced ticks;
// with the header NewBuilder sets, a tick is a nanosecond.
type Builder struct {
	// Trace is the file's header and definitions. Tests may change it
	// (metrics, a location's Interrupted) before Write, which fills in the
	// locations' level statistics and the end time.
	Trace tracefile.Trace
	// Matrix makes Write fill in each location's exact communication
	// matrix (Location.Comm) from its message records, as the probes
	// count them; else the locations' Comm is written as the test set it.
	Matrix bool
	locs   []*Location
}

// Location is one location of a Builder: its records, one stream per
// (calling depth, event class) level, in the order the levels were first
// used.
type Location struct {
	id     uint32
	depth  int
	levels []level
	last   uint64 // time of the latest record
	seq    uint32 // its sequence number among the records at that time
}

type level struct {
	depth   int
	class   tracefile.Class
	records []encode.Record
}

// NewBuilder starts the trace of rank of run name on host, which started
// at start, with the given regions (ids 1, 2, ... in order).
func NewBuilder(name, host string, rank int, start time.Time, regions ...string) *Builder {
	b := &Builder{Trace: tracefile.Trace{Header: tracefile.Header{Name: name, Host: host, Rank: rank, StartWall: start,
		Clock: "monotonic", TicksPerSecond: 1e9, Techniques: encode.All, Policy: "depth"}}}
	for i, r := range regions {
		b.Trace.Regions = append(b.Trace.Regions, tracefile.Region{ID: uint32(i + 1), Name: r})
	}
	return b
}

// Location adds a location (ids 0, 1, ... in order).
func (b *Builder) Location(name string) *Location {
	l := &Location{id: uint32(len(b.locs))}
	b.locs = append(b.locs, l)
	b.Trace.Locations = append(b.Trace.Locations, tracefile.Location{ID: l.id, Name: name})
	return l
}

// Comm defines a communicator (ids 1, 2, ... in order): members and remote
// are world ranks, remote nil for an intra-communicator.
func (b *Builder) Comm(name string, parent uint32, members, remote []int32) uint32 {
	id := uint32(len(b.Trace.Comms) + 1)
	b.Trace.Comms = append(b.Trace.Comms, tracefile.Comm{ID: id, Name: name, Parent: parent, Members: members, Remote: remote})
	return id
}

// Put appends r to the level (depth, class) as it is, whatever the calls
// open: for streams that do not nest. Records at the same time are
// numbered in the order they are put.
func (l *Location) Put(depth int, class tracefile.Class, r encode.Record) {
	if r.Time == l.last {
		l.seq++
	} else {
		l.last, l.seq = r.Time, 0
	}
	r.Seq = l.seq
	lv := l.level(depth, class)
	lv.records = append(lv.records, r)
}

func (l *Location) level(depth int, class tracefile.Class) *level {
	for i := range l.levels {
		if lv := &l.levels[i]; lv.depth == depth && lv.class == class {
			return lv
		}
	}
	l.levels = append(l.levels, level{depth: depth, class: class})
	return &l.levels[len(l.levels)-1]
}

// Enter enters region at t; counter values, if any, follow the enter.
func (l *Location) Enter(t uint64, region uint32, counters ...uint64) {
	l.depth++
	l.Put(l.depth, tracefile.ClassRegion, encode.Record{Kind: encode.KindEnter, Time: t, Region: region})
	l.metric(t, counters)
}

// Leave leaves the innermost region at t; counter values, if any, follow
// the leave.
func (l *Location) Leave(t uint64, counters ...uint64) {
	l.Put(l.depth, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: t})
	l.metric(t, counters)
	l.depth--
}

func (l *Location) metric(t uint64, counters []uint64) {
	if len(counters) > 0 {
		l.Put(l.depth, tracefile.ClassMetric, encode.Record{Kind: encode.KindMetric, Time: t, Values: counters})
	}
}

// Message sends (kind encode.KindSend) or receives (encode.KindRecv) a
// message at t in the innermost region: peer is a location, or a rank if
// rank is set.
func (l *Location) Message(t uint64, kind encode.Kind, peer uint64, rank bool, tag uint32, bytes uint64) {
	l.Put(l.depth, tracefile.ClassMessage, encode.Record{Kind: kind, Time: t, Peer: peer, PeerRank: rank, Tag: tag, Bytes: bytes})
}

// MessageComm sends (encode.KindSend) or receives (encode.KindRecv) a
// message at t to or from world rank peer on communicator comm.
func (l *Location) MessageComm(t uint64, kind encode.Kind, peer int32, tag uint32, bytes uint64, comm uint32) {
	l.Put(l.depth, tracefile.ClassMessage, encode.Record{Kind: kind, Time: t, Peer: uint64(peer), PeerRank: true, Tag: tag, Bytes: bytes, Comm: comm})
}

// Isend starts a non-blocking send to world rank peer at t.
func (l *Location) Isend(t uint64, peer int32, tag uint32, bytes uint64, comm uint32, request uint64) {
	l.Put(l.depth, tracefile.ClassMessage, encode.Record{Kind: encode.KindIsend, Time: t, Peer: uint64(peer), PeerRank: true, Tag: tag, Bytes: bytes, Comm: comm, Request: request})
}

// Irecv completes a non-blocking receive from world rank peer at t.
func (l *Location) Irecv(t uint64, peer int32, tag uint32, bytes uint64, comm uint32, request uint64) {
	l.Put(l.depth, tracefile.ClassMessage, encode.Record{Kind: encode.KindIrecv, Time: t, Peer: uint64(peer), PeerRank: true, Tag: tag, Bytes: bytes, Comm: comm, Request: request})
}

// Request puts a record that holds only a request at t:
// encode.KindIsendComplete, KindIrecvRequest, KindRequestCancelled (in the
// message class) or KindCollRequest (in the collective class).
func (l *Location) Request(t uint64, kind encode.Kind, request uint64) {
	class := tracefile.ClassMessage
	if kind == encode.KindCollRequest {
		class = tracefile.ClassCollective
	}
	l.Put(l.depth, class, encode.Record{Kind: kind, Time: t, Request: request})
}

// Collective puts a collective's record at t in the innermost region (the
// collective's own): root -1 for none, bytes sent and received.
func (l *Location) Collective(t uint64, root int64, sent, received uint64, comm uint32) {
	l.Put(l.depth, tracefile.ClassCollective, encode.Record{Kind: encode.KindCollective, Time: t, Root: root, Bytes: sent, Received: received, Comm: comm})
}

// CollComplete completes a non-blocking collective at t, started by a call
// of region.
func (l *Location) CollComplete(t uint64, region uint32, root int64, sent, received uint64, comm uint32, request uint64) {
	l.Put(l.depth, tracefile.ClassCollective, encode.Record{Kind: encode.KindCollComplete, Time: t, Region: region, Root: root,
		Bytes: sent, Received: received, Comm: comm, Request: request})
}

// matrix counts the location's messages per peer as the probes do: a
// send at its (I)send record, a receive at its (I)recv record.
func (l *Location) matrix() []tracefile.CommCount {
	type key struct {
		peer uint64
		rank bool
	}
	lines := map[key]*tracefile.CommCount{}
	var out []tracefile.CommCount
	for _, lv := range l.levels {
		for _, r := range lv.records {
			sent := r.Kind == encode.KindSend || r.Kind == encode.KindIsend
			if !sent && r.Kind != encode.KindRecv && r.Kind != encode.KindIrecv {
				continue
			}
			k := key{r.Peer, r.PeerRank}
			c := lines[k]
			if c == nil {
				c = &tracefile.CommCount{Peer: r.Peer, PeerRank: r.PeerRank}
				lines[k] = c
			}
			if sent {
				c.Sent++
				c.SentBytes += r.Bytes
			} else {
				c.Received++
				c.ReceivedBytes += r.Bytes
			}
		}
	}
	for _, c := range lines {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b tracefile.CommCount) int {
		if a.PeerRank != b.PeerRank {
			if a.PeerRank {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Peer, b.Peer)
	})
	return out
}

// Write writes the trace to dir/<name>.<rank>.hmb, one bin per level, and
// opens it; the file is closed when the test ends.
func (b *Builder) Write(t testing.TB, dir string) *tracefile.File {
	t.Helper()
	path, err := b.WriteFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Open(t, path)
}

// WriteFile writes the trace to dir/<name>.<rank>.hmb as Write does, and
// returns its path without opening it: for runs of thousands of files.
func (b *Builder) WriteFile(dir string) (string, error) {
	b.finish()
	path := filepath.Join(dir, b.Trace.Header.Name+"."+strconv.Itoa(b.Trace.Header.Rank)+".hmb")
	return path, tracefile.WriteFile(path, &b.Trace, b.bins)
}

// WriteTrace writes the trace to w as WriteFile writes it to a file: for a
// slot of a run archive (tracefile.WriteSlot), which takes it through a
// tracefile.Writer as a rank's measurement does.
func (b *Builder) WriteTrace(w io.Writer) error {
	b.finish()
	wr, err := tracefile.NewWriter(w, &b.Trace)
	if err != nil {
		return err
	}
	if err := b.bins(wr.Bin); err != nil {
		return err
	}
	return wr.Close()
}

// finish fills the statistics of the trace from the records put.
func (b *Builder) finish() {
	for i, l := range b.locs {
		loc := &b.Trace.Locations[i]
		loc.Levels, loc.Recorded = nil, 0
		for _, lv := range l.levels {
			n := uint64(len(lv.records))
			loc.Recorded += n
			loc.Levels = append(loc.Levels, tracefile.LevelStats{Depth: lv.depth, Class: lv.class, Written: n})
		}
		b.Trace.Header.EndTicks = max(b.Trace.Header.EndTicks, l.last)
		if b.Matrix {
			loc.Comm = l.matrix()
		}
	}
}

// bins puts one bin per level.
func (b *Builder) bins(put func(tracefile.Bin) error) error {
	for _, l := range b.locs {
		for _, lv := range l.levels {
			bin := tracefile.Bin{Location: l.id, Depth: lv.depth, Class: lv.class, Records: uint32(len(lv.records)), Data: encodeBin(lv.records)}
			if err := put(bin); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeBin encodes records as one bin with every technique.
func encodeBin(records []encode.Record) []byte {
	e := encode.NewEncoder(encode.All)
	b := make([]byte, encode.MaxBinHeaderSize+len(records)*encode.MaxMetricSize)
	n := e.StartBin(b, records[0].Time, 0)
	for _, r := range records {
		n += e.Put(b[n:], r)
	}
	return b[:n]
}
