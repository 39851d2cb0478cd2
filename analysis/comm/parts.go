package comm

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Part is what one rank of an MPI run sent, as it counted it itself: the
// in-situ form of the matrix, which the ranks make at the collective end of
// the run from their own measurements and gather up a reduction tree
// (cshim's run results), so that no process opens every rank's file. A
// send to another rank stays a rank until FromParts finds that rank's
// location; a send within the process is resolved by the rank itself.
type Part struct {
	Rank  int      `json:"rank"`
	Nodes []string `json:"nodes"` // the rank's location names, in its order
	IDs   []uint32 `json:"ids"`   // and their ids
	// RankLoc is the index into Nodes of the location that exchanges
	// messages by rank (tracefile.Peers), -1 when the rank has none.
	RankLoc int        `json:"rank_loc"`
	Sends   []PartSend `json:"sends"` // by From, then ToRank, then ToLoc

	Unmatched         uint64 `json:"unmatched,omitempty"`
	Exact             int    `json:"exact,omitempty"`
	Counted           int    `json:"counted,omitempty"`
	Shed              uint64 `json:"shed,omitempty"`
	Channel           uint64 `json:"channel,omitempty"`
	ChannelUnreceived uint64 `json:"channel_unreceived,omitempty"`
}

// PartSend is what one location of a rank sent one receiver: a world rank
// (ToRank >= 0) or a location of its own process (ToLoc, an index into
// the part's Nodes, ToRank -1).
type PartSend struct {
	From     int    `json:"from"`
	ToRank   int    `json:"to_rank"`
	ToLoc    int    `json:"to_loc"`
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
}

// Local returns the part of the rank whose trace f is (a file, or a live
// measurement's trace read back from memory), counted as FromFiles counts
// that rank's senders among the files of its run.
func Local(f *tracefile.File) (Part, error) {
	p := Part{Rank: f.Header.Rank, RankLoc: -1}
	for _, l := range f.Locations {
		p.Nodes = append(p.Nodes, l.Name)
		p.IDs = append(p.IDs, l.ID)
	}
	self := tracefile.NewPeers([]*tracefile.File{f})
	if f.Header.Rank >= 0 {
		end, ok, err := self.Resolve(0, &tracefile.Event{PeerRank: true, Peer: uint64(f.Header.Rank)})
		if err != nil {
			return p, fmt.Errorf("comm: rank %d: %w", f.Header.Rank, err)
		}
		if ok {
			p.RankLoc = end.Loc
		}
	}
	// The senders' cells, keyed by the receiving location of this file
	// (from 0) or by a world rank r as -1 - r.
	ss := make([]sender, len(f.Locations))
	for k := range f.Locations {
		s := &ss[k]
		s.cells = map[int]*Cell{}
		add := func(e *tracefile.Event, count uint64) error {
			key := 0
			if e.PeerRank {
				if e.Peer > 1<<31-1 {
					s.unmatched += count
					return nil
				}
				key = -1 - int(e.Peer)
			} else {
				end, ok, err := self.Resolve(0, e)
				if err != nil {
					return err
				}
				if !ok {
					s.unmatched += count
					return nil
				}
				key = end.Loc
			}
			c := s.cells[key]
			if c == nil {
				c = &Cell{From: k, To: key}
				s.cells[key] = c
			}
			c.Messages += count
			c.Bytes += e.Bytes
			return nil
		}
		var err error
		s.exact, s.counted, s.shed, err = countLocation(f, &f.Locations[k], add)
		if err != nil {
			return p, fmt.Errorf("comm: rank %d: %w", f.Header.Rank, err)
		}
	}
	var m Matrix
	if err := m.addChannels(ss, 0, f); err != nil {
		return p, fmt.Errorf("comm: rank %d: %w", f.Header.Rank, err)
	}
	p.Unmatched, p.Channel, p.ChannelUnreceived = m.Unmatched, m.Channel, m.ChannelUnreceived
	for _, s := range ss {
		p.Unmatched += s.unmatched
		p.Shed += s.shed
		if s.exact {
			p.Exact++
		}
		if s.counted {
			p.Counted++
		}
		for _, c := range s.cells {
			ps := PartSend{From: c.From, ToRank: -1, ToLoc: c.To, Messages: c.Messages, Bytes: c.Bytes}
			if c.To < 0 {
				ps.ToRank, ps.ToLoc = -1-c.To, -1
			}
			p.Sends = append(p.Sends, ps)
		}
	}
	sort.Slice(p.Sends, func(i, j int) bool {
		a, b := p.Sends[i], p.Sends[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.ToRank != b.ToRank {
			return a.ToRank < b.ToRank
		}
		return a.ToLoc < b.ToLoc
	})
	return p, nil
}

// FromParts makes the matrix of a run from its ranks' parts, as FromFiles
// makes it from their files: the nodes in rank order, a send to a rank
// going to that rank's location that exchanges messages by rank, and to
// none (Unmatched) when no part, or more than one, is that rank's.
func FromParts(parts []Part) *Matrix {
	ps := append([]Part(nil), parts...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Rank < ps[j].Rank })
	m := &Matrix{}
	first := make([]int, len(ps))
	byRank := map[int]int{}
	for i, p := range ps {
		first[i] = len(m.Nodes)
		for k, name := range p.Nodes {
			if len(ps) > 1 {
				name = rankNodeName(p.Rank, name, len(p.Nodes))
			}
			m.Nodes = append(m.Nodes, Node{Name: name, Rank: p.Rank, Loc: p.IDs[k]})
		}
		if _, dup := byRank[p.Rank]; dup {
			byRank[p.Rank] = -1
		} else {
			byRank[p.Rank] = i
		}
	}
	for i, p := range ps {
		m.Unmatched += p.Unmatched
		m.Exact += p.Exact
		m.Counted += p.Counted
		m.Shed += p.Shed
		m.Channel += p.Channel
		m.ChannelUnreceived += p.ChannelUnreceived
		cells := map[[2]int]*Cell{}
		for _, s := range p.Sends {
			to := first[i] + s.ToLoc
			if s.ToRank >= 0 {
				j, ok := byRank[s.ToRank]
				if !ok || j < 0 || ps[j].RankLoc < 0 {
					m.Unmatched += s.Messages
					continue
				}
				to = first[j] + ps[j].RankLoc
			}
			from := first[i] + s.From
			c := cells[[2]int{from, to}]
			if c == nil {
				c = &Cell{From: from, To: to}
				cells[[2]int{from, to}] = c
			}
			c.Messages += s.Messages
			c.Bytes += s.Bytes
		}
		for _, c := range cells {
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
	return m
}

// MarshalParts returns the JSON form of parts, a run archive's results
// section's; up the reduction tree they go in their wire form
// (MarshalPartsWire).
func MarshalParts(parts []Part) ([]byte, error) { return json.Marshal(parts) }

// UnmarshalParts reads what MarshalParts wrote.
func UnmarshalParts(b []byte) ([]Part, error) {
	var ps []Part
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("comm: the run's matrix parts: %v", err)
	}
	return ps, checkParts(ps)
}

// checkParts checks that each part's sends are from and to locations it
// names.
func checkParts(ps []Part) error {
	for _, p := range ps {
		if len(p.IDs) != len(p.Nodes) || p.RankLoc >= len(p.Nodes) {
			return fmt.Errorf("comm: rank %d's part: %d names for %d locations, rank location %d", p.Rank, len(p.Nodes), len(p.IDs), p.RankLoc)
		}
		for _, s := range p.Sends {
			if s.From < 0 || s.From >= len(p.Nodes) || s.ToRank < 0 && (s.ToLoc < 0 || s.ToLoc >= len(p.Nodes)) {
				return fmt.Errorf("comm: rank %d's part: a send from location %d to %d/rank %d of %d locations", p.Rank, s.From, s.ToLoc, s.ToRank, len(p.Nodes))
			}
		}
	}
	return nil
}
