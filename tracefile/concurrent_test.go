package tracefile_test

import (
	"reflect"
	"sync"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The tools read the locations of one file, and resolve their messages'
// peers, from several goroutines at once: each location's events are the
// same as when read alone (run with -race).
func TestConcurrentReaders(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 2, 4, 200, 0)
	read := func(i int, id uint32, peers *tracefile.Peers) ([]tracefile.Event, []tracefile.Endpoint) {
		var evs []tracefile.Event
		var ends []tracefile.Endpoint
		var e tracefile.Event
		it := files[i].Events(id)
		for it.Next(&e) {
			evs = append(evs, e)
			if e.Kind == encode.KindSend || e.Kind == encode.KindRecv {
				end, ok, err := peers.Resolve(i, &e)
				if err != nil || !ok {
					t.Errorf("file %d location %d: peer of %v: ok %v, %v", i, id, e.Kind, ok, err)
				}
				ends = append(ends, end)
			}
		}
		if err := it.Err(); err != nil {
			t.Error(err)
		}
		return evs, ends
	}
	type key struct {
		file int
		id   uint32
	}
	wantEvs := map[key][]tracefile.Event{}
	wantEnds := map[key][]tracefile.Endpoint{}
	alone := tracefile.NewPeers(files)
	for i, f := range files {
		for _, l := range f.Locations {
			wantEvs[key{i, l.ID}], wantEnds[key{i, l.ID}] = read(i, l.ID, alone)
		}
	}
	shared := tracefile.NewPeers(files)
	var wg sync.WaitGroup
	for round := 0; round < 3; round++ {
		for i, f := range files {
			for _, l := range f.Locations {
				wg.Add(1)
				go func() {
					defer wg.Done()
					evs, ends := read(i, l.ID, shared)
					if !reflect.DeepEqual(evs, wantEvs[key{i, l.ID}]) || !reflect.DeepEqual(ends, wantEnds[key{i, l.ID}]) {
						t.Errorf("file %d location %d: read concurrently, its events or peers differ", i, l.ID)
					}
				}()
			}
		}
	}
	wg.Wait()
}
