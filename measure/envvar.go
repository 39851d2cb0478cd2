package measure

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/hwcounter"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
)

// envVar is one HMB_* variable: the one place that says what it is called,
// what it takes, what it does to a Config, and how the guide's
// configuration table describes it (TestREADMEConfigTable keeps the two in
// step). ConfigFromEnv reads the variables in the table's order.
type envVar struct {
	name  string
	def   string // the default, as the guide gives it
	takes string // what a value must be: the error's "want"
	doc   string // the guide's meaning column (Markdown)
	// set parses the value, trimmed, into c. It returns errWant for a
	// value that is simply not one of takes, or an error saying more.
	// nil: the variable is read elsewhere (by the C library).
	set func(c *Config, v string) error
	// check validates the value of a variable read elsewhere, so that a
	// bad one is an error at Start as for the others.
	check func(v string) error
}

// errWant says that a value is not one of what its variable takes, with
// nothing to add to that.
var errWant = errors.New("want")

// oneOf is the check of a variable read elsewhere that takes one of words,
// as written.
func oneOf(words ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(words, v) {
			return errWant
		}
		return nil
	}
}

// boolVar is the parser of a 1/0 variable.
func boolVar(set func(c *Config, on bool)) func(*Config, string) error {
	return func(c *Config, v string) error {
		on, err := parseBool(v)
		if err != nil {
			return errWant
		}
		set(c, on)
		return nil
	}
}

// sizeVar is the parser of a size in bytes, more than 0.
func sizeVar(field func(c *Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := ParseSize(v)
		if err == nil && n == 0 {
			err = fmt.Errorf("a size of 0 bytes holds nothing")
		}
		if err != nil {
			return err
		}
		*field(c) = n
		return nil
	}
}

// nonEmpty makes set ignore a variable that is set but empty, as for the
// variables whose empty value means their default.
func nonEmpty(set func(c *Config, v string) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		return set(c, v)
	}
}

// envVars is every variable ConfigFromEnv knows, in the guide's order.
var envVars = []envVar{
	{
		name: "HMB_ENABLE", def: "1", takes: "1/0, true/false, yes/no, on/off",
		doc: "0 turns measurement off (and the OpenMP adapter: no OMPT tool attaches)",
		set: boolVar(func(c *Config, on bool) { c.Disabled = !on }),
	},
	{
		name: "HMB_OUTPUT", def: "`hmb-out`", takes: "a directory",
		doc: "directory of the trace file `<name>.<rank>.hmb`",
		set: func(c *Config, v string) error {
			if v == "" {
				return errWant
			}
			c.Output = v
			return nil
		},
	},
	{
		name: "HMB_NAME", def: "program name", takes: "the trace name",
		doc: "trace name",
		set: func(c *Config, v string) error {
			if v == "" || strings.ContainsAny(v, `/\`) {
				return fmt.Errorf("a file name without slashes")
			}
			c.Name = v
			return nil
		},
	},
	{
		name: "HMB_RANK", def: "the launcher's, else 0", takes: "a rank, 0 to 2147483647",
		doc: "rank in a parallel run (file name); see below",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > maxRank {
				return errWant
			}
			c.Rank = n
			return nil
		},
	},
	{
		name: "HMB_OUTPUT_LAYOUT", def: "archive", takes: "archive or rank-files",
		doc: "how the ranks of an MPI run write: `archive`, one run archive `<name>.hmbrun` (one per `HMB_AGGREGATE` ranks, `<name>.<group>.hmbrun`) with each rank's trace in its slot; `rank-files`, one `<name>.<rank>.hmb` per rank. A run of one rank, and a process that is not an MPI rank, write their own file either way",
		set: func(c *Config, v string) error {
			if v != LayoutArchive && v != LayoutRankFiles {
				return errWant
			}
			c.OutputLayout = v
			return nil
		},
	},
	{
		name: "HMB_AGGREGATE", def: "1024", takes: "a number of ranks per archive file, 1 or more",
		doc: "ranks per archive file: the run's ranks in groups of this many, each group's first rank (its aggregator) creating the group's file",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errWant
			}
			c.Aggregate = n
			return nil
		},
	},
	{
		name: "HMB_OUTPUT_EVENTS", def: "all", takes: "all or none",
		doc: "`none`: an MPI run writes only the run-wide results its ranks computed at `MPI_Finalize` (profile, exact communication matrix, variation, phase series), one archive and no rank's trace: the in-memory workflow, no event touches the file system; `summary`, `comm`, `variation` and `dynamics` read it, the views that need events say so. A rank that writes its own `.hmb` file (the `rank-files` layout, a failed collective end) keeps its events",
		set: func(c *Config, v string) error {
			switch v {
			case "all":
				c.NoEvents = false
			case "none":
				c.NoEvents = true
			default:
				return errWant
			}
			return nil
		},
	},
	{
		name: "HMB_WAITSTATES", def: "insitu", takes: "insitu or off (read by the MPI wrappers)",
		doc:   "`insitu`: at `MPI_Finalize` the ranks of an MPI run replay their own events over MPI to find why they waited (Scalasca's wait states and their delays), and the run archive holds the result; `off`: the collective end skips that replay, which costs most where a run's ranks made many messages, and `hmbtrace waitstate` replays the ranks' traces afterwards, with the same numbers (with `HMB_OUTPUT_EVENTS=none` there are none). Set it alike on every rank",
		check: oneOf("insitu", "off"),
	},
	{
		name: "HMB_COLLECTIVE_TIMEOUT", def: "2m", takes: "a duration such as 30s or 2m, more than 0",
		doc: "how long each step of an MPI run's collective end (clock synchronisation at `MPI_Init` and `MPI_Finalize`, the archive's slots) waits for the other ranks; past it (a rank died, or never reached `MPI_Finalize`) a rank writes its own `<name>.<rank>.hmb` and says why",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return errWant
			}
			c.CollectiveTimeout = d
			return nil
		},
	},
	{
		name: "HMB_CLOCK_SYNC", def: "auto", takes: "auto or measure (read by the MPI wrappers)",
		doc: "`auto`: at `MPI_Init` and `MPI_Finalize` the ranks of one node take their offset as 0, since they read one clock, and only the tree's edges between nodes ping-pong; `measure`: every edge ping-pongs, as between nodes, to see the synchronisation's own error on one node",
		check: func(v string) error {
			if !strings.EqualFold(v, "auto") && !strings.EqualFold(v, "measure") {
				return errWant
			}
			return nil
		},
	},
	{
		name: "HMB_COLLECTIVE_TIMING", def: "0", takes: "1/0, true/false, yes/no, on/off (read by the MPI wrappers)",
		doc: "1: each rank of an MPI run says on stderr how long its steps of the collective end took (clock synchronisation; the results: definitions unified, profile and matrix reduced, analyses, and the trips they took through the tree; the wait-state replay apart; the archive's slots) and how many calls into Go its wait-state replay made, as `go run ./bench -sections scale` reads them, then the process's CPU time over those steps (of it the replay's and the results') and `MPI_Init`'s clock synchronisation, and last the rank's arrival at `MPI_Finalize` on rank 0's clock (seconds since its start, as the files have it), whose spread over the ranks is the arrival skew the collective end absorbs",
		check: func(v string) error {
			if _, err := parseBool(v); err != nil {
				return errWant
			}
			return nil
		},
	},
	{
		name: "HMB_BUFFER_SIZE", def: "64M", takes: "a size such as 64M (K, M, G: powers of 1024)",
		doc: "the one memory budget for all events of the process; more than the machine's memory, the cgroup's limit or `ulimit -v`, or what the kernel refuses, is an error at start naming the value",
		set: sizeVar(func(c *Config) *int { return &c.BufferSize }),
	},
	{
		name: "HMB_BIN_SIZE", def: "8K", takes: "a size such as 8K",
		doc: "size of one bin: the unit of allocation and reduction. Each location takes one bin per calling depth it records at, so the default gives a buffer under 32M smaller bins (4,096 of them, at least 1K each); with more locations × depths than bins, set it smaller",
		set: sizeVar(func(c *Config) *int { return &c.BinSize }),
	},
	{
		name: "HMB_REDUCTION", def: "depth", takes: "depth, class, first or last",
		doc: "what a full buffer sheds: `depth` (deepest calling depth first; when only depth 1 is left, recording stops), `class` (event classes in `HMB_CLASS_ORDER`, then depth), `first` (keep the first events, stop when full), `last` (a flight recorder: keep the newest events)",
		set: func(c *Config, v string) error {
			p, err := buffer.ParsePolicy(v)
			if err != nil {
				return errWant
			}
			c.Reduction = p
			return nil
		},
	},
	{
		name: "HMB_CLASS_ORDER", def: "metric,message,collective", takes: "a list of message, metric, collective, least important first",
		doc: "the `class` policy's order, least important first",
		set: nonEmpty(func(c *Config, v string) error {
			var order []buffer.Class // replaces the code's order, as every variable does
			for _, name := range strings.Split(v, ",") {
				cl, err := buffer.ParseClass(strings.TrimSpace(name))
				if err != nil {
					return err
				}
				if slices.Contains(order, cl) {
					return fmt.Errorf("%s listed twice", strings.TrimSpace(name))
				}
				order = append(order, cl)
			}
			c.ClassOrder = order
			return nil
		}),
	},
	{
		name: "HMB_MIN_DURATION", def: "0", takes: "a duration such as 2us, 500ns or 1ms",
		doc: "duration filter: a call shorter than this (`2us`, `500ns`) with nothing kept inside vanishes; the flat profile still counts it",
		set: nonEmpty(func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return errWant
			}
			c.MinDuration = d
			return nil
		}),
	},
	{
		name: "HMB_FILTER_FILE", def: "none", takes: "a Score-P filter file",
		doc: "a Score-P filter file (`SCOREP_REGION_NAMES_BEGIN`, `EXCLUDE`/`INCLUDE` with `*` `?` wildcards, later rules win): excluded regions are not measured, except MPI and OpenMP regions, which are kept with a line on stderr; a regular file (or a pipe) of at most 16 MiB",
		set: nonEmpty(func(c *Config, v string) error { c.FilterFile = v; return nil }),
	},
	{
		name: "HMB_SIGNALS", def: "0", takes: "1/0, true/false, yes/no, on/off",
		doc: "1: write the trace on SIGINT/SIGTERM, then die of the signal; a signal the process ignores (a background job's SIGINT, `nohup`) stays ignored",
		set: boolVar(func(c *Config, on bool) { c.Signals = on }),
	},
	{
		name: "HMB_SURVIVE", def: "0", takes: "1/0, true/false, yes/no, on/off",
		doc: "1: keep the buffer in a file mapping that outlives the process, for `hmbtrace recover` after SIGKILL, the OOM killer, a segfault or `abort()` (see \"A trace that survives the process\")",
		set: boolVar(func(c *Config, on bool) { c.Survive = on }),
	},
	{
		name: "HMB_SURVIVE_DIR", def: "`/dev/shm`", takes: "a directory on a local tmpfs such as /dev/shm",
		doc: "where that mapping goes: a local tmpfs, never a network file system",
		set: nonEmpty(func(c *Config, v string) error { c.SurviveDir = v; return nil }),
	},
	{
		name: "HMB_GORUNTIME", def: "0", takes: "1/0, true/false, yes/no, on/off",
		doc: "1: Go's runtime in the trace: GC cycles and stop-the-world pauses on a location of their own, and the waits (channel, select, mutex, sleep, ...), runnable time, syscalls and GC assists of each goroutine while it holds a location on a companion location; runs `runtime/trace` for the whole measurement (see \"Go's runtime in the trace\")",
		set: boolVar(func(c *Config, on bool) { c.GoRuntime = on }),
	},
	{
		name: "HMB_METRICS", def: "none", takes: "a list of perf events such as cycles,instructions,page-faults",
		doc: "perf events read at enter and leave by the Go probes (the C probes read none, and say so), as `perf list` names them: `cycles`, `instructions`, `cache-misses`, `task-clock`, `page-faults`, `context-switches`, raw `rNNNN`, ...",
		set: nonEmpty(func(c *Config, v string) error {
			events, err := hwcounter.ParseList(v)
			if err != nil {
				return err
			}
			c.Metrics = nil // replaces the code's list
			for _, e := range events {
				c.Metrics = append(c.Metrics, e.Name)
			}
			return nil
		}),
	},
	{
		name: "HMB_METRICS_REGIONS", def: "all", takes: "a list of region name patterns such as solve*,compute",
		doc: "the regions that read counters, as wildcard patterns (`solve*,compute`); the others pay nothing",
		set: nonEmpty(func(c *Config, v string) error {
			if _, err := filter.ParsePatternList(v); err != nil {
				return err
			}
			c.MetricsRegions = v
			return nil
		}),
	},
	{
		name: "HMB_METRICS_DEPTH", def: "any", takes: "a calling depth, 1 or more (0: any)",
		doc: "the deepest calling depth that reads counters",
		set: nonEmpty(func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return errWant
			}
			c.MetricsDepth = n
			return nil
		}),
	},
	{
		name: "HMB_METRICS_STRICT", def: "0", takes: "1/0, true/false, yes/no, on/off",
		doc: "1: an event this machine cannot count is an error at Start (else: recorded without it, said once)",
		set: boolVar(func(c *Config, on bool) { c.MetricsStrict = on }),
	},
	{
		name: "HMB_PHASE", def: "none", takes: "the name of the progress loop's region",
		doc: "the progress loop's region: each leave ends an iteration of the phase profile",
		set: nonEmpty(func(c *Config, v string) error { c.Phase = v; return nil }),
	},
	{
		name: "HMB_PHASE_SLOTS", def: "512", takes: "a number of samples, 2 to 65536",
		doc: "samples of the phase profile kept per location before adjacent ones merge",
		set: nonEmpty(func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 || n > maxPhaseSlots {
				return errWant
			}
			c.PhaseSlots = n
			return nil
		}),
	},
	{
		name: "HMB_CALLPATHS", def: "0", takes: "1/0, true/false, yes/no, on/off",
		doc: "1: keep an exact call-path profile at the probes (on with `HMB_LISTEN`)",
		set: boolVar(func(c *Config, on bool) { c.CallPaths = on }),
	},
	{
		name: "HMB_LISTEN", def: "none", takes: "PORT (loopback) or HOST:PORT",
		doc: "serve the live view: `PORT` (loopback) or `HOST:PORT`",
		set: nonEmpty(func(c *Config, v string) error {
			if _, err := ListenAddress(v); err != nil {
				return err
			}
			c.Listen = v
			return nil
		}),
	},
	{
		name: "HMB_LISTEN_PUBLIC", def: "0", takes: "1/0, true/false, yes/no, on/off",
		doc: "1: allow `HMB_LISTEN` on an interface other hosts reach; every request must then carry the token the view prints at start",
		set: boolVar(func(c *Config, on bool) { c.ListenPublic = on }),
	},
	{
		name: "HMB_TIMER_SHIFT", def: "auto", takes: "0 to 32 bits, or -1 for full resolution",
		doc: "drop this many low bits of each timestamp (0: keep all; auto: the largest shift with a tick ≤ 8 ns)",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < NoTimerShift || n > maxTimerShift {
				return errWant
			}
			if n == 0 {
				n = NoTimerShift // an explicit 0 means no reduction
			}
			c.TimerShift = n
			return nil
		},
	},
	{
		name: "HMB_CLOCK", def: "auto", takes: "tsc or monotonic",
		doc: "`tsc` (invariant TSC, calibrated against CLOCK_MONOTONIC) or `monotonic`",
		set: func(c *Config, v string) error {
			if _, err := clock.ParseSource(v); err != nil {
				return errWant
			}
			c.Clock = v
			return nil
		},
	},
	{
		name: "HMB_ENCODING_OFF", def: "none", takes: "a list of split-timing, leb128, delta, tokens, predict",
		doc: "switch encoding techniques off to measure them: `split-timing,leb128,delta,tokens,predict`",
		set: nonEmpty(func(c *Config, v string) error {
			t, err := encode.ParseTechniques(v)
			if err != nil {
				return err
			}
			c.EncodingOff = t
			return nil
		}),
	},
	{
		name: "HMB_C_PROBE", def: "direct", takes: "direct or staged (read by the C library)",
		doc:   "C probes: `direct` (write events in place, in C) or `staged` (16-byte records replayed in Go)",
		check: oneOf("direct", "staged"),
	},
	{
		name: "HMB_OPENMP", def: "1", takes: "1/0, true/false, yes/no, on/off (read by the C library)",
		doc: "the OpenMP adapter: the OMPT tool for LLVM's and Intel's runtimes and the libgomp wrappers for GCC's",
		check: func(v string) error {
			if _, err := parseBool(v); err != nil {
				return errWant
			}
			return nil
		},
	},
	{
		name: "HMB_INSTRUMENT_FLAGS", def: "none", takes: "`hmbtrace-instrument` options (read by it, at build time)",
		doc: "options for the named forms `hmbtrace-mpicc`, `hmbtrace-gcc`, …, which take no options on their command line",
		set: nil,
	},
	{
		name: parallel.Env, def: "GOMAXPROCS", takes: "a number of workers, 1 or more (read by the tools)",
		doc: "workers with which `summary`, `export`, `report`, `comm`, `score`, `variation` and `dynamics` read locations and files in parallel, unless their `-procs` flag says; 1 reads sequentially. The output is the same for any number",
		set: nil,
	},
	{
		name: "HMB_THROTTLE", def: "1", takes: "1/0, true/false, yes/no, on/off",
		doc: "0 keeps every region measured. Else a region is switched off once nearly all of its calls were shorter than `HMB_THROTTLE_TIME`: after 1024 visits if at most 1 call in 256 reached it, after `HMB_THROTTLE_CALLS` (4096) if at most 1 in 8 (a few preempted calls do not count; `summary` says why a region was or was not throttled). It is switched off, per location, at its next leave with none of its calls open: its probes then test one flag before the clock and count the visit (`summary` and `score` list it, `score -g` excludes it). MPI and OpenMP regions, collectives and the phase region are never throttled",
		set: boolVar(func(c *Config, on bool) { c.NoThrottle = !on }),
	},
	{
		name: "HMB_THROTTLE_CALLS", def: "4096", takes: "a number of visits, 1 or more",
		doc: "visits from which a region with at most 1 call in 8 long is throttled (TAU waits for 100000); one with at most 1 in 256 is from 1024 visits, or from this many if fewer",
		set: nonEmpty(func(c *Config, v string) error {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n == 0 {
				return errWant
			}
			c.ThrottleCalls = n
			return nil
		}),
	},
	{
		name: "HMB_THROTTLE_TIME", def: "250ns", takes: "a duration such as 250ns or 1us, more than 0",
		doc: "inclusive time from which a call is long: about 10× an enter and a leave (2 × 12 ns here), so the probes would add more than a tenth to its time",
		set: nonEmpty(func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return errWant
			}
			c.ThrottleTime = d
			return nil
		}),
	},
}

// lookupEnvVar returns the variable called name, nil if there is none.
func lookupEnvVar(name string) *envVar {
	for i := range envVars {
		if envVars[i].name == name {
			return &envVars[i]
		}
	}
	return nil
}

// configTable returns the guide's configuration table (docs/configuration.md), in Markdown.
func configTable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, v := range envVars {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.name, v.def, v.doc)
	}
	return b.String()
}

// phaseWarning returns the warning for a configured phase region that
// never ran, "" if it ran or none was configured. Measurement.Phase is
// first come, first served, so a misspelt HMB_PHASE takes the place of the
// program's own phase region: without this the phase profile would just be
// empty. It names the regions the value may have meant. The locations
// must have stopped recording.
func (m *Measurement) phaseWarning() string {
	name := m.cfg.Phase
	r := Region(m.phase.Load())
	if name == "" || r == 0 {
		return ""
	}
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	var names []string
	if d := m.regions.at(int(r) - 1); d.name != name {
		m.mu.Unlock()
		return "" // the program's Phase came first: HMB_PHASE did not rename it
	}
	for i := 0; i < m.regions.len(); i++ {
		if Region(i+1) != r {
			names = append(names, m.regions.at(i).name)
		}
	}
	m.mu.Unlock()
	for _, l := range locs {
		if e := l.entry(r); e != nil && e.visits > 0 {
			return ""
		}
	}
	src := "Config.Phase"
	if m.cfg.phaseEnv {
		src = "HMB_PHASE"
	}
	msg := fmt.Sprintf("hmbtrace: warning: %s=%q: no region of that name ran, so the phase profile is empty", src, name)
	if near := closestNames(name, names, 3); len(near) > 0 {
		msg += "; did you mean " + quotedList(near) + "?"
	}
	return msg
}

// closestNames returns up to n of names that are near name: the same but
// for case, one containing the other, or a few edits away (a third of the
// name's length, at least 2), nearest first.
func closestNames(name string, names []string, n int) []string {
	type cand struct {
		name string
		dist int
	}
	var cs []cand
	lower := strings.ToLower(name)
	limit := max(2, len(name)/3)
	for _, s := range names {
		ls := strings.ToLower(s)
		d := editDistance(lower, ls)
		switch {
		case ls == lower:
			d = 0
		case d <= limit:
		case strings.Contains(ls, lower) || strings.Contains(lower, ls):
			d = limit + 1 // after the misspellings
		default:
			continue
		}
		cs = append(cs, cand{s, d})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// quotedList writes names as "a", "b" or "c".
func quotedList(names []string) string {
	var b strings.Builder
	for i, s := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", s)
	}
	return b.String()
}
