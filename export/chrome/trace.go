// Package chrome writes hmbtrace traces as Chrome trace-event JSON, which
// Perfetto UI and chrome://tracing open: a process per file, a thread track
// per location with its regions as B/E slices, messages as instants with
// flow arrows from send to receive, counters as C events, marks and region
// parameters as instants, channel messages as instants with flow arrows
// between the lanes the reader paired by token. It streams: each
// event goes to the writer as it is read, so memory does not grow with the
// trace.
package chrome

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Export writes the files as one trace-event JSON document to w. Times are
// microseconds (with nanosecond decimals) since the earliest file's start,
// each file placed by its wall-clock start. Process ids are 1, 2, ... in the
// order of the files, thread ids 1, 2, ... over all their locations.
// Regions still open at the end of a location are ended at its last event.
// The locations are read by HMB_TOOL_PROCS or GOMAXPROCS workers.
func Export(w io.Writer, files []*tracefile.File) error {
	procs, err := parallel.Procs(0)
	if err != nil {
		return fmt.Errorf("chrome export: %w", err)
	}
	return ExportProcs(w, files, procs)
}

// spoolMemory is what a location written ahead of its turn holds in
// memory before it goes to a temporary file.
const spoolMemory = 1 << 20

// ExportProcs is Export with procs workers, each reading a location; the
// document is the same for any number. Procs 1 writes each event to w as
// it is read. With more, the location next in the document is written to w
// as it is read, and one read ahead of it waits in a spool of at most 1 MiB
// of memory, the rest in a temporary file, until its turn: at most procs
// spools (parallel.Stream).
func ExportProcs(w io.Writer, files []*tracefile.File, procs int) error {
	if len(files) == 0 {
		return errors.New("chrome export: no trace files")
	}
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return fmt.Errorf("chrome export: %w", err)
	}
	x := &exporter{files: files, peers: tracefile.NewPeers(files), u: u, labels: u.Defs.RegionLabels()}
	type where struct{ file, loc, tid int }
	var locs []where
	for i, f := range files {
		x.firstLoc = append(x.firstLoc, len(locs))
		for k := range f.Locations {
			locs = append(locs, where{i, k, len(locs) + 1})
		}
	}
	x.axis = tracefile.NewAxis(files)
	x.ahead = procs > len(locs)
	out := &track{exporter: x, w: bufio.NewWriterSize(w, 64<<10)}
	out.raw(`{"traceEvents":[`)
	out.metadata()
	if procs <= 1 || len(locs) <= 1 {
		// One track, written as it is read.
		for _, l := range locs {
			if err = out.location(l.file, &files[l.file].Locations[l.loc], l.tid); err == nil {
				err = out.err
			}
			if err != nil {
				break
			}
		}
	} else {
		// The worker whose location is next writes straight to w, the
		// others into spools until their turn.
		st := parallel.NewStream(out.w, spoolMemory)
		err = parallel.Do(procs, len(locs), func(n int) error {
			l := locs[n]
			sw := st.Writer(n)
			t := &track{exporter: x, w: sw, events: out.events}
			err := t.location(l.file, &files[l.file].Locations[l.loc], l.tid)
			if err == nil {
				err = t.err
			}
			if ferr := sw.Finish(err != nil); err == nil {
				err = ferr
			}
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("chrome export: %w", err)
	}
	out.raw("\n],\n")
	out.buf = append(out.buf[:0], `"displayTimeUnit":"ns","otherData":{"creator":"hmbtrace","files":`...)
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	out.buf = appendString(out.buf, strings.Join(paths, ", "))
	out.buf = append(out.buf, "}}\n"...)
	out.raw(string(out.buf))
	if out.err == nil {
		out.err = out.w.(*bufio.Writer).Flush()
	}
	if out.err != nil {
		return fmt.Errorf("chrome export: %w", out.err)
	}
	return nil
}

// exporter holds what the locations' tracks share; it does not change
// while they are written.
type exporter struct {
	files []*tracefile.File
	// u is the run's definitions: a slice is named by its region's label
	// (RunDefinitions.RegionLabels), the same for every rank that entered
	// it and different for different regions of one name.
	u      *tracefile.Unified
	labels []string
	axis   *tracefile.Axis
	peers  *tracefile.Peers
	// firstLoc is, per file, the index of its first location over all
	// files' locations (thread id - 1): how flows name their ends.
	firstLoc []int
	// ahead reads each location's events on a goroutine of their own:
	// there are more workers than locations.
	ahead bool
}

// regionName is the name of region id of file i: its label in the run,
// region#id for an id the file does not define.
func (x *exporter) regionName(i int, id uint32) string {
	if _, k := x.u.Region(i, id); k > 0 {
		return x.labels[k-1]
	}
	return x.files[i].RegionName(id)
}

// track writes events: the document's start and end, and the events of
// one location at a time.
type track struct {
	*exporter
	w      io.Writer
	err    error  // the first write error; later writes do nothing
	buf    []byte // the event being put together
	events int    // events written, for the separators

	// Per location: messages so far on each channel from and to it.
	sent, received map[channel]uint64
	open           []string // regions open, innermost last
}

func (x *track) raw(s string) {
	if x.err == nil {
		_, x.err = io.WriteString(x.w, s)
	}
}

// start begins an event: phase, name, time, process and thread.
func (x *track) start(ph byte, name string, ts uint64, pid, tid int) {
	b := x.buf[:0]
	if x.events > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n{\"ph\":\""...)
	b = append(b, ph)
	b = append(b, "\",\"name\":"...)
	b = appendString(b, name)
	b = append(b, ",\"ts\":"...)
	b = appendMicros(b, ts)
	b = append(b, ",\"pid\":"...)
	b = strconv.AppendInt(b, int64(pid), 10)
	if tid > 0 {
		b = append(b, ",\"tid\":"...)
		b = strconv.AppendInt(b, int64(tid), 10)
	}
	x.buf = b
}

// end closes the event and writes it.
func (x *track) end() {
	x.buf = append(x.buf, '}')
	if x.err == nil {
		_, x.err = x.w.Write(x.buf)
	}
	x.events++
}

// metadata names the processes and threads and keeps them in file order.
func (x *track) metadata() {
	tid := 0
	for i, f := range x.files {
		h := &f.Header
		pid := i + 1
		x.start('M', "process_name", 0, pid, 0)
		x.buf = append(x.buf, `,"args":{"name":`...)
		x.buf = appendString(x.buf, fmt.Sprintf("%s rank %d (%s, pid %d)", h.Name, h.Rank, h.Host, h.PID))
		x.buf = append(x.buf, '}')
		x.end()
		x.start('M', "process_sort_index", 0, pid, 0)
		x.buf = append(x.buf, `,"args":{"sort_index":`...)
		x.buf = strconv.AppendInt(x.buf, int64(pid), 10)
		x.buf = append(x.buf, '}')
		x.end()
		for _, l := range f.Locations {
			tid++
			x.start('M', "thread_name", 0, pid, tid)
			x.buf = append(x.buf, `,"args":{"name":`...)
			x.buf = appendString(x.buf, l.Name)
			x.buf = append(x.buf, '}')
			x.end()
			x.start('M', "thread_sort_index", 0, pid, tid)
			x.buf = append(x.buf, `,"args":{"sort_index":`...)
			x.buf = strconv.AppendInt(x.buf, int64(tid), 10)
			x.buf = append(x.buf, '}')
			x.end()
		}
	}
}

// location writes the events of location l of file i on track tid.
func (x *track) location(i int, l *tracefile.Location, tid int) error {
	f := x.files[i]
	pid := i + 1
	if x.sent == nil {
		x.sent, x.received = map[channel]uint64{}, map[channel]uint64{}
	}
	clear(x.sent)
	clear(x.received)
	x.open = x.open[:0]
	var e tracefile.Event
	var last uint64
	it := f.EventsWith(l.ID, x.ahead)
	defer it.Close()
	for it.Next(&e) && x.err == nil {
		ts := uint64(x.axis.Nanos(i, f, e.Time))
		last = ts
		switch e.Kind {
		case encode.KindEnter:
			name := x.regionName(i, e.Region)
			x.start('B', name, ts, pid, tid)
			x.buf = append(x.buf, `,"cat":"region"`...)
			if e.Truncated {
				// Entered before the keep-last window: the slice starts
				// at the window, not at the call.
				x.buf = append(x.buf, `,"args":{"truncated":true}`...)
			}
			x.end()
			x.open = append(x.open, name)
		case encode.KindLeave:
			if len(x.open) == 0 {
				return fmt.Errorf("%s: location %q: leave at %d ns with no region open", f.Path, l.Name, ts)
			}
			x.start('E', x.open[len(x.open)-1], ts, pid, tid)
			x.end()
			x.open = x.open[:len(x.open)-1]
		case encode.KindSend, encode.KindRecv, encode.KindIsend, encode.KindIrecv:
			if err := x.message(i, &e, ts, pid, tid); err != nil {
				return err
			}
		case encode.KindMetric:
			names := f.Header.Metrics
			if len(e.Values) != len(names) {
				return fmt.Errorf("%s: location %q: metric record at %d ns with %d values, the header names %d counters",
					f.Path, l.Name, ts, len(e.Values), len(names))
			}
			// A counter track per location: the id keeps locations of
			// the same name apart.
			x.start('C', l.Name, ts, pid, tid)
			x.buf = append(x.buf, `,"id":"`...)
			x.buf = strconv.AppendInt(x.buf, int64(tid), 10)
			x.buf = append(x.buf, `","args":{`...)
			for k, v := range e.Values {
				if k > 0 {
					x.buf = append(x.buf, ',')
				}
				x.buf = appendString(x.buf, names[k])
				x.buf = append(x.buf, ':')
				x.buf = strconv.AppendUint(x.buf, v, 10)
			}
			x.buf = append(x.buf, '}')
			x.end()
		default:
			if e.Kind.IsAnnotation() {
				x.annotation(i, f, &e, ts, pid, tid)
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for n := len(x.open); n > 0; n-- {
		x.start('E', x.open[n-1], last, pid, tid)
		x.end()
	}
	return nil
}

// message writes an instant event with the message's peer, tag and size,
// and the start or end of the flow arrow from send to receive.
func (x *track) message(i int, e *tracefile.Event, ts uint64, pid, tid int) error {
	me := tid - 1
	end, ok, err := x.peers.Resolve(i, e)
	if err != nil {
		return err
	}
	peer := x.firstLoc[end.File] + end.Loc
	// A non-blocking send is shown where it starts, a non-blocking
	// receive where it completes: there its peer, tag and size are known.
	name, ph := "send", byte('s')
	switch e.Kind {
	case encode.KindRecv:
		name, ph = "recv", 'f'
	case encode.KindIsend:
		name = "isend"
	case encode.KindIrecv:
		name, ph = "irecv", 'f'
	}
	x.start('i', name, ts, pid, tid)
	x.buf = append(x.buf, `,"cat":"message","s":"t","args":{"peer":`...)
	x.buf = appendString(x.buf, x.peerName(i, e))
	x.buf = append(x.buf, `,"tag":`...)
	x.buf = strconv.AppendUint(x.buf, uint64(e.Tag), 10)
	x.buf = append(x.buf, `,"bytes":`...)
	x.buf = strconv.AppendUint(x.buf, e.Bytes, 10)
	x.buf = append(x.buf, '}')
	x.end()
	if !ok {
		return nil // the other end is not in the trace: no arrow
	}
	var id uint64
	if ph == 's' {
		c := channel{from: me, to: peer, tag: e.Tag}
		id = flowID(c, x.sent[c])
		x.sent[c]++
	} else {
		c := channel{from: peer, to: me, tag: e.Tag}
		id = flowID(c, x.received[c])
		x.received[c]++
	}
	x.start(ph, "message", ts, pid, tid)
	x.buf = append(x.buf, `,"cat":"message","id":"`...)
	x.buf = strconv.AppendUint(x.buf, id, 16)
	x.buf = append(x.buf, '"')
	if ph == 'f' {
		x.buf = append(x.buf, `,"bp":"e"`...)
	}
	x.end()
	return nil
}

// peerName names a message's peer as hmbtrace dump does: a location of the
// same file by name, a rank by number.
func (x *exporter) peerName(i int, e *tracefile.Event) string {
	if e.PeerRank {
		return "rank " + strconv.FormatUint(e.Peer, 10)
	}
	if e.Peer <= 0xFFFFFFFF {
		if l := x.files[i].Location(uint32(e.Peer)); l != nil {
			return l.Name
		}
	}
	return "location#" + strconv.FormatUint(e.Peer, 10)
}
