package measure

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestLastUsageError(t *testing.T) {
	m := startTest(t, Config{Name: "usage"})
	if got := m.LastUsageError(); got != "" {
		t.Fatalf("before any error: %q", got)
	}
	a, b, c := m.Region("a"), m.Region("b"), m.Region("c")
	loc := m.Location("main")
	loc.Enter(a)
	loc.Enter(b)
	loc.Leave(a) // b left implicitly
	if got := m.LastUsageError(); !strings.Contains(got, `leave of "a" while "b"`) || !strings.Contains(got, `location "main"`) {
		t.Errorf("after a leave over an open region: %q", got)
	}
	loc.Leave(c) // nothing open
	if got := m.LastUsageError(); !strings.Contains(got, `leave of "c" with no region open`) {
		t.Errorf("after a leave with nothing open: %q", got)
	}
	loc.Enter(Region(9999))
	if got := m.LastUsageError(); !strings.Contains(got, "region id 9999") || !strings.Contains(got, "never defined") {
		t.Errorf("after an undefined region: %q", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	m.sayAtExit(&w, m.Path(), 0)
	want := regexp.MustCompile(`^hmbtrace: 3 usage errors \(the last: usage error, location "main": a probe named region id 9999[^\n]*\); see hmbtrace summary ` +
		regexp.QuoteMeta(m.Path()) + "\n$")
	if !want.MatchString(w.String()) {
		t.Errorf("exit line:\n%s\nwant it to match %s", w.String(), want)
	}
}

func TestExitLineClean(t *testing.T) {
	m := startTest(t, Config{Name: "clean"})
	a := m.Region("a")
	loc := m.Location("main")
	loc.Enter(a)
	loc.Leave(a)
	loc.Enter(a) // open at exit: no usage error
	if err := m.CloseAtExit(); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	m.sayAtExit(&w, m.Path(), 0)
	if w.Len() != 0 {
		t.Errorf("a clean run says %q", w.String())
	}
}

func TestExitLineNotKept(t *testing.T) {
	// Unthrottled: 20,000 calls of each region would be throttled or not
	// by how the machine runs them (from 1,024 visits), and the buffer
	// must overflow.
	m := startTest(t, Config{Name: "full", BufferSize: 64 << 10, BinSize: 1 << 10, NoThrottle: true})
	var rs [8]Region
	for i := range rs {
		rs[i] = m.Region(string(rune('a' + i)))
	}
	loc := m.Location("main")
	for i := 0; i < 20000; i++ {
		for _, r := range rs {
			loc.Enter(r)
		}
		for j := len(rs) - 1; j >= 0; j-- {
			loc.Leave(rs[j])
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if st.Dropped() == 0 {
		t.Fatalf("the buffer kept all %d events: the test needs a smaller one", st.Recorded)
	}
	var w bytes.Buffer
	m.sayAtExit(&w, m.Path(), 0)
	want := regexp.MustCompile(`^hmbtrace: [0-9.]+% of events not kept \(the buffer was full: HMB_BUFFER_SIZE\); see hmbtrace summary \S+\n$`)
	if !want.MatchString(w.String()) {
		t.Errorf("exit line %q", w.String())
	}
	if p := percentNotKept(st.Dropped(), st.Recorded); !strings.Contains(w.String(), " "+p+" of events") {
		t.Errorf("exit line %q does not say %s", w.String(), p)
	}
}

func TestExitLineRanks(t *testing.T) {
	m := startTest(t, Config{Name: "ranks"})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := Stats{Recorded: 1000, Removed: [len(Stats{}.Removed)]uint64{100}}
	st.Usage.LeaveNotOpen = 2
	cases := []struct {
		rank       int
		collective bool
		run        *runTotals
		want       string
	}{
		{0, false, nil, "hmbtrace: 2 usage errors, 10% of events not kept (the buffer was full: HMB_BUFFER_SIZE); see hmbtrace summary F"},
		{3, false, nil, "hmbtrace: rank 3: 2 usage errors, 10% of events not kept (the buffer was full: HMB_BUFFER_SIZE); see hmbtrace summary F"},
		{3, true, nil, ""}, // rank 0 says it for the run
		{0, true, &runTotals{Ranks: 4, Recorded: 4000, NotKept: 1, Usage: 5, WorstRank: 2, WorstNotKept: 0.0004},
			"hmbtrace: the run's 4 ranks: 5 usage errors, <0.1% of events not kept (the buffer was full: HMB_BUFFER_SIZE), rank 2 the most: <0.1%; see hmbtrace summary F"},
		{0, true, &runTotals{Ranks: 4, Recorded: 4000}, "hmbtrace: the run's 4 ranks: 2 usage errors; see hmbtrace summary F"},
	}
	for _, c := range cases {
		m.exit.run = c.run
		if got := m.exitLine(&st, "F", c.rank, c.collective); got != c.want {
			t.Errorf("rank %d collective %v run %+v:\n got %q\nwant %q", c.rank, c.collective, c.run, got, c.want)
		}
	}
}

// TestExitLineProcess runs a program with a usage error and checks that
// its stderr has the one line, once.
func TestExitLineProcess(t *testing.T) {
	if os.Getenv("HMB_TEST_EXITLINE") == "1" {
		m, err := Start(Config{Name: "exitline"})
		if err != nil {
			t.Fatal(err)
		}
		a := m.Region("a")
		loc := m.Location("main")
		loc.Leave(a)
		Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitLineProcess$")
	cmd.Env = append(os.Environ(), "HMB_TEST_EXITLINE=1", "HMB_OUTPUT="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `hmbtrace: 1 usage error (the last: usage error, location "main": a leave of "a" with no region open` +
		` (a leave without its enter, or one too many); ignored); see hmbtrace summary ` + filepath.Join(dir, "exitline.0.hmb") + "\n"
	if n := strings.Count(string(out), want); n != 1 {
		t.Errorf("the exit line %d times in:\n%s", n, out)
	}
}

// TestLastUsageErrorConcurrent: lanes of several goroutines make usage
// errors while another goroutine asks for the last one (run with -race).
func TestLastUsageErrorConcurrent(t *testing.T) {
	m := startTest(t, Config{Name: "usagerace"})
	a := m.Region("a")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loc := m.Location("worker")
			for i := 0; i < 1000; i++ {
				loc.Leave(a)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			if s := m.LastUsageError(); s != "" && !strings.Contains(s, `a leave of "a" with no region open`) {
				t.Errorf("last usage error %q", s)
			}
		}
	}()
	wg.Wait()
	<-done
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Usage.LeaveNothingOpen != 4000 {
		t.Errorf("%d leaves with nothing open counted, want 4000", st.Usage.LeaveNothingOpen)
	}
}

// TestPercentNeverAllForSome checks the exit line's shares: whole percents
// from 10 %, a decimal below, "<0.1%" for a trace loss, and ">99%" for a
// share that rounds to 100 % but is not all.
func TestPercentNeverAllForSome(t *testing.T) {
	for _, c := range []struct {
		n, total uint64
		want     string
	}{
		{1, 100000, "<0.1%"}, {5, 1000, "0.5%"}, {12, 100, "12%"},
		{996, 1000, ">99%"}, {1000, 1000, "100%"},
	} {
		if got := percentNotKept(c.n, c.total); got != c.want {
			t.Errorf("%d of %d: %q, want %q", c.n, c.total, got, c.want)
		}
	}
}
