package tracefile

import (
	"math"
	"sync"

	"github.com/hmbtrace/hmbtrace/encode"
)

// Endpoint is a location among several files: files[File].Locations[Loc].
type Endpoint struct {
	File, Loc int
}

// Peers finds the location at the other end of a message among the files
// of a run. A message's peer is a location id of the sender's own file, or
// an MPI world rank: the file whose header has that rank, and in it the
// location that exchanges messages by rank (MPI names processes, not
// threads). The exporters and the communication matrix share it, so that
// they pair the same ends. It is safe for concurrent use: the tools resolve
// the messages of several locations at once.
type Peers struct {
	files  []*File
	byRank map[int]int // world rank -> file index, -1 if several files claim it

	// Per file: its rank location (-1: none), found on first use, once:
	// the search reads events, and its answer does not depend on who asks
	// first. Later asks cost an atomic load, however many workers ask.
	once    []sync.Once
	rankLoc []int
	rankErr []error
}

// NewPeers returns the resolver for messages of the files.
func NewPeers(files []*File) *Peers {
	p := &Peers{files: files, byRank: map[int]int{}, once: make([]sync.Once, len(files)), rankLoc: make([]int, len(files)), rankErr: make([]error, len(files))}
	for i, f := range files {
		if _, dup := p.byRank[f.Header.Rank]; dup {
			p.byRank[f.Header.Rank] = -1
			continue
		}
		p.byRank[f.Header.Rank] = i
	}
	return p
}

// Resolve returns the location at the other end of message e of file i; ok
// is false if it is not among the files (a rank no file has, or that
// several have; a location id file i does not define). The error is one of
// reading the events of a rank's file while looking for its rank location.
func (p *Peers) Resolve(i int, e *Event) (end Endpoint, ok bool, err error) {
	if !e.PeerRank {
		if e.Peer > math.MaxUint32 {
			return Endpoint{}, false, nil
		}
		k, ok := p.files[i].locIdx[uint32(e.Peer)]
		return Endpoint{File: i, Loc: k}, ok, nil
	}
	if e.Peer > math.MaxInt32 {
		return Endpoint{}, false, nil
	}
	j, known := p.byRank[int(e.Peer)]
	if !known || j < 0 {
		return Endpoint{}, false, nil
	}
	p.once[j].Do(func() { p.rankLoc[j], p.rankErr[j] = p.findRankLocation(j) })
	if err := p.rankErr[j]; err != nil {
		return Endpoint{}, false, err
	}
	k := p.rankLoc[j]
	return Endpoint{File: j, Loc: k}, k >= 0, nil
}

// findRankLocation picks the location of file j that sends or receives by
// rank, blocking or not: the first that does, or else the file's first location. It reads
// only the locations whose statistics show kept messages, and each only up
// to its first rank message; -1 if the file has no locations.
func (p *Peers) findRankLocation(j int) (int, error) {
	f := p.files[j]
	if len(f.Locations) == 0 {
		return -1, nil
	}
	var e Event
	for k := range f.Locations {
		l := &f.Locations[k]
		if !keepsMessages(l) {
			continue
		}
		it := f.Events(l.ID)
		for it.Next(&e) {
			if isMessage(e.Kind) && e.PeerRank {
				return k, nil
			}
		}
		if err := it.Err(); err != nil {
			return -1, err
		}
	}
	return 0, nil
}

// isMessage reports whether records of kind k name a peer: blocking
// messages and the non-blocking ones' start (send) and completion
// (receive). A rank whose MPI calls are all non-blocking is found by them.
func isMessage(k encode.Kind) bool {
	return k == encode.KindSend || k == encode.KindRecv || k == encode.KindIsend || k == encode.KindIrecv
}

// keepsMessages reports whether a location may hold messages: its level
// statistics say so, or it has none to ask.
func keepsMessages(l *Location) bool {
	if len(l.Levels) == 0 {
		return true
	}
	for _, lv := range l.Levels {
		if lv.Class == ClassMessage && lv.Kept() > 0 {
			return true
		}
	}
	return false
}
