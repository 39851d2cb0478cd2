package measure

import (
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/hwcounter"
	"github.com/hmbtrace/hmbtrace/internal/clock"
)

// Defaults of the configuration.
const (
	DefaultBufferSize = 64 << 20
	DefaultBinSize    = 8 << 10
	DefaultOutput     = "hmb-out"
	// DefaultTimerResolution is the resolution timestamps are reduced to
	// when no TimerShift is given: the shift is the largest whose tick is
	// no longer than this. Finer than a probe costs, so that two events of
	// one location rarely share a timestamp.
	DefaultTimerResolution = 8 * time.Nanosecond
	// NoTimerShift keeps every tick of the clock.
	NoTimerShift  = -1
	maxTimerShift = 32
	// DefaultThrottleCalls is how many visits a region must have had before
	// the probes throttle it with up to 1 call in 8 long (TAU waits for
	// 100,000; a share of long calls is as sure after 4096, throttle.go says
	// why). One with up to 1 in 256 long is throttled from 1024.
	DefaultThrottleCalls = 4096
	// DefaultThrottleTime is the inclusive time from which a call counts
	// as long, the calls a throttled region has almost none of: about ten
	// times what an enter and a leave cost together (2 × 12 ns here), so
	// that a region whose probes add more than a tenth to its own time
	// stops being measured, and one of 250 ns or more is always kept.
	// TAU's default (10 µs per call) would also switch off regions that
	// its probes hardly disturb.
	DefaultThrottleTime = 250 * time.Nanosecond
)

// Reduction is the policy that decides what a full buffer sheds.
type Reduction = buffer.Policy

// The reduction policies (HMB_REDUCTION).
const (
	ReduceDepth = buffer.PolicyDepth // deepest calling depth first (default)
	ReduceClass = buffer.PolicyClass // least important event class first, then depth
	ReduceFirst = buffer.PolicyFirst // keep the first events, stop when full
	ReduceLast  = buffer.PolicyLast  // keep the last events: a flight recorder
)

// Config is the measurement's configuration. The zero value is valid and
// means the defaults.
//
// The environment wins over the code, as Score-P's SCOREP_* variables do:
// Start sets each field whose HMB_* variable is set to the variable's
// value, whatever the code put there, and leaves the others as the code
// gave them, a zero field meaning the default. (A variable set to "" is
// unset where its empty value would mean the default, such as
// HMB_MIN_DURATION; for the others, such as HMB_ENABLE, it is malformed.) So HMB_ENABLE=0
// turns off a program that starts with Config{}, and HMB_BUFFER_SIZE=1G
// overrides a BufferSize in the literal. A malformed value is an error of
// Start naming the variable and the value; an HMB_ variable that is not
// known is a warning on stderr, once per process. Rank 0 in the code means
// "not said": HMB_RANK, else the launcher's rank (LauncherRankVars), fills
// it.
//
// ConfigFromEnv applies the same variables over the zero Config; Start does
// not apply them a second time to a Config it returned, so a program that
// changes fields of that Config before Start gets its changes. IgnoreEnv
// makes Start use a Config as it is.
type Config struct {
	// Disabled turns measurement off: Start returns a Measurement whose
	// locations are nil and whose probes cost a nil check (HMB_ENABLE=0).
	Disabled bool
	// Name is the trace's name; the file is <Output>/<Name>.<Rank>.hmb.
	// Default: the program's base name (HMB_NAME).
	Name string
	// Output is the directory of the trace file; default ./hmb-out (HMB_OUTPUT).
	Output string
	// Rank numbers the process within a parallel run; default 0. Start
	// and ConfigFromEnv take it from HMB_RANK, else, when it is 0, from the
	// launcher's variables (LauncherRankVars). An MPI wrapper's SetRank at MPI_Init
	// overrides it.
	Rank int
	// BufferSize is the one memory budget for all events, in bytes;
	// default 64 MiB (HMB_BUFFER_SIZE).
	BufferSize int
	// BinSize is the size of one bin (HMB_BIN_SIZE); default 8 KiB, or
	// less for a buffer under 32 MiB, so that it has 4,096 bins (at least
	// 1 KiB each).
	BinSize int
	// Reduction is what a full buffer sheds; default depth (HMB_REDUCTION).
	Reduction Reduction
	// TimerShift drops that many low bits of every timestamp (timer
	// resolution reduction). 0 means the default, the largest shift whose
	// tick is at most DefaultTimerResolution; NoTimerShift keeps every
	// tick (HMB_TIMER_SHIFT).
	TimerShift int
	// Clock forces a time source, "tsc" or "monotonic"; "" picks the TSC
	// where it is invariant (HMB_CLOCK).
	Clock string
	// EncodingOff switches encoding techniques off, to measure what each
	// contributes; zero keeps them all (HMB_ENCODING_OFF, e.g. "delta,tokens").
	EncodingOff encode.Techniques
	// ClassOrder is the order in which ReduceClass closes event classes,
	// least important first; nil means buffer.DefaultClassOrder (metric,
	// message, collective). Enter/leave is never closed by class: depth
	// reduction takes over (HMB_CLASS_ORDER, e.g. "message,metric").
	ClassOrder []buffer.Class
	// MinDuration is the duration filter: a call shorter than this with
	// nothing kept inside it vanishes from the trace (the flat profile still
	// counts it); 0 keeps every call (HMB_MIN_DURATION, e.g. "2us").
	MinDuration time.Duration
	// FilterFile is a Score-P filter file: regions it excludes are not
	// measured at all (HMB_FILTER_FILE).
	FilterFile string
	// Signals makes SIGINT and SIGTERM write the trace before the process
	// dies of them (HMB_SIGNALS=1).
	Signals bool
	// Metrics are perf events read at enter and leave, as `perf list` names
	// them: cycles, instructions, page-faults, ... (HMB_METRICS). A location
	// with counters locks its goroutine to its OS thread.
	Metrics []string
	// MetricsRegions selects the regions that read counters, as filter-file
	// wildcard patterns ("solve*,compute"); empty means every region
	// (HMB_METRICS_REGIONS). Other regions pay nothing.
	MetricsRegions string
	// MetricsDepth is the deepest calling depth that reads counters; 0 means
	// any (HMB_METRICS_DEPTH).
	MetricsDepth int
	// MetricsStrict makes an event this machine cannot count an error at
	// Start; without it the measurement records without that event and says
	// so once (HMB_METRICS_STRICT=1).
	MetricsStrict bool
	// PhaseSlots is how many samples of the dynamic phase profile a location
	// keeps before adjacent ones merge; 0 means DefaultPhaseSlots
	// (HMB_PHASE_SLOTS). See Measurement.Phase.
	PhaseSlots int
	// Phase names the progress loop's region, as Measurement.Phase does, for
	// programs that cannot call it (HMB_PHASE).
	Phase string
	// CallPaths keeps an exact call-path profile at the probes (a walk over
	// the siblings of each call's node) and writes it to the trace
	// (HMB_CALLPATHS=1). A live view turns it on.
	CallPaths bool
	// Listen serves the live view (package measure/live) at this address:
	// "PORT" or ":PORT" binds the loopback interface, anything else must
	// name the interface, e.g. "0.0.0.0:7070" (HMB_LISTEN). An interface
	// other hosts reach needs ListenPublic.
	Listen string
	// ListenPublic allows Listen on an interface other hosts reach
	// (HMB_LISTEN_PUBLIC=1). Every request must then carry the token the
	// view prints at start: the view can change the measurement.
	ListenPublic bool
	// NoThrottle keeps every region measured however often it runs and
	// however short it is (HMB_THROTTLE=0). Else a region whose calls were
	// nearly all shorter than ThrottleTime (0: DefaultThrottleTime;
	// HMB_THROTTLE_TIME) is switched off at its next leave with no call of
	// it open: at most 1 call in 256 as long after 1024 visits, 1 in 8 after
	// ThrottleCalls (0: DefaultThrottleCalls; HMB_THROTTLE_CALLS). The
	// probes then count its visits and record nothing else.
	NoThrottle    bool
	ThrottleCalls uint64
	ThrottleTime  time.Duration

	// Survive keeps the buffer, the definitions and the levels'
	// bookkeeping in a file mapping that outlives the process, so that
	// `hmbtrace recover` makes a trace of a run that died of anything,
	// SIGKILL and the OOM killer included (HMB_SURVIVE=1). SurviveDir is
	// where the mapping goes: a local tmpfs, "" for /dev/shm
	// (HMB_SURVIVE_DIR). Close removes it after writing the trace.
	//
	// It is off by default: the probes cost the same with it, but Start
	// reserves the whole buffer in tmpfs at once (about 40 ms of system
	// time for 64 MiB here, and that memory taken from the start) and
	// calibrates the clock 2 ms instead of 0.25, and a dead run's mapping
	// holds its memory until someone recovers or removes it. A Go
	// program's own exits need none of it: use Exit and Fatal.
	Survive    bool
	SurviveDir string

	// GoRuntime puts Go's runtime into the trace (HMB_GORUNTIME=1), as
	// regions of paradigm go (tracefile.ParadigmGo): GC cycles with their
	// stop-the-world pauses on location "Go GC", and on "<name> (Go)",
	// next to each location a goroutine held (from Measurement.Location to
	// Location.Done), that goroutine's waits by the runtime's reason ("Go
	// wait: chan receive", "Go wait: select", "Go wait: sync", ...), its
	// time runnable but not running, its syscalls and GC mark assists.
	// runtime/trace runs for the whole measurement, read as it comes (about
	// a second behind) and stopped by Close: the program's own trace.Start
	// fails meanwhile (a trace.FlightRecorder works).
	GoRuntime bool

	// OutputLayout is how the ranks of an MPI run write their traces:
	// LayoutArchive (or "", the default) has them write one run archive,
	// <Output>/<Name>.hmbrun, each rank its trace in its own slot of it
	// (one file per Aggregate ranks); LayoutRankFiles one file per rank,
	// <Name>.<rank>.hmb (HMB_OUTPUT_LAYOUT). A run of one rank, and a
	// process that is not an MPI rank, write their own file either way.
	OutputLayout string
	// Aggregate is how many ranks share one archive file; 0 means
	// DefaultAggregate (HMB_AGGREGATE).
	Aggregate int
	// NoEvents makes an MPI run write only the run-wide results its
	// ranks computed at the collective end, one archive and no rank's
	// trace, so that no event touches the file system
	// (HMB_OUTPUT_EVENTS=none). A trace file of its own (the rank-files
	// layout, a process outside MPI, a rank that missed the collective end)
	// keeps its events.
	NoEvents bool
	// CollectiveTimeout bounds each wait of an MPI run's collective end
	// (clock synchronisation, the archive's slots) for the other ranks:
	// past it, a rank writes its own file and says why; 0 means
	// DefaultCollectiveTimeout (HMB_COLLECTIVE_TIMEOUT).
	CollectiveTimeout time.Duration

	// IgnoreEnv makes Start use the Config as it is, without the HMB_*
	// variables: for tests and benchmarks whose expectations depend on
	// their configuration, and for programs that own theirs (a framework
	// with its own settings). No variable sets it.
	IgnoreEnv bool

	fromEnv  bool // ConfigFromEnv made it: Start does not apply the variables again
	phaseEnv bool // Phase came from HMB_PHASE, not from the code
}

// LauncherRankVars are the variables, in the order they are read, by which
// launchers tell a process its rank in MPI_COMM_WORLD: Open MPI's mpirun,
// PMIx, MPICH's Hydra and Intel MPI (PMI), MVAPICH2, HPE Cray PALS, LSF's
// jsrun, Flux, Cray ALPS and Slurm's srun. Node-local ranks
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...) are not
// world ranks and are not read. SLURM_PROCID comes last because processes
// started by mpirun inside a Slurm job inherit the batch step's value.
var LauncherRankVars = []string{
	"OMPI_COMM_WORLD_RANK",
	"PMIX_RANK",
	"PMI_RANK",
	"MV2_COMM_WORLD_RANK",
	"PALS_RANKID",
	"JSM_NAMESPACE_RANK",
	"FLUX_TASK_RANK",
	"ALPS_APP_PE",
	"SLURM_PROCID",
}

// launcherRank returns the rank the first well-formed launcher variable
// gives, or 0. A malformed one is not the user's doing, so it is skipped
// with a warning rather than failing the run.
func launcherRank(get func(string) (string, bool), warn interface{ Write([]byte) (int, error) }) int {
	for _, name := range LauncherRankVars {
		v, ok := get(name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(warn, "hmbtrace: warning: %s=%q is not a rank, 0 or more; ignored\n", name, v)
			continue
		}
		return n
	}
	return 0
}

// ConfigFromEnv reads the HMB_* environment variables into a Config: the
// zero Config with each set variable applied. A malformed value is an error
// that names the variable and the value; an HMB_ variable it does not know
// is a warning on stderr, since it is most likely a typo. Start does not
// apply the variables again to the Config it returns (see Config).
func ConfigFromEnv() (Config, error) {
	c, err := configFromLookup(os.LookupEnv, os.Environ(), warnOnce{os.Stderr})
	c.fromEnv = true
	return c, err
}

// withEnv returns c with the environment applied over it, as Start takes
// it: unchanged if c says IgnoreEnv or came from ConfigFromEnv.
func (c Config) withEnv() (Config, error) {
	if c.IgnoreEnv || c.fromEnv {
		return c, nil
	}
	return c.mergeEnv(os.LookupEnv, os.Environ(), warnOnce{os.Stderr})
}

// warnOnce writes each warning once per process: a program that starts
// several measurements, or a test binary that starts hundreds, says what
// is wrong with its environment once.
type warnOnce struct{ w io.Writer }

var warned sync.Map // the warnings written, each one line

func (o warnOnce) Write(p []byte) (int, error) {
	if _, dup := warned.LoadOrStore(string(p), true); dup {
		return len(p), nil
	}
	return o.w.Write(p)
}

type envError struct {
	name, value, want string
	err               error
}

func (e *envError) Error() string {
	s := fmt.Sprintf("hmbtrace: %s=%q: want %s", e.name, e.value, e.want)
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

func configFromLookup(lookup func(string) (string, bool), environ []string, warn io.Writer) (Config, error) {
	return Config{}.mergeEnv(lookup, environ, warn)
}

// mergeEnv applies the set variables over c: a variable that is set (and,
// for those whose empty value means the default, not empty) replaces its
// field; an unset one leaves the code's value.
func (c Config) mergeEnv(lookup func(string) (string, bool), environ []string, warn io.Writer) (Config, error) {
	// Unknown variables are said once per run: by rank 0 as the
	// launcher numbers it, or by each process where none does. An MPI
	// job's ranks share one environment, so the others would say the same.
	defer func() {
		if c.Rank != 0 {
			return
		}
		for _, kv := range environ {
			name, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(name, "HMB_") && lookupEnvVar(name) == nil {
				msg := fmt.Sprintf("hmbtrace: warning: unknown variable %s ignored", name)
				if s := closestVar(name); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				fmt.Fprintln(warn, msg)
			}
		}
	}()
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		return strings.TrimSpace(v), ok
	}
	for _, ev := range envVars {
		v, ok := get(ev.name)
		if !ok && ev.name == "HMB_RANK" && c.Rank == 0 {
			c.Rank = launcherRank(get, warn) // the rank the launcher gives, if neither HMB_RANK nor the code does
		}
		if ok && ev.set == nil && ev.check != nil {
			if err := ev.check(v); err != nil {
				if err == errWant {
					err = nil
				}
				return c, &envError{name: ev.name, value: v, want: ev.takes, err: err}
			}
		}
		if !ok || ev.set == nil {
			continue
		}
		if ev.name == "HMB_PHASE" && v != "" {
			c.phaseEnv = true
		}
		if err := ev.set(&c, v); err != nil {
			if err == errWant {
				err = nil
			}
			return c, &envError{name: ev.name, value: v, want: ev.takes, err: err}
		}
	}
	return c, c.validate()
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

// ListenAddress turns a live-view address into one to listen on: a bare
// port, or ":PORT", means the loopback interface; an address naming its
// host is taken as it is, since binding elsewhere must be asked for.
func ListenAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if p, err := strconv.Atoi(s); err == nil {
		if p < 0 || p > 65535 {
			return "", fmt.Errorf("port %d out of range", p)
		}
		return fmt.Sprintf("127.0.0.1:%d", p), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want PORT or HOST:PORT: %v", err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("port %q out of range", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// ParseSize reads a size in bytes: a number with an optional suffix K, M or
// G (powers of 1024), optionally followed by B or iB: "64M", "8KiB", "4096".
func ParseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	upper := strings.ToUpper(t)
	mult := 1
	for _, suffix := range []string{"IB", "B"} {
		if strings.HasSuffix(upper, suffix) && len(upper) > len(suffix) {
			trimmed := upper[:len(upper)-len(suffix)]
			last := trimmed[len(trimmed)-1]
			if suffix == "IB" && last != 'K' && last != 'M' && last != 'G' {
				continue
			}
			upper = trimmed
			break
		}
	}
	switch {
	case strings.HasSuffix(upper, "K"):
		mult = 1 << 10
	case strings.HasSuffix(upper, "M"):
		mult = 1 << 20
	case strings.HasSuffix(upper, "G"):
		mult = 1 << 30
	}
	if mult != 1 {
		upper = upper[:len(upper)-1]
	}
	n, err := strconv.ParseUint(strings.TrimSpace(upper), 10, 63)
	if err != nil || upper == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional K, M or G suffix", s)
	}
	if n > uint64(maxInt)/uint64(mult) {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int(n) * mult, nil
}

const maxInt = int(^uint(0) >> 1)

// closestVar suggests a known variable for a misspelt one.
func closestVar(name string) string {
	best, bestDist := "", 4
	names := make([]string, 0, len(envVars))
	for _, v := range envVars {
		names = append(names, v.name)
	}
	sort.Strings(names) // ties go to the first name in order, whatever the table's
	for _, n := range names {
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// validate checks the values a struct literal may have got wrong.
// The bounds of settings whose memory grows with them: a phase sample
// per slot and location, and ranks, which MPI numbers with an int.
const (
	maxPhaseSlots = 1 << 16
	maxRank       = math.MaxInt32
)

func (c *Config) validate() error {
	if c.BufferSize < 0 || c.BinSize < 0 {
		return fmt.Errorf("hmbtrace: negative buffer or bin size")
	}
	if c.TimerShift < NoTimerShift || c.TimerShift > maxTimerShift {
		return fmt.Errorf("hmbtrace: timer shift %d out of range [-1, %d]", c.TimerShift, maxTimerShift)
	}
	if c.Reduction > ReduceLast {
		return fmt.Errorf("hmbtrace: unknown reduction policy %v", c.Reduction)
	}
	if c.Clock != "" {
		if _, err := clock.ParseSource(c.Clock); err != nil {
			return fmt.Errorf("hmbtrace: %v", err)
		}
	}
	if !c.EncodingOff.Valid() {
		return fmt.Errorf("hmbtrace: invalid EncodingOff %v", c.EncodingOff)
	}
	if c.MinDuration < 0 {
		return fmt.Errorf("hmbtrace: negative MinDuration %v", c.MinDuration)
	}
	if len(c.Metrics) > encode.MaxMetrics {
		return fmt.Errorf("hmbtrace: %d metrics; at most %d", len(c.Metrics), encode.MaxMetrics)
	}
	if len(c.Metrics) > 0 {
		if _, err := hwcounter.ParseEvents(c.Metrics); err != nil {
			return fmt.Errorf("hmbtrace: metrics: %v", err)
		}
	}
	if _, err := filter.ParsePatternList(c.MetricsRegions); err != nil {
		return fmt.Errorf("hmbtrace: metrics regions: %v", err)
	}
	if c.PhaseSlots < 0 || c.PhaseSlots == 1 || c.PhaseSlots > maxPhaseSlots {
		return fmt.Errorf("hmbtrace: PhaseSlots %d: want 0 (the default) or 2 to %d", c.PhaseSlots, maxPhaseSlots)
	}
	if c.Rank < 0 || c.Rank > maxRank {
		return fmt.Errorf("hmbtrace: Rank %d: want 0 to %d", c.Rank, maxRank)
	}
	for i, cl := range c.ClassOrder {
		if slices.Contains(c.ClassOrder[:i], cl) {
			return fmt.Errorf("hmbtrace: ClassOrder: %v listed twice", cl)
		}
	}
	if c.MetricsDepth < 0 {
		return fmt.Errorf("hmbtrace: negative MetricsDepth %d", c.MetricsDepth)
	}
	if c.ThrottleTime < 0 {
		return fmt.Errorf("hmbtrace: negative ThrottleTime %v", c.ThrottleTime)
	}
	if err := c.validateOutput(); err != nil {
		return err
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
		if c.Name == "" || c.Name == "." || c.Name == "/" {
			c.Name = "trace"
		}
	}
	if c.Output == "" {
		c.Output = DefaultOutput
	}
	if c.BufferSize == 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.BinSize == 0 {
		c.BinSize = autoBinSize(c.BufferSize)
	}
	return c
}

// Bins are taken one per location, calling depth and class, so a buffer of
// few bins runs dry for want of bins while mostly empty: 256 threads of 8
// depths need 2,048 bins, more than a 4 MiB buffer of 8 KiB bins has. A
// buffer smaller than DefaultBinSize × autoBins gets smaller bins, down to
// minAutoBinSize, so that it has autoBins of them; HMB_BIN_SIZE decides
// otherwise.
const (
	autoBins       = 4096
	minAutoBinSize = 1 << 10
)

// autoBinSize returns the bin size for a buffer of size bytes when none is
// given: DefaultBinSize, or the largest power of two that gives autoBins
// bins, not below minAutoBinSize.
func autoBinSize(size int) int {
	b := DefaultBinSize
	for b > minAutoBinSize && size/b < autoBins {
		b /= 2
	}
	return b
}
