package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
)

// A region throttled at run time is listed by summary and score, and
// score -g excludes it in the filter file it writes.
func TestThrottledRegionsListed(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "thr", ThrottleCalls: 500, ThrottleTime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	outer, tiny := m.Region("outer"), m.Region("tiny accessor")
	loc := m.Location("main")
	loc.Enter(outer)
	for i := 0; i < 2000; i++ {
		loc.Enter(tiny)
		loc.Leave(tiny)
	}
	loc.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "thr.0.hmb")
	var out, errOut bytes.Buffer
	if rc := run([]string{"summary", path}, &out, &errOut); rc != 0 {
		t.Fatalf("summary: exit %d: %s", rc, errOut.String())
	}
	if !strings.Contains(out.String(), "tiny accessor at ") || !strings.Contains(out.String(), "500 visits timed before, 1,500 after") {
		t.Errorf("summary does not list the throttled region:\n%s", out.String())
	}
	filterFile := filepath.Join(dir, "thr.filter")
	out.Reset()
	if rc := run([]string{"score", "-g", filterFile, path}, &out, &errOut); rc != 0 {
		t.Fatalf("score: exit %d: %s", rc, errOut.String())
	}
	if !strings.Contains(out.String(), "Throttled at run time") || !strings.Contains(out.String(), "tiny accessor at") {
		t.Errorf("score does not list the throttled region:\n%s", out.String())
	}
	b, err := os.ReadFile(filterFile)
	if err != nil {
		t.Fatal(err)
	}
	var excluded []string
	inExclude := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "EXCLUDE":
			inExclude = true
		case line == "INCLUDE" || strings.HasPrefix(line, "SCOREP_"):
			inExclude = false
		case inExclude && line != "" && !strings.HasPrefix(line, "#"):
			excluded = append(excluded, line)
		}
	}
	found := false
	for _, e := range excluded {
		if strings.Contains(e, "tiny") {
			found = true
		}
		if strings.Contains(e, "outer") {
			t.Errorf("outer excluded: %q", excluded)
		}
	}
	if !found {
		t.Errorf("the filter file does not exclude the throttled region:\n%s", b)
	}
}
