package cshim_test

// The collective end of an MPI run (issue 35): the run archive the ranks
// write by default, against the rank files of HMB_OUTPUT_LAYOUT=rank-files;
// HMB_OUTPUT_EVENTS=none; aggregator groups; 64 ranks oversubscribed; and
// the runs whose end cannot be collective (MPI_Abort, SIGKILL, a rank that
// comes late), which must end, with every trace that could be written
// readable. The program is cshim/testdata/mpi/halo.c: a halo exchange, a
// ring and an allreduce per iteration.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// hmbtraceRun runs the hmbtrace command and returns its standard output.
func hmbtraceRun(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, built.hmbtrace, args...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("hmbtrace %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// rankVisits returns each rank's visits per region, from its flat profile.
func rankVisits(files []*tracefile.File) []map[string]uint64 {
	out := make([]map[string]uint64, len(files))
	for r, f := range files {
		out[r] = map[string]uint64{}
		for _, l := range f.Locations {
			for _, e := range l.Profile {
				out[r][f.RegionName(e.Region)] += e.Visits
			}
		}
	}
	return out
}

// extractSlots copies each in-place slot of the archive at path into
// dir/<name>.<rank>.hmb: a slot's payload is a complete trace file, 32
// bytes (its header) past its offset.
func extractSlots(t *testing.T, path, dir string) {
	t.Helper()
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, s := range a.Slots {
		if s.State != tracefile.SlotInPlace {
			t.Fatalf("%s: rank %d's slot is %v", path, s.Rank, s.State)
		}
		b := make([]byte, s.Len)
		if _, err := src.ReadAt(b, s.Off+32); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s.%d.hmb", a.Name, s.Rank)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rankNames replaces the names ranks go by (ARCHIVE#RANK, DIR/NAME.RANK.hmb)
// with "rank RANK", so that two layouts' outputs compare.
func rankNames(s string) string {
	s = regexp.MustCompile(`\S*\.hmbrun#(\d+)`).ReplaceAllString(s, "rank $1")
	s = regexp.MustCompile(`\S*\.(\d+)\.hmb\b`).ReplaceAllString(s, "rank $1")
	return s
}

// checkMessageOrder puts the ranks' events on one axis, by their clock
// sync points to rank 0 composed through the tree, and checks that every
// message is received (its receive completes) no earlier than it is sent
// (its send begins), messages of one sender, receiver and tag pairing in
// order as MPI matches them. On one host the ranks read one clock, so
// what the axis moves is the synchronisation's error; on cores shared by
// many ranks, a ping-pong's best round trip may take milliseconds, and the
// first message of the ring was seen up to 1 ms early here, more than the
// offsets measured at MPI_Init. The bound is that of the offsets in the
// other MPI tests, 10 ms: a sign or composition error of the tree on a
// machine whose clocks differ would pass it by far.
func checkMessageOrder(t *testing.T, files []*tracefile.File) {
	t.Helper()
	axis := tracefile.NewAxis(files)
	if !axis.Synced() {
		t.Fatalf("the ranks' files are not aligned by clock sync points")
	}
	sent := map[string][]int64{}
	type recv struct {
		key string
		at  int64
	}
	var recvs []recv
	for r, f := range files {
		for _, l := range f.Locations {
			var e tracefile.Event
			it := f.Events(l.ID)
			for it.Next(&e) {
				at := axis.Nanos(r, f, e.Time)
				switch e.Kind {
				case encode.KindSend, encode.KindIsend:
					k := fmt.Sprintf("%d>%d tag %d", r, e.Peer, e.Tag)
					sent[k] = append(sent[k], at)
				case encode.KindRecv, encode.KindIrecv:
					recvs = append(recvs, recv{fmt.Sprintf("%d>%d tag %d", e.Peer, r, e.Tag), at})
				}
			}
		}
	}
	next := map[string]int{}
	bad := 0
	for _, m := range recvs {
		i := next[m.key]
		next[m.key]++
		if i >= len(sent[m.key]) {
			t.Fatalf("receive %s without a send", m.key)
		}
		if early := sent[m.key][i] - m.at; early > 10_000_000 {
			if bad++; bad <= 5 {
				t.Errorf("message %s #%d received %d ns before it was sent", m.key, i, early)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d messages received before they were sent", bad)
	}
}

// TestMPIArchiveLayouts: 8 ranks write one run archive by default; the
// same program with HMB_OUTPUT_LAYOUT=rank-files writes 8 files, with the
// same messages, visits and communication matrix; with HMB_AGGREGATE=3,
// three group files. The tools print the same for the archive as for its
// ranks' traces as rank files.
func TestMPIArchiveLayouts(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	const np = 8
	dir := t.TempDir()
	archive, rankDir, groups := filepath.Join(dir, "archive"), filepath.Join(dir, "ranks"), filepath.Join(dir, "groups")

	_, errs := mpirun(t, np, archive, []string{"HMB_COLLECTIVE_TIMING=1"}, prog, "30")
	files := rankFiles(t, archive, "halo", np) // the archive alone, every slot in place
	path := filepath.Join(archive, "halo.hmbrun")
	if want := fmt.Sprintf("hmbtrace: %d ranks wrote %s (", np, path); !strings.Contains(errs[0], want) {
		t.Errorf("rank 0's stderr %q lacks %q", errs[0], want)
	}
	for r := 1; r < np; r++ {
		if strings.Contains(errs[r], "wrote") {
			t.Errorf("rank %d says what it wrote: %q", r, errs[r])
		}
	}
	// The results go up the tree in two bundles and the cut comes down:
	// three trips of log2 8 rounds, whatever the passes.
	for r := range np {
		if want := fmt.Sprintf("rank %d: collective end of %d ranks, 3 rounds, 3 trips: clock sync ", r, np); !strings.Contains(errs[r], want) ||
			strings.Contains(errs[r], "(given up)") {
			t.Errorf("rank %d's stderr %q lacks %q, or gave up", r, errs[r], want)
		}
	}
	sends, recvs, _ := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	if len(sends) != np*30*3 {
		t.Errorf("%d sends, want %d (two halo sends and one ring send per rank and iteration)", len(sends), np*30*3)
	}
	checkMessageOrder(t, files)
	checkRunProfile(t, path, files, np)
	checkArrivals(t, files, errs)
	for _, f := range files {
		// Synchronised through the tree: about 0 on one host.
		if n := len(f.Header.ClockSync); n != 2 {
			t.Errorf("%s: %d clock sync points, want 2 (init, finalize)", f.Path, n)
		}
		for _, c := range f.Header.ClockSync {
			if ns := f.TicksToNanos(uint64(max(c.Offset, -c.Offset))); ns > 10_000_000 {
				t.Errorf("%s: clock offset %d ns to rank 0 on the same host", f.Path, ns)
			}
		}
	}

	mpirun(t, np, rankDir, []string{"HMB_OUTPUT_LAYOUT=rank-files"}, prog, "30")
	rfiles := rankFiles(t, rankDir, "halo", np)
	if a, b := rankVisits(files), rankVisits(rfiles); !slices.EqualFunc(a, b, func(x, y map[string]uint64) bool { return fmt.Sprint(x) == fmt.Sprint(y) }) {
		t.Errorf("visits per rank: archive %v, rank files %v", a, b)
	}
	comm := hmbtraceRun(t, "comm", "-tsv", archive)
	if c := hmbtraceRun(t, "comm", "-tsv", rankDir); c != comm || comm == "" {
		t.Errorf("comm -tsv of the archive\n%s\nof the rank files\n%s", comm, c)
	}

	mpirun(t, np, groups, []string{"HMB_AGGREGATE=3"}, prog, "30")
	entries, _ := os.ReadDir(groups)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"halo.0.hmbrun", "halo.1.hmbrun", "halo.2.hmbrun"}; !slices.Equal(names, want) {
		t.Fatalf("HMB_AGGREGATE=3: %v, want %v", names, want)
	}
	for g, n := range []int{3, 3, 2} {
		a, err := tracefile.OpenArchive(filepath.Join(groups, names[g]))
		if err != nil {
			t.Fatal(err)
		}
		if a.Group != g || a.Groups != 3 || a.World != np || len(a.Slots) != n || a.Slots[0].Rank != 3*g {
			t.Errorf("%s: group %d of %d, world %d, %d slots from rank %d", names[g], a.Group, a.Groups, a.World, len(a.Slots), a.Slots[0].Rank)
		}
		a.Close()
	}
	if c := hmbtraceRun(t, "comm", "-tsv", groups); c != comm {
		t.Errorf("comm -tsv of the group files\n%s\nof the archive\n%s", c, comm)
	}

	// One run, two layouts: the archive, and its slots as rank files.
	extracted := filepath.Join(dir, "extracted")
	os.Mkdir(extracted, 0o755)
	extractSlots(t, path, extracted)
	for _, args := range [][]string{{"summary"}, {"comm"}, {"comm", "-tsv"}, {"score"}} {
		a := rankNames(hmbtraceRun(t, append(args, archive)...))
		b := rankNames(hmbtraceRun(t, append(args, extracted)...))
		if a != b {
			t.Errorf("hmbtrace %s: the archive\n%s\nits slots as rank files\n%s", strings.Join(args, " "), a, b)
		}
	}
}

// TestMPIArchiveEventsNone: with HMB_OUTPUT_EVENTS=none the run writes
// one archive holding the run-wide results the ranks computed and no
// rank's trace; summary, comm, variation and dynamics read it (the matrix
// and the visits those of a run with its events), and the views that need
// events say so.
func TestMPIArchiveEventsNone(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	const np = 4
	none, all := filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "all")
	// 100,000 cells, not halo's default 64: variation cuts this run
	// between the calls of MPI_Allreduce only if they span half its time
	// less the waits before the first call. 20 iterations of 64 cells,
	// about a millisecond, lost that to the ranks waiting out a preempted
	// one in the last call (3.7 ms of them at a load of 6); some 100 ms of
	// computation keeps the loop most of the run.
	const iters, cells = "20", "100000"
	_, errs := mpirun(t, np, none, []string{"HMB_OUTPUT_EVENTS=none"}, prog, iters, cells)
	mpirun(t, np, all, nil, prog, iters, cells)
	entries, _ := os.ReadDir(none)
	if len(entries) != 1 || entries[0].Name() != "halo.hmbrun" {
		t.Fatalf("%s holds %v, want halo.hmbrun alone", none, entries)
	}
	path := filepath.Join(none, "halo.hmbrun")
	if !strings.Contains(errs[0], "results only") {
		t.Errorf("rank 0 does not say it wrote the results only: %q", errs[0])
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	if !a.ResultsOnly() || !a.EventsNone || a.World != np {
		t.Errorf("%s: results only %v, events none %v, world %d", path, a.ResultsOnly(), a.EventsNone, a.World)
	}
	for _, k := range []byte{tracefile.ResultRunProfile, tracefile.ResultComm, tracefile.ResultVariation, tracefile.ResultCosts} {
		if _, ok, err := a.Result(k); !ok || err != nil {
			t.Errorf("%s: no results section of kind %d (%v)", path, k, err)
		}
	}
	a.Close()
	files := rankFiles(t, all, "halo", np)
	var p summary.RunProfile
	if err := p.UnmarshalBinary(inSituResult(t, path, tracefile.ResultRunProfile)); err != nil {
		t.Fatal(err)
	}
	for _, r := range summary.Reduce(files).Regions {
		if r.Name == "MPI_Finalize" || r.Name == "main" {
			continue
		}
		j := slices.IndexFunc(p.Regions, func(q summary.RegionStats) bool { return q.Name == r.Name })
		if j < 0 || p.Regions[j].Visits != r.Visits {
			t.Errorf("region %s: %d visits with events, not so in the results %+v", r.Name, r.Visits, p.Regions)
		}
	}
	sum := hmbtraceRun(t, "summary", none)
	if !strings.Contains(sum, "MPI_Sendrecv_replace") || !strings.Contains(sum, fmt.Sprintf("%d ranks", np)) {
		t.Errorf("summary of the results has no MPI_Sendrecv_replace or ranks:\n%s", sum)
	}
	// The buffers' story of the results counts the events still in the
	// current bins at the collective end (all of this short run's) as
	// kept, and says the events were not written only where they were not.
	allPath := filepath.Join(all, "halo.hmbrun")
	for _, c := range []struct {
		path, dir string
		written   bool
	}{{path, none, false}, {allPath, all, true}} {
		var q summary.RunProfile
		if err := q.UnmarshalBinary(inSituResult(t, c.path, tracefile.ResultRunProfile)); err != nil {
			t.Fatal(err)
		}
		b := &q.Buffer
		if b.Kept == 0 || b.Recorded != b.Kept+b.FilteredName+b.FilteredDuration+b.Removed.Total() || len(b.Unbalanced) > 0 {
			t.Errorf("%s: the results' buffers recorded %d, kept %d, filtered %d, removed %d, unbalanced on %v", c.path,
				b.Recorded, b.Kept, b.FilteredName+b.FilteredDuration, b.Removed.Total(), b.Unbalanced)
		}
		if (b.Bins > 0) != c.written {
			t.Errorf("%s: the results' buffers count %d bins of %d bytes, want written %v", c.path, b.Bins, b.Bytes, c.written)
		}
		text := hmbtraceRun(t, "summary", "-insitu", c.dir)
		if strings.Contains(text, "WARNING") || strings.Contains(text, "not written") == c.written || !strings.Contains(text, "at the collective end") {
			t.Errorf("summary -insitu %s (events written %v):\n%s", c.dir, c.written, text)
		}
	}
	if a, b := hmbtraceRun(t, "comm", "-tsv", none), hmbtraceRun(t, "comm", "-tsv", all); a != b {
		t.Errorf("comm -tsv of the results\n%s\nof a run with events\n%s", a, b)
	}
	if v := hmbtraceRun(t, "variation", path); !strings.Contains(v, "Segments: ") || !strings.Contains(v, "MPI_Allreduce") {
		t.Errorf("variation of the results:\n%s", v)
	}
	if d := hmbtraceRun(t, "dynamics", none); !strings.Contains(d, "MPI_Allreduce") {
		t.Errorf("dynamics of the results:\n%s", d)
	}
	for _, cmd := range [][]string{{"report", "-o", filepath.Join(t.TempDir(), "r.html")}, {"export", "-format", "otf2", "-o", filepath.Join(t.TempDir(), "x")}, {"dump", path + "#0"}, {"score"}} {
		if cmd[0] != "dump" {
			cmd = append(cmd, none)
		}
		out, err := exec.Command(built.hmbtrace, cmd...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "HMB_OUTPUT_EVENTS=none") || !strings.Contains(string(out), "summary") {
			t.Errorf("hmbtrace %s of the results: %v\n%s", strings.Join(cmd, " "), err, out)
		}
	}
}

// TestMPIArchive64: 64 ranks on this machine's few cores, a small buffer,
// one archive with every slot in place and every message matched.
func TestMPIArchive64(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	const np = 64
	out := filepath.Join(t.TempDir(), "hmb-out")
	_, errs := mpirun(t, np, out, []string{"HMB_BUFFER_SIZE=256K", "HMB_BIN_SIZE=1K"}, prog, "10", "16")
	files := rankFiles(t, out, "halo", np)
	sends, recvs, _ := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	if len(sends) != np*10*3 {
		t.Errorf("%d sends, want %d", len(sends), np*10*3)
	}
	for r, e := range errs {
		if strings.Contains(e, "in vain") {
			t.Errorf("rank %d gave the collective end up: %s", r, e)
		}
	}
}

// mpirunFails runs np ranks of prog that end the job abnormally (MPI_Abort,
// SIGKILL): mpirun must exit non-zero, within the test's timeout.
func mpirunFails(t *testing.T, np int, out string, env []string, prog string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := []string{"--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(np), "-x", "HMB_OUTPUT"}
	for _, kv := range env {
		argv = append(argv, "-x", kv[:strings.IndexByte(kv, '=')])
	}
	argv = append(append(argv, prog), args...)
	cmd := exec.CommandContext(ctx, "mpirun", argv...)
	// Open MPI sends SIGTERM to the others, then SIGKILL 1 s later: too
	// soon for their handlers on a loaded machine. (They write their
	// traces, but do not die of the SIGTERM they raise again: SIGKILL
	// ends them.)
	cmd.Env = append(withoutHMB(os.Environ()), append(env, "HMB_OUTPUT="+out, "OMPI_MCA_mpi_yield_when_idle=1",
		"OMPI_MCA_odls_base_sigkill_timeout=5")...)
	msg, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun %s: still running after 2 minutes\n%s", strings.Join(argv, " "), msg)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("mpirun %s: %v, want a failed job\n%s", strings.Join(argv, " "), err, msg)
	}
	return string(msg)
}

// checkReadable opens the traces of the ranks given in dir (their own
// files: no collective end ran) and reads every event.
func checkReadable(t *testing.T, dir string, ranks ...int) {
	t.Helper()
	for _, r := range ranks {
		f, err := tracefile.Open(filepath.Join(dir, fmt.Sprintf("halo.%d.hmb", r)))
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
			continue
		}
		for _, l := range f.Locations {
			var e tracefile.Event
			it := f.Events(l.ID)
			for it.Next(&e) {
			}
			if err := it.Err(); err != nil {
				t.Errorf("%s: %v", f.Path, err)
			}
		}
		f.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "halo.hmbrun")); err == nil {
		t.Errorf("%s: a run archive, though the run never reached its end", dir)
	}
}

// TestMPIArchiveAbort: rank 1 calls MPI_Abort halfway. Its own file is
// written first (hmbmpi_abort); Open MPI kills the others, whose signal
// handlers (HMB_SIGNALS=1) write theirs. No one waits for a collective end.
func TestMPIArchiveAbort(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	out := filepath.Join(t.TempDir(), "hmb-out")
	mpirunFails(t, 4, out, []string{"HMB_SIGNALS=1"}, prog, "200", "64", "abort")
	checkReadable(t, out, 0, 1, 2, 3)
}

// TestMPIArchiveKill: rank 1 dies of SIGKILL halfway, writing nothing;
// mpirun ends the job, and the others' signal handlers write their files.
func TestMPIArchiveKill(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	out := filepath.Join(t.TempDir(), "hmb-out")
	mpirunFails(t, 4, out, []string{"HMB_SIGNALS=1"}, prog, "200", "64", "kill")
	checkReadable(t, out, 0, 2, 3)
	if _, err := os.Stat(filepath.Join(out, "halo.1.hmb")); err == nil {
		t.Errorf("rank 1 died of SIGKILL, yet wrote a trace")
	}
}

// TestMPIArchiveLate: rank 1 reaches MPI_Finalize 5 s after the others,
// who wait 2 s (HMB_COLLECTIVE_TIMEOUT) at each step of the collective
// end: they give it up, say so, and write their own files, as rank 1 does
// when it finds no one to synchronise with. The job ends.
func TestMPIArchiveLate(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	out := filepath.Join(t.TempDir(), "hmb-out")
	_, errs := mpirun(t, 4, out, []string{"HMB_COLLECTIVE_TIMEOUT=2s"}, prog, "20", "64", "stall", "5")
	for r, e := range errs {
		if want := fmt.Sprintf("this rank writes its own file <name>.%d.hmb", r); !strings.Contains(e, want) {
			t.Errorf("rank %d's stderr %q lacks %q", r, e, want)
		}
	}
	checkReadable(t, out, 0, 1, 2, 3)
	files := rankFiles(t, out, "halo", 4)
	sends, recvs, _ := messagesOf(t, files)
	checkMatched(t, sends, recvs)
}

// checkRunProfile checks the run profile the ranks reduced over MPI at the
// collective end (the archive's results) against the one the tools reduce
// from the ranks' files: the same for every region but those still open
// at MPI_Finalize, whose calls ended after it.
func checkRunProfile(t *testing.T, path string, files []*tracefile.File, np int) {
	t.Helper()
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, found, err := a.Result(tracefile.ResultRunProfile)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("%s: no run profile among its results", path)
	}
	var in summary.RunProfile
	if err := in.UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: the run profile of the results: %v", path, err)
	}
	if in.Ranks.Len() != np {
		t.Errorf("in-situ run profile of %d ranks, want %d", in.Ranks.Len(), np)
	}
	post := summary.Reduce(files)
	open := map[string]bool{"main": true, "MPI_Finalize": true}
	checked := 0
	for i := range post.Regions {
		r := &post.Regions[i]
		if open[r.Name] {
			continue
		}
		j := slices.IndexFunc(in.Regions, func(q summary.RegionStats) bool { return q.Name == r.Name && q.Paradigm == r.Paradigm })
		if j < 0 {
			t.Errorf("region %s: in the files, not in the in-situ profile", r.Name)
			continue
		}
		q := &in.Regions[j]
		// Visits are exact; times are ticks converted at the rate the
		// files have (the collective end fixed it before the profile),
		// within TestMPIInSitu's near (seen: equal; Start's rate, which
		// the profile had before, put them up to 4e-5 apart).
		nearStat := func(a, b summary.Stat) bool {
			ok := func(x, y int64) bool { return near(float64(x), float64(y)) }
			return ok(a.Sum, b.Sum) && ok(a.Min, b.Min) && ok(a.Max, b.Max)
		}
		if q.Visits != r.Visits || !nearStat(q.Inclusive, r.Inclusive) || !nearStat(q.Exclusive, r.Exclusive) || q.Ranks != r.Ranks {
			t.Errorf("region %s: in-situ visits %+v incl %+v excl %+v on %d ranks; from the files %+v %+v %+v on %d",
				r.Name, q.Visits, q.Inclusive, q.Exclusive, q.Ranks, r.Visits, r.Inclusive, r.Exclusive, r.Ranks)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("only %d regions compared", checked)
	}
	text := hmbtraceRun(t, "summary", "-insitu", filepath.Dir(path))
	if want := fmt.Sprintf("%d ranks", np); !strings.Contains(text, want) || !strings.Contains(text, "MPI_Allreduce") {
		t.Errorf("summary -insitu does not tell the run of %s:\n%s", want, text)
	}
}
