package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// hmbtrace waitstate prints the same for any -procs, on the golden MPI run
// (two ranks of mpi-jacobi) and on a synthetic run of six ranks.
func TestWaitstateCommand(t *testing.T) {
	synth := t.TempDir()
	tracetest.SyntheticRun(t, synth, "syn", 6, 4)
	for _, trace := range []string{filepath.Join("testdata", "golden", "traces", "mpi"), synth} {
		var outs [2]string
		for i, procs := range []string{"1", "3"} {
			var out, errOut bytes.Buffer
			if rc := run([]string{"waitstate", "-procs", procs, trace}, &out, &errOut); rc != 0 {
				t.Fatalf("waitstate %s: exit %d: %s", trace, rc, errOut.String())
			}
			outs[i] = out.String()
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: -procs 1 and 3 print otherwise:\n%s\nvs\n%s", trace, outs[0], outs[1])
		}
		for _, want := range []string{"Late Sender", "Wait at N x N", "Worst waits:", "Delay costs"} {
			if !strings.Contains(outs[0], want) {
				t.Errorf("%s: no %q in\n%s", trace, want, outs[0])
			}
		}
		var out, errOut bytes.Buffer
		if rc := run([]string{"waitstate", "-json", trace}, &out, &errOut); rc != 0 {
			t.Fatalf("waitstate -json: exit %d: %s", rc, errOut.String())
		}
		var j struct {
			Patterns []struct {
				Metric string `json:"metric"`
				TimeNs int64  `json:"time_ns"`
			} `json:"patterns"`
		}
		if err := json.Unmarshal(out.Bytes(), &j); err != nil {
			t.Fatalf("waitstate -json: %v\n%s", err, out.String())
		}
		if len(j.Patterns) == 0 || j.Patterns[0].Metric != "mpi_latesender" || j.Patterns[0].TimeNs <= 0 {
			t.Errorf("%s: -json patterns %+v: want Late Sender first, with time", trace, j.Patterns)
		}
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"waitstate", "-top", "-1", synth}, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), "-top") {
		t.Errorf("-top -1: exit %d, %q: want a usage error naming -top", rc, errOut.String())
	}
}

// summary ends with why the ranks waited; past whyMaxLocations it says
// which command replays them instead.
func TestSummaryWhy(t *testing.T) {
	trace := filepath.Join("testdata", "golden", "traces", "mpi")
	var out, errOut bytes.Buffer
	if rc := run([]string{"summary", trace}, &out, &errOut); rc != 0 {
		t.Fatalf("summary: exit %d: %s", rc, errOut.String())
	}
	for _, want := range []string{"Why ranks wait", "Wait at N x N", "caused most by", "critical path"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary prints no %q:\n%s", want, out.String())
		}
	}
	defer func(n int) { whyMaxLocations = n }(whyMaxLocations)
	whyMaxLocations = 1
	out.Reset()
	if rc := run([]string{"summary", trace}, &out, &errOut); rc != 0 {
		t.Fatalf("summary: exit %d: %s", rc, errOut.String())
	}
	if !strings.Contains(out.String(), "Why ranks wait: not replayed here for 2 locations (more than 1); hmbtrace waitstate replays them") || strings.Contains(out.String(), "caused most by") {
		t.Errorf("summary past the bound:\n%s", out.String())
	}
}
