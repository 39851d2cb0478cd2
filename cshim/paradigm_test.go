package cshim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// MPI-paradigm regions and messages at depth 7 of a C program whose compute
// calls overflow a small buffer: every MPI event is kept while compute
// depths are closed, on the direct and the staged path; the hot accessor
// is throttled by the C probes (issues 16 and 17).
func TestParadigmDeepC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "deepmpi", nil, filepath.Join(root, "cshim", "testdata", "c", "deepmpi.c"))
	const steps = 2000
	for _, mode := range []string{"direct", "staged"} {
		t.Run(mode, func(t *testing.T) {
			q := p
			q.out = filepath.Join(t.TempDir(), "hmb-out")
			_, errOut := q.run(t, []string{"HMB_C_PROBE=" + mode, "HMB_BUFFER_SIZE=128K", "HMB_BIN_SIZE=512",
				"HMB_THROTTLE_CALLS=1000", "HMB_THROTTLE_TIME=500ns"}, fmt.Sprint(steps))
			if errOut = withoutExitLines(errOut); errOut != "" {
				// Among others: membarrier refused, which would silently
				// stage every probe.
				t.Fatalf("stderr: %s", errOut)
			}
			f, err := tracefile.Open(filepath.Join(q.out, "deepmpi.0.hmb"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			reduced := false
			for _, r := range f.Reductions {
				if r.Reason == tracefile.ByDepth && r.Class == tracefile.ClassParadigm {
					t.Errorf("communication closed: %+v", r)
				}
				if r.Reason == tracefile.ByDepth && r.Depth <= 6 {
					reduced = true
				}
			}
			if !reduced {
				t.Fatalf("no depth reduction at depth 6 or above: %+v", f.Reductions)
			}
			names := map[string]uint32{}
			for _, r := range f.Regions {
				names[r.Name] = r.ID
			}
			if p := f.Regions[names["MPI_Send"]-1].Paradigm; p != tracefile.ParadigmMPI {
				t.Errorf("MPI_Send has paradigm %v", p)
			}
			l := &f.Locations[0]
			var mpi, msgs int
			it := f.Events(l.ID)
			var e tracefile.Event
			for it.Next(&e) {
				switch {
				case (e.Kind == encode.KindEnter || e.Kind == encode.KindLeave) && (e.Region == names["MPI_Send"] || e.Region == names["MPI_Recv"]):
					mpi++
					if e.Depth != 7 || e.Class != tracefile.ClassParadigm {
						t.Fatalf("%v of region %d at depth %d, class %v", e.Kind, e.Region, e.Depth, e.Class)
					}
				case e.Kind == encode.KindSend || e.Kind == encode.KindRecv:
					msgs++
				}
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			if mpi != 4*steps || msgs != 2*steps {
				t.Errorf("kept %d MPI enters and leaves, %d messages; want %d, %d", mpi, msgs, 4*steps, 2*steps)
			}
			if l.Recorded != l.Accounted() {
				t.Errorf("recorded %d, accounted %d", l.Recorded, l.Accounted())
			}
			var get *tracefile.ProfileEntry
			for i := range l.Profile {
				if l.Profile[i].Region == names["get"] {
					get = &l.Profile[i]
				}
			}
			if mode == "direct" {
				// OTF2 takes the MPI calls below their shed callers too.
				tracetest.RequireTool(t, "otf2-print", "otf2-tools")
				archive := filepath.Join(t.TempDir(), "otf2")
				if msg, err := run(root, nil, built.hmbtrace, "export", "-format", "otf2", "-o", archive, f.Path); err != nil {
					t.Fatalf("hmbtrace export: %v\n%s", err, msg)
				}
				printed := otf2Print(t, "-Werror", filepath.Join(archive, "traces.otf2"))
				if n := strings.Count(printed, `Region: "MPI_Send"`); n != 2*steps {
					t.Errorf("%d MPI_Send enters and leaves in the OTF2 archive, want %d", n, 2*steps)
				}
			}
			const visits = steps * 20 * 50
			if get == nil || !get.Throttled || get.Visits != 1000 || get.Visits+get.VisitsAfter != visits {
				t.Errorf("get: %+v, want throttled after 1000 of %d visits", get, visits)
			}
		})
	}
}

// Regions entered once each from C cost memory for themselves only: the
// profile used to be copied, and each copy pinned, for every new region
// (10^4 regions: 1.6 GB; issue 17). Peak RSS is bounded at 10^4 and, once
// that holds (so that the old behaviour never gets that far), at 10^5.
func TestManyRegionsC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "regions", nil, filepath.Join(root, "cshim", "testdata", "c", "regions.c"))
	for _, c := range []struct {
		n     int
		maxKB int64
	}{{10000, 64 << 10}, {100000, 128 << 10}} {
		out, errOut := p.run(t, nil, fmt.Sprint(c.n))
		if errOut = withoutExitLines(errOut); errOut != "" {
			t.Fatalf("stderr: %s", errOut)
		}
		var n, ns, hwm, before int64
		if _, err := fmt.Sscanf(out, "regions %d ns %d hwm_kb %d before_finalize_kb %d", &n, &ns, &hwm, &before); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		t.Logf("%d regions: %.1f ms, peak RSS %d MB (%d MB before hmb_finalize)", n, float64(ns)/1e6, hwm>>10, before>>10)
		if hwm > c.maxKB {
			t.Fatalf("%d regions: peak RSS %d MB, want at most %d MB", n, hwm>>10, c.maxKB>>10)
		}
		f, err := tracefile.Open(filepath.Join(p.out, "regions.0.hmb"))
		if err != nil {
			t.Fatal(err)
		}
		got := len(f.Locations[0].Profile)
		f.Close()
		if got != c.n+1 {
			t.Fatalf("%d profile entries, want %d", got, c.n+1)
		}
	}
}
