package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const usage = `usage: hmbtrace-go [-packages list] [-filter file] [-tiny] [-v] build|install|run|test|vet [go flags] [packages]
       go build -toolexec=hmbtrace-go [go flags] [packages]

hmbtrace-go runs the go command with itself as -toolexec program, which
adds a region (enter/leave probe) to every function of the packages named
by -packages (default: the main module), with no source change. The
program traces itself into HMB_OUTPUT when run; HMB_* variables control
the measurement as for any hmbtrace program.
`

// frontEnd runs `go <subcommand> -toolexec=<this program> args...`.
func frontEnd(args []string) (int, error) {
	fs := flag.NewFlagSet("hmbtrace-go", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	packages := fs.String("packages", "", "comma-separated import-path patterns to instrument (default: the main module)")
	filterFile := fs.String("filter", "", "a Score-P filter file: excluded functions get no probe (default: $HMB_FILTER_FILE)")
	tinyFuncs := fs.Bool("tiny", false, "also instrument the small functions the compiler would inline")
	verbose := fs.Bool("v", false, "say what is instrumented and what not")
	if err := fs.Parse(args); err != nil {
		fmt.Fprint(os.Stderr, usage)
		fs.SetOutput(os.Stderr)
		fs.PrintDefaults()
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2, nil
	}
	switch rest[0] {
	case "build", "install", "run", "test", "vet":
	default:
		fmt.Fprint(os.Stderr, usage)
		return 2, fmt.Errorf("%q is no go subcommand hmbtrace-go runs (build, install, run, test, vet)", rest[0])
	}
	toolexec := ""
	goFlags(rest[1:], func(arg, name, _ string) {
		if name == "toolexec" && toolexec == "" {
			toolexec = arg
		}
	})
	if toolexec != "" {
		return 2, fmt.Errorf("%s: hmbtrace-go sets -toolexec itself", toolexec)
	}
	if w := coverWarning(rest[1:]); w != "" {
		fmt.Fprintln(os.Stderr, w)
	}
	self, err := os.Executable()
	if err != nil {
		return 1, err
	}
	env := plainEnv()
	set := func(k, v string) { env = append(env, k+"="+v) }
	if *packages != "" {
		set(envPackages, *packages)
	}
	if *filterFile != "" {
		set(envFilter, *filterFile)
	}
	if *tinyFuncs {
		set(envTiny, "1")
	}
	if *verbose {
		set(envVerbose, "1")
	}
	flags, _ := json.Marshal(relevantFlags(rest[1:]))
	set(envBuildFlags, string(flags))
	// The state is computed here, once, with the settings in the
	// environment the go command and its tools get.
	dir, err := os.MkdirTemp("", "hmbtrace-go-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	statePath := filepath.Join(dir, "state.json")
	saved := os.Environ()
	setEnv(env)
	_, err = setupIn(chdirFlag(rest[1:]), statePath)
	setEnv(saved)
	if err != nil {
		return 1, err
	}
	set(envState, statePath)
	// -C must stay the first flag.
	args = rest[1:]
	goArgs := []string{rest[0]}
	if chdirFlag(args) != "" {
		n := 1
		if args[0] == "-C" || args[0] == "--C" {
			n = 2
		}
		goArgs, args = append(goArgs, args[:n]...), args[n:]
	}
	goArgs = append(append(goArgs, "-toolexec="+quoteField(self)), args...)
	cmd := exec.Command(goBinary(), goArgs...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// quoteField quotes a path for the go command's -toolexec, which it splits
// into fields at spaces outside quotes.
func quoteField(s string) string {
	if !strings.ContainsAny(s, " \t'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}

// setEnv makes env the process's environment.
func setEnv(env []string) {
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v)
		}
	}
}

// chdirFlag is the directory of a -C flag among the go command's flags
// (it must come first), "" if none.
func chdirFlag(args []string) string {
	if len(args) == 0 {
		return ""
	}
	switch a := args[0]; {
	case (a == "-C" || a == "--C") && len(args) > 1:
		return args[1]
	case strings.HasPrefix(a, "-C="):
		return a[len("-C="):]
	case strings.HasPrefix(a, "--C="):
		return a[len("--C="):]
	}
	return ""
}

// setupIn runs setup in directory dir ("" for the current one), where the
// go command will run with -C dir.
func setupIn(dir, statePath string) (*state, error) {
	if dir == "" {
		return setup(statePath)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := os.Chdir(dir); err != nil {
		return nil, err
	}
	defer os.Chdir(wd)
	return setup(statePath)
}

// coverWarning returns what to say of a go command's flags (args, after
// the subcommand) that ask for coverage, or "": the covered packages
// compile from the cover tool's copies of their files, which are the go
// command's own and not instrumented, so their functions get no regions
// (and a run that calls no other instrumented function writes no trace).
func coverWarning(args []string) string {
	cover := ""
	goFlags(args, func(arg, name, _ string) {
		switch name {
		case "cover", "coverpkg", "covermode", "coverprofile":
			if cover == "" {
				cover = arg
			}
		}
	})
	if cover == "" {
		return ""
	}
	return fmt.Sprintf("hmbtrace-go: %s: the packages it covers compile from the cover tool's copies of their files, "+
		"which hmbtrace-go does not instrument: their functions get no regions (build without -cover to trace them)", cover)
}
