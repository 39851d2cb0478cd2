package tracefile

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
)

// Class is an event class of the hierarchy (encode's, which buffer
// shares). The numbering is part of the file format.
type Class = encode.Class

// The event classes.
const (
	ClassRegion     = encode.ClassRegion
	ClassMessage    = encode.ClassMessage
	ClassMetric     = encode.ClassMetric
	ClassCollective = encode.ClassCollective
	ClassParadigm   = encode.ClassParadigm
	NumClasses      = encode.NumClasses
)

// Paradigm is the programming model a region belongs to. The numbering is
// part of the file format and of hmbtrace.h (HMB_PARADIGM_*).
type Paradigm uint8

// The paradigms.
const (
	ParadigmUser     Paradigm = iota // annotated by hand (hmb_region, Measurement.Region)
	ParadigmCompiler                 // compiler instrumentation (-finstrument-functions)
	ParadigmMPI                      // an MPI call
	ParadigmOpenMP                   // an OpenMP construct
	ParadigmGo                       // Go's runtime: GC, goroutine waits (measure's Config.GoRuntime)
	NumParadigms
)

var paradigmNames = [NumParadigms]string{"user", "compiler", "mpi", "openmp", "go"}

func (p Paradigm) String() string {
	if p < NumParadigms {
		return paradigmNames[p]
	}
	return fmt.Sprintf("Paradigm(%d)", uint8(p))
}

// Runtime reports whether the regions of p are a parallel runtime's (MPI,
// OpenMP, Go's scheduler and GC): their records carry the messages,
// collectives, waits and team structure the tools read, so the buffer keeps
// them longest (the paradigm event class) and no filter removes them, at
// run time or in a filter file that score -g writes.
func (p Paradigm) Runtime() bool {
	return p == ParadigmMPI || p == ParadigmOpenMP || p == ParadigmGo
}

// Reason says why events were removed (encode's, which buffer shares).
// The numbering is part of the format.
type Reason = encode.Reason

// The reasons.
const (
	ByDepth    = encode.ByDepth
	ByClass    = encode.ByClass
	ByFirst    = encode.ByFirst
	ByLast     = encode.ByLast
	NoBin      = encode.NoBin
	NumReasons = encode.NumReasons
)

// Header describes the run and the clock.
type Header struct {
	Name      string    // trace name
	Host      string    // host name
	PID       int       // process id
	Rank      int       // rank within a parallel run
	Program   string    // command line
	StartWall time.Time // wall-clock time at the start
	GoVersion string
	CPU       string // CPU brand

	Clock          string  // "tsc" or "monotonic"
	TicksPerSecond float64 // rate of the clock, calibrated over the run
	TimerShift     uint8   // timestamps in bins are ticks >> TimerShift
	StartTicks     uint64  // clock at the start of the measurement
	EndTicks       uint64  // clock at its end
	ProbeCost      float64 // ns per event, measured at the start

	Techniques encode.Techniques // how the bins are encoded
	BufferSize uint64
	BinSize    uint64
	Policy     string   // reduction policy
	ClassOrder []string // class policy order, least important first

	MinDuration int64  // the duration filter's bound in ns, 0 if off
	FilterFile  string // the filter file's path, "" if none

	// Metrics names the counters, in the order of every metric record's
	// values and of the profile's counter sums. MetricsMissing lists the
	// events asked for that this machine could not count, with the reason.
	Metrics        []string
	MetricsMissing []string
	MetricsPath    string // how counters were read: "rdpmc" or "read"

	// ClockSync maps this process's clock onto a reference process's (rank
	// 0 of an MPI run): at local time Ticks, the reference read Ticks +
	// Offset. Two points (at init and at finalize) also correct drift.
	// ReferenceStart is the reference's StartTicks, in its own clock.
	ClockSync      []ClockSync
	ReferenceStart uint64
}

// ClockSync is one measured offset between this process's clock and the
// reference's, in ticks.
type ClockSync struct {
	Ticks  uint64
	Offset int64
}

// Region is a region definition. IDs start at 1.
type Region struct {
	ID       uint32
	Name     string
	File     string
	Line     int
	Paradigm Paradigm // stored in the PARADIGMS section; ParadigmUser if absent
}

// ProfileEntry is one region's line of a location's exact flat profile.
// Times are in clock ticks (not reduced).
type ProfileEntry struct {
	Region    uint32
	Visits    uint64
	Inclusive uint64 // ticks, recursion counted once
	Exclusive uint64 // ticks
	// Counter sums, one per Header.Metrics, for regions that read counters
	// (nil for the others): inclusive and exclusive as for time.
	CounterInclusive []uint64
	CounterExclusive []uint64
	// Throttled is set when the probes switched the region off during the
	// run (HMB_THROTTLE): at ThrottledAt (clock ticks), after which
	// VisitsAfter more visits were counted but not timed, so Visits, the
	// times and the counters cover the visits before it only. Stored in
	// the THROTTLED section.
	Throttled   bool
	ThrottledAt uint64
	VisitsAfter uint64
	// LongCalls counts the calls whose inclusive time reached the
	// throttling rule's bound (Trace.ThrottleRule), among those timed.
	LongCalls uint64
}

// UsageErrors counts misuse of the probes; none of it corrupts the trace.
type UsageErrors struct {
	UnknownRegion    uint64 // probe with a region the measurement never defined
	LeaveNothingOpen uint64 // leave with no region open
	LeaveNotOpen     uint64 // leave of a region not open at all (ignored)
	LeftImplicitly   uint64 // regions left implicitly by a leave of an enclosing one
	OpenAtClose      uint64 // regions left implicitly at Close
	AfterClose       uint64 // probes after Close (dropped)
	MessageNoPeer    uint64 // messages with a nil peer or one of another measurement
}

// usageKinds is the number of kinds of usage error.
const usageKinds = 7

// counters returns the kinds' counters in the file's order, the order of
// usageWhat.
func (u *UsageErrors) counters() [usageKinds]*uint64 {
	return [...]*uint64{&u.UnknownRegion, &u.LeaveNothingOpen, &u.LeaveNotOpen, &u.LeftImplicitly, &u.OpenAtClose, &u.AfterClose, &u.MessageNoPeer}
}

// usageWhat says what each kind counts, as the tools print it.
var usageWhat = [usageKinds]string{
	"probes with an undefined region",
	"leaves with no region open",
	"leaves of a region not open (ignored)",
	"regions left implicitly by the leave of an enclosing one",
	"regions still open at Close (left then)",
	"probes after Close",
	"messages without a peer of this measurement",
}

// Total returns the sum of all usage errors.
func (u UsageErrors) Total() (n uint64) {
	for _, c := range u.counters() {
		n += *c
	}
	return n
}

// Add adds v's counts to u's.
func (u *UsageErrors) Add(v UsageErrors) {
	vc := v.counters()
	for i, c := range u.counters() {
		*c += *vc[i]
	}
}

// UsageCount is one kind of usage error: how many, and what it counts.
type UsageCount struct {
	N    uint64
	What string // e.g. "leaves with no region open"
}

// Counts returns every kind of usage error with its count, in a fixed
// order, zeros included.
func (u UsageErrors) Counts() []UsageCount {
	out := make([]UsageCount, 0, len(usageWhat))
	for i, c := range u.counters() {
		out = append(out, UsageCount{N: *c, What: usageWhat[i]})
	}
	return out
}

// ByReason counts records by the reason they were removed.
type ByReason [NumReasons]uint64

// Total returns the records removed for any reason.
func (r ByReason) Total() (n uint64) {
	for _, v := range r {
		n += v
	}
	return n
}

// LevelStats is what happened to one level of a location's hierarchy.
type LevelStats struct {
	Depth   int
	Class   Class
	Written uint64   // records put into bins
	Revoked ByReason // records later removed with their bins
	Dropped ByReason // records dropped at the probe
	Closed  bool
	By      Reason // why it was closed
}

// Kept returns the records of the level that are in the file.
func (l LevelStats) Kept() uint64 { return l.Written - l.Revoked.Total() }

// Removed returns the records removed by reason, at the probe or later.
func (l LevelStats) Removed() (sum ByReason) {
	for i := range sum {
		sum[i] = l.Revoked[i] + l.Dropped[i]
	}
	return sum
}

// CallPath is a node of a location's exact call-path profile: the path of
// its parent (0: the top of the stack; else the parent's index + 1 in the
// list) extended by Region. Parents come before their children. Times in
// ticks.
type CallPath struct {
	Parent    uint32
	Region    uint32
	Visits    uint64
	Inclusive uint64
	Exclusive uint64
}

// PhaseSeries is a location's dynamic phase profile (Oleynik, eq. 5.2):
// one sample per Width iterations of the progress loop (the phase region),
// per region the visits, times and counter sums in those iterations. The
// last sample may hold fewer iterations. Summed over the samples, a region
// gives its flat profile for the calls inside the iterations.
type PhaseSeries struct {
	Region     uint32
	Width      uint64
	Iterations uint64
	Samples    []PhaseSample
}

// PhaseSample is one sample of a phase series.
type PhaseSample struct {
	Entries []ProfileEntry // regions active in the sample, times in ticks
}

// Location is a stream of events: a goroutine or a thread.
type Location struct {
	ID       uint32
	Name     string
	Recorded uint64 // events the probes accepted
	// Events the filters removed before they reached the buffer: regions
	// excluded by name (HMB_FILTER_FILE), calls shorter than the duration
	// bound with nothing kept inside (HMB_MIN_DURATION).
	FilteredName     uint64
	FilteredDuration uint64
	Usage            UsageErrors
	Profile          []ProfileEntry
	// ProfileSeq, when not nil, gives a Writer the profile in place of
	// Profile, NumProfile entries, as Trace.RegionSeq does for regions.
	ProfileSeq iter.Seq[ProfileEntry]
	NumProfile int
	Levels     []LevelStats

	// Interrupted is set when the trace was written for a signal while
	// this location's goroutine had not stopped: its last event may be
	// missing from the counts, and its open regions are left open.
	Interrupted bool

	// Counters: Multiplexed is set when the kernel multiplexed the counters
	// and their values were extrapolated; CountersMissing says why this
	// location read none although the measurement asked for some.
	Multiplexed     bool
	CountersMissing string

	Phase *PhaseSeries // nil without a phase region

	// CallPaths is the exact call-path profile, when the measurement kept
	// one (HMB_CALLPATHS): exact even for events the buffer shed.
	CallPaths []CallPath

	// Windowed is set when the keep-last policy revoked bins of this
	// location: records with a key (time, seq) up to Window may have lost
	// their neighbours, and readers start the location's events after it.
	Windowed   bool
	WindowTime uint64
	WindowSeq  uint32

	// Comm is the location's exact communication matrix: one line per
	// peer, counted at the probe, so exact whatever the buffer shed.
	// Sorted by (PeerRank, Peer); nil in files written before it was kept.
	Comm []CommCount

	// Team is an OpenMP thread's place (team.go): its thread number in
	// each enclosing team, from the outermost in, so its nesting level is
	// len(Team) and the thread that forked its team is Team[:len-1]. nil
	// for a location that is not an OpenMP thread, and in older files.
	Team []int
}

// CommCount is one peer's line of a location's exact communication matrix,
// counted at the probe.
type CommCount struct {
	Peer     uint64 // a world rank when PeerRank, else a location id of the same file
	PeerRank bool
	// Messages and their bytes sent to the peer and received from it;
	// a non-blocking operation counts where its message record is (the
	// start of a send, the completion of a receive).
	Sent, SentBytes, Received, ReceivedBytes uint64
}

// Comm is a communicator as this process saw it created. The reader
// shares Members and Remote between the communicators and files that hold
// the same group (every rank's file names MPI_COMM_WORLD; see
// commruns.go), so they are read-only: copy one to change it.
type Comm struct {
	ID      uint32  // >= 1, local to the file; records' Comm refers to it
	Name    string  // "MPI_COMM_WORLD", "MPI_COMM_SELF", or "" for a derived one
	Parent  uint32  // the communicator it was made from, 0 for world and self
	Members []int32 // world ranks, in the order of the communicator's ranks (an inter-communicator: the local group)
	Remote  []int32 // an inter-communicator's remote group (world ranks); nil for an intra-communicator
}

// Kept returns the location's records that are in the file.
func (l *Location) Kept() (n uint64) {
	for _, lv := range l.Levels {
		n += lv.Kept()
	}
	return n
}

// Accounted returns what became of the location's recorded events: kept,
// filtered and removed. It equals Recorded in a sound file.
func (l *Location) Accounted() uint64 {
	return l.Kept() + l.FilteredName + l.FilteredDuration + l.Removed().Total()
}

// Removed returns the location's removed records by reason.
func (l *Location) Removed() (sum ByReason) {
	for _, lv := range l.Levels {
		r := lv.Removed()
		for i := range sum {
			sum[i] += r[i]
		}
	}
	return sum
}

// Reduction is one reduction step of the buffer.
type Reduction struct {
	Reason  Reason
	Depth   int    // ByDepth: depths >= Depth closed
	Class   Class  // ByClass: the class closed
	Time    uint64 // reduced ticks of the record that triggered it
	Bins    int    // bins revoked at once
	Records uint64 // records in them
	Steps   int    // ByLast: steps merged into this entry
}

// Trace is everything in a file but the bins.
type Trace struct {
	Header     Header
	Regions    []Region
	Locations  []Location
	Reductions []Reduction

	// RegionSeq, when not nil, gives a Writer the regions in place of
	// Regions (and their count, NumRegions), so that a measurement with
	// millions of them writes them without building a copy. Readers fill
	// Regions.
	RegionSeq  iter.Seq[Region]
	NumRegions int
	// Comms are the communicators the process created, in the order it
	// created them; nil if it defined none.
	Comms []Comm

	// One-sided communication (rma.go): the windows the process created,
	// and the groups its RMA synchronisations named; nil if none.
	Wins      []Win
	RmaGroups []RmaGroup

	// regionIdx indexes Regions by id when the ids are not 1, 2, ... in
	// order (the reader builds it), so that RegionByID does not scan.
	regionIdx map[uint32]int

	Annotations // marks, parameters, channels (annotation.go)
	// Recovered is set for a trace recovered from the mapping its process
	// left (recovered.go): which figures are lower bounds, what ended the
	// run. Nil for a trace its process wrote.
	Recovered *Recovered
	// ThrottleRule is the rule the probes throttled regions by
	// (throttlerule.go); nil if throttling was off or the file predates it.
	ThrottleRule *ThrottleRule
	// annotated is set by a recovery whose bins hold annotation records
	// (a mapping keeps no definitions of them): the file is version 2.
	annotated bool
}

// Comm returns the communicator with the given id, or nil.
func (t *Trace) Comm(id uint32) *Comm {
	if id >= 1 && int(id) <= len(t.Comms) && t.Comms[id-1].ID == id {
		return &t.Comms[id-1]
	}
	for i := range t.Comms {
		if t.Comms[i].ID == id {
			return &t.Comms[i]
		}
	}
	return nil
}

// RegionName returns the name of region id, or a placeholder naming the id.
func (t *Trace) RegionName(id uint32) string {
	if r := t.RegionByID(id); r != nil {
		return r.Name
	}
	return fmt.Sprintf("region#%d", id)
}

// RegionByID returns the definition of region id, or nil. The probes
// number regions 1, 2, ... in order, so it is found at index id-1; a file
// read with other ids has an index by id. Only a Trace built by hand with
// such ids is scanned, once per call: a tool that looks up every region
// must not make that a scan per region (quadratic: 19 minutes for an
// export of 10⁶ regions).
func (t *Trace) RegionByID(id uint32) *Region {
	if id >= 1 && int(id) <= len(t.Regions) && t.Regions[id-1].ID == id {
		return &t.Regions[id-1]
	}
	if i, ok := t.regionIdx[id]; ok && i < len(t.Regions) && t.Regions[i].ID == id {
		return &t.Regions[i]
	}
	for i := range t.Regions {
		regionScanned.Add(1)
		if t.Regions[i].ID == id {
			return &t.Regions[i]
		}
	}
	return nil
}

// regionScanned counts the regions RegionByID scanned, for the test that
// a file's lookups do not scan.
var regionScanned atomic.Int64

// indexRegions indexes the regions by id unless their ids are 1, 2, ...
// in order; the first definition of an id wins, as in a scan.
func (t *Trace) indexRegions() {
	t.regionIdx = nil
	for i, r := range t.Regions {
		if r.ID != uint32(i+1) {
			t.regionIdx = make(map[uint32]int, len(t.Regions))
			break
		}
	}
	if t.regionIdx == nil {
		return
	}
	for i, r := range t.Regions {
		if _, dup := t.regionIdx[r.ID]; !dup {
			t.regionIdx[r.ID] = i
		}
	}
}

// Nanos converts a reduced timestamp from a bin to nanoseconds since the
// start of the measurement (negative never: clamped at 0).
func (t *Trace) Nanos(reduced uint64) int64 {
	ticks := reduced << t.Header.TimerShift
	if ticks <= t.Header.StartTicks {
		return 0
	}
	return t.TicksToNanos(ticks - t.Header.StartTicks)
}

// TicksToNanos converts a duration in clock ticks to nanoseconds.
func (t *Trace) TicksToNanos(ticks uint64) int64 {
	tps := t.Header.TicksPerSecond
	if tps <= 0 {
		tps = 1e9
	}
	ns := float64(ticks) * 1e9 / tps
	if ns >= 1<<63 { // float64(math.MaxInt64) is 2^63, which int64 does not hold
		return math.MaxInt64
	}
	return roundNear(ns)
}

// Collected returns t with its regions and flat profiles in Regions and
// Location.Profile, as a reader fills them: t itself when they are there,
// else a copy that collects the sequences a measurement's snapshot gives
// its writer (RegionSeq, ProfileSeq).
func (t *Trace) Collected() *Trace {
	seqs := t.Regions == nil && t.RegionSeq != nil
	for i := range t.Locations {
		seqs = seqs || t.Locations[i].Profile == nil && t.Locations[i].ProfileSeq != nil
	}
	if !seqs {
		return t
	}
	c := *t
	if c.Regions == nil && c.RegionSeq != nil {
		c.Regions = slices.Collect(c.RegionSeq)
	}
	c.Locations = slices.Clone(t.Locations)
	for i := range c.Locations {
		if l := &c.Locations[i]; l.Profile == nil && l.ProfileSeq != nil {
			l.Profile = slices.Collect(l.ProfileSeq)
		}
	}
	return &c
}

// GlobalNanos converts a reduced timestamp to nanoseconds since the start
// of the reference process (rank 0) when the file has clock-sync points,
// interpolating the offset between them; else it is Nanos.
func (t *Trace) GlobalNanos(reduced uint64) int64 {
	if c, ok := t.SyncClock(); ok {
		return c.Nanos(reduced)
	}
	return t.Nanos(reduced)
}

// SyncClock is GlobalNanos for a file with clock-sync points, its terms
// read from the header once: a pass that converts every event of a file
// takes it once and calls Nanos, with the same result to the bit.
//
// The conversion is affine in the ticks: the offset to the reference clock
// is interpolated linearly between the first and the last sync point, so
// a reference time is the file's tick times a slope plus a constant. Both
// are worked out here, around the file's start tick (pivot), so that Nanos
// is a subtraction, a multiply-add and a rounding, small enough to inline
// into the passes that convert every event (the wait-state replay's sweep
// spent 80 instructions an event on the interpolation's two divisions and
// the calls), and the terms near the run (ticks less the pivot, the
// offset at the pivot) keep the result within a fraction of a nanosecond
// however long the machine has been up.
type SyncClock struct {
	shift uint8
	pivot float64 // the file's start tick
	slope float64 // reference nanoseconds per tick
	base  float64 // the pivot's reference nanoseconds
	drift float64 // the offset's change per tick
}

// SyncClock returns t's conversion to the reference clock; ok is false
// when t has no clock-sync points (GlobalNanos is then Nanos).
func (t *Trace) SyncClock() (c SyncClock, ok bool) {
	s := t.Header.ClockSync
	if len(s) == 0 {
		return c, false
	}
	tps := t.Header.TicksPerSecond
	if tps <= 0 {
		tps = 1e9
	}
	// The offset at tick x is s[0].Offset + (x - s[0].Ticks) * drift,
	// drift 0 without two points to interpolate between.
	if n := len(s); n > 1 && s[n-1].Ticks > s[0].Ticks {
		c.drift = float64(s[n-1].Offset-s[0].Offset) / float64(s[n-1].Ticks-s[0].Ticks)
	}
	start := t.Header.StartTicks
	c.shift, c.pivot = uint8(t.Header.TimerShift), float64(start)
	c.slope = (1 + c.drift) * 1e9 / tps
	// The pivot on the reference clock: its distance to the reference
	// start in ticks (exact in integers), plus the offset there.
	off := float64(s[0].Offset) + float64(int64(start-s[0].Ticks))*c.drift
	c.base = (float64(int64(start-t.Header.ReferenceStart)) + off) * 1e9 / tps
	return c, true
}

// Nanos is the file's GlobalNanos(reduced).
func (c *SyncClock) Nanos(reduced uint64) int64 {
	return roundNear((float64(reduced<<c.shift)-c.pivot)*c.slope + c.base)
}

// roundNear is int64(math.Round(x)) for any x int64 holds, without
// math.Round's bit manipulation, which does not inline: it runs for every
// event a pass converts. x less its truncation toward zero is exact (from
// 2^52 up every float64 is an integer, and the difference 0), so comparing
// it with one half either way rounds halves away from zero as math.Round
// does.
func roundNear(x float64) int64 {
	i := int64(x)
	if d := x - float64(i); d >= 0.5 {
		i++
	} else if d <= -0.5 {
		i--
	}
	return i
}

// Drift is the offset's change per tick interpolated between the first
// and last sync points (0 without two of them): the conversion grows by
// (1 + Drift) times the tick's length per tick.
func (c *SyncClock) Drift() float64 { return c.drift }

// Duration returns the length of the measurement in nanoseconds.
func (t *Trace) Duration() int64 {
	if t.Header.EndTicks <= t.Header.StartTicks {
		return 0
	}
	return t.TicksToNanos(t.Header.EndTicks - t.Header.StartTicks)
}

// Resolution returns the duration of one reduced tick in nanoseconds.
func (t *Trace) Resolution() float64 {
	tps := t.Header.TicksPerSecond
	if tps <= 0 {
		tps = 1e9
	}
	return float64(uint64(1)<<t.Header.TimerShift) * 1e9 / tps
}
