package measure

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestCrashChild is the child process of the crash tests; it runs only when
// they start it.
func TestCrashChild(t *testing.T) {
	mode := os.Getenv("HMB_CRASH_CHILD")
	if mode == "" {
		t.Skip("the child process of the crash tests")
	}
	m, err := Start(Config{Output: os.Getenv("HMB_CRASH_DIR"), Name: "crash", Signals: mode == "signal" || mode == "sleep", BufferSize: 1 << 20, BinSize: 1024})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	outer, inner := m.Region("outer"), m.Region("inner")
	switch mode {
	case "close":
		loc := m.Location("main")
		loc.Enter(outer)
		loc.Leave(outer)
		m.Close()
		os.Exit(0)
	case "panic":
		defer m.Close()
		loc := m.Location("main")
		loc.Enter(outer) // left open: Close leaves it
		loc.Enter(inner)
		loc.Leave(inner)
		panic("boom")
	case "signal":
		// Goroutines record as fast as they can while the signal comes.
		var started sync.WaitGroup
		for g := 0; g < 4; g++ {
			started.Add(1)
			go func(g int) {
				loc := m.Location(fmt.Sprintf("g%d", g))
				loc.Enter(outer)
				started.Done()
				for i := 0; ; i++ {
					loc.Enter(inner)
					if i%7 == 0 {
						loc.Send(loc, 1, 8)
					}
					loc.Leave(inner)
				}
			}(g)
		}
		started.Wait()
		time.Sleep(50 * time.Millisecond)
		fmt.Println("ready")
		select {}
	case "sleep":
		// The signal comes while main sleeps and a worker waits: the
		// signal's Close waits its grace for the worker, main wakes
		// meanwhile and closes and exits as a program's end does.
		loc := m.Location("main")
		loc.Enter(outer)
		loc.Leave(outer)
		go func() {
			w := m.Location("worker")
			w.Enter(inner)
			select {}
		}()
		fmt.Println("ready")
		time.Sleep(100 * time.Millisecond)
		m.Close()
		os.Exit(0)
	}
}

// TestSignalWhileAsleep: a signal HMB_SIGNALS catches ends the process by
// that signal even when the program's own end comes while the trace is
// written; a batch system must not see a job killed at its limit exit 0.
func TestSignalWhileAsleep(t *testing.T) {
	cmd, out, stderr, path := startChild(t, "sleep")
	line, err := out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		t.Fatalf("child said %q, %v\n%s", line, err, stderr)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want death by SIGTERM\n%s", err, stderr)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want death by SIGTERM\n%s", ee, stderr)
	}
	checkCrashTrace(t, path)
}

func startChild(t *testing.T, mode string) (*exec.Cmd, *bufio.Reader, *strings.Builder, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "HMB_CRASH_CHILD="+mode, "HMB_CRASH_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(out), &stderr, filepath.Join(dir, "crash.0.hmb")
}

// checkCrashTrace opens the trace a child left and reads every event.
func checkCrashTrace(t *testing.T, path string) *tracefile.File {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatalf("the trace is not readable: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	for i := range f.Locations {
		l := &f.Locations[i]
		if !l.Interrupted {
			checkCounts(t, l)
		}
		evs, _ := readBack(t, f, l.ID)
		if uint64(len(evs)) != l.Kept() && !l.Interrupted {
			t.Errorf("%s: read %d events, %d kept", l.Name, len(evs), l.Kept())
		}
	}
	return f
}

func TestCrashClose(t *testing.T) {
	cmd, _, stderr, path := startChild(t, "close")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr)
	}
	checkCrashTrace(t, path)
}

func TestCrashPanic(t *testing.T) {
	cmd, _, stderr, path := startChild(t, "panic")
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "panic: boom") {
		t.Fatalf("child: %v, want exit status 2 from the panic\n%s", err, stderr)
	}
	f := checkCrashTrace(t, path)
	if u := f.Locations[0].Usage; u.OpenAtClose != 1 {
		t.Errorf("usage %+v: want the region left open by the panic left at Close", u)
	}
}

func TestCrashSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, out, stderr, path := startChild(t, "signal")
			line, err := out.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "ready" {
				cmd.Process.Kill()
				t.Fatalf("child said %q, %v\n%s", line, err, stderr)
			}
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child: %v, want death by %v\n%s", err, sig, stderr)
			}
			ws := ee.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != sig {
				t.Fatalf("child ended with %v, want death by %v\n%s", ee, sig, stderr)
			}
			f := checkCrashTrace(t, path)
			if len(f.Locations) != 4 {
				t.Fatalf("%d locations in the trace, want 4", len(f.Locations))
			}
			var kept uint64
			for _, l := range f.Locations {
				kept += l.Kept()
			}
			if kept == 0 {
				t.Error("the trace holds no events")
			}
		})
	}
}
