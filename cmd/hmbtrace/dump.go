package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runDump(args []string, out io.Writer) error {
	fs := newFlags("dump")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"want one trace file"}
	}
	f, err := tracefile.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(out, 1<<16)
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
//	<location> <time-ns> SEND|RECV <peer> <tag> <bytes>
//	<location> <time-ns> METRIC <region> <depth> <name>=<value>...
//	<location> <time-ns> COLLECTIVE <region> <depth> root=<rank> bytes=<n>
//
// separated by tabs. A METRIC line follows the enter or leave whose
// counters it holds (absolute values).
func dump(w *bufio.Writer, f *tracefile.File) error {
	var e tracefile.Event
	for i := range f.Locations {
		l := &f.Locations[i]
		it := f.Events(l.ID)
		for it.Next(&e) {
			ns := f.Nanos(e.Time)
			switch e.Kind {
			case encode.KindEnter, encode.KindLeave:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\n", l.Name, ns, e.Kind, f.RegionName(e.Region), e.Depth)
			case encode.KindSend, encode.KindRecv:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\t%d\n", l.Name, ns, e.Kind, peerName(f, e), e.Tag, e.Bytes)
			case encode.KindCollective:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d\troot=%d\tbytes=%d\n", l.Name, ns, e.Kind, f.RegionName(e.Region), e.Depth, e.Root, e.Bytes)
			case encode.KindMetric:
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\t%d", l.Name, ns, e.Kind, f.RegionName(e.Region), e.Depth)
				for i, v := range e.Values {
					name := fmt.Sprintf("metric%d", i)
					if i < len(f.Header.Metrics) {
						name = f.Header.Metrics[i]
					}
					fmt.Fprintf(w, "\t%s=%d", name, v)
				}
				w.WriteByte('\n')
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
			return l.Name
		}
	}
	return fmt.Sprintf("location#%d", e.Peer)
}
