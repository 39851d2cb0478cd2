// Command hmbtrace reads hmbtrace trace files: it prints their summary and
// their events, exports them to OTF2, pprof, Chrome JSON and CUBE4, and
// analyses them.
//
// Usage:
//
//	hmbtrace summary FILE...     flat profile and the buffer's story
//	hmbtrace dump FILE           one event per line, in recorded order
//	hmbtrace dump -definitions RUN  the run's definitions, unified across its ranks
//	hmbtrace export -format otf2|pprof|chrome|cube -o OUT FILE...
//	hmbtrace variation FILE...   time-dominant region and SOS-time outliers
//	hmbtrace score FILE...       measurement overhead per region, filter files
//	hmbtrace comm FILE...        communication matrix and sender/receiver diagram
//	hmbtrace dynamics FILE...    trends, steps and peaks over the iterations
//	hmbtrace waitstate FILE...   wait states (Late Sender, Wait at N x N, ...) and their delays
//	hmbtrace report FILE... -o report.html [-rows N]   the whole run as one self-contained HTML page
//	hmbtrace recover [DIR|FILE...]  the trace of a process that died, from its mapping (HMB_SURVIVE=1)
//	hmbtrace help [COMMAND]      the general usage, or a command's usage and flags
//	hmbtrace version             the module version and the commit it was built from
//
// Flags may come before or after the files, for every command
// ("hmbtrace summary hmb-out -width 20"); "--" ends them.
//
// Where a command takes FILE..., a directory stands for the *.hmb files in
// it: the ranks of an MPI run (HMB_OUTPUT) are read as one trace. A run
// archive (*.hmbrun, the one result of an MPI run), or a directory holding
// one or a run's group files, is read as the directory of its rank files
// would be; ARCHIVE#RANK names one rank of it (as dump takes it).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hmbtrace/hmbtrace/render"
)

type command struct {
	name  string
	usage string
	run   func(args []string, out io.Writer) error
}

var commands = []command{
	{"summary", "summary FILE...      per-region profile and what the buffer kept, dropped and reduced [-width N -tsv -ranks]", runSummary},
	{"dump", "dump FILE            every event, one per line: location, time (ns), kind, then the kind's fields (dump -h)", runDump},
	{"export", "export -format otf2|pprof|chrome|cube -o OUT FILE...   OTF2 archive (OUT a new directory), pprof profile, Chrome/Perfetto JSON or CUBE4 .cubex", runExport},
	{"variation", "variation FILE...    time-dominant region, segments whose SOS-time stands out [-region NAME -sync PATTERNS -tsv -svg FILE]", runVariation},
	{"score", "score FILE...        per region: visits, trace bytes, measurement overhead [-g FILTERFILE -threshold PERCENT -property total|prolog]", runScore},
	{"comm", "comm FILE...         who sent what to whom [-tsv -matrix FILE.svg -diagram FILE.svg -value messages|bytes|mean]", runComm},
	{"dynamics", "dynamics FILE...     how the run changes over its iterations: peaks, dips, steps, trends, costliest first [-tsv -svg FILE -top N -min-share F]", runDynamics},
	{"recover", "recover [DIR|FILE...]   the trace of a process that died with HMB_SURVIVE=1, from its mapping (default: /dev/shm, HMB_SURVIVE_DIR) [-force -o DIR -keep]", runRecover},
	{"waitstate", "waitstate FILE...    why the ranks waited: Late Sender, Late Receiver, collective and OpenMP barrier waits, worst first, with their delay [-top N -json]", runWaitstate},
	{"report", "report FILE... -o FILE.html   one self-contained HTML page: facts, profile, timeline, heat map, dynamics, communication, counters [-title T -region NAME -sync PATTERNS -top N -rows N]", runReport},
}

// usageOf maps a command to its usage line, for -h (filled at init: the
// commands refer to parseFlags, which cannot refer to them).
var usageOf = map[string]string{}

func init() {
	for _, c := range commands {
		usageOf[c.name] = c.usage
	}
}

// usageError is a command-line mistake: the usage is printed with it.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, out, errOut io.Writer) int {
	switch {
	case len(args) == 0:
		usage(errOut)
		return 2
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help":
		return help(args[1:], out, errOut)
	case args[0] == "version" || args[0] == "-version" || args[0] == "--version":
		return version(out)
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(args[1:], out)
			if err == nil {
				return 0
			}
			var h helpRequest
			if errors.As(err, &h) {
				fmt.Fprint(out, h.text)
				return 0
			}
			fmt.Fprintf(errOut, "hmbtrace %s: %s\n", c.name, render.ErrorText(err))
			var ue usageError
			if errors.As(err, &ue) {
				fmt.Fprintf(errOut, "usage: hmbtrace %s\n", c.usage)
			}
			return 1
		}
	}
	fmt.Fprintf(errOut, "hmbtrace: unknown command %q; the commands: %s (hmbtrace help COMMAND tells one)\n", args[0], commandNames())
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: hmbtrace COMMAND [flags] FILE...")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", c.usage)
	}
	for _, u := range builtinUsage {
		fmt.Fprintf(w, "  %s\n", u)
	}
	fmt.Fprintln(w, "flags may come before or after the files; -- ends them")
	fmt.Fprintln(w, "FILE... may name directories: their *.hmb files, the ranks of one run, are read as one trace")
	fmt.Fprintln(w, "FILE... may name run archives (*.hmbrun), or directories holding them: their ranks, as their rank files; ARCHIVE#RANK is one rank")
}

// newFlags makes a command's flag set that reports errors instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// helpOf holds what a command's -h says beyond its usage line.
var helpOf = map[string]string{
	"dump": `One line per event, tab-separated, in recorded order, time in ns since the start:
  <location> <time-ns> ENTER|LEAVE <region> <depth>
  <location> <time-ns> SEND|RECV <peer> <tag> <bytes> [comm=<id>]
  <location> <time-ns> ISEND|IRECV <peer> <tag> <bytes> comm=<id> req=<n>
  <location> <time-ns> ISEND_COMPLETE|IRECV_REQUEST|REQUEST_CANCELLED|COLL_REQUEST <region> <depth> req=<n>
  <location> <time-ns> COLLECTIVE <region> <depth> root=<rank> bytes=<n> [received=<n> comm=<id>]
  <location> <time-ns> COLL_COMPLETE <started-by> <depth> root=<rank> bytes=<n> received=<n> comm=<id> req=<n>
  <location> <time-ns> METRIC <region> <depth> <name>=<value>...
  <location> <time-ns> TASK_CREATE|TASK_SWITCH|TASK_COMPLETE|TASK_SUSPEND <region> <depth> task=<id>
A task id is unique in the file; TASK_SWITCH task=0 resumes the thread's implicit task. TASK_SUSPEND
follows the leaves of the regions a suspended task had open; they are entered again after its next switch.
-locations prints the locations instead, one a line: <location> <id> <events recorded> [<OpenMP place>],
the place of an OpenMP thread being its nesting level and its number in its team.
A peer is a world rank or a location's name; comm is an id of the file's communicators (0: none given).
An IRECV is where the receive completed; a COLL_COMPLETE names the call that started the operation.
Names are shown escaped, so that each event stays one line of fields (also in summary, comm, score
and variation): backslash as \\, tab as \t, newline as \n, carriage return as \r, other control
characters and each byte of invalid UTF-8 as \xHH (C1 controls as \u0080 to \u009f).
`,
}
