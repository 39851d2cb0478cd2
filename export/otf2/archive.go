// Package otf2 writes OTF2 3.0 trace archives (the format of Score-P, read by
// Vampir, Scalasca and otf2-print) natively in Go, byte for byte as libotf2
// 3.0.2 writes them. It owns the on-disk format only: an Archive collects
// global definitions and hands out one streaming EventWriter per location;
// it knows nothing of hmbtrace's own trace model.
package otf2

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// Options configure an archive. The zero value gives libotf2's defaults.
type Options struct {
	// EventChunkSize and DefChunkSize are the chunk sizes of event and
	// definition files, 256 KiB to 16 MiB; 0 means 1 MiB and 4 MiB. Each
	// open EventWriter holds one event chunk in memory.
	EventChunkSize, DefChunkSize int
	// Creator, Machine and Description are stored in the anchor file.
	Creator, Machine, Description string
	// TraceID identifies the trace; 0 means a random nonzero value.
	TraceID uint64
}

type archiveState int

const (
	stateOpen archiveState = iota
	stateClosed
	stateAborted
)

// Archive is an OTF2 archive being written: dir/traces.otf2 (the anchor),
// dir/traces.def (global definitions) and dir/traces/<location>.{evt,def}.
// Definitions may be added until Close, in any order; references of each
// kind are numbered 0..N-1 in the order they are defined. Archive methods
// are safe for concurrent use; each EventWriter must be used by one
// goroutine at a time, but different writers may run in parallel.
type Archive struct {
	dir, anchorPath, tracesDir string
	evtChunkSize, defChunkSize int
	creator, machine, desc     string
	traceID                    uint64

	mu         sync.Mutex
	state      archiveState
	createdDir bool     // Create made dir, so Abort removes it
	created    []string // files written so far, for Abort

	strings         []string
	stringIndex     map[string]stringRef
	clock           *clockProperties
	systemTreeNodes []systemTreeNodeDef
	locationGroups  []locationGroupDef
	locations       []*locationDef
	regions         []regionDef
	groups          []groupDef
	comms           []commDef
	rmaWins         []rmaWinDef // rma.go
	metricMembers   []metricMemberDef
	metricClasses   []metricClassDef
	parameters      []parameterDef // parameter.go
	attributes      []attributeDef
	attributeTypes  []ValueType

	// Counts of defined references that event writers check without
	// taking mu; they only grow.
	regionCount, commCount, metricCount atomic.Uint32
	rmaWinCount                         atomic.Uint32
	parameterCount, attributeCount      atomic.Uint32
	stringCount                         atomic.Uint32 // set by the definitions event writers name strings through

	spareChunks [][]byte // event chunk buffers of closed writers, for reuse

	haveEvents          bool
	firstTime, lastTime uint64 // over the closed writers' events
}

var errAborted = errors.New("otf2: archive was aborted")

// Create starts an archive in dir (created if missing). It fails if dir
// already holds an archive named "traces" (traces.otf2, traces.def or the
// traces directory). Nothing is readable as an archive until Close writes
// the anchor file; on error, or after Abort, the files written are removed.
func Create(dir string, opt Options) (*Archive, error) {
	return create(dir, opt, MinChunkSize)
}

// create is Create with a lower chunk size limit, so that tests can cross
// chunk boundaries with few events. libotf2 refuses chunks below 256 KiB.
func create(dir string, opt Options, minChunk int) (*Archive, error) {
	evt, err := chunkSize("event", opt.EventChunkSize, DefaultEventChunkSize, minChunk)
	if err != nil {
		return nil, err
	}
	def, err := chunkSize("definition", opt.DefChunkSize, DefaultDefChunkSize, minChunk)
	if err != nil {
		return nil, err
	}
	for _, s := range []struct{ what, v string }{{"creator", opt.Creator}, {"machine", opt.Machine}, {"description", opt.Description}} {
		for i := 0; i < len(s.v); i++ {
			if s.v[i] == 0 {
				return nil, fmt.Errorf("otf2: %s %q contains a NUL byte at offset %d", s.what, s.v, i)
			}
		}
	}
	a := &Archive{
		dir:          dir,
		anchorPath:   filepath.Join(dir, "traces.otf2"),
		tracesDir:    filepath.Join(dir, "traces"),
		evtChunkSize: evt,
		defChunkSize: def,
		creator:      opt.Creator,
		machine:      opt.Machine,
		desc:         opt.Description,
		traceID:      opt.TraceID,
		stringIndex:  make(map[string]stringRef),
	}
	for a.traceID == 0 {
		a.traceID = rand.Uint64()
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("otf2: %w", err)
		}
		a.createdDir = true
	}
	for _, p := range []string{a.anchorPath, filepath.Join(dir, "traces.def")} {
		if _, err := os.Lstat(p); err == nil {
			a.removeDir()
			return nil, fmt.Errorf("otf2: %s already exists", p)
		}
	}
	// Creating the traces directory claims the archive name: a second
	// writer into the same dir fails here, as libotf2 does.
	if err := os.Mkdir(a.tracesDir, 0o755); err != nil {
		a.removeDir()
		return nil, fmt.Errorf("otf2: %w", err)
	}
	return a, nil
}

func chunkSize(what string, v, def, minChunk int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if v < minChunk || v > MaxChunkSize {
		return 0, fmt.Errorf("otf2: %s chunk size %d is outside %d..%d", what, v, minChunk, MaxChunkSize)
	}
	return v, nil
}

// AnchorPath is the path of the anchor file, dir/traces.otf2: what readers
// and otf2-print open.
func (a *Archive) AnchorPath() string { return a.anchorPath }

func (a *Archive) usable() error {
	switch a.state {
	case stateClosed:
		return errors.New("otf2: archive is closed")
	case stateAborted:
		return errAborted
	}
	return nil
}

// Location defines a CPU thread location in group and opens the writer of
// its events, traces/<ref>.evt. Location references are 0, 1, ... in the
// order of the calls.
func (a *Archive) Location(name string, group LocationGroupRef) (*EventWriter, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return nil, err
	}
	if int(group) >= len(a.locationGroups) {
		return nil, fmt.Errorf("otf2: location %q: location group %d is not defined (%d groups so far)", name, group, len(a.locationGroups))
	}
	if err := a.checkString("location name", name); err != nil {
		return nil, err
	}
	ref := LocationRef(len(a.locations))
	path := filepath.Join(a.tracesDir, strconv.FormatUint(uint64(ref), 10)+".evt")
	if err := createEmpty(path); err != nil {
		return nil, err
	}
	a.created = append(a.created, path)
	w := &EventWriter{
		a:    a,
		ref:  ref,
		name: name,
		file: chunkedFile{path: path, countEvents: true},
	}
	a.locations = append(a.locations, &locationDef{name: a.intern(name), label: name, group: group, writer: w})
	return w, nil
}

// takeChunk returns an event chunk buffer, reusing one of a closed writer.
func (a *Archive) takeChunk() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.spareChunks); n > 0 {
		b := a.spareChunks[n-1]
		a.spareChunks = a.spareChunks[:n-1]
		return b
	}
	return make([]byte, a.evtChunkSize)
}

// writerClosed records a closed writer's event count and time range.
func (a *Archive) writerClosed(w *EventWriter, buf []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.locations[w.ref]
	l.events = w.events
	l.writer = nil
	if len(buf) == a.evtChunkSize {
		a.spareChunks = append(a.spareChunks, buf)
	}
	if w.events == 0 {
		return
	}
	if !a.haveEvents || w.firstTime < a.firstTime {
		a.firstTime = w.firstTime
	}
	if !a.haveEvents || w.time > a.lastTime {
		a.lastTime = w.time
	}
	a.haveEvents = true
}

// TimeRange returns the earliest and latest timestamps of the events of all
// closed event writers; ok is false if they wrote none. It helps to compute
// ClockProperties after the events are written.
func (a *Archive) TimeRange() (first, last uint64, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.firstTime, a.lastTime, a.haveEvents
}

// Close closes the event writers still open, writes the local definition
// files, the global definitions and finally the anchor file. ClockProperties
// must have been set. On error the archive is aborted: Close never leaves a
// partial archive behind.
func (a *Archive) Close() error {
	a.mu.Lock()
	if err := a.usable(); err != nil {
		a.mu.Unlock()
		return err
	}
	var open []*EventWriter
	for _, l := range a.locations {
		if l.writer != nil {
			open = append(open, l.writer)
		}
	}
	a.mu.Unlock()

	var errs []error
	for _, w := range open {
		if err := w.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	a.mu.Lock()
	if len(errs) == 0 {
		errs = append(errs, a.writeDefinitions())
	}
	if err := errors.Join(errs...); err != nil {
		a.mu.Unlock()
		return errors.Join(err, a.Abort())
	}
	a.state = stateClosed
	a.spareChunks = nil
	a.mu.Unlock()
	return nil
}

// writeDefinitions writes the local definition files, traces.def and the
// anchor, in that order, so that the anchor appears only once the rest is
// complete.
func (a *Archive) writeDefinitions() error {
	if a.clock == nil {
		return errors.New("otf2: ClockProperties was not set; readers (python3-otf2, Vampir) require it")
	}
	buf := make([]byte, a.defChunkSize)
	for i, l := range a.locations {
		path := filepath.Join(a.tracesDir, strconv.Itoa(i)+".def")
		f, err := a.newDefFile(path, buf)
		if err != nil {
			return err
		}
		for _, p := range l.clockOffsets {
			if err := f.put(localDefClockOffset, p); err != nil {
				return err
			}
		}
		if err := f.cf.finish(0); err != nil {
			return err
		}
	}
	f, err := a.newDefFile(filepath.Join(a.dir, "traces.def"), buf)
	if err != nil {
		return err
	}
	if err := a.writeGlobalDefinitions(f); err != nil {
		return err
	}
	if err := f.cf.finish(0); err != nil {
		return err
	}
	return a.writeAnchor(uint64(len(a.locations)), f.records)
}

// Abort removes the files the archive wrote and ends it; writers still open
// fail from then on. After a successful Close it does nothing, so
// `defer a.Abort()` right after Create cleans up on every error path.
func (a *Archive) Abort() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == stateClosed {
		return nil
	}
	a.state = stateAborted
	for _, l := range a.locations {
		if l.writer != nil {
			l.writer.abort()
			l.writer = nil
		}
	}
	a.spareChunks = nil
	var errs []error
	for i := len(a.created) - 1; i >= 0; i-- {
		if err := os.Remove(a.created[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	a.created = nil
	if err := os.Remove(a.tracesDir); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	a.removeDir()
	return errors.Join(errs...)
}

// removeDir removes dir if Create made it and it is empty.
func (a *Archive) removeDir() {
	if a.createdDir {
		_ = os.Remove(a.dir) // fails harmlessly if someone else put files there
	}
}
