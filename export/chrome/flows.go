package chrome

import (
	"math"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// peers maps the peer of a message to the exported location on the other
// end, by its index over all files' locations. A peer is a location id of
// the same file, or an MPI world rank: the file whose header has that rank,
// and in it the location that exchanges messages by rank.
type peers struct {
	files   []*tracefile.File
	index   []map[uint32]int // per file: location id -> index
	byRank  map[int]int      // world rank -> file index, -1 if several files claim it
	rankLoc map[int]int      // file index -> index of its rank location, -1 if none
}

func newPeers(files []*tracefile.File) *peers {
	p := &peers{files: files, byRank: map[int]int{}, rankLoc: map[int]int{}}
	n := 0
	for i, f := range files {
		m := map[uint32]int{}
		for _, l := range f.Locations {
			m[l.ID] = n
			n++
		}
		p.index = append(p.index, m)
		if _, dup := p.byRank[f.Header.Rank]; dup {
			p.byRank[f.Header.Rank] = -1
		} else {
			p.byRank[f.Header.Rank] = i
		}
	}
	return p
}

// resolve returns the index of the location at the other end of message e
// of file i; ok is false if it is not exported.
func (p *peers) resolve(i int, e *tracefile.Event) (idx int, ok bool, err error) {
	if !e.PeerRank {
		if e.Peer > math.MaxUint32 {
			return 0, false, nil
		}
		idx, ok = p.index[i][uint32(e.Peer)]
		return idx, ok, nil
	}
	if e.Peer > math.MaxInt32 {
		return 0, false, nil
	}
	j, known := p.byRank[int(e.Peer)]
	if !known || j < 0 {
		return 0, false, nil
	}
	idx, done := p.rankLoc[j]
	if !done {
		if idx, err = p.findRankLocation(j); err != nil {
			return 0, false, err
		}
		p.rankLoc[j] = idx
	}
	return idx, idx >= 0, nil
}

// findRankLocation picks the location of file j that sends or receives by
// rank (MPI names processes, not threads): the first that does, or else the
// file's first location. It reads the locations whose statistics show kept
// messages, each up to its first rank message.
func (p *peers) findRankLocation(j int) (int, error) {
	f := p.files[j]
	if len(f.Locations) == 0 {
		return -1, nil
	}
	var e tracefile.Event
	for k := range f.Locations {
		l := &f.Locations[k]
		if !keepsMessages(l) {
			continue
		}
		it := f.Events(l.ID)
		for it.Next(&e) {
			if (e.Kind == encode.KindSend || e.Kind == encode.KindRecv) && e.PeerRank {
				return p.index[j][l.ID], nil
			}
		}
		if err := it.Err(); err != nil {
			return -1, err
		}
	}
	return p.index[j][f.Locations[0].ID], nil
}

func keepsMessages(l *tracefile.Location) bool {
	if len(l.Levels) == 0 {
		return true
	}
	for _, lv := range l.Levels {
		if lv.Class == tracefile.ClassMessage && lv.Kept() > 0 {
			return true
		}
	}
	return false
}

// channel is one direction of messages between two locations with one
// tag; messages on it arrive in the order they were sent (MPI's
// non-overtaking rule, a Go channel's order), so the n-th send pairs with
// the n-th receive.
type channel struct {
	from, to int
	tag      uint32
}

// flowID names the n-th message of a channel, the same on the sender's and
// the receiver's side, which are written at different times: FNV-1a of the
// channel and n.
func flowID(c channel, n uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range [4]uint64{uint64(c.from), uint64(c.to), uint64(c.tag), n} {
		for k := 0; k < 8; k++ {
			h ^= (v >> (8 * k)) & 0xFF
			h *= 1099511628211
		}
	}
	return h
}
