package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runDump(args []string, out io.Writer) error {
	fs := newFlags("dump")
	locations := fs.Bool("locations", false, "print the locations' definitions instead of the events")
	definitions := fs.Bool("definitions", false, "print the run's definitions unified across its ranks (regions, communicators, locations, metrics); takes a run as the other commands do")
	maps := fs.Bool("maps", false, "with -definitions: also how each rank's ids (those its events name) map to the run's, a line per rank and kind")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *maps && !*definitions {
		return usageError{"-maps goes with -definitions"}
	}
	if *definitions {
		return dumpDefinitions(fs.Args(), *maps, out)
	}
	if fs.NArg() != 1 {
		return usageError{"want one trace file"}
	}
	if err := notDirectory(fs.Arg(0)); err != nil {
		return err
	}
	f, err := openOne(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	if !*locations {
		if err := requireEvents("hmbtrace dump (without -locations)", []*tracefile.File{f}); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(out, 1<<16)
	if *locations {
		for i := range f.Locations {
			l := &f.Locations[i]
			fmt.Fprintf(w, "%s\t%d\t%d", textname.Escape(l.Name), l.ID, l.Recorded)
			if s := l.TeamLabel(); s != "" {
				fmt.Fprintf(w, "\t%s", s)
			}
			w.WriteByte('\n')
		}
		return w.Flush()
	}
	if err := dump(w, f); err != nil {
		w.Flush()
		return err
	}
	return w.Flush()
}

// dump writes every event of every location, location by location, in the
// order the reader rebuilds:
//
//	<location> <time-ns> ENTER|LEAVE <region> <depth>
//	<location> <time-ns> SEND|RECV <peer> <tag> <bytes> [comm=<id>]
//	<location> <time-ns> ISEND|IRECV <peer> <tag> <bytes> comm=<id> req=<n>
//	<location> <time-ns> ISEND_COMPLETE|IRECV_REQUEST|REQUEST_CANCELLED|COLL_REQUEST <region> <depth> req=<n>
//	<location> <time-ns> METRIC <region> <depth> <name>=<value>...
//	<location> <time-ns> COLLECTIVE <region> <depth> root=<rank> bytes=<n> [received=<n> comm=<id>]
//	<location> <time-ns> COLL_COMPLETE <started-by> <depth> root=<rank> bytes=<n> received=<n> comm=<id> req=<n>
//	<location> <time-ns> TASK_CREATE|TASK_SWITCH|TASK_COMPLETE|TASK_SUSPEND <region> <depth> task=<id>
//	<location> <time-ns> RMA_<kind> <region> <depth> [win=<id>] [target=<rank>|all] [root=<rank>] [bytes=<n>] [received=<n>] [id=<n>] [type=<n>] [level=<n>] [group=<id>]
//	<location> <time-ns> MARK <region> <depth> <mark>
//	<location> <time-ns> PARAM_INT|PARAM_STRING <region> <depth> <parameter>=<value>
//	<location> <time-ns> CHAN_SEND <region> <depth> <channel> token=<n> bytes=<n>
//	<location> <time-ns> CHAN_RECV <region> <depth> <channel> token=<n> from=<location> bytes=<n>
//
// separated by tabs. Names are escaped (textname.Escape): a tab, newline,
// backslash, control character or invalid UTF-8 in a name shows as \t,
// \n, \\, \xHH. A METRIC line follows the enter or leave whose
// counters it holds (absolute values). comm is an id of the file's
// communicators (0: none given); the request-only records name the region
// they happen in, COLL_COMPLETE the call that started the operation. A task
// id is unique in the file; TASK_SWITCH task=0 resumes the thread's
// implicit task. A parameter belongs to the region it names (the call it
// was recorded in); a string value is quoted as Go quotes strings. A
// channel message's token pairs its send with its receive; the receive
// names the sending location.
func dump(w *bufio.Writer, f *tracefile.File) error {
	var e tracefile.Event
	for i := range f.Locations {
		l := &f.Locations[i]
		loc := textname.Escape(l.Name)
		region := func(id uint32) string { return textname.Escape(f.RegionName(id)) }
		it := f.Events(l.ID)
		for it.Next(&e) {
			ns := f.Nanos(e.Time)
			switch e.Kind {
			case encode.KindEnter, encode.KindLeave:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\n", loc, ns, e.Kind, region(e.Region), e.Depth)
			case encode.KindSend, encode.KindRecv:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%d", loc, ns, e.Kind, peerName(f, e), e.Tag, e.Bytes)
				if e.Comm != 0 {
					fmt.Fprintf(w, "\tcomm=%d", e.Comm)
				}
				w.WriteByte('\n')
			case encode.KindIsend, encode.KindIrecv:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%d\tcomm=%d\treq=%d\n", loc, ns, e.Kind, peerName(f, e), e.Tag, e.Bytes, e.Comm, e.Request)
			case encode.KindIsendComplete, encode.KindIrecvRequest, encode.KindRequestCancelled, encode.KindCollRequest:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\treq=%d\n", loc, ns, e.Kind, region(e.Region), e.Depth, e.Request)
			case encode.KindTaskCreate, encode.KindTaskSwitch, encode.KindTaskComplete, encode.KindTaskSuspend:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\ttask=%d\n", loc, ns, e.Kind, region(e.Region), e.Depth, e.Task)
			case encode.KindCollective:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\troot=%d\tbytes=%d", loc, ns, e.Kind, region(e.Region), e.Depth, e.Root, e.Bytes)
				if e.Received != 0 || e.Comm != 0 {
					fmt.Fprintf(w, "\treceived=%d\tcomm=%d", e.Received, e.Comm)
				}
				w.WriteByte('\n')
			case encode.KindCollComplete:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\troot=%d\tbytes=%d\treceived=%d\tcomm=%d\treq=%d\n", loc, ns, e.Kind,
					region(e.Region), e.Depth, e.Root, e.Bytes, e.Received, e.Comm, e.Request)
			case encode.KindMetric:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d", loc, ns, e.Kind, region(e.Region), e.Depth)
				for i, v := range e.Values {
					name := fmt.Sprintf("metric%d", i)
					if i < len(f.Header.Metrics) {
						name = textname.Escape(f.Header.Metrics[i])
					}
					fmt.Fprintf(w, "\t%s=%d", name, v)
				}
				w.WriteByte('\n')
			case encode.KindMark:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%s\n", loc, ns, e.Kind, region(e.Region), e.Depth, textname.Escape(f.MarkName(e.Key)))
			case encode.KindParamInt, encode.KindParamString:
				p, _ := f.Param(e.Key)
				v := fmt.Sprint(e.Value)
				if e.Kind == encode.KindParamString {
					v = fmt.Sprintf("%q", f.StringValue(uint32(e.Value)))
				}
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%s=%s\n", loc, ns, e.Kind, region(e.Region), e.Depth, textname.Escape(p.Name), v)
			case encode.KindChanSend:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%s\ttoken=%d\tbytes=%d\n", loc, ns, e.Kind, region(e.Region), e.Depth,
					textname.Escape(f.ChannelName(e.Key)), e.Token, e.Bytes)
			case encode.KindChanRecv:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%s\ttoken=%d\tfrom=%s\tbytes=%d\n", loc, ns, e.Kind, region(e.Region), e.Depth,
					textname.Escape(f.ChannelName(e.Key)), e.Token, peerName(f, e), e.Bytes)
			default:
				if e.Kind.IsRma() {
					fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d%s\n", loc, ns, e.Kind, region(e.Region), e.Depth, rmaFields(e))
				}
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
	return nil
}

// peerName names a message's peer: a location of the same process, or a
// world rank.
func peerName(f *tracefile.File, e tracefile.Event) string {
	if e.PeerRank {
		return fmt.Sprint(e.Peer)
	}
	if e.Peer <= 0xFFFFFFFF {
		if l := f.Location(uint32(e.Peer)); l != nil {
			return textname.Escape(l.Name)
		}
	}
	return fmt.Sprintf("location#%d", e.Peer)
}

// rmaFields formats the fields an RMA record's kind has, each as
// "\tname=value"; the target is a world rank, "all" for every process of
// the window, a collective's root a world rank or -1 for none, and type and
// level are OTF2's numbers.
func rmaFields(e tracefile.Event) string {
	var b strings.Builder
	k := e.Kind
	if k != encode.KindRmaCollectiveBegin {
		fmt.Fprintf(&b, "\twin=%d", e.Win)
	}
	switch k {
	case encode.KindRmaCollectiveEnd:
		fmt.Fprintf(&b, "\troot=%d", e.Remote)
	case encode.KindRmaRequestLock, encode.KindRmaAcquireLock, encode.KindRmaTryLock,
		encode.KindRmaReleaseLock, encode.KindRmaSync, encode.KindRmaPut, encode.KindRmaGet, encode.KindRmaAtomic:
		if e.Remote < 0 {
			b.WriteString("\ttarget=all")
		} else {
			fmt.Fprintf(&b, "\ttarget=%d", e.Remote)
		}
	}
	switch k {
	case encode.KindRmaPut, encode.KindRmaGet:
		fmt.Fprintf(&b, "\tbytes=%d", e.Bytes)
	case encode.KindRmaAtomic, encode.KindRmaCollectiveEnd:
		fmt.Fprintf(&b, "\tbytes=%d\treceived=%d", e.Bytes, e.Received)
	}
	switch k {
	case encode.KindRmaPut, encode.KindRmaGet, encode.KindRmaAtomic, encode.KindRmaOpCompleteBlocking,
		encode.KindRmaOpCompleteNonBlock, encode.KindRmaOpTest, encode.KindRmaOpCompleteRemote,
		encode.KindRmaRequestLock, encode.KindRmaAcquireLock, encode.KindRmaTryLock, encode.KindRmaReleaseLock:
		fmt.Fprintf(&b, "\tid=%d", e.Request)
	}
	switch k {
	case encode.KindRmaAtomic, encode.KindRmaCollectiveEnd, encode.KindRmaRequestLock, encode.KindRmaAcquireLock,
		encode.KindRmaTryLock, encode.KindRmaSync:
		fmt.Fprintf(&b, "\ttype=%d", e.Aux)
	}
	switch k {
	case encode.KindRmaCollectiveEnd, encode.KindRmaGroupSync:
		fmt.Fprintf(&b, "\tlevel=%d", e.Level)
	}
	if k == encode.KindRmaGroupSync {
		fmt.Fprintf(&b, "\tgroup=%d", e.Group)
	}
	return b.String()
}

// notDirectory explains that dump reads one file when it is given a
// directory (HMB_OUTPUT), naming the trace files in it to pick from.
func notDirectory(path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return nil // tracefile.Open says what is wrong
	}
	names, err := traceFilesIn(path)
	if err != nil {
		return err
	}
	archives, err := filesIn(path, tracefile.ArchiveExt)
	if err != nil {
		return err
	}
	if len(archives) > 0 {
		return usageError{fmt.Sprintf("%s is a directory; dump takes one trace file, or one rank of a run archive, e.g. %s#0", path, archives[0])}
	}
	if len(names) == 0 {
		return usageError{fmt.Sprintf("%s is a directory with no trace files (*.hmb) in it; dump takes one trace file", path)}
	}
	const most = 8
	var list []string
	for i, n := range names {
		if i == most {
			list = append(list, fmt.Sprintf("... (%d files)", len(names)))
			break
		}
		list = append(list, filepath.Base(n))
	}
	return usageError{fmt.Sprintf("%s is a directory; dump takes one trace file, e.g. %s (the files there: %s)",
		path, names[0], strings.Join(list, ", "))}
}

// openOne opens the one trace dump reads: a trace file, or one rank of a
// run archive, ARCHIVE#RANK; an archive itself is a usage error naming
// that form.
func openOne(path string) (*tracefile.File, error) {
	a, slot, ok, err := archiveRank(path)
	if err != nil {
		return nil, err
	}
	if ok {
		defer a.Close()
		f, err := a.OpenRank(slot)
		if err == nil {
			noteRankFiles([]source{{a: a, slot: slot}}, []*tracefile.File{f})
		}
		return f, err
	}
	if tracefile.IsArchive(path) {
		a, err := tracefile.OpenArchive(path)
		if err != nil {
			return nil, err
		}
		defer a.Close()
		return nil, usageError{fmt.Sprintf("%s is a run archive of %d ranks; dump takes one rank of it, e.g. %s#%d", path, len(a.Slots), path, a.Slots[0].Rank)}
	}
	return tracefile.Open(path)
}

// dumpDefinitions prints a run's definitions unified across its ranks,
// the tables its ranks unified at the collective end when its archive
// holds them (said on noteOut), else the files' unified by name: the same
// tables either way, one per line,
//
//	region <id> <paradigm> <name> <file>:<line>
//	comm <id> <name> parent=<id> members=<ranks> [remote=<ranks>] seq=<n>
//	location <id> rank=<rank> <local id> <name>
//	metric <id> <name>
//
// separated by tabs, ranks as runs (0-7, 0-6/2, 3). A name is escaped as
// dump escapes it; a derived communicator's name is "-". With maps, each
// rank's ids (those dump prints for its events) follow, mapped to the
// run's, in rank order, a line per kind the rank defines:
//
//	map <rank> region|comm|location <local id>=<run id>,...
//	map <rank> metric <index>=<run id>,...   (the index in the rank's metrics, from 0)
func dumpDefinitions(paths []string, maps bool, out io.Writer) error {
	files, _, err := openProcs(paths, 0)
	if err != nil {
		return err
	}
	defer closeAll(files)
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return err
	}
	d, fromRun := u.Defs, u.FromRun
	if fromRun {
		fmt.Fprintf(noteOut, "hmbtrace: the definitions the %d ranks unified at the collective end of the run\n", len(files))
	} else {
		fmt.Fprintf(noteOut, "hmbtrace: the definitions of %d files, unified by name\n", len(files))
	}
	w := bufio.NewWriterSize(out, 1<<16)
	for _, r := range d.Regions {
		fmt.Fprintf(w, "region\t%d\t%v\t%s\t%s:%d\n", r.ID, r.Paradigm, textname.Escape(r.Name), textname.Escape(r.File), r.Line)
	}
	for _, c := range d.Comms {
		name := textname.Escape(c.Name)
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(w, "comm\t%d\t%s\tparent=%d\tmembers=%s", c.ID, name, c.Parent, rankRuns(c.Members))
		if c.Remote != nil {
			fmt.Fprintf(w, "\tremote=%s", rankRuns(c.Remote))
		}
		fmt.Fprintf(w, "\tseq=%d\n", c.Seq)
	}
	for i, l := range d.Locations {
		fmt.Fprintf(w, "location\t%d\trank=%d\t%d\t%s\n", i+1, l.Rank, l.ID, textname.Escape(l.Name))
	}
	for i, m := range d.Metrics {
		fmt.Fprintf(w, "metric\t%d\t%s\n", i+1, textname.Escape(m))
	}
	if maps {
		order := make([]int, len(files))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return files[order[a]].Header.Rank < files[order[b]].Header.Rank })
		for _, i := range order {
			m, rank := u.Maps[i], files[i].Header.Rank
			for _, k := range []struct {
				kind string
				ids  map[uint32]uint32
			}{{"region", m.Regions}, {"comm", m.Comms}, {"location", m.Locs}} {
				if len(k.ids) > 0 {
					fmt.Fprintf(w, "map\t%d\t%s\t%s\n", rank, k.kind, idPairs(k.ids))
				}
			}
			if len(m.Metrics) > 0 {
				ids := make(map[uint32]uint32, len(m.Metrics))
				for j, id := range m.Metrics {
					ids[uint32(j)] = id
				}
				fmt.Fprintf(w, "map\t%d\tmetric\t%s\n", rank, idPairs(ids))
			}
		}
	}
	return w.Flush()
}

// idPairs writes a map of ids as local=run pairs, by local id.
func idPairs(ids map[uint32]uint32) string {
	keys := make([]uint32, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d=%d", k, ids[k])
	}
	return b.String()
}

// rankRuns writes ranks as runs of a stride: 0-7, 0-6/2, 3; "none" for
// no ranks.
func rankRuns(rs []int32) string {
	if len(rs) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := 0; i < len(rs); {
		n := 1
		if i+1 < len(rs) {
			stride := rs[i+1] - rs[i]
			for n = 2; i+n < len(rs) && rs[i+n]-rs[i+n-1] == stride; n++ {
			}
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		switch {
		case n == 1:
			fmt.Fprintf(&b, "%d", rs[i])
		case n == 2:
			fmt.Fprintf(&b, "%d,%d", rs[i], rs[i+1])
		case rs[i+1]-rs[i] == 1:
			fmt.Fprintf(&b, "%d-%d", rs[i], rs[i+n-1])
		default:
			fmt.Fprintf(&b, "%d-%d/%d", rs[i], rs[i+n-1], rs[i+1]-rs[i])
		}
		i += n
	}
	return b.String()
}
