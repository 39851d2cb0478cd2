//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestRecoveredChild is the child of TestRecoveredSummary: a program that
// records into a small surviving buffer until it is killed, printing how
// many events it recorded so far.
func TestRecoveredChild(t *testing.T) {
	dir := os.Getenv("HMBTEST_RECOVERED_CHILD")
	if dir == "" {
		t.Skip("the child process of TestRecoveredSummary")
	}
	m, err := measure.Start(measure.Config{Output: dir, Name: "killed", Survive: true, SurviveDir: dir,
		BufferSize: 64 << 10, BinSize: 1 << 10, Reduction: measure.ReduceDepth, NoThrottle: true, Signals: os.Getenv("HMBTEST_RECOVERED_SIGNALS") != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	regions := []measure.Region{m.Region("main"), m.Region("step"), m.Region("kernel"), m.Region("inner")}
	loc := m.Location("main")
	var rec func(d int) uint64
	rec = func(d int) uint64 {
		loc.Enter(regions[min(d, 3)])
		n := uint64(2)
		if d < 6 {
			n += rec(d+1) + rec(d+1)
		}
		loc.Leave(regions[min(d, 3)])
		return n
	}
	loc.Enter(regions[0])
	events := uint64(1)
	for i := 0; ; i++ {
		events += rec(1)
		if i%50 == 0 {
			fmt.Printf("%d\n", events) // at least this many were recorded
		}
		if i == 2000 {
			fmt.Println("ready")
		}
		if i > 2000 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// recoveredRun runs the child, kills it with SIGKILL once it filled its
// buffer (with signals, after a SIGTERM its handler catches), recovers its
// mapping and returns the summary of the recovered trace, its path and the
// events the child said it had recorded at least. The path is "" when the
// handler wrote the trace file before the SIGKILL.
func recoveredRun(t *testing.T, signals bool) (summary, path string, counted uint64) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecoveredChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "HMBTEST_RECOVERED_CHILD="+dir)
	if signals {
		cmd.Env = append(cmd.Env, "HMBTEST_RECOVERED_SIGNALS=1")
	}
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(out)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %v\n%s", err, stderr.String())
		}
		if strings.TrimSpace(line) == "ready" {
			break
		}
		fmt.Sscan(line, &counted)
	}
	time.Sleep(20 * time.Millisecond)
	if signals {
		cmd.Process.Signal(syscall.SIGTERM)
		// SIGKILL once the handler stored the signal, before it wrote
		// the trace (it first waits for the goroutines to leave the
		// probes).
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Microsecond) {
			found, _ := filepath.Glob(filepath.Join(dir, "*.shm"))
			if len(found) != 1 {
				break
			}
			if mappingSignal(found[0]) != 0 {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	go io.Copy(io.Discard, rd)
	cmd.Wait()
	if found, _ := filepath.Glob(filepath.Join(dir, "killed.*.hmb")); len(found) > 0 {
		return "", "", counted // the handler wrote the trace file
	}
	outDir := t.TempDir()
	var o, e bytes.Buffer
	if rc := run([]string{"recover", "-o", outDir, dir}, &o, &e); rc != 0 {
		t.Fatalf("recover: exit %d: %s %s", rc, o.String(), e.String())
	}
	found, _ := filepath.Glob(filepath.Join(outDir, "*.hmb"))
	if len(found) != 1 {
		t.Fatalf("recovered files %v: %s", found, o.String())
	}
	o.Reset()
	e.Reset()
	if rc := run([]string{"summary", found[0]}, &o, &e); rc != 0 {
		t.Fatalf("summary: exit %d: %s", rc, e.String())
	}
	return o.String(), found[0], counted
}

// mappingSignal reads the signal a handler stored in the header of the
// mapping at path; 0 if none (or the file is gone).
func mappingSignal(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], int64(unsafe.Offsetof(survive.Header{}.Signal))); err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b[:])
}

// TestRecoveredSummary: a program killed by SIGKILL after its buffer
// reduced, recovered: the summary says the trace was recovered, that no
// handler saw the end (not "a signal"), which figures are lower bounds,
// gives a run that lasts to its last reduction at least, and a profile.
// Killed by SIGTERM, caught, and then by SIGKILL before the handler wrote
// the trace, it names the caught signal.
func TestRecoveredSummary(t *testing.T) {
	s, path, counted := recoveredRun(t, false)
	for _, want := range []string{
		"RECOVERED by hmbtrace recover",
		"without a caught signal (SIGKILL, the OOM killer, a crash or _exit",
		"lower bound: events recorded",
		"lower bound: the flat profile",
		"events recorded  >= ",
		"still running when the process died (no handler saw a signal",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary does not say %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "a signal ended the run") {
		t.Errorf("the summary blames a signal for a SIGKILL:\n%s", s)
	}
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Recovered == nil || f.Recovered.End != tracefile.EndUnknown || f.Recovered.Signal != 0 {
		t.Errorf("recovered %+v", f.Recovered)
	}
	if len(f.Reductions) == 0 {
		t.Fatalf("no reduction: the child did not fill its buffer\n%s", s)
	}
	for _, r := range f.Reductions {
		if at := f.Nanos(r.Time); at > f.Duration() {
			t.Errorf("a reduction at %d ns in a run of %d ns", at, f.Duration())
		}
	}
	var visits uint64
	for _, l := range f.Locations {
		for _, p := range l.Profile {
			visits += p.Visits
		}
	}
	if visits == 0 {
		t.Errorf("an empty profile\n%s", s)
	}
	_ = counted
	html := filepath.Join(t.TempDir(), "r.html")
	var o, e bytes.Buffer
	if rc := run([]string{"report", "-o", html, path}, &o, &e); rc != 0 {
		t.Fatalf("report: exit %d: %s", rc, e.String())
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "recovered by hmbtrace recover: died without closing") || strings.Contains(string(b), "a signal ended the run") {
		t.Errorf("the report does not say the trace was recovered and how the run ended (%v)", err)
	}

	// SIGTERM caught by HMB_SIGNALS, then SIGKILL while the handler
	// waits for the program's goroutines: the mapping names the signal.
	// The handler may win and write the trace; then there is nothing to
	// recover, and the round is tried again.
	for try := 0; try < 5; try++ {
		s, path, _ = recoveredRun(t, true)
		if path == "" {
			continue
		}
		t.Logf("try %d: recovered after a caught SIGTERM", try)
		if !strings.Contains(s, "ended by signal 15 (SIGTERM), which its handler caught") {
			t.Errorf("after a caught SIGTERM:\n%s", s)
		}
		return
	}
	t.Log("the handler wrote the trace before SIGKILL in every try")
}
