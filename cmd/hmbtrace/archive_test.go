package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// writeArchives writes the ranks of files, one run in rank order, into run
// archives in dir as the ranks of an MPI run do: groups of perFile ranks,
// each group's file created by its leader and filled by its ranks. With
// eventsNone each rank's trace goes in without its bins.
func writeArchives(t testing.TB, dir string, files []*tracefile.File, perFile int, eventsNone bool) []string {
	t.Helper()
	return writeArchivesResults(t, dir, files, perFile, eventsNone, nil)
}

// writeArchivesResults is writeArchives with results (tracefile.AppendResult
// sections) in group 0's archive after the definitions.
func writeArchivesResults(t testing.TB, dir string, files []*tracefile.File, perFile int, eventsNone bool, results []byte) []string {
	t.Helper()
	groups := (len(files) + perFile - 1) / perFile
	var paths []string
	for g := 0; g < groups; g++ {
		ranks := files[g*perFile : min(len(files), (g+1)*perFile)]
		plan := tracefile.ArchivePlan{Name: files[0].Header.Name, World: len(files), Group: g, Groups: groups,
			EventsNone: eventsNone, Start: time.Now().Add(-time.Hour)}
		if g == 0 {
			// The definitions the ranks unify at the collective end.
			defs, err := tracefile.UnifyDefinitions(files).MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			plan.Results = append(tracefile.AppendResult(nil, tracefile.ResultDefinitions, defs), results...)
		}
		var traces [][]byte
		for _, f := range ranks {
			var b []byte
			var err error
			if eventsNone {
				var buf bytes.Buffer
				err = tracefile.Write(&buf, &f.Trace, func(func(tracefile.Bin) error) error { return nil })
				b = buf.Bytes()
			} else {
				b, err = os.ReadFile(f.Path)
			}
			if err != nil {
				t.Fatal(err)
			}
			traces = append(traces, b)
			plan.Ranks = append(plan.Ranks, f.Header.Rank)
			plan.Capacity = append(plan.Capacity, tracefile.SlotCapacity(int64(len(b))))
		}
		path := tracefile.ArchiveName(dir, plan.Name, g, groups)
		offs, err := tracefile.CreateArchive(path, plan)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range traces {
			err := tracefile.WriteSlot(path, offs[i], plan.Capacity[i], plan.Ranks[i], func(w io.Writer) error {
				_, err := w.Write(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, path)
	}
	return paths
}

// outputs runs a command and returns what it printed and every file it
// wrote in out (by path relative to out; gzip files decompressed),
// failing the test if the command fails.
func outputs(t *testing.T, args []string, out string) map[string][]byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if rc := run(args, &stdout, &stderr); rc != 0 {
		t.Fatalf("%v: exit %d: %s", args, rc, stderr.String())
	}
	res := map[string][]byte{"stdout": stdout.Bytes()}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) == "traces.otf2" { // the anchor holds a random trace id
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		rel, _ := filepath.Rel(out, p)
		res[rel] = b
		return nil
	})
	return res
}

// archiveCommands are the commands (and their output options, OUT the
// directory they write in) whose output must not depend on how the run
// was stored.
var archiveCommands = [][]string{
	{"summary"},
	{"summary", "-tsv"},
	{"comm"},
	{"comm", "-tsv", "-matrix", "OUT/matrix.svg", "-diagram", "OUT/diagram.svg"},
	{"score", "-g", "OUT/filter.txt"},
	{"variation"},
	{"variation", "-tsv", "-svg", "OUT/v.svg"},
	{"dynamics", "-top", "0"},
	{"dynamics", "-tsv", "-svg", "OUT/d.svg"},
	{"report", "-o", "OUT/report.html"},
	{"export", "-format", "otf2", "-o", "OUT/otf2"},
	{"export", "-format", "pprof", "-o", "OUT/p.pprof"},
	{"export", "-format", "chrome", "-o", "OUT/t.json"},
}

// writtenAt matches the time a report says it was written.
var writtenAt = regexp.MustCompile(`written \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)

// TestArchiveSameOutput writes one run as rank files and as a run archive
// (one file, and three groups' files) and checks that every command prints
// and writes the same from each, the ranks' names aside. Each archive is
// compared with a copy of the rank files in a directory named so that a
// rank's path has the same length both ways (rfile/ranks.3.hmb,
// ar/ranks.hmbrun#3), so that the names can be swapped even in binary
// outputs.
func TestArchiveSameOutput(t *testing.T) {
	root := t.TempDir()
	const n, perGroup = 5, 2
	dir := func(name string) string {
		d := filepath.Join(root, name)
		os.Mkdir(d, 0o755)
		return d
	}
	rankDir, rankDir2, archDir, groupDir := dir("rfile"), dir("rfile12"), dir("ar"), dir("gr")
	files := tracetest.Ranks(t, rankDir, n, 2, 40, 0)
	for _, f := range files {
		b, _ := os.ReadFile(f.Path)
		os.WriteFile(filepath.Join(rankDir2, filepath.Base(f.Path)), b, 0o644)
	}
	writeArchives(t, archDir, files, n, false)
	writeArchives(t, groupDir, files, perGroup, false)
	archive := filepath.Join(archDir, "ranks.hmbrun")
	type input struct {
		path, ref string             // what is read, and the rank files to compare with
		rankPath  func(r int) string // the path of rank r as read from path
	}
	inputs := []input{
		{archDir, rankDir, func(r int) string { return fmt.Sprintf("%s#%d", archive, r) }},
		{archive, rankDir, func(r int) string { return fmt.Sprintf("%s#%d", archive, r) }},
		{groupDir, rankDir2, func(r int) string {
			return fmt.Sprintf("%s#%d", tracefile.ArchiveName(groupDir, "ranks", r/perGroup, (n+perGroup-1)/perGroup), r)
		}},
	}
	// rename maps the ranks' paths read from in to the rank files', longest
	// first (#1 is a prefix of #10), full paths before base names.
	rename := func(in input, b []byte) []byte {
		for r := n - 1; r >= 0; r-- {
			rp, fp := in.rankPath(r), filepath.Join(in.ref, fmt.Sprintf("ranks.%d.hmb", r))
			b = bytes.ReplaceAll(b, []byte(rp), []byte(fp))
			b = bytes.ReplaceAll(b, []byte(filepath.Base(rp)), []byte(filepath.Base(fp)))
		}
		return bytes.ReplaceAll(b, []byte(filepath.Dir(in.rankPath(0))), []byte(in.ref))
	}
	cmds := append(archiveCommands, []string{"dump", "RANK1"}, []string{"dump", "-locations", "RANK1"}, []string{"dump", "-definitions"})
	for _, c := range cmds {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			// read runs the command on in (a rank's path, for dump).
			read := func(in string, rank1 string) map[string][]byte {
				out := t.TempDir()
				var args []string
				for _, a := range c {
					a = strings.ReplaceAll(a, "OUT", out)
					if a == "RANK1" {
						a = rank1
					}
					args = append(args, a)
				}
				if c[0] != "dump" || c[1] == "-definitions" {
					args = append(args, in)
				}
				res := outputs(t, args, out)
				for k, v := range res {
					v = bytes.ReplaceAll(v, []byte(out), []byte("OUT"))
					res[k] = writtenAt.ReplaceAll(v, []byte("written TIME"))
				}
				return res
			}
			for _, in := range inputs {
				want := read(in.ref, filepath.Join(in.ref, "ranks.1.hmb"))
				if len(want["stdout"]) == 0 && len(want) == 1 {
					t.Fatalf("%v printed nothing", c)
				}
				got := read(in.path, in.rankPath(1))
				if len(got) != len(want) {
					t.Errorf("%s: %d outputs, from rank files %d", in.path, len(got), len(want))
				}
				for k, w := range want {
					if g, ok := got[k]; !ok || !bytes.Equal(rename(in, g), w) {
						t.Errorf("%s: %s differs from the rank files' (%d vs %d bytes): %s", in.path, k, len(g), len(w), firstDiff(w, rename(in, g)))
					}
				}
			}
		})
	}
}

// TestArchiveEventsNone reads a run written with HMB_OUTPUT_EVENTS=none:
// summary and comm print what they print from the rank files; the
// commands that need events say so, and which work without them.
func TestArchiveEventsNone(t *testing.T) {
	rankDir, archDir := t.TempDir(), t.TempDir()
	files := tracetest.Ranks(t, rankDir, 3, 2, 30, 0)
	path := writeArchives(t, archDir, files, 3, true)[0]
	for _, c := range [][]string{{"summary", "-tsv"}, {"comm", "-tsv"}} {
		a := outputs(t, append(c, archDir), t.TempDir())["stdout"]
		r := outputs(t, append(c, rankDir), t.TempDir())["stdout"]
		if !bytes.Equal(a, r) || len(a) == 0 {
			t.Errorf("%v: differs without events:\n%s\nfrom rank files:\n%s", c, a, r)
		}
	}
	// The summary's buffer story is that of the rank files.
	a := outputs(t, []string{"summary", archDir}, t.TempDir())["stdout"]
	r := outputs(t, []string{"summary", rankDir}, t.TempDir())["stdout"]
	for r := 2; r >= 0; r-- {
		a = bytes.ReplaceAll(a, []byte(fmt.Sprintf("%s#%d", path, r)), []byte(fmt.Sprintf("%s/ranks.%d.hmb", rankDir, r)))
	}
	// but for the bins, which the archive does not hold.
	al, rl := strings.Split(string(a), "\n"), strings.Split(string(r), "\n")
	if len(al) != len(rl) {
		t.Fatalf("summary without events: %d lines, from rank files %d", len(al), len(rl))
	}
	for i := range al {
		if al[i] != rl[i] && !(strings.Contains(al[i], "events kept") && strings.HasSuffix(al[i], ", not written: the run kept its results only (HMB_OUTPUT_EVENTS=none)")) {
			t.Errorf("summary without events differs: %q, from rank files %q", al[i], rl[i])
		}
	}
	// comm of a run whose buffers shed messages tells the exact
	// matrices without events, and no send as shed: there are no events
	// to have shed them from.
	shedDir, shedArch := t.TempDir(), t.TempDir()
	shed := tracetest.Ranks(t, shedDir, 3, 2, 400, 16<<10)
	writeArchives(t, shedArch, shed, 3, true)
	a = outputs(t, []string{"comm", shedArch}, t.TempDir())["stdout"]
	r = outputs(t, []string{"comm", shedDir}, t.TempDir())["stdout"]
	if !bytes.Contains(r, []byte("shed")) {
		t.Fatalf("the test's run shed no messages:\n%s", r)
	}
	if bytes.Contains(a, []byte("shed")) {
		t.Errorf("comm without events counts sends as shed:\n%s", a)
	}
	a = outputs(t, []string{"comm", "-tsv", shedArch}, t.TempDir())["stdout"]
	r = outputs(t, []string{"comm", "-tsv", shedDir}, t.TempDir())["stdout"]
	if !bytes.Equal(a, r) {
		t.Errorf("comm -tsv without events:\n%s\nfrom rank files:\n%s", a, r)
	}
	outputs(t, []string{"dump", "-locations", path + "#2"}, t.TempDir())
	for _, c := range archiveCommands {
		if c[0] == "summary" || c[0] == "comm" {
			continue
		}
		out := t.TempDir()
		var args []string
		for _, a := range c {
			args = append(args, strings.ReplaceAll(a, "OUT", out))
		}
		for _, args := range [][]string{append(args, archDir), {"dump", path + "#0"}} {
			var stdout, stderr bytes.Buffer
			rc := run(args, &stdout, &stderr)
			want := path + ": the archive was written with HMB_OUTPUT_EVENTS=none: it holds no events; hmbtrace " + args[0]
			if rc != 1 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "without events, use "+withoutEvents) {
				t.Errorf("%v: exit %d, %q; want the events-none error", args, rc, stderr.String())
			}
		}
	}
}

// TestArchiveSlots reads archives whose ranks did not all write their
// slots: a moved rank (its file beside, read once), a rank that died with
// and without its rank file beside the archive; and directories of group
// files with one missing or twice.
func TestArchiveSlots(t *testing.T) {
	rankDir := t.TempDir()
	files := tracetest.Ranks(t, rankDir, 4, 1, 200, 0)
	want := outputs(t, []string{"summary", "-tsv", rankDir}, t.TempDir())["stdout"]
	dir := t.TempDir()
	plan := tracefile.ArchivePlan{Name: "ranks", World: 4, Groups: 1, Ranks: []int{0, 1, 2, 3}}
	var traces [][]byte
	for _, f := range files {
		b, _ := os.ReadFile(f.Path)
		traces = append(traces, b)
		plan.Capacity = append(plan.Capacity, tracefile.SlotCapacity(int64(len(b))))
	}
	plan.Capacity[1] = 4096 // too small
	path := tracefile.ArchiveName(dir, "ranks", 0, 1)
	offs, err := tracefile.CreateArchive(path, plan)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []int{0, 1, 3} { // rank 2 dies
		err := tracefile.WriteSlot(path, offs[r], plan.Capacity[r], r, func(w io.Writer) error { _, err := w.Write(traces[r]); return err })
		if r == 1 {
			if err == nil {
				t.Fatal("rank 1's trace fits 4096 bytes")
			}
			os.WriteFile(filepath.Join(dir, "ranks.1.pid7.hmb"), traces[1], 0o644)
			err = tracefile.MarkSlotMoved(path, offs[1], 1, "ranks.1.pid7.hmb")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"summary", "-tsv", dir}, &stdout, &stderr); rc != 1 ||
		!strings.Contains(stderr.String(), path+": rank 2: slot empty: the process did not write its trace (it died, or was killed, after the collective end?); no trace file ranks.2.hmb beside it (with HMB_SURVIVE=1, hmbtrace recover -o "+dir+" writes it from the rank's mapping)") {
		t.Fatalf("rank 2 dead: exit %d, %s", rc, stderr.String())
	}
	os.WriteFile(filepath.Join(dir, "ranks.2.hmb"), traces[2], 0o644)
	var notes bytes.Buffer
	noteOut = &notes
	defer func() { noteOut = os.Stderr }()
	for _, in := range []string{dir, path} {
		notes.Reset()
		if got := outputs(t, []string{"summary", "-tsv", in}, t.TempDir())["stdout"]; !bytes.Equal(got, want) {
			t.Errorf("%s: summary differs from the rank files':\n%s\nwant\n%s", in, got, want)
		}
		if w := "hmbtrace: " + path + ": rank 2 did not write its slot (it died?); read from its trace file beside it: ranks.2.hmb\n"; notes.String() != w {
			t.Errorf("note %q, want %q", notes.String(), w)
		}
	}
	// One rank of the archive, as dump names it; a rank it does not hold.
	if got := outputs(t, []string{"dump", "-locations", path + "#1"}, t.TempDir())["stdout"]; !bytes.Equal(got, outputs(t, []string{"dump", "-locations", files[1].Path}, t.TempDir())["stdout"]) {
		t.Errorf("dump of the moved rank 1 differs")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dump", path + "#9"}, path + ": no rank 9 in this archive (it holds ranks 0 to 3 of 4)"},
		{[]string{"dump", path}, path + " is a run archive of 4 ranks; dump takes one rank of it, e.g. " + path + "#0"},
		{[]string{"dump", dir}, dir + " is a directory; dump takes one trace file, or one rank of a run archive, e.g. " + path + "#0"},
	} {
		var stdout, stderr bytes.Buffer
		if rc := run(c.args, &stdout, &stderr); rc != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, rc, stderr.String(), c.want)
		}
	}

	// Group files: one missing, one twice (another run's), rank files of
	// another run beside them.
	gdir := t.TempDir()
	paths := writeArchives(t, gdir, files, 2, false)
	if got := outputs(t, []string{"summary", "-tsv", gdir}, t.TempDir())["stdout"]; !bytes.Equal(got, want) {
		t.Errorf("two groups: summary differs")
	}
	os.Rename(paths[1], paths[1]+".away")
	stderr.Reset()
	if rc := run([]string{"summary", gdir}, &stdout, &stderr); rc != 1 || !strings.Contains(stderr.String(), gdir+`: run "ranks" has 2 archive files; group 1, ranks.1.hmbrun, is missing`) {
		t.Errorf("group missing: exit %d, %s", rc, stderr.String())
	}
	os.Rename(paths[1]+".away", paths[1])
	b, _ := os.ReadFile(files[0].Path)
	os.WriteFile(filepath.Join(gdir, "ranks.0.hmb"), b, 0o644)
	stderr.Reset()
	if rc := run([]string{"summary", gdir}, &stdout, &stderr); rc != 1 || !strings.Contains(stderr.String(), "both hold rank 0") {
		t.Errorf("a rank file and a slot of rank 0: exit %d, %s", rc, stderr.String())
	}
}

// summary -insitu of an archive whose results' buffer story left out the
// events of the current bins (no bin counted, the counts unbalanced: made
// before makeProfile read the trace in memory) tells the buffers from the
// ranks' files and says so; of an archive of results only it keeps the
// results' story, which says the events were not written.
func TestArchiveInSituStaleBuffers(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 3, 1, 30, 0)
	p := summary.Reduce(files)
	fromFiles := p.Buffer
	// What the ranks reduced before: only sealed bins' records kept, so
	// none in these short runs, and every rank unbalanced.
	p.Buffer.Bins, p.Buffer.Bytes, p.Buffer.Kept = 0, 0, 0
	p.Buffer.KeptByClass = [tracefile.NumClasses]uint64{}
	p.Buffer.Unbalanced = summary.RankSet{{First: 0, Last: 2}}
	stale, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeArchivesResults(t, dir, files, 3, false, tracefile.AppendResult(nil, tracefile.ResultRunProfile, stale))
	var notes bytes.Buffer
	noteOut = &notes
	defer func() { noteOut = os.Stderr }()
	got := string(outputs(t, []string{"summary", "-insitu", dir}, t.TempDir())["stdout"])
	want := p
	want.Buffer = fromFiles
	var w bytes.Buffer
	if err := summary.WriteRun(&w, &want, summary.Options{NameWidth: summary.DefaultNameWidth}); err != nil {
		t.Fatal(err)
	}
	if got != w.String() || strings.Contains(got, "WARNING") {
		t.Errorf("summary -insitu of stale results:\n%s\nwant:\n%s", got, w.String())
	}
	if !strings.Contains(notes.String(), "the story printed is the ranks' files'") {
		t.Errorf("summary -insitu of stale results does not say whose story it prints: %q", notes.String())
	}

	// Results only: the story is the results', kept but not written.
	p.Buffer = fromFiles
	p.Buffer.Bins, p.Buffer.Bytes = 0, 0
	only, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	writeArchivesResults(t, dir, files, 3, true, tracefile.AppendResult(nil, tracefile.ResultRunProfile, only))
	notes.Reset()
	got = string(outputs(t, []string{"summary", "-insitu", dir}, t.TempDir())["stdout"])
	if !strings.Contains(got, "not written: the run kept its results only") || strings.Contains(got, "WARNING") ||
		strings.Contains(notes.String(), "the story printed is the ranks' files'") {
		t.Errorf("summary -insitu of results only:\n%s\nnotes: %s", got, notes.String())
	}
}

// summary -insitu prints the run profile an archive's results hold, and
// says so when they hold none.
func TestArchiveInSitu(t *testing.T) {
	rankDir, archDir := t.TempDir(), t.TempDir()
	files := tracetest.Ranks(t, rankDir, 3, 1, 30, 0)
	path := writeArchives(t, archDir, files, 3, false)[0]
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"summary", "-insitu", archDir}, &stdout, &stderr); rc != 1 || !strings.Contains(stderr.String(), path+": its results hold no run profile") {
		t.Errorf("summary -insitu of an archive without results: exit %d, %q", rc, stderr.String())
	}
	// An archive whose leader was given the run's profile.
	p := summary.Reduce(files)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plan := tracefile.ArchivePlan{Name: files[0].Header.Name, World: 3, Groups: 1, Ranks: []int{0, 1, 2},
		Capacity: []int64{4096, 4096, 4096}, Results: tracefile.AppendResult(nil, tracefile.ResultRunProfile, b), Start: time.Now()}
	if _, err := tracefile.CreateArchive(tracefile.ArchiveName(dir, plan.Name, 0, 1), plan); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := summary.WriteRun(&want, &p, summary.Options{NameWidth: summary.DefaultNameWidth, InSitu: true}); err != nil {
		t.Fatal(err)
	}
	got := outputs(t, []string{"summary", "-insitu", dir}, t.TempDir())["stdout"]
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("summary -insitu:\n%s\nwant:\n%s", got, want.Bytes())
	}
}
