package score

import (
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A trace file does not say how many bytes each record took, so the walk
// re-encodes the kept events of every level stream with the file's encoding
// techniques and the rules by which package buffer fills bins: a new bin
// starts with a BIN record when the record would not fit with its
// reserve. That reproduces the file's record sizes exactly while the
// buffer kept whole streams; where it revoked bins or dropped records for
// want of one, bin boundaries (and so the first records of bins) may differ.

// maxDirectDepth bounds the depths whose levels the walk finds by index;
// deeper ones (only in odd files) go through the map.
const maxDirectDepth = 1 << 12

// regionWalk is what the walk learns about one region of a file.
type regionWalk struct {
	events uint64 // kept enter and leave records
	bytes  int64  // their encoded size, plus the messages and metrics recorded while it was the innermost region
	// nested counts the calls entered while the region was open, each
	// counted once however deep the region recurses: their probes ran
	// inside its measured time.
	nested uint64
}

type levelKey struct {
	loc   uint32
	depth int
	class tracefile.Class
}

// levelWalk re-encodes one level stream.
type levelWalk struct {
	enc     encode.Encoder
	pos     int64 // bytes used in the current bin; 0: none yet
	bins    int
	bytes   int64 // records and BIN records
	records uint64
}

// fileWalk is the walk over all kept events of one file.
type fileWalk struct {
	regions     []regionWalk // by region id; 0: outside any region
	levels      map[levelKey]*levelWalk
	headerBytes int64 // BIN records
	bins        int
	bytes       int64 // everything re-encoded
	records     uint64
}

// recordRoom is the free space a bin must have for a record of kind k, as
// package buffer asks: an enter also reserves room for its leave.
func recordRoom(k encode.Kind) int64 {
	if k.IsRma() {
		return max(encode.MaxMessageSize, encode.MaxCollectiveSize) // buffer.Level.Put
	}
	switch k {
	case encode.KindEnter:
		return 2 * encode.MaxEnterLeaveSize
	case encode.KindLeave:
		return encode.MaxEnterLeaveSize
	case encode.KindMetric:
		return encode.MaxMetricSize
	case encode.KindIsend, encode.KindIsendComplete, encode.KindIrecvRequest, encode.KindIrecv,
		encode.KindRequestCancelled, encode.KindCollRequest, encode.KindCollComplete,
		encode.KindTaskCreate, encode.KindTaskSwitch, encode.KindTaskComplete, encode.KindTaskSuspend:
		return max(encode.MaxMessageSize, encode.MaxCollectiveSize) // buffer.Level.Put
	}
	return encode.MaxMessageSize
}

// walkFiles reads every kept event of the files once, each location on
// one of procs workers, and sums the locations' walks per file. The sums
// are of integers and the levels of distinct locations distinct, so the
// walks do not depend on the number of workers.
func walkFiles(files []*tracefile.File, procs int) ([]*fileWalk, error) {
	type where struct{ file, loc int }
	var locs []where
	for i, f := range files {
		for k := range f.Locations {
			locs = append(locs, where{i, k})
		}
	}
	parts := make([]*fileWalk, len(locs))
	err := parallel.Do(procs, len(locs), func(n int) error {
		f := files[locs[n].file]
		w, err := walkLocation(f, &f.Locations[locs[n].loc], procs > len(locs))
		parts[n] = w
		return err
	})
	if err != nil {
		return nil, err
	}
	walks := make([]*fileWalk, len(files))
	for i, f := range files {
		walks[i] = newFileWalk(f)
	}
	for n, p := range parts {
		w := walks[locs[n].file]
		for id, r := range p.regions {
			w.regions[id].events += r.events
			w.regions[id].bytes += r.bytes
			w.regions[id].nested += r.nested
		}
		for k, lv := range p.levels {
			w.levels[k] = lv
		}
		w.headerBytes += p.headerBytes
		w.bins += p.bins
	}
	for _, w := range walks {
		for _, lv := range w.levels {
			w.bytes += lv.bytes
			w.records += lv.records
		}
	}
	return walks, nil
}

// walkFile reads every kept event of f once, on one worker.
func walkFile(f *tracefile.File) (*fileWalk, error) {
	w, err := walkFiles([]*tracefile.File{f}, 1)
	if err != nil {
		return nil, err
	}
	return w[0], nil
}

func newFileWalk(f *tracefile.File) *fileWalk {
	return &fileWalk{regions: make([]regionWalk, len(f.Regions)+1), levels: map[levelKey]*levelWalk{}}
}

// walkLocation reads every kept event of location loc of f (with ahead, on
// a goroutine of their own); its walk's bytes and records are left to
// walkFiles.
func walkLocation(f *tracefile.File, loc *tracefile.Location, ahead bool) (*fileWalk, error) {
	w := newFileWalk(f)
	binSize := int64(math.MaxInt32)
	if f.Header.BinSize < uint64(binSize) {
		binSize = int64(f.Header.BinSize)
	}
	var scratch [256]byte // records are encoded only to learn their size
	region := func(id uint32) *regionWalk {
		if int(id) < len(w.regions) {
			return &w.regions[id]
		}
		return &w.regions[0]
	}
	type frame struct {
		region    uint32
		outermost bool
	}
	var e tracefile.Event
	active := make([]int, len(f.Regions)+1) // open calls by region id; 0 for unknown ids
	slot := func(id uint32) *int {
		if int(id) < len(active) {
			return &active[id]
		}
		return &active[0]
	}
	var stack []frame
	// The location's levels by depth and class, found without a map
	// lookup per event.
	var levels [][tracefile.NumClasses]*levelWalk
	it := f.EventsWith(loc.ID, ahead)
	defer it.Close()
	for it.Next(&e) {
		if e.Kind == encode.KindEnter {
			if !e.Truncated {
				for _, fr := range stack {
					if fr.outermost {
						region(fr.region).nested++
					}
				}
			}
			n := slot(e.Region)
			stack = append(stack, frame{e.Region, *n == 0})
			*n++
		}
		if e.Kind == encode.KindLeave && len(stack) > 0 {
			*slot(stack[len(stack)-1].region)--
			stack = stack[:len(stack)-1]
		}
		if e.Truncated {
			continue // the context of a window, not a record
		}
		if e.Depth < 0 || e.Class >= tracefile.NumClasses {
			return nil, fmt.Errorf("%s: location %d: event at depth %d of class %d", f.Path, loc.ID, e.Depth, e.Class)
		}
		var lv *levelWalk
		key := levelKey{loc.ID, e.Depth, e.Class}
		if e.Depth < maxDirectDepth {
			for e.Depth >= len(levels) {
				levels = append(levels, [tracefile.NumClasses]*levelWalk{})
			}
			lv = levels[e.Depth][e.Class]
		} else {
			lv = w.levels[key]
		}
		if lv == nil {
			lv = &levelWalk{enc: encode.NewEncoder(f.Header.Techniques)}
			w.levels[key] = lv
			if e.Depth < maxDirectDepth {
				levels[e.Depth][e.Class] = lv
			}
		}
		if lv.pos == 0 || binSize-lv.pos < recordRoom(e.Kind) {
			open := e.Region
			if e.Kind == encode.KindEnter {
				open = 0
			}
			n := int64(lv.enc.StartBin(scratch[:], e.Time, open))
			lv.pos, lv.bins, lv.bytes = n, lv.bins+1, lv.bytes+n
			w.headerBytes += n
			w.bins++
		}
		n := lv.enc.Put(scratch[:], encode.Record{Kind: e.Kind, Time: e.Time, Seq: e.Seq, Region: e.Region,
			Peer: e.Peer, PeerRank: e.PeerRank, Tag: e.Tag, Bytes: e.Bytes, Values: e.Values, Root: e.Root,
			Win: e.Win, Remote: e.Remote, Aux: e.Aux, Level: e.Level, Group: e.Group})
		lv.pos += int64(n)
		lv.bytes += int64(n)
		lv.records++
		r := region(e.Region)
		r.bytes += int64(n)
		if e.Kind == encode.KindEnter || e.Kind == encode.KindLeave {
			r.events++
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return w, nil
}
