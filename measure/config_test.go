package measure

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
)

func envFrom(vars map[string]string) (func(string) (string, bool), []string) {
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }, environ
}

func TestConfigFromEnv(t *testing.T) {
	lookup, environ := envFrom(map[string]string{
		"HMB_ENABLE": "yes", "HMB_BUFFER_SIZE": "16MiB", "HMB_BIN_SIZE": "4k", "HMB_OUTPUT": "/tmp/x",
		"HMB_REDUCTION": "depth", "HMB_TIMER_SHIFT": "5", "HMB_CLOCK": "monotonic", "HMB_NAME": "run",
		"HMB_RANK": "7", "HMB_ENCODING_OFF": "delta,tokens", "PATH": "/bin",
	})
	var warn bytes.Buffer
	c, err := configFromLookup(lookup, environ, &warn)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BufferSize: 16 << 20, BinSize: 4 << 10, Output: "/tmp/x", TimerShift: 5, Clock: "monotonic", Name: "run", Rank: 7, EncodingOff: encode.Delta | encode.Tokens}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config %+v, want %+v", c, want)
	}
	if warn.Len() != 0 {
		t.Errorf("warnings: %s", warn.String())
	}
}

func TestConfigFromEnvErrors(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"HMB_ENABLE", "maybe", `HMB_ENABLE="maybe": want 1/0`},
		{"HMB_BUFFER_SIZE", "64X", `HMB_BUFFER_SIZE="64X": want a size`},
		{"HMB_BUFFER_SIZE", "-1M", `HMB_BUFFER_SIZE="-1M"`},
		{"HMB_BUFFER_SIZE", "0", `HMB_BUFFER_SIZE="0"`},
		{"HMB_BIN_SIZE", "99999999999999999999", `HMB_BIN_SIZE="99999999999999999999"`},
		{"HMB_REDUCTION", "deepest", `HMB_REDUCTION="deepest": want depth, class, first or last`},
		{"HMB_TIMER_SHIFT", "40", `HMB_TIMER_SHIFT="40": want 0 to 32 bits`},
		{"HMB_TIMER_SHIFT", "x", `HMB_TIMER_SHIFT="x"`},
		{"HMB_CLOCK", "hpet", `HMB_CLOCK="hpet": want tsc or monotonic`},
		{"HMB_RANK", "-2", `HMB_RANK="-2"`},
		{"HMB_NAME", "a/b", `HMB_NAME="a/b"`},
		{"HMB_ENCODING_OFF", "zip", `HMB_ENCODING_OFF="zip"`},
		// Bounded: each of these was accepted, and some killed the program
		// in a probe (a phase series of 10^14 slots).
		{"HMB_CLASS_ORDER", "metric,metric", `HMB_CLASS_ORDER="metric,metric": want a list of message, metric, collective, least important first: metric listed twice`},
		{"HMB_RANK", "99999999999", `HMB_RANK="99999999999": want a rank, 0 to 2147483647`},
		{"HMB_PHASE_SLOTS", "100000000000000", `HMB_PHASE_SLOTS="100000000000000": want a number of samples, 2 to 65536`},
		{"HMB_PHASE_SLOTS", "100000000", `HMB_PHASE_SLOTS="100000000"`},
		{"HMB_OPENMP", "x", `HMB_OPENMP="x": want 1/0`},
		{"HMB_C_PROBE", "fast", `HMB_C_PROBE="fast": want direct or staged`},
		{"HMB_WAITSTATES", "on", `HMB_WAITSTATES="on": want insitu or off (read by the MPI wrappers)`},
	}
	for _, c := range cases {
		lookup, environ := envFrom(map[string]string{c.name: c.value})
		_, err := configFromLookup(lookup, environ, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: error %v, want it to contain %q", c.name, c.value, err, c.want)
		}
	}
}

func TestUnknownVariableWarns(t *testing.T) {
	lookup, environ := envFrom(map[string]string{"HMB_BUFER_SIZE": "1M", "HMB_SOMETHING_ELSE": "x"})
	var warn bytes.Buffer
	if _, err := configFromLookup(lookup, environ, &warn); err != nil {
		t.Fatal(err)
	}
	out := warn.String()
	for _, want := range []string{
		"unknown variable HMB_BUFER_SIZE ignored (did you mean HMB_BUFFER_SIZE?)",
		"unknown variable HMB_SOMETHING_ELSE ignored",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("warnings %q lack %q", out, want)
		}
	}
}

// TestUnknownVariableOnce: the ranks of a job share its environment, so
// only rank 0 warns of a variable it does not know.
func TestUnknownVariableOnce(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		warn bool
	}{
		{map[string]string{"HMB_ROOT": "/x", "OMPI_COMM_WORLD_RANK": "0"}, true},
		{map[string]string{"HMB_ROOT": "/x", "OMPI_COMM_WORLD_RANK": "3"}, false},
		{map[string]string{"HMB_ROOT": "/x", "HMB_RANK": "5"}, false},
	} {
		lookup, environ := envFrom(c.vars)
		var warn bytes.Buffer
		if _, err := configFromLookup(lookup, environ, &warn); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(warn.String(), "unknown variable HMB_ROOT"); got != c.warn {
			t.Errorf("%v: warned %v (%q), want %v", c.vars, got, warn.String(), c.warn)
		}
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]int{"0": 0, "4096": 4096, "8K": 8 << 10, "8k": 8 << 10, "8KB": 8 << 10, "8KiB": 8 << 10,
		"64M": 64 << 20, "64mib": 64 << 20, "2G": 2 << 30, " 1M ": 1 << 20, "100B": 100}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "1.5M", "1T", "-1", "1MiBB", "iB", "1 K B"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{BinSize: 100},
		{BufferSize: 1000, BinSize: 1024},
		{TimerShift: 99},
		{Clock: "sundial"},
		{Reduction: 42},
		{PhaseSlots: 1 << 40},
		{Rank: -1},
		{ClassOrder: []buffer.Class{buffer.ClassMetric, buffer.ClassMetric}},
	} {
		c.Output = t.TempDir()
		if m, err := Start(c); err == nil {
			m.Close()
			t.Errorf("Start(%+v) succeeded", c)
		}
	}
}

func TestDefaultTimerShift(t *testing.T) {
	// 2.6 GHz: 8 ns is 20.8 ticks, so 16 ticks (shift 4) is the largest power of two in it.
	if s := timerShift(0, 2.6e9); s != 4 {
		t.Errorf("shift %d at 2.6 GHz, want 4", s)
	}
	if s := timerShift(0, 1e9); s != 3 {
		t.Errorf("shift %d at 1 GHz, want 3", s)
	}
	if s := timerShift(NoTimerShift, 1e9); s != 0 {
		t.Errorf("NoTimerShift gives %d", s)
	}
	if s := timerShift(7, 1e9); s != 7 {
		t.Errorf("explicit shift gives %d", s)
	}
}

func TestRankFromLauncher(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		rank int
		warn string
	}{
		{"none", map[string]string{"PATH": "/bin"}, 0, ""},
		{"open mpi", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "PMIX_RANK": "3"}, 3, ""},
		{"hydra", map[string]string{"PMI_RANK": "5", "MPI_LOCALRANKID": "1"}, 5, ""},
		{"slurm", map[string]string{"SLURM_PROCID": "9", "SLURM_LOCALID": "0"}, 9, ""},
		// mpirun inside a Slurm job: the processes inherit the batch step's SLURM_PROCID.
		{"mpirun under slurm", map[string]string{"SLURM_PROCID": "0", "OMPI_COMM_WORLD_RANK": "2"}, 2, ""},
		{"pals", map[string]string{"PALS_RANKID": "12", "PALS_LOCAL_RANKID": "0"}, 12, ""},
		{"node-local only", map[string]string{"MPI_LOCALRANKID": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, 0, ""},
		{"HMB_RANK wins", map[string]string{"HMB_RANK": "4", "OMPI_COMM_WORLD_RANK": "2"}, 4, ""},
		{"malformed skipped", map[string]string{"OMPI_COMM_WORLD_RANK": "two", "SLURM_PROCID": "6"}, 6, `OMPI_COMM_WORLD_RANK="two" is not a rank`},
		{"negative skipped", map[string]string{"PMI_RANK": "-1"}, 0, `PMI_RANK="-1" is not a rank`},
	}
	for _, c := range cases {
		lookup, environ := envFrom(c.env)
		var warn bytes.Buffer
		cfg, err := configFromLookup(lookup, environ, &warn)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if cfg.Rank != c.rank {
			t.Errorf("%s: rank %d, want %d", c.name, cfg.Rank, c.rank)
		}
		if c.warn == "" && warn.Len() != 0 || !strings.Contains(warn.String(), c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.name, warn.String(), c.warn)
		}
	}
}

var updateREADME = flag.Bool("update-readme", false, "rewrite docs/configuration.md's configuration table from envVars")

// TestREADMEConfigTable checks that the README's configuration table is
// the one envVars makes; -update-readme rewrites it.
func TestREADMEConfigTable(t *testing.T) {
	const path = "../docs/configuration.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	head := "| variable | default | meaning |\n"
	start := strings.Index(readme, head)
	if start < 0 {
		t.Fatalf("%s has no configuration table (a line %q)", path, strings.TrimSpace(head))
	}
	end := strings.Index(readme[start:], "\n\n")
	if end < 0 {
		t.Fatalf("%s: the configuration table does not end", path)
	}
	end += start + 1
	want := configTable()
	if readme[start:end] == want {
		return
	}
	if *updateREADME {
		if err := os.WriteFile(path, []byte(readme[:start]+want+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/configuration.md's configuration table is not envVars' (measure/envvar.go): run go test ./measure -run TestREADMEConfigTable -update-readme")
}

// Every variable the table lists is read, by the measurement or by what its
// "takes" names ("(read by the C library)"), has a default, says what it takes, and is suggested for a
// misspelling of itself.
func TestEnvVarsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range envVars {
		if seen[v.name] {
			t.Errorf("%s twice", v.name)
		}
		seen[v.name] = true
		if v.def == "" || v.takes == "" || v.doc == "" {
			t.Errorf("%s: default %q, takes %q, doc %q", v.name, v.def, v.takes, v.doc)
		}
		if (v.set == nil) != strings.Contains(v.takes, "(read by ") {
			t.Errorf("%s: set is nil: %v", v.name, v.set == nil)
		}
		if v.check != nil && v.set != nil {
			t.Errorf("%s: both set and check", v.name)
		}
		typo := v.name[:len(v.name)-1] + "X"
		if got := closestVar(typo); got != v.name {
			t.Errorf("closestVar(%s) = %s, want %s", typo, got, v.name)
		}
	}
}

// TestEveryVariableKnown checks that every HMB_* variable the sources name
// (the C library's getenv calls, hmbtrace-instrument, the tools) is in
// envVars: one that is not draws an "unknown variable" warning from every
// instrumented program that runs with it set.
func TestEveryVariableKnown(t *testing.T) {
	name := regexp.MustCompile(`"(HMB_[A-Z0-9_]*[A-Z0-9])"`)
	seen := map[string]string{}
	for _, dir := range []string{"../cshim", "../cmd", "../internal", "../export", "../report"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "tracetest") { // tracetest: the test suite's own switches
				return filepath.SkipDir
			}
			ext := filepath.Ext(path)
			if d.IsDir() || strings.HasSuffix(path, "_test.go") || ext != ".go" && ext != ".c" && ext != ".h" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range name.FindAllStringSubmatch(string(b), -1) {
				seen[m[1]] = path
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no HMB_ variable found in the sources: the test reads the wrong place")
	}
	for v, path := range seen {
		if lookupEnvVar(v) == nil {
			t.Errorf("%s (named in %s) is not in envVars (measure/envvar.go)", v, path)
		}
	}
}

// The environment wins over the code: each set variable replaces its field,
// an unset one leaves the code's value, zero or not.
func TestEnvOverCode(t *testing.T) {
	code := Config{Disabled: true, BufferSize: 16 << 20, TimerShift: 5, MinDuration: 5 * time.Microsecond, ClassOrder: []buffer.Class{buffer.ClassMessage},
		Metrics: []string{"cycles"}, Rank: 3, Name: "code"}
	lookup, environ := envFrom(map[string]string{
		"HMB_ENABLE": "1", "HMB_BUFFER_SIZE": "2M", "HMB_CLASS_ORDER": "collective,metric",
		"HMB_METRICS": "instructions", "OMPI_COMM_WORLD_RANK": "5", "HMB_MIN_DURATION": "",
	})
	c, err := code.mergeEnv(lookup, environ, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BufferSize: 2 << 20, TimerShift: 5, MinDuration: 5 * time.Microsecond, ClassOrder: []buffer.Class{buffer.ClassCollective, buffer.ClassMetric},
		Metrics: []string{"instructions"}, Rank: 3, Name: "code"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("merged %+v\nwant   %+v", c, want)
	}
	if !reflect.DeepEqual(code.ClassOrder, []buffer.Class{buffer.ClassMessage}) || !reflect.DeepEqual(code.Metrics, []string{"cycles"}) {
		t.Errorf("the code's Config changed: %+v", code)
	}
	// Rank 0 in the code is not said: the launcher's rank fills it.
	c, err = Config{}.mergeEnv(lookup, environ, &bytes.Buffer{})
	if err != nil || c.Rank != 5 {
		t.Errorf("rank %d, %v; want the launcher's 5", c.Rank, err)
	}
}

func TestStartTakesEnv(t *testing.T) {
	t.Setenv("HMB_ENABLE", "0")
	m, err := Start(Config{Output: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if m.Enabled() {
		t.Error("HMB_ENABLE=0 over Config{}: the measurement records")
	}
	m.Close()

	t.Setenv("HMB_ENABLE", "1")
	t.Setenv("HMB_BUFFER_SIZE", "2M")
	m = startTest(t, Config{BufferSize: 16 << 20, Disabled: true})
	if !m.Enabled() || m.cfg.BufferSize != 2<<20 {
		t.Errorf("HMB_ENABLE=1 HMB_BUFFER_SIZE=2M over a literal: enabled %v, buffer %d", m.Enabled(), m.cfg.BufferSize)
	}
	m.Close()

	// IgnoreEnv: the literal as it is.
	m = startTest(t, Config{BufferSize: 16 << 20, IgnoreEnv: true})
	if m.cfg.BufferSize != 16<<20 {
		t.Errorf("IgnoreEnv: buffer %d, want the literal's", m.cfg.BufferSize)
	}
	m.Close()

	// ConfigFromEnv, then a change by the code: Start keeps the change.
	c, err := ConfigFromEnv()
	if err != nil || c.BufferSize != 2<<20 {
		t.Fatalf("ConfigFromEnv: buffer %d, %v", c.BufferSize, err)
	}
	c.BufferSize = 4 << 20
	m = startTest(t, c)
	if m.cfg.BufferSize != 4<<20 {
		t.Errorf("ConfigFromEnv changed by the code: buffer %d, want the code's 4M", m.cfg.BufferSize)
	}
	m.Close()

	t.Setenv("HMB_BUFFER_SIZE", "12Q")
	if _, err := Start(Config{Output: t.TempDir(), BufferSize: 16 << 20}); err == nil || !strings.Contains(err.Error(), `HMB_BUFFER_SIZE="12Q"`) {
		t.Errorf("malformed HMB_BUFFER_SIZE over a literal: %v, want an error naming it and its value", err)
	}
}

// A misspelt HMB_PHASE takes the place of the program's phase region: it
// is a warning at Close naming the value and the regions it may have meant.
func TestPhaseNeverRan(t *testing.T) {
	t.Setenv("HMB_PHASE", "solvr")
	m := startTest(t, Config{})
	solve, setup := m.Region("solve"), m.Region("setup")
	m.Region("solver")
	m.Region("output")
	loc := m.Location("main")
	for _, r := range []Region{setup, solve, solve} {
		loc.Enter(r)
		loc.Leave(r)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	const want = `hmbtrace: warning: HMB_PHASE="solvr": no region of that name ran, so the phase profile is empty; did you mean "solve" or "solver"?`
	if w := m.phaseWarning(); w != want {
		t.Errorf("warning\n%s\nwant\n%s", w, want)
	}

	// The phase region ran: nothing to say.
	t.Setenv("HMB_PHASE", "solve")
	m = startTest(t, Config{})
	solve = m.Region("solve")
	loc = m.Location("main")
	loc.Enter(solve)
	loc.Leave(solve)
	m.Close()
	if w := m.phaseWarning(); w != "" {
		t.Errorf("the phase region ran, yet: %s", w)
	}

	// From the code, and nothing near: the warning says where it came from.
	os.Unsetenv("HMB_PHASE")
	m = startTest(t, Config{Phase: "iteration"})
	m.Close()
	if w, want := m.phaseWarning(), `hmbtrace: warning: Config.Phase="iteration": no region of that name ran, so the phase profile is empty`; w != want {
		t.Errorf("warning %q, want %q", w, want)
	}
}

// Start warns about an unknown HMB_ variable once per process, however
// many measurements it starts.
// warnOnceRuns makes each run's warnings new to the process: warnOnce
// remembers every warning it wrote, so -count=2 would find them written.
var warnOnceRuns atomic.Int64

func TestWarnOnce(t *testing.T) {
	var b bytes.Buffer
	w := warnOnce{&b}
	n := warnOnceRuns.Add(1)
	once := fmt.Sprintf("hmbtrace: warning: unknown variable HMB_TEST_WARN_ONCE_%d ignored\n", n)
	twice := fmt.Sprintf("hmbtrace: warning: unknown variable HMB_TEST_WARN_TWICE_%d ignored\n", n)
	for i := 0; i < 3; i++ {
		fmt.Fprint(w, once)
	}
	fmt.Fprint(w, twice)
	if want := once + twice; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}
