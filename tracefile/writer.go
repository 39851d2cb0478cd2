package tracefile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"iter"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/tempfile"
	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Bin is one bin of a level's chain, as it is written.
type Bin struct {
	Location uint32 // Location.ID
	Depth    int
	Class    Class
	Records  uint32
	Data     []byte
}

// Writer writes a trace file: the trace's definitions and statistics first,
// then the bins in any order (a level's bins in chain order), then Close.
type Writer struct {
	w   *bufio.Writer
	crc hash.Hash32
	err error
	p   wirecodec.Writer
}

// NewWriter writes the file's head (magic, header, definitions, statistics)
// to w and returns a Writer for the bins.
func NewWriter(w io.Writer, t *Trace) (*Writer, error) {
	wr := &Writer{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli)}
	var head [10]byte
	copy(head[:], magic)
	binary.LittleEndian.PutUint16(head[8:], t.fileVersion())
	wr.write(head[:])
	wr.section(secHeader, encodeHeader(&t.Header))
	wr.section(secRegions, encodeRegions(t.regions()))
	wr.section(secLocations, encodeLocations(t.Locations))
	wr.section(secReductions, encodeReductions(t.Reductions))
	// The sections added later are written only when they hold something,
	// so that a trace without them is the file the first version wrote.
	if p := encodeParadigms(t.regions()); p != nil {
		wr.section(secParadigms, p)
	}
	if p := encodeThrottled(t.Locations); p != nil {
		wr.section(secThrottled, p)
	}
	if len(t.Comms) > 0 {
		// A rank's slot of a run archive with the run's definitions refers
		// to the run's groups rather than spelling out the long ones.
		sw, ok := w.(*slotWriter)
		if p, refd := encodeCommGroups(t.Comms, ok && sw.refs); refd {
			wr.section(secCommRefs, p)
		} else {
			wr.section(secCommRuns, p)
		}
	}
	if m := encodeCommMatrix(t.Locations); m != nil {
		wr.section(secCommMatrix, m)
	}
	if p := encodeTeams(t.Locations); p != nil {
		wr.section(secTeams, p)
	}
	if p := encodeRma(t); p != nil {
		wr.section(secRma, p)
	}
	if p := encodeAnnotations(&t.Annotations); p != nil {
		wr.section(secAnnotations, p)
	}
	if p := encodeRecovered(t.Recovered); p != nil {
		wr.section(secRecovered, p)
	}
	if p := encodeThrottleRule(t.ThrottleRule, t.Locations); p != nil {
		wr.section(secThrottleRule, p)
	}
	return wr, wr.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	w.crc.Write(b)
	_, w.err = w.w.Write(b)
}

func (w *Writer) section(kind byte, p []byte) {
	var h [1 + binary.MaxVarintLen64]byte
	h[0] = kind
	n := 1 + binary.PutUvarint(h[1:], uint64(len(p)))
	w.write(h[:n])
	w.write(p)
}

// Bin writes one bin.
func (w *Writer) Bin(b Bin) error {
	if b.Depth < 0 || b.Depth > maxDepth || b.Class >= NumClasses {
		return fmt.Errorf("tracefile: bin of location %d has depth %d, class %d", b.Location, b.Depth, b.Class)
	}
	p := w.p[:0]
	p.Uvarint(uint64(b.Location))
	p.Uvarint(uint64(b.Depth))
	p.U8(uint8(b.Class))
	p.Uvarint(uint64(b.Records))
	p.Uvarint(uint64(len(b.Data)))
	w.p = p
	var h [1 + binary.MaxVarintLen64]byte
	h[0] = secBin
	n := 1 + binary.PutUvarint(h[1:], uint64(len(p)+len(b.Data)))
	w.write(h[:n])
	w.write(p)
	w.write(b.Data)
	return w.err
}

// Close writes the checksum and flushes. It does not close the underlying
// writer.
func (w *Writer) Close() error {
	w.write([]byte{secEnd, 4})
	if w.err != nil {
		return w.err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], w.crc.Sum32())
	if _, err := w.w.Write(sum[:]); err != nil {
		return err
	}
	return w.w.Flush()
}

// WriteFile writes a trace file at path atomically: to a temporary file in
// the same directory, renamed over path only once it is complete. bins is
// called with a function that writes one bin. A file at path is replaced,
// whoever wrote it; WriteNew does not replace the trace of a process that
// ran at the same time.
func WriteFile(path string, t *Trace, bins func(put func(Bin) error) error) error {
	tmp, err := writeTemp(path, t, bins)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp writes the complete trace to a new temporary file next to path
// and returns its name.
func writeTemp(path string, t *Trace, bins func(put func(Bin) error) error) (name string, err error) {
	f, err := tempfile.Create(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Discard()
		}
	}()
	if err = Write(f, t, bins); err != nil {
		return "", err
	}
	return f.Finish()
}

// Write writes a complete trace to w: what WriteFile puts in its file. bins
// is called with a function that writes one bin. It is how a trace goes
// where a file name does not fit, such as a rank's slot of a run archive
// (WriteSlot).
func Write(w io.Writer, t *Trace, bins func(put func(Bin) error) error) error {
	wr, err := NewWriter(w, t)
	if err != nil {
		return err
	}
	if err := bins(wr.Bin); err != nil {
		return err
	}
	return wr.Close()
}

func encodeHeader(h *Header) []byte {
	var p wirecodec.Writer
	p.String(h.Name)
	p.String(h.Host)
	p.Varint(int64(h.PID))
	p.Varint(int64(h.Rank))
	p.String(h.Program)
	p.Varint(h.StartWall.UnixNano())
	p.String(h.GoVersion)
	p.String(h.CPU)
	p.String(h.Clock)
	p.F64(h.TicksPerSecond)
	p.U8(h.TimerShift)
	p.Uvarint(h.StartTicks)
	p.Uvarint(h.EndTicks)
	p.F64(h.ProbeCost)
	p.U8(uint8(h.Techniques))
	p.Uvarint(h.BufferSize)
	p.Uvarint(h.BinSize)
	p.String(h.Policy)
	p.Uvarint(uint64(len(h.ClassOrder)))
	for _, c := range h.ClassOrder {
		p.String(c)
	}
	p.Varint(h.MinDuration)
	p.String(h.FilterFile)
	p.Strings(h.Metrics)
	p.Strings(h.MetricsMissing)
	p.String(h.MetricsPath)
	p.Uvarint(uint64(len(h.ClockSync)))
	for _, c := range h.ClockSync {
		p.Uvarint(c.Ticks)
		p.Varint(c.Offset)
	}
	p.Uvarint(h.ReferenceStart)
	return p
}

// regions returns the trace's regions for a writer: Regions, or RegionSeq.
func (t *Trace) regions() (iter.Seq[Region], int) {
	if t.RegionSeq != nil {
		return t.RegionSeq, t.NumRegions
	}
	return slices.Values(t.Regions), len(t.Regions)
}

// profile returns the location's profile for a writer: Profile, or ProfileSeq.
func (l *Location) profile() (iter.Seq[ProfileEntry], int) {
	if l.ProfileSeq != nil {
		return l.ProfileSeq, l.NumProfile
	}
	return slices.Values(l.Profile), len(l.Profile)
}

// uvlen is the length of v as a LEB128 varint.
func uvlen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// The payloads of the regions and locations are sized before they are
// filled: grown by appending, they took twice their size in garbage, which
// at 10^6 regions was 100 MB at the end of a run.

func encodeRegions(rs iter.Seq[Region], n int) []byte {
	size := uvlen(uint64(n))
	for r := range rs {
		size += uvlen(uint64(r.ID)) + uvlen(uint64(len(r.Name))) + len(r.Name) + uvlen(uint64(len(r.File))) + len(r.File) + uvlen(uint64(max(r.Line, 0)))
	}
	p := make(wirecodec.Writer, 0, size)
	p.Uvarint(uint64(n))
	for r := range rs {
		p.Uvarint(uint64(r.ID))
		p.String(r.Name)
		p.String(r.File)
		p.Uvarint(uint64(max(r.Line, 0)))
	}
	return p
}

func encodeLocations(ls []Location) []byte {
	size := 16
	for i := range ls {
		l := &ls[i]
		prof, _ := l.profile()
		for e := range prof {
			size += uvlen(uint64(e.Region)) + uvlen(e.Visits) + uvlen(e.Inclusive) + uvlen(e.Exclusive) + 1 + 20*len(e.CounterInclusive)
		}
		size += 256 + len(l.Name) + len(l.CountersMissing) + 160*len(l.Levels) + 50*len(l.CallPaths)
		if l.Phase != nil {
			for _, s := range l.Phase.Samples {
				size += 8 + 64*len(s.Entries)
			}
		}
	}
	p := make(wirecodec.Writer, 0, size)
	p.Uvarint(uint64(len(ls)))
	for i := range ls {
		l := &ls[i]
		p.Uvarint(uint64(l.ID))
		p.String(l.Name)
		p.Uvarint(l.Recorded)
		p.Uvarint(l.FilteredName)
		p.Uvarint(l.FilteredDuration)
		for _, v := range l.Usage.counters() {
			p.Uvarint(*v)
		}
		prof, n := l.profile()
		p.Uvarint(uint64(n))
		for e := range prof {
			encodeProfileEntry(&p, e)
		}
		p.Uvarint(uint64(len(l.Levels)))
		for _, lv := range l.Levels {
			p.Uvarint(uint64(lv.Depth))
			p.U8(uint8(lv.Class))
			p.Uvarint(lv.Written)
			for _, v := range lv.Revoked {
				p.Uvarint(v)
			}
			for _, v := range lv.Dropped {
				p.Uvarint(v)
			}
			p.Bool(lv.Closed)
			p.U8(uint8(lv.By))
		}
		p.Bool(l.Interrupted)
		p.Bool(l.Multiplexed)
		p.String(l.CountersMissing)
		encodePhase(&p, l.Phase)
		p.Uvarint(uint64(len(l.CallPaths)))
		for _, c := range l.CallPaths {
			p.Uvarint(uint64(c.Parent))
			p.Uvarint(uint64(c.Region))
			p.Uvarint(c.Visits)
			p.Uvarint(c.Inclusive)
			p.Uvarint(c.Exclusive)
		}
		p.Bool(l.Windowed)
		p.Uvarint(l.WindowTime)
		p.Uvarint(uint64(l.WindowSeq))
	}
	return p
}

// encodePhase writes a phase series region by region: for each region
// active in any sample, a presence bit per sample and then its values.
func encodePhase(p *wirecodec.Writer, ps *PhaseSeries) {
	if ps == nil {
		p.Bool(false)
		return
	}
	p.Bool(true)
	p.Uvarint(uint64(ps.Region))
	p.Uvarint(ps.Width)
	p.Uvarint(ps.Iterations)
	p.Uvarint(uint64(len(ps.Samples)))
	for _, s := range ps.Samples {
		p.Uvarint(uint64(len(s.Entries)))
		for _, e := range s.Entries {
			encodeProfileEntry(p, e)
		}
	}
}

// encodeProfileEntry writes one region's line of a flat profile or of a
// phase sample, as decodeProfileEntry reads it.
func encodeProfileEntry(p *wirecodec.Writer, e ProfileEntry) {
	p.Uvarint(uint64(e.Region))
	p.Uvarint(e.Visits)
	p.Uvarint(e.Inclusive)
	p.Uvarint(e.Exclusive)
	p.Uvarint(uint64(len(e.CounterInclusive)))
	for i := range e.CounterInclusive {
		p.Uvarint(e.CounterInclusive[i])
		p.Uvarint(e.CounterExclusive[i])
	}
}

// encodeParadigms lists the regions of a paradigm other than the user's;
// nil if there are none, and then the section is not written.
func encodeParadigms(rs iter.Seq[Region], _ int) []byte {
	n := 0
	for r := range rs {
		if r.Paradigm != ParadigmUser {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	var p wirecodec.Writer
	p.Uvarint(uint64(n))
	for r := range rs {
		if r.Paradigm != ParadigmUser {
			p.Uvarint(uint64(r.ID))
			p.U8(uint8(r.Paradigm))
		}
	}
	return p
}

// encodeThrottled lists the throttled profile entries of every location;
// nil if there are none.
func encodeThrottled(ls []Location) []byte {
	n := 0
	for i := range ls {
		prof, _ := ls[i].profile()
		for e := range prof {
			if e.Throttled {
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	var p wirecodec.Writer
	p.Uvarint(uint64(n))
	for i := range ls {
		prof, _ := ls[i].profile()
		for e := range prof {
			if e.Throttled {
				p.Uvarint(uint64(ls[i].ID))
				p.Uvarint(uint64(e.Region))
				p.Uvarint(e.ThrottledAt)
				p.Uvarint(e.VisitsAfter)
			}
		}
	}
	return p
}

func encodeReductions(rs []Reduction) []byte {
	var p wirecodec.Writer
	p.Uvarint(uint64(len(rs)))
	for _, r := range rs {
		p.U8(uint8(r.Reason))
		p.Uvarint(uint64(max(r.Depth, 0)))
		p.U8(uint8(r.Class))
		p.Uvarint(r.Time)
		p.Uvarint(uint64(max(r.Bins, 0)))
		p.Uvarint(r.Records)
		p.Uvarint(uint64(max(r.Steps, 0)))
	}
	return p
}

func encodeRanks(p *wirecodec.Writer, rs []int32) {
	p.Uvarint(uint64(len(rs)))
	for _, r := range rs {
		p.Varint(int64(r))
	}
}

// encodeCommMatrix writes the matrices of the locations that have one:
// location id, lines, each line's peer, rank flag and counts. It returns nil when no location has one.
func encodeCommMatrix(ls []Location) []byte {
	var p wirecodec.Writer
	n := 0
	for i := range ls {
		if len(ls[i].Comm) > 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	p.Uvarint(uint64(n))
	for i := range ls {
		l := &ls[i]
		if len(l.Comm) == 0 {
			continue
		}
		p.Uvarint(uint64(l.ID))
		p.Uvarint(uint64(len(l.Comm)))
		for _, c := range l.Comm {
			p.Uvarint(c.Peer)
			p.Bool(c.PeerRank)
			p.Uvarint(c.Sent)
			p.Uvarint(c.SentBytes)
			p.Uvarint(c.Received)
			p.Uvarint(c.ReceivedBytes)
		}
	}
	return p
}
