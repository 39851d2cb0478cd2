package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runRecover(args []string, out io.Writer) error {
	fs := newFlags("recover")
	force := fs.Bool("force", false, "read the mapping of a process that still runs, as it stands (it is kept)")
	outDir := fs.String("o", "", "directory for the trace files (default: the one the process would have written to, HMB_OUTPUT)")
	keep := fs.Bool("keep", false, "keep the mapping after its trace is written (it holds the buffer's memory on tmpfs until removed)")
	anyOwner := fs.Bool("any-owner", false, "also recover mappings other users own (needs -o: their own output directory is not trusted)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *anyOwner && *outDir == "" {
		return errors.New("recover -any-owner needs -o DIR: the output directory another user's mapping names is not trusted")
	}
	paths, err := mappingPaths(fs.Args())
	if err != nil {
		return err
	}
	var errs []error
	skipped := 0
	for _, p := range paths {
		if !*anyOwner && !ownMapping(p.path) {
			// Another user's mapping, planted or not, in a shared
			// directory: its name and output directory are theirs.
			fmt.Fprintf(out, "%s: skipped: owned by another user (recover -any-owner -o DIR reads it)\n", p.path)
			skipped++
			continue
		}
		err := recoverOne(out, p.path, *outDir, *force, *keep)
		if errors.Is(err, tracefile.ErrAlive) && p.found {
			// Found in a directory, not named: say so and go on.
			fmt.Fprintf(out, "%s: skipped: %v\n", p.path, err)
			skipped++
			continue
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if skipped > 0 {
		errs = append(errs, fmt.Errorf("recover: skipped %d of %d mappings (see above)", skipped, len(paths)))
	}
	return errors.Join(errs...)
}

// ownMapping reports whether the file at path belongs to the user who runs
// recover. A file whose owner cannot be told is not.
func ownMapping(path string) bool {
	uid, ok := fileOwner(path)
	return ok && uid == os.Getuid()
}

// checkTraceName refuses a trace name from a mapping that could lead the
// written file out of its directory or hide it: a path separator, "..",
// control characters, or nothing at all.
func checkTraceName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("trace name %q is not a file name", name)
	case strings.ContainsAny(name, "/\\"):
		return fmt.Errorf("trace name %q holds a path separator", name)
	case strings.Contains(name, ".."):
		return fmt.Errorf("trace name %q holds \"..\"", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("trace name %q holds a control character", name)
		}
	}
	return nil
}

// mappingPath is a mapping file to recover; found says it was found in a
// directory rather than named.
type mappingPath struct {
	path  string
	found bool
}

// mappingPaths expands the arguments: a directory stands for the mapping
// files in it; no argument for those in HMB_SURVIVE_DIR or /dev/shm.
func mappingPaths(args []string) ([]mappingPath, error) {
	if len(args) == 0 && !survive.Supported && os.Getenv("HMB_SURVIVE_DIR") == "" {
		// Processes leave mappings on Linux only; here a mapping was
		// copied from there, and no default place holds it.
		return nil, fmt.Errorf("name the mapping files or their directory: processes leave them on Linux, in %s (this is %s)", survive.DefaultDir, runtime.GOOS)
	}
	if len(args) == 0 {
		dir := os.Getenv("HMB_SURVIVE_DIR")
		if dir == "" {
			dir = survive.DefaultDir
		}
		args = []string{dir}
	}
	var paths []mappingPath
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if !tracefile.IsMapping(a) {
				return nil, fmt.Errorf("%s: not a mapping an hmbtrace process left (HMB_SURVIVE=1)", a)
			}
			paths = append(paths, mappingPath{a, false})
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "hmbtrace-*.shm"))
		if err != nil {
			return nil, err
		}
		n := 0
		for _, p := range found {
			if tracefile.IsMapping(p) {
				paths = append(paths, mappingPath{p, true})
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no mapping of an hmbtrace process (hmbtrace-*.shm) in it", a)
		}
	}
	return paths, nil
}

// recoverOne makes the trace file of one mapping and says what it holds.
func recoverOne(out io.Writer, path, outDir string, force, keep bool) error {
	r, err := tracefile.Recover(path, force)
	if err != nil {
		return err
	}
	h := &r.Trace.Header
	if err := checkTraceName(h.Name); err != nil {
		return fmt.Errorf("%s: refused: %v", path, err)
	}
	dir := outDir
	if dir == "" {
		dir = r.Output
	}
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	want := filepath.Join(dir, fmt.Sprintf("%s.%d.hmb", h.Name, h.Rank))
	if filepath.Dir(want) != filepath.Clean(dir) {
		return fmt.Errorf("%s: refused: trace name %q leads out of %s", path, h.Name, dir)
	}
	pl, err := r.Write(want)
	if err != nil {
		return fmt.Errorf("%s: writing %s: %v", path, want, err)
	}
	var notes []string
	if r.Unaccounted > 0 {
		notes = append(notes, fmt.Sprintf("%s recorded whose fate the mapping does not say (the trace counts what it accounts for)", units.Plural(int(r.Unaccounted), "event", "events")))
	}
	if r.Cut > 0 {
		notes = append(notes, fmt.Sprintf("%s cut at the last complete record", units.Plural(int(r.Cut), "bin", "bins")))
	}
	if r.Orphans > 0 {
		notes = append(notes, fmt.Sprintf("%s of levels without an entry left out", units.Plural(int(r.Orphans), "bin", "bins")))
	}
	if r.LostDefs > 0 || r.LostLevels > 0 {
		notes = append(notes, fmt.Sprintf("%s and %s did not fit the mapping", units.Plural(int(r.LostDefs), "definition", "definitions"), units.Plural(int(r.LostLevels), "level", "levels")))
	}
	fmt.Fprintf(out, "%s: pid %d %s\n", path, r.PID, r.Cause)
	fmt.Fprintf(out, "  %s: %s, %s, %s in %s", pl.Path, units.Plural(len(r.Trace.Locations), "location", "locations"), units.Plural(len(r.Trace.Regions), "region", "regions"),
		units.Plural(int(r.Records), "record", "records"), units.Plural(len(r.Bins), "bin", "bins"))
	if len(notes) > 0 {
		fmt.Fprintf(out, "; %s", strings.Join(notes, "; "))
	}
	fmt.Fprintln(out)
	if !keep && !r.Alive {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("%s: the trace is written, the mapping stays: %v", path, err)
		}
	}
	return nil
}
