package convert

import (
	"math"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// peers maps the peer of a message to the OTF2 location on the other end.
// A peer is a location id of the same file, or an MPI world rank: the file
// whose header has that rank, and in it the location that exchanges
// messages by rank (MPI names processes, not threads).
type peers struct {
	files   []*tracefile.File
	refs    []map[uint32]otf2.LocationRef // per file: location id -> reference
	byRank  map[int]int                   // world rank -> file index, -1 if several files claim it
	rankLoc map[int]rankLocation          // file index -> its rank location, found on first use
}

type rankLocation struct {
	ref otf2.LocationRef
	ok  bool
}

func newPeers(files []*tracefile.File, refs []map[uint32]otf2.LocationRef) *peers {
	p := &peers{files: files, refs: refs, byRank: map[int]int{}, rankLoc: map[int]rankLocation{}}
	for i, f := range files {
		if _, dup := p.byRank[f.Header.Rank]; dup {
			p.byRank[f.Header.Rank] = -1
			continue
		}
		p.byRank[f.Header.Rank] = i
	}
	return p
}

// resolve returns the location at the other end of message e of file i;
// ok is false if that location is not in the export (a rank no exported
// file has, or that several have; a location id the file does not define).
func (p *peers) resolve(i int, e *tracefile.Event) (ref otf2.LocationRef, ok bool, err error) {
	if !e.PeerRank {
		if e.Peer > 0xFFFFFFFF {
			return 0, false, nil
		}
		ref, ok = p.refs[i][uint32(e.Peer)]
		return ref, ok, nil
	}
	if e.Peer > math.MaxInt32 {
		return 0, false, nil
	}
	j, known := p.byRank[int(e.Peer)]
	if !known || j < 0 {
		return 0, false, nil
	}
	rl, done := p.rankLoc[j]
	if !done {
		if rl, err = p.findRankLocation(j); err != nil {
			return 0, false, err
		}
		p.rankLoc[j] = rl
	}
	return rl.ref, rl.ok, nil
}

// findRankLocation picks the location of file j that sends or receives by
// rank: the first that does, or else the file's first location. It reads
// only the locations whose statistics show kept messages, and each only up
// to its first rank message.
func (p *peers) findRankLocation(j int) (rankLocation, error) {
	f := p.files[j]
	if len(f.Locations) == 0 {
		return rankLocation{}, nil
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
				return rankLocation{ref: p.refs[j][l.ID], ok: true}, nil
			}
		}
		if err := it.Err(); err != nil {
			return rankLocation{}, err
		}
	}
	return rankLocation{ref: p.refs[j][f.Locations[0].ID], ok: true}, nil
}

// keepsMessages reports whether a location may hold messages: its level
// statistics say so, or it has none to ask.
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
