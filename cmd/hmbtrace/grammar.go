package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// This file holds the grammar every command shares: flags anywhere among
// the files, "--" to end them, -h and "hmbtrace help COMMAND" for a
// command's usage, and "hmbtrace version".

// parseFlags parses a command's flags, which may come before, between or
// after its files ("summary hmb-out -width 20" as "summary -width 20
// hmb-out"); fs.Args() are then the files, in their order. "--" ends the
// flags: what follows is a file even if it starts with '-'. A flag that
// takes a value takes the next argument as it is, also one that starts with
// '-' ("-title -x-"), as Go's flag package does. -h anywhere returns a
// helpRequest holding the command's usage and flags.
func parseFlags(fs *flag.FlagSet, args []string) error {
	flags, files := splitFlags(fs, args)
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{commandHelp(fs)}
		}
		return usageError{err.Error()}
	}
	// Then the files after a "--", so that fs.Args() holds exactly them.
	return fs.Parse(append([]string{"--"}, files...))
}

// splitFlags separates args into the flags, each with its value where it
// takes one, and the files, keeping the order of each.
func splitFlags(fs *flag.FlagSet, args []string) (flags, files []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(files, args[i+1:]...)
		case len(a) < 2 || a[0] != '-':
			files = append(files, a) // "-" is a file too, as for flag
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBool(f) || i+1 == len(args) {
			// An unknown flag is left to fs.Parse to name; a missing
			// value too.
			continue
		}
		i++
		flags = append(flags, args[i])
	}
	return flags, files
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// helpRequest is -h: run prints its text to the standard output and exits 0.
type helpRequest struct{ text string }

func (h helpRequest) Error() string { return "help requested" }
func (h helpRequest) Unwrap() error { return flag.ErrHelp }

// commandHelp is a command's -h: its usage line, what more it says, and
// its flags with their defaults.
func commandHelp(fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: hmbtrace %s\n", usageOf[fs.Name()])
	b.WriteString(helpOf[fs.Name()])
	defer fs.SetOutput(fs.Output())
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

// help runs "hmbtrace help [COMMAND]": the general usage, or the command's
// as "hmbtrace COMMAND -h" prints it.
func help(args []string, out, errOut io.Writer) int {
	if len(args) == 0 {
		usage(out)
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintf(errOut, "hmbtrace help: want one command, not %d words: %q\n", len(args), args)
		return 2
	}
	for _, c := range commands {
		if c.name == args[0] {
			var h helpRequest
			if err := c.run([]string{"-h"}, out); !errors.As(err, &h) {
				// Every command parses its flags first: -h never
				// gets further.
				fmt.Fprintf(errOut, "hmbtrace help %s: %v\n", c.name, err)
				return 1
			}
			fmt.Fprint(out, h.text)
			return 0
		}
	}
	for _, u := range builtinUsage {
		if name, _, _ := strings.Cut(u, " "); name == args[0] {
			fmt.Fprintf(out, "usage: hmbtrace %s\n", u)
			return 0
		}
	}
	fmt.Fprintf(errOut, "hmbtrace help: unknown command %q; the commands: %s\n", args[0], commandNames())
	return 2
}

// builtinUsage are the usage lines of the words run itself answers.
var builtinUsage = []string{
	"help [COMMAND]       the general usage, or a command's usage and flags (as COMMAND -h prints them)",
	"version              the module version and the commit it was built from (also --version)",
}

// commandNames lists the commands, for an unknown one's message.
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// version prints "hmbtrace VERSION" with the commit it was built from:
// the module version ("(devel)" when built in a checkout) and the
// vcs.revision, vcs.time and vcs.modified settings the go command stamps.
func version(out io.Writer) int {
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(out, versionText(info, ok))
	return 0
}

func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "hmbtrace: no build information (not built with module support)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(unknown version)" // a test binary
	}
	s := "hmbtrace " + v
	var rev, when string
	modified := false
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			when = kv.Value
		case "vcs.modified":
			modified = kv.Value == "true"
		}
	}
	if rev != "" {
		s += ", commit " + rev
		if when != "" {
			s += " (" + when + ")"
		}
		if modified {
			s += ", with uncommitted changes"
		}
	} else if v == "(devel)" {
		s += ", commit unknown (built without VCS information)"
	}
	if info.GoVersion != "" {
		s += ", " + info.GoVersion
	}
	return s
}
