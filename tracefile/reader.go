package tracefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
)

// File is an opened trace file: its definitions and statistics in memory,
// its bins read on demand.
type File struct {
	Trace
	Path string
	// EventsNone is set for a rank read from a run archive written with
	// HMB_OUTPUT_EVENTS=none: its definitions and statistics, no events.
	EventsNone bool

	r      io.ReaderAt
	closer io.Closer
	// commRefs are the communicators of COMM REFS whose groups the run
	// archive's definitions hold, until Archive.OpenRank resolves them.
	commRefs []commRef
	levels   map[uint32][]*levelRef // by location id, in order of first bin
	locIdx   map[uint32]int
	bins     int
	bytes    int64
}

type binRef struct {
	off     int64 // file offset of the bin's data
	n       int
	records uint32
}

type levelRef struct {
	depth   int
	class   Class
	bins    []binRef
	records uint64 // in its bins so far
	kept    uint64 // what the location's statistics say the file keeps of it
	stats   bool   // kept is known
	slack   uint64 // records the statistics may miss (an interrupted location)
}

// Open opens and checks a trace file: structure and checksum. The bins are
// read later, as events are asked for.
func Open(path string) (*File, error) {
	if IsMapping(path) {
		return openMapping(path)
	}
	f, tf, err := openRead(path, Read)
	if err != nil {
		return nil, err
	}
	tf.Path = path
	tf.closer = f
	return tf, nil
}

// openRead opens the file at path and reads it with read, naming path in
// a FormatError; the file stays open for the caller unless read failed.
func openRead[T any](path string, read func(io.ReaderAt, int64) (T, error)) (*os.File, T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return nil, zero, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, zero, err
	}
	v, err := read(f, st.Size())
	if err != nil {
		f.Close()
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, zero, err
	}
	return f, v, nil
}

// Close releases the file.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Bins returns the number of bins in the file and the bytes they hold.
func (f *File) Bins() (n int, bytes int64) { return f.bins, f.bytes }

// Location returns the location with the given id, or nil.
func (f *File) Location(id uint32) *Location {
	if i, ok := f.locIdx[id]; ok {
		return &f.Locations[i]
	}
	return nil
}

// scanner reads a file front to back, feeding the checksum.
type scanner struct {
	r   *bufio.Reader
	crc hash.Hash32
	off int64
	end int64
}

func (s *scanner) fail(at int64, format string, a ...any) error {
	return &FormatError{Offset: at, Reason: fmt.Sprintf(format, a...)}
}

func (s *scanner) read(p []byte, what string) error {
	at := s.off
	n, err := io.ReadFull(s.r, p)
	s.crc.Write(p[:n])
	s.off += int64(n)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return s.fail(at, "file truncated in %s (%d of %d bytes)", what, n, len(p))
		}
		return err
	}
	return nil
}

func (s *scanner) skip(n int64, what string) error {
	at := s.off
	m, err := io.CopyN(s.crc, s.r, n)
	s.off += m
	if err != nil {
		if err == io.EOF {
			return s.fail(at, "file truncated in %s (%d of %d bytes)", what, m, n)
		}
		return err
	}
	return nil
}

func (s *scanner) uvarint(what string) (uint64, error) {
	var buf [binary.MaxVarintLen64]byte
	at := s.off
	for i := range buf {
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				return 0, s.fail(at, "file truncated in %s", what)
			}
			return 0, err
		}
		buf[i] = b
		s.off++
		if b < 0x80 {
			s.crc.Write(buf[:i+1])
			v, n := binary.Uvarint(buf[:i+1])
			if n <= 0 {
				return 0, s.fail(at, "%s: varint overflows 64 bits", what)
			}
			return v, nil
		}
	}
	return 0, s.fail(at, "%s: varint longer than 10 bytes", what)
}

// Read reads a trace from r, of the given size.
func Read(r io.ReaderAt, size int64) (*File, error) {
	f, err := read(r, size, false)
	if err == nil && f.commRefs != nil {
		return nil, &FormatError{Reason: errCommRefs.Error()}
	}
	return f, err
}

// read reads a trace; noEvents is set for a rank of an archive written
// with HMB_OUTPUT_EVENTS=none, whose statistics count the events its
// buffer kept but which has no bins.
func read(r io.ReaderAt, size int64, noEvents bool) (*File, error) {
	s := &scanner{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<16), crc: crc32.New(castagnoli), end: size}
	f := &File{r: r, levels: map[uint32][]*levelRef{}, locIdx: map[uint32]int{}}
	var head [10]byte
	if err := s.read(head[:], "file header"); err != nil {
		return nil, err
	}
	if string(head[:8]) == archiveMagic {
		return nil, s.fail(0, "a run archive, not one trace (OpenArchive reads it; the tools take it whole, or one rank as ARCHIVE#RANK)")
	}
	if string(head[:8]) != magic {
		return nil, s.fail(0, "not an hmbtrace file (magic %q)", head[:8])
	}
	if v := binary.LittleEndian.Uint16(head[8:]); v < 1 || v > version {
		return nil, s.fail(8, "format version %d; this reader reads versions 1 to %d (a newer hmbtrace wrote it)", v, version)
	}
	order := []byte{secHeader, secRegions, secLocations, secReductions}
	seen := 0
	levelIdx := map[[3]uint64]*levelRef{}
	sections := map[byte]bool{} // the sections seen that come once
	for {
		at := s.off
		kb := []byte{0}
		if err := s.read(kb, "section kind"); err != nil {
			return nil, err
		}
		kind := kb[0]
		length, err := s.uvarint(sectionName(kind) + " length")
		if err != nil {
			return nil, err
		}
		body := s.off
		if length > uint64(size-body) {
			return nil, s.fail(at, "file truncated: %s of %d bytes, only %d left", sectionName(kind), length, size-body)
		}
		if seen < len(order) {
			if kind != order[seen] {
				return nil, s.fail(at, "%s where %s was expected", sectionName(kind), sectionName(order[seen]))
			}
			seen++
		}
		if once[kind] && sections[kind] {
			return nil, s.fail(at, "a second %s section", sectionName(kind))
		}
		sections[kind] = true
		switch kind {
		case secEnd:
			if length != 4 {
				return nil, s.fail(at, "END section of %d bytes, want 4", length)
			}
			want := s.crc.Sum32()
			var sum [4]byte
			if err := s.read(sum[:], "checksum"); err != nil {
				return nil, err
			}
			if got := binary.LittleEndian.Uint32(sum[:]); got != want {
				return nil, s.fail(body, "checksum mismatch: file says 0x%08x, content gives 0x%08x (the file is corrupted)", got, want)
			}
			if s.off != size {
				return nil, s.fail(s.off, "%d bytes after the END section", size-s.off)
			}
			if seen < len(order) {
				return nil, s.fail(at, "END before %s", sectionName(order[seen]))
			}
			if noEvents {
				return f, nil
			}
			if err := f.checkLevelsComplete(levelIdx); err != nil {
				return nil, s.fail(at, "%v", err)
			}
			return f, nil
		case secBin:
			if noEvents {
				return nil, s.fail(at, "a BIN section in a trace written without events (HMB_OUTPUT_EVENTS=none)")
			}
			if err := f.readBin(s, body, int64(length), levelIdx); err != nil {
				return nil, err
			}
		case secHeader, secRegions, secLocations, secReductions, secParadigms, secThrottled, secComms, secCommRuns, secCommRefs, secCommMatrix, secRma:
			p := make([]byte, length)
			if err := s.read(p, sectionName(kind)); err != nil {
				return nil, err
			}
			fl := sectionFields(p, body, sectionName(kind))
			switch kind {
			case secHeader:
				decodeHeader(fl, &f.Header)
			case secRegions:
				f.Regions = decodeRegions(fl)
				f.indexRegions()
			case secLocations:
				f.Locations = decodeLocations(fl)
				for i, l := range f.Locations {
					if _, dup := f.locIdx[l.ID]; dup {
						fl.Fail("location", fmt.Sprintf("id %d defined twice", l.ID))
					}
					f.locIdx[l.ID] = i
				}
			case secReductions:
				f.Reductions = decodeReductions(fl)
			case secParadigms:
				decodeParadigms(fl, f.Regions)
			case secThrottled:
				f.decodeThrottled(fl)
			case secComms, secCommRuns, secCommRefs:
				if f.Comms != nil {
					fl.Fail("communicators", "a second section of communicators (COMMS, COMM RUNS or COMM REFS)")
				}
				switch kind {
				case secComms:
					f.Comms = decodeComms(fl)
				case secCommRuns:
					f.Comms = decodeCommRuns(fl)
				default:
					f.Comms, f.commRefs = decodeCommGroups(fl, true)
					if f.commRefs == nil {
						f.commRefs = []commRef{}
					}
				}
			case secCommMatrix:
				f.decodeCommMatrix(fl)
			case secRma:
				if f.Wins != nil || f.RmaGroups != nil {
					fl.Fail("windows", "a second RMA section")
				}
				decodeRma(fl, &f.Trace)
			}
			fl.Done()
			if !fl.OK() {
				return nil, fl.formatError()
			}
		case secAnnotations:
			p := make([]byte, length)
			if err := s.read(p, sectionName(kind)); err != nil {
				return nil, err
			}
			fl := sectionFields(p, body, sectionName(kind))
			if !f.Annotations.empty() {
				fl.Fail("annotations", "a second ANNOTATIONS section")
			}
			decodeAnnotations(fl, &f.Annotations)
			if fl.Done(); !fl.OK() {
				return nil, fl.formatError()
			}
		case secRecovered:
			p := make([]byte, length)
			if err := s.read(p, sectionName(kind)); err != nil {
				return nil, err
			}
			fl := sectionFields(p, body, sectionName(kind))
			if f.Recovered != nil {
				fl.Fail("recovered", "a second RECOVERED section")
			}
			f.Recovered = decodeRecovered(fl)
			if fl.Done(); !fl.OK() {
				return nil, fl.formatError()
			}
		case secThrottleRule:
			p := make([]byte, length)
			if err := s.read(p, sectionName(kind)); err != nil {
				return nil, err
			}
			fl := sectionFields(p, body, sectionName(kind))
			if f.ThrottleRule != nil {
				fl.Fail("throttle rule", "a second THROTTLE RULE section")
			}
			f.decodeThrottleRule(fl)
			if fl.Done(); !fl.OK() {
				return nil, fl.formatError()
			}
		case secTeams:
			p := make([]byte, length)
			if err := s.read(p, sectionName(kind)); err != nil {
				return nil, err
			}
			fl := sectionFields(p, body, sectionName(kind))
			f.decodeTeams(fl)
			if fl.Done(); !fl.OK() {
				return nil, fl.formatError()
			}
		default: // a section of a later version: skip it
			if err := s.skip(int64(length), sectionName(kind)); err != nil {
				return nil, err
			}
		}
	}
}

// once are the sections a file has at most one of.
var once = map[byte]bool{secHeader: true, secRegions: true, secLocations: true, secReductions: true,
	secParadigms: true, secThrottled: true, secComms: true, secCommRuns: true, secCommRefs: true, secRma: true, secAnnotations: true}

// checkLevelsComplete checks that every level's bins hold what the
// location's statistics say the file keeps of it: a bin removed from the
// file (and the checksum made anew) would otherwise read as a run that
// kept everything. Bins beyond the statistics are refused as they come.
func (f *File) checkLevelsComplete(idx map[[3]uint64]*levelRef) error {
	for _, l := range f.Locations {
		if l.Windowed {
			continue // keep-last: the statistics count what the window left as it ran
		}
		for _, st := range l.Levels {
			want := st.Kept()
			var got, slack uint64
			if lv := idx[[3]uint64{uint64(l.ID), uint64(st.Depth), uint64(st.Class)}]; lv != nil {
				got, slack = lv.records, lv.slack
			} else if l.Interrupted {
				slack = maxRecordsPerEvent
			}
			if got+slack < want {
				return fmt.Errorf("location %d depth %d class %v: its statistics keep %d records, its bins hold %d (a bin missing?)", l.ID, st.Depth, st.Class, want, got)
			}
		}
	}
	return nil
}

// maxDepth bounds the calling depths a file holds. The readers' work does
// not grow with a depth's value, only with the events; the bound keeps
// depths in an int of any platform and refuses what no program reaches.
const maxDepth = 1 << 30

// maxRecordsPerEvent bounds the records one event takes (an MPI event with
// its extensions): the slack of an interrupted location's counts.
const maxRecordsPerEvent = 8

func (f *File) readBin(s *scanner, body, length int64, idx map[[3]uint64]*levelRef) error {
	var v [5]uint64 // location, depth, class, records, data length
	for i, what := range [...]string{"location", "depth", "class", "records", "data length"} {
		x, err := s.uvarint("BIN " + what)
		if err != nil {
			return err
		}
		v[i] = x
	}
	loc, depth, class, records, n := v[0], v[1], v[2], v[3], v[4]
	switch {
	case loc > 0xFFFFFFFF:
		return s.fail(body, "BIN: location %d out of range", loc)
	case depth > maxDepth:
		return s.fail(body, "BIN: depth %d out of range", depth)
	case class >= uint64(NumClasses):
		return s.fail(body, "BIN: unknown event class %d", class)
	case records > 0xFFFFFFFF:
		return s.fail(body, "BIN: record count %d out of range", records)
	}
	if _, ok := f.locIdx[uint32(loc)]; !ok {
		return s.fail(body, "BIN: location %d is not defined", loc)
	}
	if hdr := s.off - body; n != uint64(length-hdr) {
		return s.fail(body, "BIN: data of %d bytes in a section of %d", n, length)
	}
	key := [3]uint64{loc, depth, class}
	lv := idx[key]
	if lv == nil {
		lv = &levelRef{depth: int(depth), class: Class(class)}
		l := &f.Locations[f.locIdx[uint32(loc)]]
		// The keep-last policy's counts are of the records revoked at
		// the probe's time, not of what its window left in the bins.
		for _, st := range l.Levels {
			if st.Depth == int(depth) && st.Class == Class(class) && !l.Windowed {
				lv.kept, lv.stats = st.Kept(), true
			}
		}
		if l.Interrupted {
			// Its last event may be in a bin but not in the counts.
			lv.slack = maxRecordsPerEvent
		}
		idx[key] = lv
		f.levels[uint32(loc)] = append(f.levels[uint32(loc)], lv)
	}
	// A level's bins hold what its statistics say it kept; more is a bin
	// written twice (a duplicated section) or one of another run.
	lv.records += records
	if lv.stats && lv.records > lv.kept+lv.slack {
		return s.fail(body, "BIN: location %d depth %d class %v: %d records in its bins so far, its statistics keep %d (a duplicated bin?)",
			loc, depth, Class(class), lv.records, lv.kept)
	}
	lv.bins = append(lv.bins, binRef{off: s.off, n: int(n), records: uint32(records)})
	f.bins++
	f.bytes += int64(n)
	return s.skip(int64(n), "BIN data")
}

func decodeHeader(f *fields, h *Header) {
	h.Name = f.String("name")
	h.Host = f.String("host")
	h.PID = f.Int("pid", -1<<31, 1<<31)
	h.Rank = f.Int("rank", -1<<31, 1<<31)
	h.Program = f.String("program")
	h.StartWall = time.Unix(0, f.Int64("start time", -1<<62, 1<<62)).UTC()
	h.GoVersion = f.String("go version")
	h.CPU = f.String("cpu")
	h.Clock = f.String("clock")
	h.TicksPerSecond = f.Finite("ticks per second")
	if f.OK() && h.TicksPerSecond <= 0 {
		f.Fail("ticks per second", fmt.Sprintf("%v is not positive", h.TicksPerSecond))
	}
	h.TimerShift = f.U8("timer shift")
	if f.OK() && h.TimerShift > 63 {
		f.Fail("timer shift", fmt.Sprintf("%d is more than 63", h.TimerShift))
	}
	h.StartTicks = f.Uvarint("start ticks")
	h.EndTicks = f.Uvarint("end ticks")
	h.ProbeCost = f.Finite("probe cost")
	h.Techniques = encode.Techniques(f.U8("techniques"))
	if f.OK() && !h.Techniques.Valid() {
		f.Fail("techniques", fmt.Sprintf("unknown technique bits %v", h.Techniques))
	}
	h.BufferSize = f.Uvarint("buffer size")
	h.BinSize = f.Uvarint("bin size")
	h.Policy = f.String("policy")
	n := f.Count("class order", 1)
	for i := 0; i < n; i++ {
		h.ClassOrder = append(h.ClassOrder, f.String("class order"))
	}
	h.MinDuration = f.Int64("min duration", 0, 1<<62)
	h.FilterFile = f.String("filter file")
	h.Metrics = f.Strings("metrics")
	h.MetricsMissing = f.Strings("metrics missing")
	h.MetricsPath = f.String("metrics read path")
	ns := f.Count("clock sync points", 2)
	for i := 0; i < ns && f.OK(); i++ {
		h.ClockSync = append(h.ClockSync, ClockSync{Ticks: f.Uvarint("clock sync ticks"), Offset: f.Int64("clock sync offset", -1<<62, 1<<62)})
	}
	h.ReferenceStart = f.Uvarint("reference start")
}

func decodeRegions(f *fields) []Region {
	n := f.Count("regions", 4)
	rs := make([]Region, 0, n)
	for i := 0; i < n && f.OK(); i++ {
		r := Region{ID: f.U32("region id"), Name: f.String("region name"), File: f.String("region file")}
		line := f.Uvarint("region line")
		if line > 1<<31 {
			f.Fail("region line", fmt.Sprintf("%d out of range", line))
		}
		r.Line = int(line)
		if f.OK() && r.ID == 0 {
			f.Fail("region id", "0 is not a valid region id")
		}
		rs = append(rs, r)
	}
	return rs
}

func decodeLocations(f *fields) []Location {
	n := f.Count("locations", 22)
	ls := make([]Location, 0, n)
	for i := 0; i < n && f.OK(); i++ {
		l := Location{ID: f.U32("location id"), Name: f.String("location name"), Recorded: f.Uvarint("recorded"),
			FilteredName: f.Uvarint("filtered by name"), FilteredDuration: f.Uvarint("filtered by duration")}
		for _, p := range l.Usage.counters() {
			*p = f.Uvarint("usage errors")
		}
		np := f.Count("profile entries", 5)
		for j := 0; j < np && f.OK(); j++ {
			l.Profile = append(l.Profile, decodeProfileEntry(f))
		}
		nl := f.Count("levels", 14)
		for j := 0; j < nl && f.OK(); j++ {
			d := f.Uvarint("level depth")
			if d > maxDepth {
				f.Fail("level depth", fmt.Sprintf("%d out of range", d))
			}
			lv := LevelStats{Depth: int(d), Class: f.class("level class"), Written: f.Uvarint("written")}
			for k := range lv.Revoked {
				lv.Revoked[k] = f.Uvarint("revoked")
			}
			for k := range lv.Dropped {
				lv.Dropped[k] = f.Uvarint("dropped")
			}
			lv.Closed = f.Bool("closed")
			lv.By = f.reason("closed by")
			if rev := lv.Revoked.Total(); f.OK() && rev > lv.Written {
				f.Fail("revoked", fmt.Sprintf("%d records revoked of %d written", rev, lv.Written))
			}
			l.Levels = append(l.Levels, lv)
		}
		l.Interrupted = f.Bool("interrupted")
		l.Multiplexed = f.Bool("multiplexed")
		l.CountersMissing = f.String("counters missing")
		if f.Bool("phase") {
			ps := &PhaseSeries{Region: f.U32("phase region"), Width: f.Uvarint("phase width"), Iterations: f.Uvarint("phase iterations")}
			ns := f.Count("phase samples", 1)
			for k := 0; k < ns && f.OK(); k++ {
				var s PhaseSample
				ne := f.Count("phase entries", 5)
				for e := 0; e < ne && f.OK(); e++ {
					s.Entries = append(s.Entries, decodeProfileEntry(f))
				}
				ps.Samples = append(ps.Samples, s)
			}
			l.Phase = ps
		}
		nc := f.Count("call paths", 5)
		for k := 0; k < nc && f.OK(); k++ {
			c := CallPath{Parent: f.U32("call path parent"), Region: f.U32("call path region"), Visits: f.Uvarint("call path visits"),
				Inclusive: f.Uvarint("call path inclusive"), Exclusive: f.Uvarint("call path exclusive")}
			if f.OK() && int(c.Parent) > k {
				f.Fail("call path parent", fmt.Sprintf("node %d names parent %d, which does not come before it", k+1, c.Parent))
			}
			l.CallPaths = append(l.CallPaths, c)
		}
		l.Windowed = f.Bool("windowed")
		l.WindowTime = f.Uvarint("window time")
		l.WindowSeq = f.U32("window seq")
		ls = append(ls, l)
	}
	return ls
}

func decodeProfileEntry(f *fields) ProfileEntry {
	e := ProfileEntry{Region: f.U32("profile region"), Visits: f.Uvarint("visits"), Inclusive: f.Uvarint("inclusive"), Exclusive: f.Uvarint("exclusive")}
	if nc := f.Count("counter sums", 2); nc > 0 {
		e.CounterInclusive, e.CounterExclusive = make([]uint64, nc), make([]uint64, nc)
		for k := 0; k < nc; k++ {
			e.CounterInclusive[k] = f.Uvarint("counter inclusive")
			e.CounterExclusive[k] = f.Uvarint("counter exclusive")
		}
	}
	return e
}

func decodeParadigms(f *fields, rs []Region) {
	n := f.Count("paradigms", 2)
	for i := 0; i < n && f.OK(); i++ {
		id := f.U32("paradigm region")
		p := Paradigm(f.U8("paradigm"))
		if !f.OK() {
			return
		}
		if p >= NumParadigms {
			f.Fail("paradigm", fmt.Sprintf("unknown paradigm %d of region %d", p, id))
			return
		}
		k := regionIndex(rs, id)
		if k < 0 {
			f.Fail("paradigm region", fmt.Sprintf("region %d is not defined", id))
			return
		}
		rs[k].Paradigm = p
	}
}

// regionIndex returns the index of region id in rs, -1 if none.
func regionIndex(rs []Region, id uint32) int {
	if id >= 1 && int(id) <= len(rs) && rs[id-1].ID == id {
		return int(id - 1)
	}
	for i, r := range rs {
		if r.ID == id {
			return i
		}
	}
	return -1
}

func (fl *File) decodeThrottled(f *fields) {
	n := f.Count("throttled", 4)
	for i := 0; i < n && f.OK(); i++ {
		loc, id := f.U32("throttled location"), f.U32("throttled region")
		at, after := f.Uvarint("throttled at"), f.Uvarint("visits after")
		if !f.OK() {
			return
		}
		l := fl.Location(loc)
		if l == nil {
			f.Fail("throttled location", fmt.Sprintf("location %d is not defined", loc))
			return
		}
		k := slices.IndexFunc(l.Profile, func(e ProfileEntry) bool { return e.Region == id })
		if k < 0 {
			// The profile lists visited regions; one throttled before any
			// timed visit cannot be, but an entry is made rather than lose it.
			l.Profile = append(l.Profile, ProfileEntry{Region: id})
			k = len(l.Profile) - 1
		}
		e := &l.Profile[k]
		e.Throttled, e.ThrottledAt, e.VisitsAfter = true, at, after
	}
}

func decodeReductions(f *fields) []Reduction {
	n := f.Count("reductions", 7)
	rs := make([]Reduction, 0, n)
	for i := 0; i < n && f.OK(); i++ {
		r := Reduction{Reason: f.reason("reduction reason")}
		d := f.Uvarint("reduction depth")
		r.Class = f.class("reduction class")
		r.Time = f.Uvarint("reduction time")
		b := f.Uvarint("reduction bins")
		r.Records = f.Uvarint("reduction records")
		st := f.Uvarint("reduction steps")
		if d > maxDepth || b > 1<<40 || st > 1<<50 {
			f.Fail("reduction", "value out of range")
		}
		r.Depth, r.Bins, r.Steps = int(d), int(b), int(st)
		rs = append(rs, r)
	}
	return rs
}

func decodeComms(f *fields) []Comm {
	n := f.Count("communicators", 5)
	cs := make([]Comm, 0, n)
	ids := make(map[uint32]bool, n)
	for i := 0; i < n && f.OK(); i++ {
		c := Comm{ID: f.U32("communicator id"), Name: f.String("communicator name"), Parent: f.U32("communicator parent")}
		c.Members = decodeSharedRanks(f, "communicator members")
		if f.Bool("inter-communicator") {
			c.Remote = decodeSharedRanks(f, "communicator remote group")
			if c.Remote == nil {
				c.Remote = []int32{}
			}
		}
		switch {
		case !f.OK():
		case c.ID == 0:
			f.Fail("communicator id", "0 is not a valid communicator id")
		case ids[c.ID]:
			f.Fail("communicator id", fmt.Sprintf("id %d defined twice", c.ID))
		case c.Parent != 0 && !ids[c.Parent]:
			// A communicator is made from one that exists, so its parent
			// comes before it.
			f.Fail("communicator parent", fmt.Sprintf("communicator %d names parent %d, which is not defined before it", c.ID, c.Parent))
		}
		ids[c.ID] = true
		cs = append(cs, c)
	}
	return cs
}

// decodeSharedRanks is decodeRanks for the groups of COMMS, which files
// written before COMM RUNS hold: groups read before with the same
// encoding give the same slice, as COMM RUNS's do.
func decodeSharedRanks(f *fields, what string) []int32 {
	start := f.Off()
	rs := decodeRanks(f, what)
	if !f.OK() || rs == nil {
		return rs
	}
	return rankListsV1.get(f.Bytes()[start:f.Off()], len(rs), func() []int32 { return rs })
}

func decodeRanks(f *fields, what string) []int32 {
	n := f.Count(what, 1)
	if n == 0 {
		return nil
	}
	rs := make([]int32, 0, n)
	for i := 0; i < n && f.OK(); i++ {
		rs = append(rs, int32(f.Int(what, 0, 1<<31-1)))
	}
	return rs
}

// decodeCommMatrix reads the locations' communication matrices into the
// locations, which the LOCATIONS section defined before.
func (tf *File) decodeCommMatrix(f *fields) {
	n := f.Count("communication matrices", 2)
	for i := 0; i < n && f.OK(); i++ {
		id := f.U32("matrix location")
		li, ok := tf.locIdx[id]
		if f.OK() && !ok {
			f.Fail("matrix location", fmt.Sprintf("location %d is not defined", id))
		}
		if f.OK() && tf.Locations[li].Comm != nil {
			f.Fail("matrix location", fmt.Sprintf("location %d has a second matrix", id))
		}
		nc := f.Count("matrix lines", 6)
		lines := make([]CommCount, 0, nc)
		for k := 0; k < nc && f.OK(); k++ {
			c := CommCount{Peer: f.Uvarint("matrix peer"), PeerRank: f.Bool("matrix peer is a rank"),
				Sent: f.Uvarint("messages sent"), SentBytes: f.Uvarint("bytes sent"),
				Received: f.Uvarint("messages received"), ReceivedBytes: f.Uvarint("bytes received")}
			if f.OK() && k > 0 && !commLess(lines[k-1], c) {
				f.Fail("matrix peer", fmt.Sprintf("location %d: peer %d (rank %v) out of order", id, c.Peer, c.PeerRank))
			}
			lines = append(lines, c)
		}
		if f.OK() {
			tf.Locations[li].Comm = lines
		}
	}
}

// commLess orders a matrix's lines by (PeerRank, Peer).
func commLess(a, b CommCount) bool {
	if a.PeerRank != b.PeerRank {
		return !a.PeerRank
	}
	return a.Peer < b.Peer
}
