package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestExitChild is the child process of the exit tests; it runs only when
// they start it. It records 1000 calls inside a region it never leaves and
// then exits in the way its mode names.
func TestExitChild(t *testing.T) {
	mode := os.Getenv("HMBTEST_EXIT_CHILD")
	if mode == "" {
		t.Skip("the child process of the exit tests")
	}
	dir := os.Getenv("HMBTEST_EXIT_DIR")
	m, err := Start(Config{Output: dir, Name: "exit", Survive: mode == "os.Exit survive", SurviveDir: dir, BufferSize: 1 << 20, BinSize: 1024})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	defer m.Close() // what os.Exit skips
	main, work := m.Region("main"), m.Region("work")
	loc := m.Location("main")
	loc.Enter(main) // left open: Exit happens inside it
	for i := 0; i < 1000; i++ {
		loc.Enter(work)
		loc.Leave(work)
	}
	switch mode {
	case "Exit":
		Exit(3)
	case "Exit busy":
		// Goroutines record as fast as they can while Exit comes.
		var started sync.WaitGroup
		for g := 0; g < 3; g++ {
			started.Add(1)
			go func(g int) {
				loc := m.Location(fmt.Sprintf("g%d", g))
				loc.Enter(main)
				started.Done()
				for {
					loc.Enter(work)
					loc.Leave(work)
				}
			}(g)
		}
		started.Wait()
		time.Sleep(20 * time.Millisecond)
		Exit(3)
	case "Exit in spans":
		// Exit inside a region of the main goroutine's lane, while
		// another goroutine's lane waits inside its own.
		ctx := NewContext(context.Background(), m)
		started := make(chan struct{})
		go func() {
			defer StartRegion(ctx, NewRegion("background")).End()
			close(started)
			select {}
		}()
		<-started
		StartRegion(ctx, NewRegion("solve")) // left open: Exit happens inside it
		time.Sleep(10 * time.Millisecond)
		Exit(3)
	case "Fatalf":
		Fatalf("solver diverged at step %d", 7)
	case "os.Exit", "os.Exit survive":
		os.Exit(3)
	}
}

func runExitChild(t *testing.T, mode string) (code int, stderr, dir string) {
	t.Helper()
	dir = t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "HMBTEST_EXIT_CHILD="+mode, "HMBTEST_EXIT_DIR="+dir)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child %s: %v, want an exit status\n%s", mode, err, errBuf.String())
	}
	return ee.ExitCode(), errBuf.String(), dir
}

// checkExitTrace checks that a child's trace holds its 1000 calls and the
// region it exited in, ended at the exit and not counted as a usage error.
func checkExitTrace(t *testing.T, path string) {
	t.Helper()
	f := checkCrashTrace(t, path)
	if len(f.Locations) != 1 {
		t.Fatalf("%d locations, want 1", len(f.Locations))
	}
	l := &f.Locations[0]
	if l.Usage != (tracefile.UsageErrors{}) {
		t.Errorf("usage errors %+v, want none: the region open at the exit is where the program exited from", l.Usage)
	}
	evs, _ := readBack(t, f, l.ID)
	if len(evs) != 2002 {
		t.Errorf("%d events, want 2002: main's enter and leave, 1000 calls of work", len(evs))
	}
	checkNested(t, evs)
	visits := map[string]uint64{}
	for _, p := range l.Profile {
		visits[f.Regions[p.Region-1].Name] = p.Visits
	}
	if visits["main"] != 1 || visits["work"] != 1000 {
		t.Errorf("visits %v, want main 1, work 1000", visits)
	}
}

func TestExitWritesTrace(t *testing.T) {
	code, stderr, dir := runExitChild(t, "Exit")
	if code != 3 {
		t.Fatalf("exit status %d, want 3\n%s", code, stderr)
	}
	checkExitTrace(t, filepath.Join(dir, "exit.0.hmb"))
}

// Exit while other goroutines record: each stops at its next probe, and
// the trace holds every location whole, its calls nested.
func TestExitWhileRecording(t *testing.T) {
	code, stderr, dir := runExitChild(t, "Exit busy")
	if code != 3 {
		t.Fatalf("exit status %d, want 3\n%s", code, stderr)
	}
	f := checkCrashTrace(t, filepath.Join(dir, "exit.0.hmb"))
	if len(f.Locations) != 4 {
		t.Fatalf("%d locations, want 4", len(f.Locations))
	}
	for i := range f.Locations {
		l := &f.Locations[i]
		// The probes made while Exit writes the trace are dropped and
		// counted, as after any Close; nothing else is a usage error.
		u := l.Usage
		u.AfterClose = 0
		if l.Interrupted || u != (tracefile.UsageErrors{}) {
			t.Errorf("%s: interrupted %v, usage errors %+v; want neither", l.Name, l.Interrupted, l.Usage)
		}
		evs, _ := readBack(t, f, l.ID)
		checkNested(t, evs)
		if len(evs) < 2 || evs[len(evs)-1].region != 1 {
			t.Errorf("%s: %d events, the last %v: want main left last", l.Name, len(evs), evs[len(evs)-1:])
		}
	}
}

func TestFatalWritesTrace(t *testing.T) {
	code, stderr, dir := runExitChild(t, "Fatalf")
	if code != 1 || !strings.Contains(stderr, "solver diverged at step 7") {
		t.Fatalf("exit status %d, want 1 and the message\n%s", code, stderr)
	}
	checkExitTrace(t, filepath.Join(dir, "exit.0.hmb"))
}

// checkNested checks that the enters and leaves of a location nest: each
// leave leaves the innermost open region, at its depth.
func checkNested(t *testing.T, evs []recEvent) {
	t.Helper()
	var stack []recEvent
	for i, e := range evs {
		switch e.kind {
		case encode.KindEnter:
			if e.depth != len(stack)+1 && len(stack) > 0 && e.depth <= stack[len(stack)-1].depth {
				t.Fatalf("event %d: enter at depth %d inside depth %d", i, e.depth, stack[len(stack)-1].depth)
			}
			stack = append(stack, e)
		case encode.KindLeave:
			if len(stack) == 0 || stack[len(stack)-1].region != e.region || stack[len(stack)-1].depth != e.depth {
				t.Fatalf("event %d: leave of %d at depth %d, open: %v", i, e.region, e.depth, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// Exit closes every measurement still running and only those.
func TestExitClosesRunning(t *testing.T) {
	a := startTest(t, Config{Name: "a"})
	b := startTest(t, Config{Name: "b"})
	c := startTest(t, Config{Name: "c"})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	isRunning := func(m *Measurement) bool {
		running.mu.Lock()
		defer running.mu.Unlock()
		for _, x := range running.ms {
			if x == m {
				return true
			}
		}
		return false
	}
	if !isRunning(a) || isRunning(b) || !isRunning(c) {
		t.Fatalf("running a %v, b %v, c %v: want a and c", isRunning(a), isRunning(b), isRunning(c))
	}
	closeRunning()
	for _, m := range []*Measurement{a, c} {
		if isRunning(m) {
			t.Errorf("%s still running", m.cfg.Name)
		}
		if _, err := os.Stat(m.Path()); err != nil {
			t.Errorf("%s: %v", m.cfg.Name, err)
		}
	}
}

// Exit inside the regions of goroutines' lanes (StartRegion): each ends at
// the exit, as a Location's do, none is a usage error, and no lane is
// left interrupted. They were left open (the summary gave them 0 ns and
// blamed a signal).
func TestExitEndsLanes(t *testing.T) {
	code, stderr, dir := runExitChild(t, "Exit in spans")
	if code != 3 {
		t.Fatalf("exit status %d, want 3\n%s", code, stderr)
	}
	f := checkCrashTrace(t, filepath.Join(dir, "exit.0.hmb"))
	incl := map[string]int64{}
	for _, l := range f.Locations {
		if l.Interrupted || l.Usage != (tracefile.UsageErrors{}) {
			t.Errorf("%s: interrupted %v, usage errors %+v; want neither", l.Name, l.Interrupted, l.Usage)
		}
		for _, p := range l.Profile {
			incl[f.Regions[p.Region-1].Name] += f.TicksToNanos(p.Inclusive)
		}
	}
	for _, r := range []string{"solve", "background"} {
		if incl[r] < int64(10*time.Millisecond) {
			t.Errorf("%s: %d ns inclusive; want the 10 ms before the exit at least", r, incl[r])
		}
	}
}
