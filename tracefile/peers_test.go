package tracefile_test

import (
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// rankFile writes rank's file of run name: a location that never sends
// ("main") and one that exchanges messages by rank ("mpi") with to.
func rankFile(t *testing.T, dir, name string, rank, to int) *tracefile.File {
	b := tracetest.NewBuilder(name, "host", rank, time.Unix(0, 0), "work")
	main := b.Location("main")
	main.Enter(10, 1)
	main.Leave(20)
	mpi := b.Location("mpi")
	mpi.Enter(10, 1)
	mpi.Message(11, encode.KindSend, 0, false, 7, 8) // to main, by location id
	mpi.Message(12, encode.KindSend, uint64(to), true, 7, 8)
	mpi.Leave(20)
	return b.Write(t, dir)
}

// messages returns the messages of file f's location "mpi".
func messages(t *testing.T, f *tracefile.File) []tracefile.Event {
	var out []tracefile.Event
	var e tracefile.Event
	it := f.Events(f.Locations[1].ID)
	for it.Next(&e) {
		if e.Kind == encode.KindSend {
			out = append(out, e)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPeersResolve(t *testing.T) {
	dir := t.TempDir()
	files := []*tracefile.File{rankFile(t, dir, "a", 0, 1), rankFile(t, dir, "a", 1, 0)}
	p := tracefile.NewPeers(files)
	for i := range files {
		sends := messages(t, files[i])
		if len(sends) != 2 {
			t.Fatalf("file %d: %d sends, want 2", i, len(sends))
		}
		if end, ok, err := p.Resolve(i, &sends[0]); err != nil || !ok || end != (tracefile.Endpoint{File: i, Loc: 0}) {
			t.Errorf("file %d, send to location 0: %+v %v %v, want its own main", i, end, ok, err)
		}
		// The rank's end is the location that exchanges by rank, not the first.
		if end, ok, err := p.Resolve(i, &sends[1]); err != nil || !ok || end != (tracefile.Endpoint{File: 1 - i, Loc: 1}) {
			t.Errorf("file %d, send to rank %d: %+v %v %v, want file %d location 1", i, 1-i, end, ok, err, 1-i)
		}
	}
	for _, e := range []tracefile.Event{
		{Kind: encode.KindSend, Peer: 9},                 // no such location
		{Kind: encode.KindSend, Peer: 1 << 40},           // not a location id at all
		{Kind: encode.KindSend, Peer: 5, PeerRank: true}, // no such rank
		{Kind: encode.KindSend, Peer: 1 << 40, PeerRank: true},
	} {
		if end, ok, err := p.Resolve(0, &e); ok || err != nil {
			t.Errorf("peer %d (rank %v): %+v %v %v, want not found", e.Peer, e.PeerRank, end, ok, err)
		}
	}

	// A rank two files claim is nobody's: the files are not one run.
	files = append(files, rankFile(t, t.TempDir(), "b", 1, 0))
	p = tracefile.NewPeers(files)
	rank1 := messages(t, files[0])[1]
	if end, ok, err := p.Resolve(0, &rank1); ok || err != nil {
		t.Errorf("rank 1 of two files: %+v %v %v, want not found", end, ok, err)
	}
}

// TestPeersNonBlocking finds a rank's location by its non-blocking
// messages when it has no blocking ones.
func TestPeersNonBlocking(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank := 0; rank < 2; rank++ {
		b := tracetest.NewBuilder("nb", "host", rank, time.Unix(0, 0), "work")
		main := b.Location("main")
		main.Enter(10, 1)
		main.Leave(20)
		mpi := b.Location("mpi")
		mpi.Enter(10, 1)
		if rank == 0 {
			mpi.Isend(11, 1, 7, 8, 0, 1)
			mpi.Request(12, encode.KindIsendComplete, 1)
		} else {
			mpi.Request(11, encode.KindIrecvRequest, 1)
			mpi.Irecv(12, 0, 7, 8, 0, 1)
		}
		mpi.Leave(20)
		files = append(files, b.Write(t, dir))
	}
	p := tracefile.NewPeers(files)
	for i := range files {
		e := tracefile.Event{Kind: encode.KindSend, Peer: uint64(1 - i), PeerRank: true}
		if end, ok, err := p.Resolve(i, &e); err != nil || !ok || end != (tracefile.Endpoint{File: 1 - i, Loc: 1}) {
			t.Errorf("file %d, rank %d: %+v %v %v, want file %d location 1", i, 1-i, end, ok, err, 1-i)
		}
	}
}
