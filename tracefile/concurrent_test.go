package tracefile_test

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

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

// EventsAhead gives the events and the error of Events.
func TestEventsAhead(t *testing.T) {
	b := tracetest.NewBuilder("metrics", "node", 0, time.Unix(1700000000, 0), "main", "work")
	b.Trace.Header.Metrics = []string{"cycles", "instructions"}
	l := b.Location("thread 0")
	l.Enter(10, 1, 5, 6)
	for k := uint64(0); k < 3*4096; k++ {
		l.Enter(20+10*k, 2, 100+k, 200+k)
		l.Leave(25+10*k, 150+k, 250+k)
	}
	l.Leave(200000, 7, 8)
	traces := [][]*tracefile.File{
		tracetest.Ranks(t, t.TempDir(), 2, 3, 700, 0),
		tracetest.Ranks(t, t.TempDir(), 1, 3, 1500, 64<<10),
		{b.Write(t, t.TempDir())},
		{tracetest.BadNesting(t, t.TempDir())},
	}
	for _, files := range traces {
		for _, f := range files {
			for _, loc := range f.Locations {
				var want, got []tracefile.Event
				var wantVals, gotVals [][]uint64
				var e tracefile.Event
				it := f.Events(loc.ID)
				for it.Next(&e) {
					want = append(want, e)
					wantVals = append(wantVals, append([]uint64(nil), e.Values...))
				}
				ahead := f.EventsAhead(loc.ID)
				for ahead.Next(&e) {
					got = append(got, e)
					gotVals = append(gotVals, append([]uint64(nil), e.Values...))
				}
				if fmt.Sprint(it.Err()) != fmt.Sprint(ahead.Err()) {
					t.Errorf("%s %s: error %v, Events gives %v", f.Path, loc.Name, ahead.Err(), it.Err())
				}
				for k := range want {
					want[k].Values, wantVals[k] = nil, nilIfEmpty(wantVals[k])
				}
				for k := range got {
					got[k].Values, gotVals[k] = nil, nilIfEmpty(gotVals[k])
				}
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotVals, wantVals) {
					t.Errorf("%s %s: %d events ahead, %d from Events, or other ones", f.Path, loc.Name, len(got), len(want))
				}
				ahead.Close()
			}
		}
	}
}

func nilIfEmpty(v []uint64) []uint64 {
	if len(v) == 0 {
		return nil
	}
	return v
}

// Close stops the reader of a caller that stops early.
func TestEventsAheadClose(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 1, 2, 3000, 0)
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		it := files[0].EventsAhead(files[0].Locations[i%2].ID)
		var e tracefile.Event
		for k := 0; k < 5000 && it.Next(&e); k++ {
		}
		it.Close()
		it.Close()
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines after closing, %d before", after, before)
	}
}
