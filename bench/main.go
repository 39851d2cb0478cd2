// Command bench measures hmbtrace against its peers side by side, in one
// invocation: what a probe costs, how many bytes an event takes, what a
// reduction costs, how long a run fits in a fixed buffer, what an
// instrumented application pays, what the MPI wrappers add to a call, and
// what a C++ code built by hmbtrace-instrument pays.
// Subjects are interleaved (A B A B …, over several rounds) so that the
// machine's drift hits them all alike; each section prints the median, the
// range and the ratio to its reference subject.
//
//	go run ./bench [-quick] [-tsv] [-svg DIR] [-sections probe,size,...] [-rounds N]
//
// Peers that are missing on a machine (no C compiler, no libotf2, no MPI)
// are reported as skipped, with the reason.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// options of a run, shared by the sections.
type options struct {
	quick  bool
	rounds int
	work   string // scratch directory
	root   string // the module's root, for building examples
	// ompBaseline: a directory with an older libhmbtrace-omp.so and
	// libhmbtrace.so, run as a further subject of the openmp section.
	ompBaseline string
}

type section struct {
	name, about string
	reference   string // the subject ratios are taken to
	run         func(o *options, r *report) error
}

// namedOnly are the sections that run only when -sections names them,
// never by default: they take minutes.
var namedOnly = map[string]bool{"scale": true}

var sections = []section{
	{"probe", "ns/event, lower is better", "hmbtrace (Go)", runProbe},
	{"size", "bytes/event on two streams, lower is better", "hmbtrace", runSize},
	{"reduction", "one depth reduction of a full buffer, ns", "hmbtrace HMB", runReduction},
	{"longrun", "a long run in a fixed buffer", "hmbtrace", runLongRun},
	{"application", "examples/heat wall and CPU time, ms", "instrumented (defaults)", runApplication},
	{"report", "hmbtrace report on a large trace", "hmbtrace report", runReport},
	{"tools", "the tools on 1 worker and on every core, higher is better", "export otf2", runTools},
	{"mpi", "MPI ping-pong of small messages, 2 ranks", "plain", runMPI},
	{"autoinst", "examples/cxx-mpi built by hmbtrace-instrument, 2 ranks", "plain mpicxx", runAutoinst},
	{"openmp", "empty parallel regions, barriers and tasks, 2 threads, ns", "gcc plain", runOpenMP},
	{"scale", "an MPI halo exchange's collective end and tools at 16 to 512 ranks", scaleRankFiles, runScale},
}

func main() {
	maybeLongrunChild()
	quick := flag.Bool("quick", false, "small sizes and few rounds: under a minute")
	tsv := flag.Bool("tsv", false, "print <section>\\t<subject>\\t<metric>\\t<value> lines instead of tables")
	svg := flag.String("svg", "", "write one SVG chart per section into this directory")
	only := flag.String("sections", "", "comma-separated sections to run (default all but scale: probe,size,reduction,longrun,application,report,tools,mpi,autoinst,openmp; scale: 16 to 512 MPI ranks, minutes)")
	rounds := flag.Int("rounds", 0, "rounds of interleaved runs (default 5, 2 with -quick)")
	ompBaseline := flag.String("openmp-baseline", "", "openmp: also run the traced benchmarks with the libhmbtrace-omp.so and libhmbtrace.so of this directory (a before/after comparison)")
	scaleAt := flag.String("scale-ranks", "", "scale: the rank counts to run, comma-separated (default 16,64,256,512; 16,64 with -quick)")
	flag.Parse()
	o := &options{quick: *quick, rounds: *rounds, ompBaseline: *ompBaseline}
	if *scaleAt != "" {
		if err := setScaleRanks(*scaleAt); err != nil {
			fatal(err)
		}
	}
	if o.rounds <= 0 {
		o.rounds = 5
		if o.quick {
			o.rounds = 2
		}
	}
	var err error
	if o.root, err = moduleRoot(); err != nil {
		fatal(err)
	}
	if o.work, err = os.MkdirTemp("", "hmbtrace-bench"); err != nil {
		fatal(err)
	}
	defer os.RemoveAll(o.work)
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	for s := range want {
		if !known(s) {
			fatal(fmt.Errorf("unknown section %q (want probe, size, reduction, longrun, application, report, tools, mpi, autoinst, openmp, scale)", s))
		}
	}
	if !*tsv {
		fmt.Printf("hmbtrace bench, %s, %s\n\n", time.Now().Format("2006-01-02"), machine())
	}
	failed := false
	for _, s := range sections {
		if (len(want) > 0 || namedOnly[s.name]) && !want[s.name] {
			continue
		}
		r := newReport(s)
		start := time.Now()
		if err := s.run(o, r); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", s.name, err)
			failed = true
			continue
		}
		r.elapsed = time.Since(start)
		if *tsv {
			r.writeTSV(os.Stdout)
		} else {
			r.writeTable(os.Stdout)
		}
		if *svg != "" {
			if err := r.writeSVG(*svg); err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s chart: %v\n", s.name, err)
				failed = true
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func known(name string) bool {
	for _, s := range sections {
		if s.name == name {
			return true
		}
	}
	return false
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// machine describes where the numbers were taken.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	src := "unknown"
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
		src = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d CPUs (%s), clock source %s, %s %s/%s", runtime.NumCPU(), model, src, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
