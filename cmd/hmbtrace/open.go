package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// noteOut is where the commands say how they read what they were given
// (os.Stderr; tests replace it).
var noteOut io.Writer = os.Stderr

// withoutEvents says which commands read a run archive written with
// HMB_OUTPUT_EVENTS=none, whose ranks have their definitions and
// statistics but no events: what they print comes from the flat profiles,
// the exact communication matrices, the phase series and the buffer's
// statistics. Every other command, or view, needs the events.
const withoutEvents = "summary, comm (from the exact matrices), dump -locations, and dynamics of a run with a phase series (HMB_PHASE)"

// requireEvents fails, naming the command and what works instead, when
// any of files was read from an archive written without events.
func requireEvents(what string, files []*tracefile.File) error {
	for _, f := range files {
		if f.EventsNone {
			return fmt.Errorf("%s: %w; %s needs them; without events, use %s", archivePath(f.Path), tracefile.ErrEventsNone, what, withoutEvents)
		}
	}
	return nil
}

// archivePath returns the archive of a rank's path ARCHIVE#RANK.
func archivePath(rankPath string) string {
	if i := strings.LastIndexByte(rankPath, '#'); i > 0 {
		return rankPath[:i]
	}
	return rankPath
}

// openProcs resolves -procs and opens the files with that many workers.
func openProcs(paths []string, flagProcs int) ([]*tracefile.File, int, error) {
	procs, err := parallel.Procs(flagProcs)
	if err != nil {
		return nil, 0, usageError{"-procs: " + err.Error()}
	}
	files, err := openAllProcs(paths, procs)
	return files, procs, err
}

// source is one rank to open: a trace file, or a slot of an archive.
type source struct {
	path string
	a    *tracefile.Archive
	slot int
}

func (s source) open() (*tracefile.File, error) {
	if s.a != nil {
		return s.a.OpenRank(s.slot)
	}
	return tracefile.Open(s.path)
}

// openAllProcs opens the traces named by paths, at least one (else it is
// a usage error), with procs workers. A path is a trace file, a run archive
// (its ranks), one rank of an archive (ARCHIVE#RANK, as the tools name
// it), or a directory. A directory stands for the run archives (*.hmbrun,
// a run's groups) and the trace files (*.hmb) in it, the ranks of a run
// (HMB_OUTPUT), in the order of their run name and rank; they must be the
// ranks of one run (oneRun). The rank files an archive names for the ranks
// that did not write their slot are read as those ranks, not again. The
// files are opened (and their checksums verified) on the workers.
func openAllProcs(paths []string, procs int) ([]*tracefile.File, error) {
	if len(paths) == 0 {
		return nil, usageError{"want at least one trace file, run archive or directory"}
	}
	// The ranks to open, and the groups a directory or an archive makes:
	// they are put in run and rank order once their headers are read.
	var srcs []source
	type group struct {
		path       string
		first, end int // in srcs
	}
	var groups []group
	var archives []*tracefile.Archive
	// The files opened from an archive keep its file open; the archive
	// itself is not needed past the opening.
	defer func() {
		for _, a := range archives {
			a.Close()
		}
	}()
	for _, p := range paths {
		if a, slot, ok, err := archiveRank(p); ok || err != nil {
			if err != nil {
				return nil, err
			}
			archives = append(archives, a)
			srcs = append(srcs, source{a: a, slot: slot})
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		var in []source
		switch {
		case fi.IsDir():
			var as []*tracefile.Archive
			in, as, err = sourcesIn(p)
			archives = append(archives, as...)
		case tracefile.IsArchive(p):
			var a *tracefile.Archive
			if a, err = tracefile.OpenArchive(p); err == nil {
				archives = append(archives, a)
				in = slotsOf(a)
			}
		default:
			srcs = append(srcs, source{path: p})
			continue
		}
		if err != nil {
			return nil, err
		}
		groups = append(groups, group{p, len(srcs), len(srcs) + len(in)})
		srcs = append(srcs, in...)
	}
	if len(srcs) == 0 {
		for _, a := range archives {
			if a.ResultsOnly() {
				return nil, resultsOnlyError(a.Path)
			}
		}
	}
	files := make([]*tracefile.File, len(srcs))
	err := parallel.Do(procs, len(srcs), func(i int) error {
		f, err := srcs[i].open()
		files[i] = f
		return err
	})
	if err != nil {
		// Workers may have opened files past the one that failed.
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
		return nil, err
	}
	noteRankFiles(srcs, files)
	for _, d := range groups {
		ranks := files[d.first:d.end]
		sort.SliceStable(ranks, func(i, j int) bool {
			a, b := &ranks[i].Header, &ranks[j].Header
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			return a.Rank < b.Rank
		})
		if err := oneRun(d.path, ranks); err != nil {
			closeAll(files)
			return nil, err
		}
	}
	return files, nil
}

// archiveRank opens the archive of a path ARCHIVE#RANK and finds the
// rank's slot; ok is false when path is not of that form (or is a file of
// that name).
func archiveRank(path string) (a *tracefile.Archive, slot int, ok bool, err error) {
	i := strings.LastIndexByte(path, '#')
	if i <= 0 {
		return nil, 0, false, nil
	}
	rank, perr := strconv.Atoi(path[i+1:])
	if perr != nil || rank < 0 {
		return nil, 0, false, nil
	}
	if _, serr := os.Stat(path); serr == nil {
		return nil, 0, false, nil
	}
	if !tracefile.IsArchive(path[:i]) {
		return nil, 0, false, nil
	}
	a, err = tracefile.OpenArchive(path[:i])
	if err != nil {
		return nil, 0, true, err
	}
	for k, s := range a.Slots {
		if s.Rank == rank {
			return a, k, true, nil
		}
	}
	a.Close()
	if a.ResultsOnly() {
		return nil, 0, true, resultsOnlyError(path[:i])
	}
	first, last := a.Slots[0].Rank, a.Slots[len(a.Slots)-1].Rank
	return nil, 0, true, fmt.Errorf("%s: no rank %d in this archive (it holds ranks %d to %d of %d)", path[:i], rank, first, last, a.World)
}

// slotsOf lists an archive's ranks to open.
func slotsOf(a *tracefile.Archive) []source {
	out := make([]source, len(a.Slots))
	for i := range a.Slots {
		out[i] = source{a: a, slot: i}
	}
	return out
}

// sourcesIn lists the ranks in directory dir: the slots of its archives
// (a run's groups in group order, each group once), then its trace files
// but those an archive reads for a slot (moved, or left empty with the
// rank's file beside it). It returns the archives it opened.
func sourcesIn(dir string) ([]source, []*tracefile.Archive, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var archives []*tracefile.Archive
	fail := func(err error) ([]source, []*tracefile.Archive, error) {
		for _, a := range archives {
			a.Close()
		}
		return nil, nil, err
	}
	var hmb []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), tracefile.ArchiveExt):
			a, err := tracefile.OpenArchive(p)
			if err != nil {
				return fail(err)
			}
			archives = append(archives, a)
		case strings.HasSuffix(e.Name(), ".hmb"):
			hmb = append(hmb, p)
		}
	}
	if len(archives) == 0 && len(hmb) == 0 {
		return nil, nil, fmt.Errorf("%s: a directory with no trace files (*.hmb) or run archives (*.hmbrun) in it", dir)
	}
	sort.SliceStable(archives, func(i, j int) bool {
		if archives[i].Name != archives[j].Name {
			return archives[i].Name < archives[j].Name
		}
		return archives[i].Group < archives[j].Group
	})
	if err := checkGroups(dir, archives); err != nil {
		return fail(err)
	}
	var srcs []source
	read := map[string]bool{} // the rank files read for a slot
	for _, a := range archives {
		srcs = append(srcs, slotsOf(a)...)
		for i, s := range a.Slots {
			switch s.State {
			case tracefile.SlotMoved:
				read[filepath.Join(dir, s.Moved)] = true
			case tracefile.SlotEmpty:
				read[a.RankFile(i)] = true
			}
		}
	}
	for _, p := range hmb {
		if !read[p] {
			srcs = append(srcs, source{path: p})
		}
	}
	return srcs, archives, nil
}

// checkGroups checks that the archives of each run in a directory are its
// groups, each once, none missing, and its ranks all there.
func checkGroups(dir string, archives []*tracefile.Archive) error {
	for i := 0; i < len(archives); {
		j := i
		for j < len(archives) && archives[j].Name == archives[i].Name {
			j++
		}
		run := archives[i:j]
		if len(run) == 1 && run[0].ResultsOnly() {
			return resultsOnlyError(run[0].Path)
		}
		first, groups, ranks := run[0], run[0].Groups, 0
		for k, a := range run {
			switch {
			case a.Groups != groups || a.World != first.World:
				return fmt.Errorf("%s: %s and %s are of different runs of %q (%d ranks in %d files, %d in %d); name the archive to read",
					dir, filepath.Base(first.Path), filepath.Base(a.Path), a.Name, first.World, groups, a.World, a.Groups)
			case a.Group != k:
				missing := tracefile.ArchiveName(dir, a.Name, k, groups)
				if a.Group < k {
					return fmt.Errorf("%s: %s and %s both hold group %d of run %q", dir, filepath.Base(run[k-1].Path), filepath.Base(a.Path), a.Group, a.Name)
				}
				return fmt.Errorf("%s: run %q has %d archive files; group %d, %s, is missing", dir, a.Name, groups, k, filepath.Base(missing))
			}
			ranks += len(a.Slots)
		}
		if len(run) != groups {
			return fmt.Errorf("%s: run %q has %d archive files; group %d, %s, is missing", dir, first.Name, groups, len(run),
				filepath.Base(tracefile.ArchiveName(dir, first.Name, len(run), groups)))
		}
		if ranks != first.World {
			return fmt.Errorf("%s: the archive files of run %q hold %d ranks of its %d", dir, first.Name, ranks, first.World)
		}
		i = j
	}
	return nil
}

// noteRankFiles says once per archive which of its ranks were read from
// their own trace files beside it because they did not write their slots.
func noteRankFiles(srcs []source, files []*tracefile.File) {
	type note struct {
		ranks, names []string
	}
	notes := map[*tracefile.Archive]*note{}
	var order []*tracefile.Archive
	for i, s := range srcs {
		if s.a == nil || s.a.Slots[s.slot].State != tracefile.SlotEmpty {
			continue
		}
		n := notes[s.a]
		if n == nil {
			n = &note{}
			notes[s.a] = n
			order = append(order, s.a)
		}
		n.ranks = append(n.ranks, strconv.Itoa(s.a.Slots[s.slot].Rank))
		n.names = append(n.names, filepath.Base(files[i].Path))
	}
	for _, a := range order {
		n := notes[a]
		what := "rank " + n.ranks[0] + " did not write its slot (it died?); read from its trace file beside it"
		if len(n.ranks) > 1 {
			what = "ranks " + strings.Join(n.ranks, ", ") + " did not write their slots (they died?); read from their trace files beside it"
		}
		fmt.Fprintf(noteOut, "hmbtrace: %s: %s: %s\n", a.Path, what, strings.Join(n.names, ", "))
	}
}

// traceFilesIn lists the *.hmb files of directory dir.
func traceFilesIn(dir string) ([]string, error) {
	return filesIn(dir, ".hmb")
}

// filesIn lists the files of directory dir whose names end in ext.
func filesIn(dir, ext string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ext) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, nil
}

func closeAll(files []*tracefile.File) {
	for _, f := range files {
		f.Close()
	}
}
