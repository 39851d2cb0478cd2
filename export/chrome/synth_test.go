package chrome

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// synth writes trace files event by event, for what the probes cannot be
// made to record on this machine (counters without a PMU, other hosts) or
// must not record (streams that do not nest). Times are reduced ticks; with
// the default header a tick is a nanosecond.
type synth struct {
	tr   tracefile.Trace
	locs []*synthLoc
}

type synthLoc struct {
	id     uint32
	depth  int
	open   []uint32
	levels map[[2]int][]encode.Record // (depth, class) -> records
	order  [][2]int
	last   uint64
	seq    uint32
}

func newSynth(name, host string, rank int, start time.Time, regions ...string) *synth {
	s := &synth{tr: tracefile.Trace{Header: tracefile.Header{Name: name, Host: host, Rank: rank, StartWall: start,
		Clock: "monotonic", TicksPerSecond: 1e9, Techniques: encode.All, Policy: "depth"}}}
	for i, r := range regions {
		s.tr.Regions = append(s.tr.Regions, tracefile.Region{ID: uint32(i + 1), Name: r})
	}
	return s
}

func (s *synth) location(name string) *synthLoc {
	l := &synthLoc{id: uint32(len(s.locs)), levels: map[[2]int][]encode.Record{}}
	s.locs = append(s.locs, l)
	s.tr.Locations = append(s.tr.Locations, tracefile.Location{ID: l.id, Name: name})
	return l
}

func (l *synthLoc) put(depth int, class tracefile.Class, r encode.Record) {
	if r.Time == l.last {
		l.seq++
	} else {
		l.last, l.seq = r.Time, 0
	}
	r.Seq = l.seq
	key := [2]int{depth, int(class)}
	if _, ok := l.levels[key]; !ok {
		l.order = append(l.order, key)
	}
	l.levels[key] = append(l.levels[key], r)
}

// enter enters region at t; counter values, if any, follow the enter.
func (l *synthLoc) enter(t uint64, region uint32, counters ...uint64) {
	l.depth++
	l.open = append(l.open, region)
	l.put(l.depth, tracefile.ClassRegion, encode.Record{Kind: encode.KindEnter, Time: t, Region: region})
	if len(counters) > 0 {
		l.put(l.depth, tracefile.ClassMetric, encode.Record{Kind: encode.KindMetric, Time: t, Values: counters})
	}
}

// leave leaves the innermost region at t; counter values follow the leave.
func (l *synthLoc) leave(t uint64, counters ...uint64) {
	l.put(l.depth, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: t})
	if len(counters) > 0 {
		l.put(l.depth, tracefile.ClassMetric, encode.Record{Kind: encode.KindMetric, Time: t, Values: counters})
	}
	l.depth--
	l.open = l.open[:len(l.open)-1]
}

func (l *synthLoc) message(t uint64, kind encode.Kind, peer uint64, rank bool, tag uint32, bytes uint64) {
	l.put(l.depth, tracefile.ClassMessage, encode.Record{Kind: kind, Time: t, Peer: peer, PeerRank: rank, Tag: tag, Bytes: bytes})
}

// write writes the trace to dir/name.rank.hmb and opens it.
func (s *synth) write(t testing.TB, dir string) *tracefile.File {
	t.Helper()
	for i, l := range s.locs {
		loc := &s.tr.Locations[i]
		loc.Levels = nil
		for _, key := range l.order {
			n := uint64(len(l.levels[key]))
			loc.Recorded += n
			loc.Levels = append(loc.Levels, tracefile.LevelStats{Depth: key[0], Class: tracefile.Class(key[1]), Written: n})
		}
		s.tr.Header.EndTicks = max(s.tr.Header.EndTicks, l.last)
	}
	path := filepath.Join(dir, s.tr.Header.Name+"."+strconv.Itoa(s.tr.Header.Rank)+".hmb")
	err := tracefile.WriteFile(path, &s.tr, func(put func(tracefile.Bin) error) error {
		for _, l := range s.locs {
			for _, key := range l.order {
				recs := l.levels[key]
				e := encode.NewEncoder(encode.All)
				b := make([]byte, encode.MaxBinHeaderSize+len(recs)*encode.MaxMetricSize)
				n := e.StartBin(b, recs[0].Time, 0)
				for _, r := range recs {
					switch r.Kind {
					case encode.KindEnter:
						n += e.Enter(b[n:], r.Time, r.Seq, r.Region)
					case encode.KindLeave:
						n += e.Leave(b[n:], r.Time, r.Seq)
					case encode.KindSend, encode.KindRecv:
						n += e.Message(b[n:], r.Kind, r.Time, r.Seq, r.Peer, r.PeerRank, r.Tag, r.Bytes)
					case encode.KindMetric:
						n += e.Metric(b[n:], r.Time, r.Seq, r.Values)
					}
				}
				bin := tracefile.Bin{Location: l.id, Depth: key[0], Class: tracefile.Class(key[1]), Records: uint32(len(recs)), Data: b[:n]}
				if err := put(bin); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
