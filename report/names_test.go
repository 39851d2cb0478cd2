package report

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestTimelineNamesToldApart checks the shortened names the timeline
// draws in narrow calls: the OpenMP barriers of four methods of one C++
// class, which a cut at the end made read alike, keep the function's own
// name and stay different at every width the page carries.
func TestTimelineNamesToldApart(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "kripke", TimerShift: measure.NoTimerShift, Clock: "monotonic", IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Location("main")
	t0 := m.Now()
	own := []string{"LTimes", "LPlusTimes", "scattering", "source"}
	for i, f := range own {
		r := m.Region("!$omp implicit barrier Kernel_3d_DGZ::" + f + "(Grid_Data*, SubTVec<double, 4, 3>&) [clone ._omp_fn.0]")
		l.EnterAt(r, t0+uint64(10+100*i))
		l.LeaveAt(r, t0+uint64(60+100*i))
	}
	files := []*tracefile.File{tracetest.Finish(t, m)}
	d, _ := parsePage(t, writePage(t, files, Options{}))
	if len(d.Short) != len(shortWidths) {
		t.Fatalf("%d widths of short names; want %d", len(d.Short), len(shortWidths))
	}
	for k, names := range d.Short {
		if len(names) != len(d.Regions) {
			t.Fatalf("width %d: %d names for %d regions", shortWidths[k], len(names), len(d.Regions))
		}
		seen := map[string]string{}
		for i, s := range names {
			full := d.Regions[i]
			if other, ok := seen[s]; ok && other != full {
				t.Errorf("width %d: %q and %q both show as %q", shortWidths[k], other, full, s)
			}
			seen[s] = full
			for _, f := range own {
				if strings.Contains(full, "::"+f+"(") && !strings.Contains(s, f) {
					t.Errorf("width %d: %q shows as %q, without its own name", shortWidths[k], full, s)
				}
			}
		}
	}
}
