// Package comm owns the communication views of Brendel et al.: the
// communication matrix (senders × receivers: messages, bytes, mean size)
// and the sender/receiver diagram, whose edges run through a grid of
// control points by YX routing that prefers diagonals, drawn as splines
// coloured by sender with additive blending, so that shared paths glow.
// It reads messages from trace files and writes TSV and SVG.
package comm

import (
	"fmt"
	"sort"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Node is a communication endpoint: a location of a process.
type Node struct {
	Name string // "worker 2"; "rank 3" or "rank 1: worker 2" with several ranks; "x.0.hmb: worker 2" when files share a rank
	Rank int
	Loc  uint32
}

// Cell is what one sender sent one receiver.
type Cell struct {
	From, To int // indices into Matrix.Nodes
	Messages uint64
	Bytes    uint64
}

// Matrix is the communication of a run: who sent how much to whom, counted
// at the sender.
type Matrix struct {
	Nodes []Node
	Cells []Cell // sorted by From, then To; only pairs that communicated
	// Unmatched counts messages whose peer is not among the nodes.
	Unmatched uint64

	// Exact counts the senders whose counts come from their file's exact
	// matrix, taken at the probe; Counted those whose sends were counted
	// from the events the buffer kept (files written before the matrix
	// was kept).
	Exact, Counted int
	// Shed is the number of sends the exact matrices count that the
	// buffer did not keep as events: the cells include them.
	Shed uint64

	// Channel counts the messages through named channels (measure's
	// Channel), which the cells include: a receive is paired with its
	// send by the token the value carried, and names its sender, so these
	// are counted from the receives the buffer kept. ChannelUnreceived
	// counts the values sent whose receive is not in the files (never
	// received, or shed).
	Channel, ChannelUnreceived uint64
}

// FromFiles makes the matrix of the files, which may be the ranks of one
// run. A sender's messages come from its location's exact matrix
// (tracefile.Location.Comm, counted at the probe whatever the buffer
// shed) where the file has one, else from its send events. A send to a
// location of the same process goes to that location; a send to an MPI
// world rank goes to the location of that rank's file that exchanges
// messages by rank, as the exporters pair them (tracefile.Peers). The
// locations whose events are read are read by HMB_TOOL_PROCS or GOMAXPROCS
// workers.
func FromFiles(files []*tracefile.File) (*Matrix, error) {
	procs, err := parallel.Procs(0)
	if err != nil {
		return nil, fmt.Errorf("comm: %w", err)
	}
	return FromFilesProcs(files, procs)
}

// sender is what one location sent, before the matrix sums it up.
type sender struct {
	cells          map[int]*Cell // by receiving node
	unmatched      uint64
	exact, counted bool
	shed           uint64
}

// FromFilesProcs is FromFiles with procs workers, each counting the sends
// of one location; the sums are of integers, so the matrix is the same
// for any number.
func FromFilesProcs(files []*tracefile.File, procs int) (*Matrix, error) {
	m := &Matrix{}
	first := make([]int, len(files)) // per file: the node of its first location
	byFile := tracefile.SharedRank(files)
	type where struct{ file, loc int }
	var locs []where
	for i, f := range files {
		first[i] = len(m.Nodes)
		for k, l := range f.Locations {
			name := tracefile.LocationLabel(files, i, byFile, l.Name)
			if len(files) > 1 && !byFile {
				name = rankNodeName(f.Header.Rank, l.Name, len(f.Locations))
			}
			m.Nodes = append(m.Nodes, Node{Name: name, Rank: f.Header.Rank, Loc: l.ID})
			locs = append(locs, where{i, k})
		}
	}
	peers := tracefile.NewPeers(files)
	senders := make([]sender, len(locs))
	err := parallel.Do(procs, len(locs), func(n int) error {
		i, k := locs[n].file, locs[n].loc
		s := &senders[n]
		s.cells = map[int]*Cell{}
		from := first[i] + k
		add := func(e *tracefile.Event, count uint64) error {
			end, ok, err := peers.Resolve(i, e)
			if err != nil {
				return err
			}
			if !ok {
				s.unmatched += count
				return nil
			}
			to := first[end.File] + end.Loc
			c := s.cells[to]
			if c == nil {
				c = &Cell{From: from, To: to}
				s.cells[to] = c
			}
			c.Messages += count
			c.Bytes += e.Bytes
			return nil
		}
		var err error
		s.exact, s.counted, s.shed, err = countLocation(files[i], &files[i].Locations[k], add)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		if err := m.addChannels(senders[first[i]:first[i]+len(f.Locations)], first[i], f); err != nil {
			return nil, err
		}
	}
	for _, s := range senders {
		m.Unmatched += s.unmatched
		m.Shed += s.shed
		if s.exact {
			m.Exact++
		}
		if s.counted {
			m.Counted++
		}
		for _, c := range s.cells {
			m.Cells = append(m.Cells, *c)
		}
	}
	sort.Slice(m.Cells, func(i, j int) bool {
		a, b := m.Cells[i], m.Cells[j]
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	return m, nil
}

// addChannels adds the channel messages of file f, whose locations are the
// nodes from first on and whose senders are ss, to the senders' cells.
func (m *Matrix) addChannels(ss []sender, first int, f *tracefile.File) error {
	if len(f.Channels) == 0 {
		return nil
	}
	msgs, err := f.ChannelMessages()
	if err != nil {
		return err
	}
	idx := make(map[uint32]int, len(f.Locations))
	for k, l := range f.Locations {
		idx[l.ID] = k
	}
	for _, c := range msgs {
		if !c.Received {
			m.ChannelUnreceived++
			continue
		}
		from, ok1 := idx[c.From]
		to, ok2 := idx[c.To]
		if !ok1 || !ok2 {
			m.Unmatched++ // a sender the file does not define
			continue
		}
		cell := ss[from].cells[first+to]
		if cell == nil {
			cell = &Cell{From: first + from, To: first + to}
			ss[from].cells[first+to] = cell
		}
		cell.Messages++
		cell.Bytes += c.Bytes
		m.Channel++
	}
	return nil
}

// rankNodeName names a location of one of a run's ranks, which has locs
// locations: by its rank alone when it is the rank's only one.
func rankNodeName(rank int, name string, locs int) string {
	if locs == 1 {
		return fmt.Sprintf("rank %d", rank) // the rank says it all
	}
	return tracefile.RankLabel(rank, name)
}

// countLocation passes what location l of file f sent to add, a peer
// and a count at a time: from its exact matrix (counted at the probe) when
// the file has one, then also returning how many of those sends the
// buffer shed; else from its send events. exact and counted say which.
func countLocation(f *tracefile.File, l *tracefile.Location, add func(e *tracefile.Event, count uint64) error) (exact, counted bool, shed uint64, err error) {
	if l.Comm != nil {
		var sent uint64
		for _, c := range l.Comm {
			if c.Sent == 0 {
				continue
			}
			sent += c.Sent
			e := tracefile.Event{Kind: encode.KindSend, Peer: c.Peer, PeerRank: c.PeerRank, Bytes: c.SentBytes}
			if err := add(&e, c.Sent); err != nil {
				return false, false, 0, err
			}
		}
		// A file written without events (HMB_OUTPUT_EVENTS=none) has its
		// matrices only: no send of it is shed, none is in the file.
		if sent == 0 || f.EventsNone {
			return sent > 0, false, 0, nil
		}
		kept, err := keptSends(f, l)
		if err != nil {
			return false, false, 0, err
		}
		return true, false, sent - min(kept, sent), nil
	}
	n, err := countSends(f, l, func(e *tracefile.Event) error { return add(e, 1) })
	return false, n > 0, 0, err
}

// countSends calls add for each send event (blocking or not) of location
// l and returns how many there were.
func countSends(f *tracefile.File, l *tracefile.Location, add func(*tracefile.Event) error) (uint64, error) {
	var n uint64
	it := f.Events(l.ID)
	var e tracefile.Event
	for it.Next(&e) {
		if e.Kind != encode.KindSend && e.Kind != encode.KindIsend {
			continue
		}
		n++
		if err := add(&e); err != nil {
			return n, err
		}
	}
	return n, it.Err()
}

// keptSends counts the send events of location l that are in the file. It
// reads the events only if the buffer removed any of the location's
// messages; else they are all there, and the matrix's own count is given.
func keptSends(f *tracefile.File, l *tracefile.Location) (uint64, error) {
	shed := false
	for _, lv := range l.Levels {
		if lv.Class == tracefile.ClassMessage && lv.Removed().Total() > 0 {
			shed = true
		}
	}
	if !shed {
		var sent uint64
		for _, c := range l.Comm {
			sent += c.Sent
		}
		return sent, nil
	}
	return countSends(f, l, func(*tracefile.Event) error { return nil })
}

// Totals returns the messages and bytes of all pairs.
func (m *Matrix) Totals() (messages, bytes uint64) {
	for _, c := range m.Cells {
		messages += c.Messages
		bytes += c.Bytes
	}
	return messages, bytes
}

// Value names what a matrix cell shows.
type Value string

// The values a matrix can show.
const (
	Messages Value = "messages"
	Bytes    Value = "bytes"
	MeanSize Value = "mean"
)

// ParseValue reads messages, bytes or mean.
func ParseValue(s string) (Value, error) {
	switch v := Value(s); v {
	case Messages, Bytes, MeanSize:
		return v, nil
	}
	return "", fmt.Errorf("unknown value %q (want messages, bytes or mean)", s)
}

// Amount is what the cell shows as v.
func (c Cell) Amount(v Value) float64 {
	switch v {
	case Bytes:
		return float64(c.Bytes)
	case MeanSize:
		if c.Messages == 0 {
			return 0
		}
		return float64(c.Bytes) / float64(c.Messages)
	}
	return float64(c.Messages)
}
