package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hmbtrace/hmbtrace/export/chrome"
	"github.com/hmbtrace/hmbtrace/export/cube"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/convert"
	"github.com/hmbtrace/hmbtrace/export/pprof"
	"github.com/hmbtrace/hmbtrace/internal/tempfile"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// runExport writes trace files in the format of another tool: an OTF2
// archive (a new directory), a pprof profile, Chrome/Perfetto JSON or a
// CUBE4 profile (a file, replaced only once complete).
func runExport(args []string, out io.Writer) error {
	fs := newFlags("export")
	format := fs.String("format", "", "otf2, pprof, chrome or cube")
	output := fs.String("o", "", "output: a new directory for otf2, a file for pprof, chrome and cube (.cubex)")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *format == "":
		return usageError{"want -format otf2, pprof, chrome or cube"}
	case *format != "otf2" && *format != "pprof" && *format != "chrome" && *format != "cube":
		return usageError{fmt.Sprintf("unknown format %q: want otf2, pprof, chrome or cube", *format)}
	case *output == "":
		return usageError{"want -o OUT"}
	}
	files, procs, err := openProcs(fs.Args(), *procsOpt)
	if err != nil {
		return err
	}
	defer closeAll(files)
	if err := requireEvents("hmbtrace export", files); err != nil {
		return err
	}
	switch *format {
	case "otf2":
		st, err := convert.ExportProcs(*output, files, otf2.Options{Creator: "hmbtrace export"}, procs)
		if err != nil {
			return oneLine(err)
		}
		fmt.Fprintf(out, "wrote %s: %s, %s\n", filepath.Join(*output, "traces.otf2"), units.Plural(st.Locations, "location", "locations"), units.Plural(int(st.Events), "event", "events"))
		if st.ClosedAtEnd > 0 {
			fmt.Fprintf(out, "note: %s still open at the end of a location ended at its last event\n", units.Plural(int(st.ClosedAtEnd), "region", "regions"))
		}
		if st.MessagesWithoutPeer > 0 {
			fmt.Fprintf(out, "note: left out %s whose peer is not in these files (or not in its communicator)\n", units.Plural(int(st.MessagesWithoutPeer), "message", "messages"))
		}
		if st.CollectivesLeftOut > 0 {
			fmt.Fprintf(out, "note: left out %s: their MPI region was shed by the buffer or is not a collective, or their communicator is not defined\n", units.Plural(int(st.CollectivesLeftOut), "collective operation", "collective operations"))
		}
		if st.CommMembersNotExported > 0 || st.RootsNotExported > 0 {
			fmt.Fprintf(out, "note: ranks not in these files are left out of %s and %s\n", units.Plural(int(st.CommMembersNotExported), "communicator membership", "communicator memberships"), units.Plural(int(st.RootsNotExported), "collective's root", "collectives' roots"))
		}
		for _, c := range st.InvalidComms {
			fmt.Fprintf(out, "note: left out %s\n", c)
		}
		if st.TasksWithoutTeam > 0 {
			fmt.Fprintf(out, "note: %s written without a thread team: no parallel region of the file encloses the task unambiguously, or its thread's own implicit task is missing\n", units.Plural(int(st.TasksWithoutTeam), "OpenMP implicit task", "OpenMP implicit tasks"))
		}
		if st.TaskEventsLeftOut > 0 {
			fmt.Fprintf(out, "note: %s left out: OTF2 names a task by its thread team, and none is known for these OpenMP tasks, or a Go lane's task number exceeds OTF2's 32 bits\n", units.Plural(int(st.TaskEventsLeftOut), "task event", "task events"))
		}
		if st.TasksWithoutCreation > 0 {
			fmt.Fprintf(out, "note: %s no ThreadTaskCreate: the buffer shed the creation; such a task is named after the first thread that runs it\n", units.Plural(int(st.TasksWithoutCreation), "OpenMP task has", "OpenMP tasks have"))
		}
		if st.UndefinedComms > 0 {
			fmt.Fprintf(out, "note: left out the events of %s that records name but their file does not define\n", units.Plural(int(st.UndefinedComms), "communicator id", "communicator ids"))
		}
		if n := st.Marks + st.Parameters + st.ChannelMessages; n > 0 {
			fmt.Fprintf(out, "annotations: %d marks (values of the parameter %q), %d region parameters, %d channel message ends (MpiSend/MpiRecv on %s)\n",
				st.Marks, convert.MarkParameter, st.Parameters, st.ChannelMessages, convert.CommName)
		}
		if st.AnnotationsLeftOut > 0 {
			fmt.Fprintf(out, "note: left out %s: their file does not define what they name (a trace recovered from a mapping)\n", units.Plural(int(st.AnnotationsLeftOut), "mark, parameter or channel message", "marks, parameters or channel messages"))
		}
		if st.RmaLeftOut > 0 {
			fmt.Fprintf(out, "note: left out %s: their window, target or group is not in these files, or their type is not OTF2's\n", units.Plural(int(st.RmaLeftOut), "one-sided communication record", "one-sided communication records"))
		}
		return nil
	case "pprof":
		err = writeFile(*output, func(w io.Writer) error { return pprof.ExportProcs(w, files, procs) })
	case "cube":
		var p *cube.Profile
		if p, err = cube.FromFilesAnalysed(files, procs); err != nil {
			return oneLine(err)
		}
		if err = writeFile(*output, p.Write); err != nil {
			return oneLine(err)
		}
		fmt.Fprintf(out, "wrote %s\n", *output)
		for _, a := range p.Attrs {
			if strings.HasPrefix(a[0], cube.NoteAttr) {
				fmt.Fprintf(out, "note: %s\n", a[1])
			}
		}
		return nil
	default:
		err = writeFile(*output, func(w io.Writer) error { return chrome.ExportProcs(w, files, procs) })
	}
	if err != nil {
		return oneLine(err)
	}
	fmt.Fprintf(out, "wrote %s\n", *output)
	if fi, err := os.Stat(*output); err == nil && *format == "chrome" && fi.Size() > chromeLarge {
		fmt.Fprintf(out, "note: %s of JSON: chrome://tracing loads a few hundred MB at most and the Perfetto UI about 1 GB in the browser; open it with Perfetto's trace_processor --httpd, or export OTF2 for Vampir\n",
			units.Size(float64(fi.Size())))
	}
	return nil
}

// chromeLarge is the JSON size from which export says that the viewers
// will not load it: millions of events make gigabytes (3.3·10⁷ events,
// 2.6 GB), and a browser fails on them without saying why.
var chromeLarge int64 = 1 << 30

// writeFile writes path through a temporary file in its directory, renamed
// over path only once write succeeded: a failure leaves nothing behind.
func writeFile(path string, write func(io.Writer) error) (err error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	tmp, err := tempfile.Create(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Discard()
		}
	}()
	w := bufio.NewWriter(tmp)
	if err := write(w); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	name, err := tmp.Finish()
	if err != nil {
		return err
	}
	if err = os.Rename(name, path); err != nil {
		os.Remove(name)
	}
	return err
}

// oneLine keeps an error on one line of the terminal.
func oneLine(err error) error {
	if s := err.Error(); strings.Contains(s, "\n") {
		return errors.New(strings.ReplaceAll(s, "\n", "; "))
	}
	return err
}
