package pprof

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// labelled writes three ranks' files of two OpenMP threads each: rank r's
// thread n spends 10×(r+1)+n ns in "work" (regions 1 main, 2 work).
func labelled(t *testing.T) []*tracefile.File {
	dir := t.TempDir()
	var files []*tracefile.File
	for r := range 3 {
		b := tracetest.NewBuilder("heat", "node", r, time.Unix(100, 0), "main", "work")
		b.Trace.Header.Program = "/opt/app/heat -n 40"
		for n := range 2 {
			l := b.Location("thread " + string(rune('0'+n)))
			w := uint64(10*(r+1) + n)
			l.Enter(0, 1)
			l.Enter(5, 2)
			l.Leave(5 + w)
			l.Leave(100)
		}
		files = append(files, b.Write(t, dir))
	}
	return files
}

// TestLabels checks that each sample is labelled with its rank, location
// and host, and that the profile names the traced program.
func TestLabels(t *testing.T) {
	files := labelled(t)
	p, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if got := p.Mapping[0].File; got != "/opt/app/heat" {
		t.Errorf("mapping file %q, want the program /opt/app/heat", got)
	}
	work := map[string]int64{} // "rank/location" -> work's exclusive ns
	for _, s := range p.Sample {
		if len(s.NumLabel["rank"]) != 1 || len(s.Label["location"]) != 1 || s.Label["host"][0] != "node" {
			t.Fatalf("sample %s labelled %v %v", pathOf(s), s.Label, s.NumLabel)
		}
		if pathOf(s) == "main>work" {
			work[string(rune('0'+s.NumLabel["rank"][0]))+"/"+s.Label["location"][0]] += s.Value[1]
		}
	}
	want := map[string]int64{"0/thread 0": 10, "0/thread 1": 11, "1/thread 0": 20, "1/thread 1": 21, "2/thread 0": 30, "2/thread 1": 31}
	for k, v := range want {
		if work[k] != v {
			t.Errorf("work on rank/location %s: %d ns, want %d (all: %v)", k, work[k], v, work)
		}
	}
}

// TestGoToolPprofTags reads the labels back with `go tool pprof`: -tags
// lists them, -tagfocus rank=2 keeps rank 2's samples only, and the
// report's File is the program.
func TestGoToolPprofTags(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	var buf bytes.Buffer
	if err := Export(&buf, labelled(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(goTool, append([]string{"tool", "pprof"}, append(args, path)...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v: %s", args, err, stderr.String())
		}
		return string(out)
	}
	tags := run("-tags")
	for _, want := range []string{"rank:", "location:", "thread 0", "thread 1", "host:", "node"} {
		if !strings.Contains(tags, want) {
			t.Errorf("-tags lacks %q:\n%s", want, tags)
		}
	}
	top := run("-top", "-unit=ns", "-nodefraction=0", "-tagfocus=rank=2")
	if !strings.Contains(top, "File: heat") {
		t.Errorf("-top does not name the program:\n%s", top)
	}
	// Rank 2: work 30+31 ns, main 2×100 less that.
	got := parseTop(t, top)
	if got["work"] != 61 || got["main"] != 200-61 {
		t.Errorf("-tagfocus rank=2: work %d ns, main %d ns; want 61 and 139:\n%s", got["work"], got["main"], top)
	}
	top = run("-top", "-unit=ns", "-nodefraction=0", "-tagfocus=location=thread 1")
	if got := parseTop(t, top); got["work"] != 11+21+31 {
		t.Errorf("-tagfocus location=thread 1: work %d ns, want 63:\n%s", got["work"], top)
	}
}

// TestRankLabelRoundTrip writes the profile and parses it back as go tool
// pprof does: every rank keeps its label, rank 0 too (pprof's decoder drops
// a numeric label whose value and unit are both zero).
func TestRankLabelRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := Export(&buf, labelled(t)); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[int64]int{}
	for _, s := range p.Sample {
		r := s.NumLabel["rank"]
		if len(r) != 1 || len(s.NumUnit["rank"]) != 1 || s.NumUnit["rank"][0] != "rank" {
			t.Fatalf("sample %s read back with rank %v unit %v", pathOf(s), r, s.NumUnit["rank"])
		}
		samples[r[0]]++
	}
	for r := range int64(3) {
		if samples[r] == 0 {
			t.Errorf("no sample of rank %d read back (samples per rank %v)", r, samples)
		}
	}
}
