//go:build linux

package measure

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// mappingOf returns the path of the one mapping file in dir.
func mappingOf(t *testing.T, dir string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "hmbtrace-*.shm"))
	if len(found) != 1 {
		t.Fatalf("mapping files in %s: %v, want one", dir, found)
	}
	return found[0]
}

// recurse records a call tree of the given depth, with a message at the
// leaves, to fill the buffer and make it reduce.
func recurse(loc *Location, regions []Region, d int) {
	r := regions[d%len(regions)]
	loc.Enter(r)
	if d > 1 {
		recurse(loc, regions, d-1)
		recurse(loc, regions, d-2)
	} else {
		loc.Send(loc, uint32(d), 8)
	}
	loc.Leave(r)
}

// readAll reads every event of every location, failing on any error, and
// returns them by location id.
func readAll(t *testing.T, f *tracefile.File) map[uint32][]recEvent {
	t.Helper()
	out := map[uint32][]recEvent{}
	for i := range f.Locations {
		l := &f.Locations[i]
		evs, _ := readBack(t, f, l.ID)
		out[l.ID] = evs
	}
	return out
}

// TestSurviveMatchesClose reads a live measurement's mapping (with force)
// while its writers are idle, then closes it: the recovered events are the
// trace file's, reductions included, and Close removes the mapping.
func TestSurviveMatchesClose(t *testing.T) {
	for _, policy := range []Reduction{ReduceDepth, ReduceClass, ReduceFirst, ReduceLast} {
		t.Run(policy.String(), func(t *testing.T) {
			dir, out := t.TempDir(), t.TempDir()
			m, err := Start(Config{Output: out, Name: "surv", Survive: true, SurviveDir: dir, BufferSize: 32 << 10, BinSize: 1 << 10, Reduction: policy})
			if err != nil {
				t.Fatal(err)
			}
			regions := []Region{m.Region("a"), m.Region("b"), m.Region("c")}
			locs := []*Location{m.Location("one"), m.Location("two")}
			for i := 0; i < 80; i++ {
				for _, loc := range locs {
					recurse(loc, regions, 3+i%5)
				}
			}
			if len(m.Reductions()) == 0 {
				t.Fatal("no reduction happened: the test does not test them")
			}
			path := mappingOf(t, dir)
			if _, err := tracefile.Recover(path, false); err == nil || !strings.Contains(err.Error(), "still running") {
				t.Fatalf("recover of a live process's mapping: %v, want it refused", err)
			}
			r, err := tracefile.Recover(path, true)
			if err != nil {
				t.Fatal(err)
			}
			b, err := r.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			rf, err := tracefile.Read(strings.NewReader(string(b)), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, rf)
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("Close left the mapping %s (%v)", path, err)
			}
			f, err := tracefile.Open(m.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := readAll(t, f)
			for id, w := range want {
				if !slices.Equal(got[id], w) {
					t.Errorf("location %d: recovered %d events, the trace file has %d; they differ", id, len(got[id]), len(w))
				}
			}
			if len(rf.Reductions) != len(f.Reductions) {
				t.Errorf("recovered %d reductions, the trace file has %d", len(rf.Reductions), len(f.Reductions))
			}
			for i := range f.Locations {
				fl, rl := &f.Locations[i], rf.Location(f.Locations[i].ID)
				if rl == nil || rl.Name != fl.Name {
					t.Fatalf("location %q not recovered", fl.Name)
				}
				visits := map[uint32]uint64{}
				for _, p := range fl.Profile {
					visits[p.Region] = p.Visits
				}
				for _, p := range rl.Profile {
					if p.Visits == 0 || p.Visits > visits[p.Region] {
						t.Errorf("%s: region %d: %d visits recovered from the events, %d counted by the probes", fl.Name, p.Region, p.Visits, visits[p.Region])
					}
				}
				if len(rl.Profile) == 0 {
					t.Errorf("%s: no profile recovered", fl.Name)
				}
				if rl.Kept() != fl.Kept() || rl.Removed().Total() > fl.Removed().Total() || rl.Recorded > fl.Recorded {
					t.Errorf("%s: recovered kept %d removed %d recorded %d; the file: kept %d removed %d recorded %d",
						fl.Name, rl.Kept(), rl.Removed().Total(), rl.Recorded, fl.Kept(), fl.Removed().Total(), fl.Recorded)
				}
			}
		})
	}
}

// TestSurviveChild is the child process of the kill tests; it runs only
// when they start it. It records in several goroutines, with reductions,
// until it is killed.
func TestSurviveChild(t *testing.T) {
	dir := os.Getenv("HMBTEST_SURVIVE_CHILD")
	if dir == "" {
		t.Skip("the child process of the survive tests")
	}
	policy := ReduceDepth
	if os.Getenv("HMBTEST_SURVIVE_LAST") != "" {
		policy = ReduceLast // a reduction with every bin taken: one is under way at any kill
	}
	m, err := Start(Config{Output: dir, Name: "killed", Survive: true, SurviveDir: dir, BufferSize: 64 << 10, BinSize: 1 << 10,
		MinDuration: time.Duration(len(os.Getenv("HMBTEST_SURVIVE_MINDUR"))) * time.Microsecond, Reduction: policy})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	regions := []Region{m.Region("a"), m.Region("b"), m.Region("c"), m.Region("d")}
	ready := make(chan bool)
	for g := 0; g < 3; g++ {
		go func(g int) {
			loc := m.Location(fmt.Sprintf("g%d", g))
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; ; i++ {
				recurse(loc, regions, 2+rng.IntN(8))
				if i == 100 {
					ready <- true
				}
			}
		}(g)
	}
	for g := 0; g < 3; g++ {
		<-ready
	}
	fmt.Println("ready")
	select {}
}

// TestSurviveKill kills a recording process with SIGKILL at random
// points, many times, and recovers its trace each time: it must read
// whole, its events nested, its counts consistent.
func TestSurviveKill(t *testing.T) {
	rounds := 24
	if testing.Short() {
		rounds = 4
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for i := 0; i < rounds; i++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestSurviveChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), "HMBTEST_SURVIVE_CHILD="+dir)
		switch i % 3 {
		case 1:
			cmd.Env = append(cmd.Env, "HMBTEST_SURVIVE_MINDUR=xx") // 2us: the duration filter's pending enters
		case 2:
			cmd.Env = append(cmd.Env, "HMBTEST_SURVIVE_LAST=1")
		}
		out, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q, %v\n%s", line, err, stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(40000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		path := mappingOf(t, dir)
		r, err := tracefile.Recover(path, false)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if !strings.Contains(r.Cause, "died") {
			t.Errorf("round %d: cause %q", i, r.Cause)
		}
		// Readers take the mapping itself.
		f, err := tracefile.Open(path)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if len(f.Locations) != 3 {
			t.Errorf("round %d: %d locations, want 3", i, len(f.Locations))
		}
		var kept uint64
		for j := range f.Locations {
			l := &f.Locations[j]
			checkCounts(t, l)
			evs, truncated := readBack(t, f, l.ID)
			n := uint64(0)
			for _, tr := range truncated {
				if !tr { // not the context a keep-last window starts with
					n++
				}
			}
			if n != l.Kept() {
				t.Errorf("round %d: %s: read %d events, %d kept", i, l.Name, n, l.Kept())
			}
			checkNested(t, evs)
			kept += l.Kept()
		}
		if kept == 0 || len(f.Reductions) == 0 {
			t.Errorf("round %d: %d events kept, %d reductions: the run did not fill its buffer", i, kept, len(f.Reductions))
		}
		f.Close()
		// recover writes the ordinary file at the process's output path.
		pl, err := r.Write(filepath.Join(dir, "killed.0.hmb"))
		if err != nil {
			t.Fatal(err)
		}
		g, err := tracefile.Open(pl.Path)
		if err != nil {
			t.Fatalf("round %d: the recovered file: %v", i, err)
		}
		g.Close()
	}
}

// TestSurviveConfig checks the variables and that a directory on a
// network file system, or one that is missing, is refused by name.
func TestSurviveConfig(t *testing.T) {
	configFrom := func(env map[string]string) (Config, error) {
		var environ []string
		for k, v := range env {
			environ = append(environ, k+"="+v)
		}
		return configFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, environ, io.Discard)
	}
	c, err := configFrom(map[string]string{"HMB_SURVIVE": "1", "HMB_SURVIVE_DIR": "/tmp"})
	if err != nil || !c.Survive || c.SurviveDir != "/tmp" {
		t.Fatalf("%+v, %v", c, err)
	}
	if _, err := configFrom(map[string]string{"HMB_SURVIVE": "maybe"}); err == nil || !strings.Contains(err.Error(), "HMB_SURVIVE") {
		t.Errorf("HMB_SURVIVE=maybe: %v", err)
	}
	_, err = Start(Config{Survive: true, SurviveDir: "/nonexistent/dir", Output: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "HMB_SURVIVE_DIR=/nonexistent/dir") {
		t.Errorf("a missing directory: %v", err)
	}
	if survive.FileName("x", 2, 7) != "hmbtrace-x.2.7.shm" {
		t.Error(survive.FileName("x", 2, 7))
	}
}

// BenchmarkEnterLeaveSurvive is BenchmarkEnterLeave with the buffer in a
// mapping under /dev/shm (HMB_SURVIVE=1): compare the two, interleaved
// (go test -run '^$' -bench 'EnterLeave(Survive)?$' -count 10 ./measure).
func BenchmarkEnterLeaveSurvive(b *testing.B) {
	benchEnterLeave(b, Config{BufferSize: 16 << 20, NoThrottle: true, Survive: true})
}

// BenchmarkStartClose times what a measurement with the default buffer
// costs a run that records little: Start, and Close writing the trace,
// with the buffer on the heap and in the surviving mapping. Start
// calibrates the clock longer for the mapping (fullCalibration), which
// keeps the rate of Start for a process that dies; Close waits out the
// rest of that time for the heap.
//
//	go test -run '^$' -bench StartClose -count 10 ./measure
func BenchmarkStartClose(b *testing.B) {
	for _, survive := range []bool{false, true} {
		name := "heap"
		if survive {
			name = "survive"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			var start, close time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				m, err := Start(Config{Output: dir, Name: "start", Survive: survive, SurviveDir: dir, IgnoreEnv: true})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				r, loc := m.Region("main"), m.Location("main")
				loc.Enter(r)
				loc.Leave(r)
				t2 := time.Now()
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
				start += t1.Sub(t0)
				close += time.Since(t2)
				os.Remove(m.Path())
			}
			b.ReportMetric(float64(start.Microseconds())/float64(b.N), "start-µs")
			b.ReportMetric(float64(close.Microseconds())/float64(b.N), "close-µs")
		})
	}
}

// TestSurviveCloseFails: when Close cannot write the trace, the mapping
// stays and the error names it; recover makes the trace from it.
func TestSurviveCloseFails(t *testing.T) {
	dir := t.TempDir()
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Start(Config{Output: filepath.Join(blocked, "out"), Name: "blocked", Survive: true, SurviveDir: dir, BufferSize: 16 << 10, BinSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r, loc := m.Region("r"), m.Location("main")
	loc.Enter(r)
	loc.Leave(r)
	err = m.Close()
	path := mappingOf(t, dir)
	if err == nil || !strings.Contains(err.Error(), "the buffer is left in "+path) {
		t.Fatalf("Close: %v, want the mapping named", err)
	}
	rec, err := tracefile.Recover(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Records != 2 {
		t.Errorf("%d records recovered, want the enter and the leave", rec.Records)
	}
}

// TestSurviveDefinitions: communicators, RMA windows (with the name given
// last) and RMA groups are in the mapping as they are defined.
func TestSurviveDefinitions(t *testing.T) {
	dir := t.TempDir()
	m, err := Start(Config{Output: t.TempDir(), Name: "defs", Survive: true, SurviveDir: dir, BufferSize: 16 << 10, BinSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	world, err := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.defineWin(world)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.defineWin(world); err != nil {
		t.Fatal(err)
	}
	if err := m.nameWin(w, "halo"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.defineRmaGroup([]int32{2, 0}); err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.Recover(mappingOf(t, dir), true)
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Trace
	if len(tr.Comms) != 1 || tr.Comms[0].Name != "MPI_COMM_WORLD" || len(tr.Comms[0].Members) != 3 {
		t.Errorf("communicators %+v", tr.Comms)
	}
	if len(tr.Wins) != 2 || tr.Wins[0].Name != "halo" || tr.Wins[1].ID != 2 || tr.Wins[1].Comm != uint32(world) {
		t.Errorf("windows %+v", tr.Wins)
	}
	if len(tr.RmaGroups) != 1 || !slices.Equal(tr.RmaGroups[0].Members, []int32{2, 0}) {
		t.Errorf("RMA groups %+v", tr.RmaGroups)
	}
}
