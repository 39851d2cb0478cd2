package live

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestScrapeHeatWhileItRuns runs examples/heat with HMB_LISTEN, reads its
// live view with `go tool pprof -top` and as JSON while it computes, sends
// it malformed requests, and checks the run still ends well.
func TestScrapeHeatWhileItRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/heat")
	}
	dir := t.TempDir()
	bin := tracetest.BuildExample(t, "heat")
	cmd := exec.Command(bin, "-n", "512", "-iters", "100000", "-quiet")
	cmd.Env = append(os.Environ(), "HMB_LISTEN=127.0.0.1:0", "HMB_OUTPUT="+dir, "HMB_SIGNALS=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var url string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "hmbtrace: live view at "); ok {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatal("heat did not announce its live view")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	time.Sleep(300 * time.Millisecond) // let it compute a while

	top, err := exec.Command("go", "tool", "pprof", "-top", url+"profile").CombinedOutput()
	if err != nil || !strings.Contains(string(top), "update row") || !strings.Contains(string(top), "halo wait") {
		t.Fatalf("go tool pprof -top: %v\n%s", err, top)
	}
	code, body := get(t, url+"phases")
	var ph PhasesJSON
	if code != 200 || json.Unmarshal(body, &ph) != nil || ph.Region != "iteration" || len(ph.Locations) == 0 {
		t.Fatalf("phases: %d %.300s", code, body)
	}
	code, body = get(t, url+"stats")
	var st StatsJSON
	if code != 200 || json.Unmarshal(body, &st) != nil || st.Recorded == 0 {
		t.Fatalf("stats: %d %.300s", code, body)
	}
	if code, _ := post(t, url+"control", `{"close_depth":"deep"}`); code != 400 {
		t.Errorf("malformed control: %d", code)
	}
	if code, _ := post(t, url+"control", strings.Repeat(" ", 10000)+`{"close_depth":4}`); code != 413 {
		t.Errorf("oversized control: %d", code)
	}
	// The run went on unaffected: stopped now, it writes a sound trace.
	cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	f, err := tracefile.Open(filepath.Join(dir, "heat.0.hmb"))
	if err != nil {
		t.Fatalf("the trace after the live view: %v", err)
	}
	defer f.Close()
	for _, l := range f.Locations {
		if !l.Interrupted && l.Recorded != l.Accounted() {
			t.Errorf("%s: counts do not reconcile", l.Name)
		}
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
		}
		if it.Err() != nil {
			t.Errorf("%s: %v", l.Name, it.Err())
		}
	}
}
