package cshim_test

// These tests run MPI programs linked with libhmbtrace-mpi under mpirun
// (Debian's OpenMPI: libopenmpi-dev, openmpi-bin) and check the rank files
// they write, merged: messages matched, regions balanced, clocks synced,
// the OTF2 export accepted by otf2-print, the class reduction per rank.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// mpiLibrary builds libhmbtrace with its MPI wrappers and returns the
// build directory.
func mpiLibrary(t *testing.T) string {
	t.Helper()
	tracetest.RequireTool(t, "mpicc", "libopenmpi-dev")
	tracetest.RequireTool(t, "mpirun", "openmpi-bin")
	build := library(t)
	if _, err := os.Stat(filepath.Join(build, "lib", "libhmbtrace-mpi.so")); err != nil {
		t.Fatalf("make cshim found mpicc but built no libhmbtrace-mpi: %v", err)
	}
	return build
}

// mpirun runs np ranks of prog with HMB_OUTPUT=out and the variables env,
// and returns each rank's standard output and standard error.
func mpirun(t *testing.T, np int, out string, env []string, prog string, args ...string) (stdout, stderr []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	outputs := t.TempDir()
	env = append([]string{"HMB_OUTPUT=" + out}, env...)
	argv := []string{"--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(np), "--output-filename", outputs}
	for _, kv := range env {
		argv = append(argv, "-x", kv[:strings.IndexByte(kv, '=')])
	}
	argv = append(argv, prog)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "mpirun", argv...)
	// Ranks that wait yield the CPU: four ranks share two cores in CI.
	cmd.Env = append(withoutHMB(os.Environ()), append(env, "OMPI_MCA_mpi_yield_when_idle=1")...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun %s: %v\n%s", strings.Join(argv, " "), err, msg)
	}
	read := func(r int, name string) string {
		// Open MPI pads the rank to the width of the largest.
		b, err := os.ReadFile(filepath.Join(outputs, "1", fmt.Sprintf("rank.%0*d", len(strconv.Itoa(np-1)), r), name))
		if err != nil && !(name == "stderr" && os.IsNotExist(err)) {
			t.Fatalf("rank %d's %s: %v", r, name, err)
		}
		return string(b)
	}
	stdout, stderr = make([]string, np), make([]string, np)
	for r := range stdout {
		stdout[r], stderr[r] = read(r, "stdout"), read(r, "stderr")
	}
	return stdout, stderr
}

// rankFiles opens the traces of the np ranks of run name in dir: the slots
// of its run archive, name.hmbrun (the default layout of an MPI run), or
// the files name.<rank>.hmb (HMB_OUTPUT_LAYOUT=rank-files, a run of one
// rank, a run that gave its archive up), and checks that dir holds nothing
// else. A rank read from the archive has the path ARCHIVE#RANK, which
// `hmbtrace dump` takes.
func rankFiles(t *testing.T, dir, name string, np int) []*tracefile.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	files := make([]*tracefile.File, np)
	if archive := filepath.Join(dir, name+".hmbrun"); slices.Contains(names, name+".hmbrun") {
		if len(entries) != 1 {
			t.Fatalf("%s holds %v, want the run archive alone", dir, names)
		}
		a, err := tracefile.OpenArchive(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if a.World != np || len(a.Slots) != np {
			t.Fatalf("%s: %d ranks, %d slots, want %d", archive, a.World, len(a.Slots), np)
		}
		for r := range files {
			if s := a.Slots[r]; s.Rank != r || s.State != tracefile.SlotInPlace {
				t.Fatalf("%s: slot %d: %+v, want rank %d's trace in place", archive, r, s, r)
			}
			f, err := a.OpenRank(r)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			files[r] = f
		}
	} else {
		if len(entries) != np {
			t.Fatalf("%s holds %v, want %d rank files", dir, names, np)
		}
		for r := range files {
			files[r] = tracetest.Open(t, filepath.Join(dir, fmt.Sprintf("%s.%d.hmb", name, r)))
		}
	}
	for r, f := range files {
		if f.Header.Rank != r {
			t.Fatalf("%s: rank %d in the header", f.Path, f.Header.Rank)
		}
	}
	return files
}

// message is a send or a receive as "send|recv <from> <to> <tag> <bytes>".
type message struct {
	kind     string
	from, to int
	tag      uint32
	bytes    uint64
	comm     uint32 // the communicator's id in the file of the rank that recorded it
}

func (m message) key() string {
	return fmt.Sprintf("%d>%d tag %d, %d bytes", m.from, m.to, m.tag, m.bytes)
}

// messagesOf reads every send and receive of the rank files, and the roots
// of their collectives by region name.
func messagesOf(t *testing.T, files []*tracefile.File) (sends, recvs []message, roots map[int][]string) {
	t.Helper()
	roots = map[int][]string{}
	for r, f := range files {
		for _, l := range f.Locations {
			var e tracefile.Event
			it := f.Events(l.ID)
			for it.Next(&e) {
				switch e.Kind {
				case encode.KindSend, encode.KindRecv, encode.KindIsend, encode.KindIrecv:
					if !e.PeerRank {
						t.Fatalf("%s: %v to location %d: want a world rank", f.Path, e.Kind, e.Peer)
					}
					m := message{kind: "send", from: r, to: int(e.Peer), tag: e.Tag, bytes: e.Bytes, comm: e.Comm}
					if e.Kind == encode.KindRecv || e.Kind == encode.KindIrecv {
						m.kind, m.from, m.to = "recv", int(e.Peer), r
						recvs = append(recvs, m)
					} else {
						sends = append(sends, m)
					}
				case encode.KindCollective, encode.KindCollComplete:
					roots[r] = append(roots[r], fmt.Sprintf("%s %d", f.RegionName(e.Region), e.Root))
				}
			}
			if err := it.Err(); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
		}
	}
	return sends, recvs, roots
}

// checkMatched checks that sends and receives pair up one to one by
// sender, receiver, tag and bytes.
func checkMatched(t *testing.T, sends, recvs []message) {
	t.Helper()
	count := map[string]int{}
	for _, m := range sends {
		count[m.key()]++
	}
	for _, m := range recvs {
		count[m.key()]--
	}
	for k, n := range count {
		if n > 0 {
			t.Errorf("%d sends %s have no receive", n, k)
		} else if n < 0 {
			t.Errorf("%d receives %s have no send", -n, k)
		}
	}
}

func TestMPIJacobi(t *testing.T) {
	build := mpiLibrary(t)
	p := buildExample(t, build, "mpi-jacobi")
	// The heavy rank sweeps 8 times the rows of the others: about 110 ms
	// against their 14, so that the time slices another process takes
	// from a light rank's sweep on a loaded machine (10 ms seen, with 4
	// times the rows and 512 columns: 12 ms against 6) cannot make it
	// the slowest.
	const np, iters, heavy = 4, 60, 2
	outs, _ := mpirun(t, np, p.out, nil, p.path, "-r", "512", "-c", "4096", "-i", strconv.Itoa(iters), "-H", strconv.Itoa(heavy), "-f", "8")
	if !strings.Contains(outs[0], fmt.Sprintf("mpi-jacobi: ranks=%d rows=512 cols=4096 iterations=%d", np, iters)) {
		t.Fatalf("rank 0 printed %q", outs[0])
	}
	files := rankFiles(t, p.out, "mpi-jacobi", np)

	// Every rank: balanced regions, the MPI calls of each iteration.
	for r, f := range files {
		enters := checkTrace(t, dump(t, f.Path), []string{"main", "MPI_Init", "MPI_Finalize", "sweep", "exchange_halo"},
			[]string{fmt.Sprintf("rank %d", r)})
		neighbours := 2
		if r == 0 || r == np-1 {
			neighbours = 1
		}
		if enters["MPI_Allreduce"] != iters || enters["MPI_Waitall"] != iters ||
			enters["MPI_Isend"] != iters*neighbours || enters["MPI_Irecv"] != iters*neighbours || enters["MPI_Gather"] != 1 {
			t.Errorf("rank %d enters %v: want %d Allreduce and Waitall, %d Isend and Irecv, 1 Gather", r, enters, iters, iters*neighbours)
		}
		// Clock offsets to rank 0, measured at init and at finalize.
		if n := len(f.Header.ClockSync); n != 2 {
			t.Errorf("%s: %d clock sync points, want 2 (init, finalize)", f.Path, n)
		}
		for _, c := range f.Header.ClockSync {
			// One host, one clock: the offsets measured are about 0 (within
			// half a round trip of the ping-pong).
			if ns := f.TicksToNanos(uint64(max(c.Offset, -c.Offset))); ns > 10_000_000 {
				t.Errorf("%s: clock offset %d ticks (%d ns) to rank 0 on the same host", f.Path, c.Offset, ns)
			}
		}
		if f.Header.ReferenceStart != files[0].Header.ReferenceStart {
			t.Errorf("%s: reference start %d, rank 0 started at %d", f.Path, f.Header.ReferenceStart, files[0].Header.ReferenceStart)
		}
	}
	if !tracefile.NewAxis(files).Synced() {
		t.Error("the rank files are not placed on rank 0's clock")
	}
	sends, recvs, _ := messagesOf(t, files)
	if want := 2 * (np - 1) * iters; len(sends) != want {
		t.Errorf("%d sends, want %d halo rows", len(sends), want)
	}
	checkMatched(t, sends, recvs)

	// The summary of the directory: per-rank statistics, the heavy rank
	// slowest in the sweep (it has 4 times the rows).
	sum, err := run(root, nil, built.hmbtrace, "summary", p.out)
	if err != nil {
		t.Fatalf("hmbtrace summary %s: %v\n%s", p.out, err, sum)
	}
	row := regexp.MustCompile(`(?m)^\s*\S+ \S+\s+\S+ \S+\s+\S+ \S+\s+([0-9.]+)\s+(\d+)\s+sweep$`).FindSubmatch(sum)
	if !strings.Contains(string(sum), fmt.Sprintf("Regions per rank (inclusive time over %d ranks", np)) || row == nil {
		t.Fatalf("summary has no per-rank row for sweep:\n%s", sum)
	}
	if slowest, _ := strconv.Atoi(string(row[2])); slowest != heavy {
		t.Errorf("summary: slowest rank in sweep %d, want the heavy rank %d:\n%s", slowest, heavy, sum)
	}
	for r := 0; r < np; r++ {
		if !strings.Contains(string(sum), fmt.Sprintf("%s (rank %d)", files[r].Path, r)) {
			t.Errorf("summary has no buffer story of rank %d", r)
		}
	}

	// One OTF2 archive: a location group per rank, matched MPI records.
	tracetest.RequireTool(t, "otf2-print", "otf2-tools")
	archive := filepath.Join(t.TempDir(), "otf2")
	if msg, err := run(root, nil, built.hmbtrace, "export", "-format", "otf2", "-o", archive, p.out); err != nil {
		t.Fatalf("hmbtrace export: %v\n%s", err, msg)
	}
	printed := otf2Print(t, "-Werror", filepath.Join(archive, "traces.otf2"))
	checkOTF2Messages(t, printed, len(sends))
	defs := otf2Print(t, "-G", filepath.Join(archive, "traces.otf2"))
	for r := 0; r < np; r++ {
		if !strings.Contains(defs, fmt.Sprintf("Name: \"Rank %d\"", r)) {
			t.Errorf("no location group for rank %d in the archive", r)
		}
	}
}

// otf2Print runs otf2-print and fails on anything on its standard error.
func otf2Print(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("otf2-print", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("otf2-print %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// checkOTF2Messages checks that otf2-print shows n sends (MPI_SEND,
// MPI_ISEND) and n receives (MPI_RECV, MPI_IRECV) that match: each send's
// (sender, receiver, tag, length) is a receive's. The peer is the location
// otf2-print names after the rank in the communicator.
func checkOTF2Messages(t *testing.T, printed string, n int) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^MPI_(I?SEND|I?RECV)\s+(\d+)\s+\d+\s+(?:Receiver|Sender): \d+ \("[^"]*" <(\d+)>\).*Tag: (\d+), Length: (\d+)`)
	count := map[string]int{}
	var sends, recvs int
	for _, m := range re.FindAllStringSubmatch(printed, -1) {
		if strings.HasSuffix(m[1], "SEND") {
			sends++
			count[fmt.Sprintf("%s>%s %s %s", m[2], m[3], m[4], m[5])]++
		} else {
			recvs++
			count[fmt.Sprintf("%s>%s %s %s", m[3], m[2], m[4], m[5])]--
		}
	}
	if sends != n || recvs != n {
		t.Errorf("otf2-print shows %d sends and %d receives, want %d each", sends, recvs, n)
	}
	for k, c := range count {
		if c != 0 {
			t.Errorf("OTF2 message %s: %d more sends than receives", k, c)
		}
	}
}

// TestMPICommunicators runs calls on split communicators, with every
// completion call, and checks the recorded peers and roots against the
// world ranks the program computed itself; a failing call returns what
// PMPI returns.
func TestMPICommunicators(t *testing.T) {
	build := mpiLibrary(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "comms")
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-mpi")
	if err != nil {
		t.Fatalf("pkg-config hmbtrace-mpi: %v\n%s", err, pc)
	}
	args := append([]string{"-O2", "-g", "-o", prog, filepath.Join(root, "cshim", "testdata", "mpi", "comms.c")}, strings.Fields(string(pc))...)
	if msg, err := run(root, nil, "mpicc", args...); err != nil {
		t.Fatalf("mpicc %v: %v\n%s", args, err, msg)
	}
	const np = 4
	out := filepath.Join(dir, "hmb-out")
	outs, errs := mpirun(t, np, out, nil, prog)
	files := rankFiles(t, out, "comms", np)
	sends, recvs, roots := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	unseenSum, unseenRanks := 0, 0
	for r := 0; r < np; r++ {
		var want, wantRoots []string
		unseen := "0"
		for _, line := range strings.Split(outs[r], "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 4 && (f[0] == "send" || f[0] == "recv"):
				want = append(want, strings.Join(f, " "))
			case len(f) == 3 && f[0] == "root":
				wantRoots = append(wantRoots, f[1]+" "+f[2])
			case len(f) == 3 && f[0] == "rc" && f[1] != f[2]:
				t.Errorf("rank %d: the wrapped MPI_Send returned %s, PMPI_Send %s", r, f[1], f[2])
			case len(f) == 2 && f[0] == "unseen":
				unseen = f[1]
			}
		}
		var got []string
		for _, m := range append(sends, recvs...) {
			switch {
			case m.kind == "send" && m.from == r:
				got = append(got, fmt.Sprintf("send %d %d %d", m.to, m.tag, m.bytes))
			case m.kind == "recv" && m.to == r:
				got = append(got, fmt.Sprintf("recv %d %d %d", m.from, m.tag, m.bytes))
			}
		}
		// A receive no wrapper saw complete is counted: the run's count
		// is said once, by rank 0, at the collective end.
		n, _ := strconv.Atoi(unseen)
		unseenSum += n
		if n > 0 {
			unseenRanks++
		}
		if r != 0 && strings.Contains(errs[r], "probes dropped") {
			t.Errorf("rank %d says its drops, rank 0 says the run's:\n%s", r, errs[r])
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("rank %d: messages in the trace\n%s\nthe program made\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, w := range wantRoots {
			found := false
			for _, g := range roots[r] {
				found = found || g == w
			}
			if !found {
				t.Errorf("rank %d: no collective %q in the trace (roots %v)", r, w, roots[r])
			}
		}
		checkTrace(t, dump(t, files[r].Path), []string{"MPI_Sendrecv", "MPI_Waitany", "MPI_Testall", "MPI_Test", "MPI_Bcast"}, nil)
		// The inter-communicator between the halves: this rank's half as its
		// members, the other half as its remote group, made from c2.
		var same, other []int32
		for w := 0; w < np; w++ {
			if w%2 == r%2 {
				same = append(same, int32(w))
			} else {
				other = append(other, int32(w))
			}
		}
		var inter []tracefile.Comm
		for _, c := range files[r].Comms {
			if c.Remote != nil {
				inter = append(inter, c)
			}
		}
		if len(inter) != 1 || !slices.Equal(inter[0].Members, same) || !slices.Equal(inter[0].Remote, other) ||
			inter[0].Parent < 3 {
			t.Errorf("rank %d: inter-communicators %+v, want one of members %v, remote %v, made from a split", r, inter, same, other)
		}
	}
	// Rank 0 says the run's drops, with their reason, and the requests
	// still active at MPI_Finalize among them.
	said := regexp.MustCompile(`hmbtrace: (\d+) probes dropped up to MPI_Finalize on (\d+) of 4 ranks, 2 each, not in the trace: .*completions of MPI requests still active at MPI_Finalize`).FindStringSubmatch(errs[0])
	if unseenSum == 0 {
		t.Fatal("no rank drops the probes of requests it did not see complete: the test tests nothing")
	}
	if said == nil || said[1] != strconv.Itoa(unseenSum) || said[2] != strconv.Itoa(unseenRanks) {
		t.Errorf("want %d probes dropped on %d ranks said by rank 0, got %q; stderr:\n%s", unseenSum, unseenRanks, said, errs[0])
	}
	if active := regexp.MustCompile(`hmbtrace: (\d+) MPI requests were still active at MPI_Finalize on`).FindStringSubmatch(errs[0]); active == nil {
		t.Errorf("rank 0 does not say the requests still active at MPI_Finalize; stderr:\n%s", errs[0])
	} else if n, _ := strconv.Atoi(active[1]); n > unseenSum || n == 0 {
		t.Errorf("%d requests active at MPI_Finalize said, of %d probes dropped", n, unseenSum)
	}
}

// TestMPIClassReduction fills a tiny buffer with HMB_REDUCTION=class: every
// rank sheds its messages and collectives before any calling depth, and the
// summary says so rank by rank; the MPI regions are the last enters and
// leaves it keeps.
func TestMPIClassReduction(t *testing.T) {
	build := mpiLibrary(t)
	p := buildExample(t, build, "mpi-jacobi")
	const np = 4
	mpirun(t, np, p.out, []string{"HMB_BUFFER_SIZE=12K", "HMB_BIN_SIZE=1K", "HMB_REDUCTION=class"}, p.path, "-r", "512", "-c", "512", "-i", "300")
	files := rankFiles(t, p.out, "mpi-jacobi", np)
	for _, f := range files {
		var order []string
		for _, red := range f.Reductions {
			switch red.Reason {
			case tracefile.ByClass:
				order = append(order, red.Class.String())
			case tracefile.ByDepth:
				order = append(order, fmt.Sprintf("depth %d", red.Depth))
			}
		}
		// The default order of importance: metric (none here), message, collective.
		s := strings.Join(order, ", ")
		if !strings.HasPrefix(s, "metric, message, collective") {
			t.Errorf("%s: reductions %q: want the metric, message and collective classes closed first", f.Path, s)
		}
		for i := range f.Locations {
			l := &f.Locations[i]
			for _, lv := range l.Levels {
				if lv.Class == tracefile.ClassRegion && lv.Depth <= 2 && lv.Removed()[tracefile.ByClass] > 0 {
					t.Errorf("%s: enter/leave events at depth %d removed by class", f.Path, lv.Depth)
				}
			}
		}
		// The MPI regions (paradigm class) outlive the compute levels
		// between them and main: what is left nests, with gaps in depth.
		checkNested(t, dump(t, f.Path), []string{"main", "MPI_Init", "MPI_Finalize"})
	}
	sum, err := run(root, nil, built.hmbtrace, "summary", p.out)
	if err != nil {
		t.Fatalf("hmbtrace summary: %v\n%s", err, sum)
	}
	stories := strings.Split(string(sum), "\nBuffer of ")[1:]
	if len(stories) != np {
		t.Fatalf("summary has %d buffer stories, want one per rank:\n%s", len(stories), sum)
	}
	for r, story := range stories {
		if !strings.Contains(story, fmt.Sprintf("(rank %d)", r)) || !strings.Contains(story, "reduction policy class") ||
			!strings.Contains(story, "closed event class message") || !strings.Contains(story, "closed event class collective") {
			t.Errorf("rank %d's story does not tell the class reductions:\n%s", r, story)
		}
	}
}

// checkNested checks that every location's enters and leaves balance and
// nest, each enter deeper than the one it is in (levels between may have
// been shed), and that the regions named are there.
func checkNested(t *testing.T, evs []event, regions []string) {
	t.Helper()
	type open struct {
		region string
		depth  int
	}
	stacks := map[string][]open{}
	seen := map[string]bool{}
	for _, e := range evs {
		st := stacks[e.loc]
		switch e.kind {
		case "ENTER":
			if len(st) > 0 && e.depth <= st[len(st)-1].depth {
				t.Fatalf("%s: enter %s at depth %d inside %s at depth %d", e.loc, e.region, e.depth, st[len(st)-1].region, st[len(st)-1].depth)
			}
			st = append(st, open{e.region, e.depth})
			seen[e.region] = true
		case "LEAVE":
			if len(st) == 0 || st[len(st)-1] != (open{e.region, e.depth}) {
				t.Fatalf("%s: leave %s at depth %d, open: %v", e.loc, e.region, e.depth, st)
			}
			st = st[:len(st)-1]
		}
		stacks[e.loc] = st
	}
	for loc, st := range stacks {
		if len(st) != 0 {
			t.Errorf("%s: regions left open at the end: %v", loc, st)
		}
	}
	for _, r := range regions {
		if !seen[r] {
			t.Errorf("region %q: no enter in the trace", r)
		}
	}
}

// mpiBuild compiles the sources of testdata/mpi with compiler (mpicc or
// mpifort) and the flags of pkg-config hmbtrace-mpi, as a user would.
func mpiBuild(t *testing.T, build, compiler, name string, sources ...string) string {
	t.Helper()
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-mpi")
	if err != nil {
		t.Fatalf("pkg-config hmbtrace-mpi: %v\n%s", err, pc)
	}
	prog := filepath.Join(t.TempDir(), name)
	args := []string{"-O2", "-g", "-o", prog}
	for _, s := range sources {
		args = append(args, filepath.Join(root, "cshim", "testdata", "mpi", s))
	}
	args = append(args, strings.Fields(string(pc))...)
	if msg, err := run(root, nil, compiler, args...); err != nil {
		t.Fatalf("%s %v: %v\n%s", compiler, args, err, msg)
	}
	return prog
}

// checkPrinted compares the messages of rank r in the trace with the
// "send <to> <tag> <bytes>" and "recv <from> <tag> <bytes>" lines it
// printed (only the sends when sendsOnly).
func checkPrinted(t *testing.T, r int, out string, sends, recvs []message, sendsOnly bool) {
	t.Helper()
	var want, got []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 4 && (f[0] == "send" || (f[0] == "recv" && !sendsOnly)) {
			want = append(want, line)
		}
	}
	for _, m := range sends {
		if m.from == r {
			got = append(got, fmt.Sprintf("send %d %d %d", m.to, m.tag, m.bytes))
		}
	}
	for _, m := range recvs {
		if m.to == r && !sendsOnly {
			got = append(got, fmt.Sprintf("recv %d %d %d", m.from, m.tag, m.bytes))
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rank %d: messages in the trace\n%s\nthe program made\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMPIFortran traces a Fortran halo exchange with no source change,
// through the bindings of mpif.h/use mpi and of use mpi_f08: one file per
// rank with its rank, the MPI regions, matched messages.
func TestMPIFortran(t *testing.T) {
	build := mpiLibrary(t)
	tracetest.RequireTool(t, "mpifort", "libopenmpi-dev (gfortran)")
	for _, name := range []string{"halo", "halo_f08"} {
		t.Run(name, func(t *testing.T) {
			prog := mpiBuild(t, build, "mpifort", name, name+".f90")
			const np, iters = 4, 5
			out := filepath.Join(t.TempDir(), "hmb-out")
			outs, _ := mpirun(t, np, out, nil, prog)
			files := rankFiles(t, out, name, np)
			sends, recvs, _ := messagesOf(t, files)
			checkMatched(t, sends, recvs)
			for _, m := range append(sends, recvs...) {
				if c := files[0].Comms; len(c) == 0 || m.comm != c[0].ID || c[0].Name != "MPI_COMM_WORLD" {
					t.Fatalf("%s %s on communicator %d, want MPI_COMM_WORLD (communicators %+v)", m.kind, m.key(), m.comm, c)
				}
			}
			// Ranks 0 and np-1 have one neighbour: 3 sends per inner rank and iteration, 2 or 1 at the ends.
			if want := iters * (3*(np-2) + 2 + 1); len(sends) != want {
				t.Errorf("%d sends, want %d", len(sends), want)
			}
			for r, f := range files {
				checkPrinted(t, r, outs[r], sends, recvs, true)
				enters := checkTrace(t, dump(t, f.Path), []string{"MPI_Init", "MPI_Irecv", "MPI_Isend", "MPI_Waitall",
					"MPI_Sendrecv", "MPI_Allreduce", "MPI_Finalize"}, []string{fmt.Sprintf("rank %d", r)})
				if enters["MPI_Allreduce"] != iters || enters["MPI_Waitany"] != 2*iters || enters["MPI_Irecv"] != 2*iters {
					t.Errorf("rank %d enters %v: want %d Allreduce, %d Waitany and Irecv", r, enters, iters, 2*iters)
				}
				// The gather at the last rank, in place there (Fortran's MPI_IN_PLACE).
				want := fmt.Sprintf("root %d sent 8 received 0", np-1)
				if r == np-1 {
					want = fmt.Sprintf("root %d sent 8 received %d", np-1, 8*np)
				}
				if got := gatherOf(t, f); got != want {
					t.Errorf("rank %d: MPI_Gather %q, want %q", r, got, want)
				}
			}

			// HMB_ENABLE=0: the wrappers call straight through, nothing is written.
			off := filepath.Join(t.TempDir(), "hmb-out")
			outs, _ = mpirun(t, 2, off, []string{"HMB_ENABLE=0"}, prog)
			if !strings.Contains(outs[0], "ranks 2") {
				t.Errorf("rank 0 printed %q with HMB_ENABLE=0", outs[0])
			}
			if entries, err := os.ReadDir(off); err == nil && len(entries) > 0 {
				t.Errorf("HMB_ENABLE=0 wrote %d files into %s", len(entries), off)
			}
		})
	}
}

// collectivesOf lists f's collectives in record order as "coll <region>
// <bytes sent> <bytes received>"; a non-blocking one where it completed,
// under the region of the call that started it.
func collectivesOf(t *testing.T, f *tracefile.File) []string {
	t.Helper()
	var got []string
	var e tracefile.Event
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		for it.Next(&e) {
			if e.Kind == encode.KindCollective || e.Kind == encode.KindCollComplete {
				got = append(got, fmt.Sprintf("coll %s %d %d", f.RegionName(e.Region), e.Bytes, e.Received))
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// gatherOf describes the one MPI_Gather collective of f.
func gatherOf(t *testing.T, f *tracefile.File) string {
	t.Helper()
	var got []string
	var e tracefile.Event
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		for it.Next(&e) {
			if e.Kind == encode.KindCollective && f.RegionName(e.Region) == "MPI_Gather" {
				got = append(got, fmt.Sprintf("root %d sent %d received %d", e.Root, e.Bytes, e.Received))
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(got, "; ")
}

// TestMPIRequests runs persistent requests, matched probes, v collectives
// and non-blocking collectives on a communicator from MPI_Comm_split: the
// messages are the ones the program made, with world ranks, every record
// carries the split communicator, defined with its members, every request
// completes, every call is a balanced region, and the OTF2 export has the
// two halves as communicators.
func TestMPIRequests(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "requests", "requests.c")
	const np = 4
	out := filepath.Join(t.TempDir(), "hmb-out")
	outs, errs := mpirun(t, np, out, nil, prog)
	files := rankFiles(t, out, "requests", np)
	sends, recvs, roots := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	for r, f := range files {
		checkPrinted(t, r, outs[r], sends, recvs, false)
		for _, line := range strings.Split(outs[r], "\n") {
			if fs := strings.Fields(line); len(fs) == 3 && fs[0] == "root" && !slices.Contains(roots[r], fs[1]+" "+fs[2]) {
				t.Errorf("rank %d: no collective %s with root %s in the trace (%v)", r, fs[1], fs[2], roots[r])
			}
		}
		if strings.Contains(errs[r], "dropped") {
			t.Errorf("rank %d: probes dropped:\n%s", r, errs[r])
		}
		var want []string
		for _, line := range strings.Split(outs[r], "\n") {
			if strings.HasPrefix(line, "coll ") {
				want = append(want, line)
			}
		}
		if got := collectivesOf(t, f); !slices.Equal(got, want) {
			t.Errorf("rank %d: collectives in the trace\n%s\nthe program made\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		checkSplitComm(t, f, r, np)
		checkRequests(t, f)
		enters := checkTrace(t, dump(t, f.Path), []string{"MPI_Comm_split", "MPI_Send_init", "MPI_Recv_init", "MPI_Startall",
			"MPI_Start", "MPI_Request_free", "MPI_Issend", "MPI_Mprobe", "MPI_Mrecv", "MPI_Gatherv", "MPI_Scatterv",
			"MPI_Allgatherv", "MPI_Alltoallv", "MPI_Reduce_scatter_block", "MPI_Exscan", "MPI_Iallreduce", "MPI_Ibcast",
			"MPI_Ibarrier", "MPI_Comm_free"}, nil)
		if enters["MPI_Startall"] != 3 || enters["MPI_Start"] != 2 {
			t.Errorf("rank %d: %d MPI_Startall and %d MPI_Start, want 3 and 2", r, enters["MPI_Startall"], enters["MPI_Start"])
		}
	}

	// The OTF2 archive: matched messages, the two halves as communicators
	// made from MPI_COMM_WORLD, their members in their own rank order.
	tracetest.RequireTool(t, "otf2-print", "otf2-tools")
	archive := filepath.Join(t.TempDir(), "otf2")
	if msg, err := run(root, nil, built.hmbtrace, "export", "-format", "otf2", "-o", archive, out); err != nil {
		t.Fatalf("hmbtrace export: %v\n%s", err, msg)
	}
	checkOTF2Messages(t, otf2Print(t, "-Werror", filepath.Join(archive, "traces.otf2")), len(sends))
	defs := otf2Print(t, "-G", filepath.Join(archive, "traces.otf2"))
	for _, members := range []string{`2 Members: 2 ("rank 2" <2>), 0 ("rank 0" <0>)`, `2 Members: 3 ("rank 3" <3>), 1 ("rank 1" <1>)`} {
		if !strings.Contains(defs, "Type: COMM_GROUP, Paradigm: MPI, Flags: NONE, "+members) {
			t.Errorf("no communicator group with %s in the archive:\n%s", members, defs)
		}
	}
	if n := strings.Count(defs, `Parent: "MPI_COMM_WORLD"`); n != 2 {
		t.Errorf("%d communicators made from MPI_COMM_WORLD in the archive, want the 2 halves:\n%s", n, defs)
	}
	checkPythonOTF2(t, filepath.Join(archive, "traces.otf2"), len(sends))
}

// checkPythonOTF2 reads the archive of requests.c with python3-otf2 (the
// export's own check script) as an analysis tool would: every request
// completes on its location, every send matches a receive by sender,
// receiver, communicator, tag and length, every collective begins and
// ends, and the two halves of the split have their members (locations 0..3
// are ranks 0..3) in their own rank order, made from MPI_COMM_WORLD.
func checkPythonOTF2(t *testing.T, anchor string, sends int) {
	t.Helper()
	const python = "/usr/bin/python3" // python3-otf2 is built for Debian's python only
	if err := exec.Command(python, "-c", "import otf2").Run(); err != nil {
		tracetest.SkipOrFail(t, fmt.Sprintf("%s cannot import otf2 (%v): install the Debian package python3-otf2", python, err))
	}
	out, err := exec.Command(python, filepath.Join(root, "export", "otf2", "convert", "testdata", "check_mpi.py"), anchor).CombinedOutput()
	if err != nil {
		t.Fatalf("python3-otf2: %v\n%s", err, out)
	}
	var res struct {
		Comms map[string]struct {
			Name    string   `json:"name"`
			Group   string   `json:"group"`
			Members []uint64 `json:"members"`
			Parent  *uint64  `json:"parent"`
		} `json:"comms"`
		Unmatched    []string `json:"unmatched"`
		OpenRequests []string `json:"open_requests"`
		Balanced     bool     `json:"balanced"`
		Messages     int      `json:"messages"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Unmatched) != 0 || len(res.OpenRequests) != 0 || !res.Balanced || res.Messages != sends {
		t.Errorf("python3-otf2: unmatched %v, open requests %v, collectives balanced %v, %d messages matched of %d",
			res.Unmatched, res.OpenRequests, res.Balanced, res.Messages, sends)
	}
	world := ""
	for ref, c := range res.Comms {
		if c.Name == "MPI_COMM_WORLD" {
			world = ref
		}
	}
	var halves []string
	for _, c := range res.Comms {
		if c.Group == "COMM_GROUP" && c.Parent != nil && strconv.FormatUint(*c.Parent, 10) == world {
			halves = append(halves, fmt.Sprint(c.Members))
		}
	}
	sort.Strings(halves)
	if world == "" || strings.Join(halves, " ") != "[2 0] [3 1]" {
		t.Errorf("python3-otf2: communicators made from MPI_COMM_WORLD (%q) have members %v, want [2 0] and [3 1]:\n%s", world, halves, out)
	}
}

// checkSplitComm checks rank r's communicators in the file of requests.c:
// MPI_COMM_WORLD and MPI_COMM_SELF first, then the split by parity (ranked
// backwards, made from world), which every message and collective is on.
func checkSplitComm(t *testing.T, f *tracefile.File, r, np int) {
	t.Helper()
	var half []int32
	for w := np - 1; w >= 0; w-- {
		if w%2 == r%2 {
			half = append(half, int32(w))
		}
	}
	if len(f.Comms) != 3 {
		t.Fatalf("%s: communicators %+v, want world, self and the split", f.Path, f.Comms)
	}
	world, self, split := f.Comms[0], f.Comms[1], f.Comms[2]
	if world.Name != "MPI_COMM_WORLD" || len(world.Members) != np || world.Parent != 0 {
		t.Errorf("%s: first communicator %+v, want MPI_COMM_WORLD of %d ranks", f.Path, world, np)
	}
	if self.Name != "MPI_COMM_SELF" || !slices.Equal(self.Members, []int32{int32(r)}) {
		t.Errorf("%s: second communicator %+v, want MPI_COMM_SELF of rank %d", f.Path, self, r)
	}
	if split.Name != "" || split.Parent != world.ID || !slices.Equal(split.Members, half) || split.Remote != nil {
		t.Errorf("%s: split communicator %+v, want members %v made from world (id %d)", f.Path, split, half, world.ID)
	}
	var e tracefile.Event
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindSend, encode.KindRecv, encode.KindIsend, encode.KindIrecv, encode.KindCollective, encode.KindCollComplete:
				if want := split.ID; e.Comm != want {
					t.Errorf("%s: %v in %s on communicator %d, want the split, %d", f.Path, e.Kind, f.RegionName(e.Region), e.Comm, want)
				}
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRequests checks that every request a file starts completes once,
// after its start, with the kind of completion its start calls for.
func checkRequests(t *testing.T, f *tracefile.File) {
	t.Helper()
	complete := map[encode.Kind]encode.Kind{
		encode.KindIsend: encode.KindIsendComplete, encode.KindIrecvRequest: encode.KindIrecv, encode.KindCollRequest: encode.KindCollComplete,
	}
	open := map[uint64]encode.Kind{}
	var e tracefile.Event
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindIsend, encode.KindIrecvRequest, encode.KindCollRequest:
				if _, ok := open[e.Request]; ok {
					t.Errorf("%s: request %d started twice", f.Path, e.Request)
				}
				open[e.Request] = complete[e.Kind]
			case encode.KindIsendComplete, encode.KindIrecv, encode.KindCollComplete, encode.KindRequestCancelled:
				want, ok := open[e.Request]
				if !ok || (want != e.Kind && e.Kind != encode.KindRequestCancelled) {
					t.Errorf("%s: %v of request %d, started as %v", f.Path, e.Kind, e.Request, want)
				}
				delete(open, e.Request)
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(open) > 0 {
		t.Errorf("%s: requests never completed: %v", f.Path, open)
	}
}

// TestMPIImmediateSends: small MPI_Isends that Open MPI completes at once
// all get the same request handle; every one of them must still complete
// in the trace, in the round it was started, whichever Wait or Test call
// completes it, with nothing dropped.
//
// The requests' records go with their calls' leaves (hmb_mpi_leave, 26 of
// them with a Waitall's): on the direct path by default; one by one with
// the staged probes; and both ways with bins of 1 KiB, where a Waitall's
// records often find no room for them all.
func TestMPIImmediateSends(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "immediate", "immediate.c")
	for _, env := range [][]string{nil, {"HMB_C_PROBE=staged"}, {"HMB_BIN_SIZE=1K"}} {
		name := strings.Join(env, ",")
		if name == "" {
			name = "defaults"
		}
		t.Run(name, func(t *testing.T) {
			immediateSends(t, prog, env)
		})
	}
}

// immediateSends runs and checks immediate.c with the variables env.
func immediateSends(t *testing.T, prog string, env []string) {
	const np, neighbours = 6, 5
	out := filepath.Join(t.TempDir(), "hmb-out")
	outs, errs := mpirun(t, np, out, env, prog)
	files := rankFiles(t, out, "immediate", np)
	sends, recvs, _ := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	for r, f := range files {
		checkPrinted(t, r, outs[r], sends, recvs, false)
		if strings.Contains(errs[r], "dropped") {
			t.Errorf("rank %d: probes dropped:\n%s", r, errs[r])
		}
		checkRequests(t, f)
		// A round completes its sends before the next starts: never more
		// open than one round's.
		open, most := map[uint64]bool{}, 0
		var e tracefile.Event
		for _, l := range f.Locations {
			it := f.Events(l.ID)
			for it.Next(&e) {
				switch e.Kind {
				case encode.KindIsend:
					open[e.Request] = true
					most = max(most, len(open))
				case encode.KindIsendComplete:
					delete(open, e.Request)
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if most > neighbours {
			t.Errorf("rank %d: %d sends open at once, want at most %d", r, most, neighbours)
		}
		for _, line := range strings.Split(outs[r], "\n") {
			if n, ok := strings.CutPrefix(line, "shared "); ok {
				t.Logf("rank %d: %s send requests shared a handle with an earlier one", r, n)
			}
		}
	}
}

// TestMPIAbort: a rank that calls MPI_Abort writes its trace first.
func TestMPIAbort(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "requests", "requests.c")
	out := filepath.Join(t.TempDir(), "hmb-out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2", "-x", "HMB_OUTPUT", prog, "abort")
	cmd.Env = append(withoutHMB(os.Environ()), "HMB_OUTPUT="+out, "OMPI_MCA_mpi_yield_when_idle=1")
	msg, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("mpirun: %v, want the exit of MPI_Abort\n%s", err, msg)
	}
	f := tracetest.Open(t, filepath.Join(out, "requests.0.hmb"))
	enters := checkTrace(t, dump(t, f.Path), []string{"MPI_Init", "MPI_Ibarrier", "MPI_Abort"}, []string{"rank 0"})
	if enters["MPI_Finalize"] != 0 {
		t.Errorf("rank 0 aborted, yet its trace has MPI_Finalize")
	}
}

// TestMPIDeepReduced runs a C++ code whose MPI calls sit at depth 8, below
// six levels of its own regions and beside a wide compute tree, with a
// buffer far too small for the compute events (issue 16: on a real code,
// the depth reduction shed 73 % of the messages). The compute levels must
// go first: every message, MPI region and collective is kept, the messages
// are those the program made, and the communication matrix equals the one
// of a run whose buffer held everything.
func TestMPIDeepReduced(t *testing.T) {
	build := mpiLibrary(t)
	tracetest.RequireTool(t, "mpicxx", "libopenmpi-dev (g++)")
	prog := mpiBuild(t, build, "mpicxx", "deep", "deep.cc")
	const np = 4
	full := filepath.Join(t.TempDir(), "full")
	mpirun(t, np, full, nil, prog)
	small := filepath.Join(t.TempDir(), "small")
	outs, errs := mpirun(t, np, small, []string{"HMB_BUFFER_SIZE=64K", "HMB_BIN_SIZE=1K"}, prog)

	files := rankFiles(t, small, "deep", np)
	sends, recvs, _ := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	for r, f := range files {
		checkPrinted(t, r, outs[r], sends, recvs, false)
		if strings.Contains(errs[r], "dropped") {
			t.Errorf("rank %d: probes dropped:\n%s", r, errs[r])
		}
		depthReductions := 0
		for _, red := range f.Reductions {
			if red.Reason == tracefile.ByDepth {
				depthReductions++
			}
		}
		var computeRemoved uint64
		for _, l := range f.Locations {
			for _, lv := range l.Levels {
				if lv.Class.Communication() {
					if n := lv.Removed().Total(); n != 0 {
						t.Errorf("rank %d: %d %v events removed at depth %d", r, n, lv.Class, lv.Depth)
					}
				} else {
					computeRemoved += lv.Removed().Total()
				}
			}
		}
		if depthReductions == 0 || computeRemoved == 0 {
			t.Errorf("rank %d: %d depth reductions, %d compute events removed: the buffer was meant to be too small", r, depthReductions, computeRemoved)
		}
		enters := checkTrace(t, dump(t, f.Path), []string{"MPI_Sendrecv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce"}, nil)
		for _, name := range []string{"MPI_Sendrecv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce"} {
			if enters[name] != 200 {
				t.Errorf("rank %d: %d enters of %s kept, want all 200", r, enters[name], name)
			}
		}
	}
	matrix := func(dir string) string {
		out, err := run(root, nil, built.hmbtrace, "comm", "-tsv", dir)
		if err != nil {
			t.Fatalf("hmbtrace comm: %v\n%s", err, out)
		}
		return string(out)
	}
	if a, b := matrix(full), matrix(small); a != b || a == "" {
		t.Errorf("communication matrix with the small buffer\n%s\nwith a buffer that held everything\n%s", b, a)
	}
}

// TestMPIClockSyncOneNode checks both ways of synchronising the clocks of
// ranks on one node: by default their offsets are exactly 0 (they read one
// clock, so no ping-pong runs between them), and with
// HMB_CLOCK_SYNC=measure every edge of the tree ping-pongs, as it does
// between nodes, so that path runs on this one-node machine too: its
// offsets are measured (not all exactly 0) and small.
func TestMPIClockSyncOneNode(t *testing.T) {
	build := mpiLibrary(t)
	p := buildExample(t, build, "mpi-jacobi")
	const np = 4
	for _, how := range []string{"auto", "measure"} {
		out := filepath.Join(t.TempDir(), how)
		mpirun(t, np, out, []string{"HMB_CLOCK_SYNC=" + how}, p.path, "-r", "64", "-c", "64", "-i", "5")
		files := rankFiles(t, out, "mpi-jacobi", np)
		measured := 0
		for _, f := range files[1:] {
			if n := len(f.Header.ClockSync); n != 2 {
				t.Errorf("%s: %s: %d clock sync points, want 2 (init, finalize)", how, f.Path, n)
			}
			for _, c := range f.Header.ClockSync {
				if c.Offset != 0 {
					measured++
				}
				if ns := f.TicksToNanos(uint64(max(c.Offset, -c.Offset))); ns > 10_000_000 {
					t.Errorf("%s: %s: clock offset %d ns to rank 0 on the same host", how, f.Path, ns)
				}
			}
		}
		if how == "auto" && measured != 0 {
			t.Errorf("auto: %d offsets other than 0 between ranks of one node: they read one clock", measured)
		}
		if how == "measure" && measured == 0 {
			t.Error("measure: every offset exactly 0: the ping-pongs did not run")
		}
		if !tracefile.NewAxis(files).Synced() {
			t.Errorf("%s: the rank files are not placed on rank 0's clock", how)
		}
	}
}
