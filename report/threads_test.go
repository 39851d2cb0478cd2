package report

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// hybrid records an MPI+OpenMP run: ranks processes of threads OpenMP
// threads each, named as the adapter names them, started in reverse order
// (the runtime's order is not the threads' numbers), each running a
// parallel region with a loop and a barrier.
func hybrid(t *testing.T, ranks, threads int) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	var files []*tracefile.File
	for rank := 0; rank < ranks; rank++ {
		m, err := measure.Start(measure.Config{Output: dir, Name: "hybrid", Clock: "monotonic", Rank: rank})
		if err != nil {
			t.Fatal(err)
		}
		par := m.RegionParadigm("!$omp parallel @jacobi.c:40", tracefile.ParadigmOpenMP)
		loop := m.RegionParadigm("!$omp for @jacobi.c:41", tracefile.ParadigmOpenMP)
		bar := m.RegionParadigm("!$omp implicit barrier @jacobi.c:41", tracefile.ParadigmOpenMP)
		work := m.Region("sweep")
		t0 := m.Now()
		for th := threads - 1; th >= 0; th-- {
			l := m.Location(fmt.Sprintf("thread %d", th))
			for it := uint64(0); it < 20; it++ {
				at := t0 + it*10_000
				l.EnterAt(par, at)
				l.EnterAt(loop, at+100)
				l.EnterAt(work, at+200)
				l.LeaveAt(work, at+200+uint64(3000*(th+1)))
				l.LeaveAt(loop, at+7000)
				l.EnterAt(bar, at+7000)
				l.LeaveAt(bar, at+9000)
				l.LeaveAt(par, at+9500)
			}
		}
		for m.Now() < t0+200_000 {
			time.Sleep(100 * time.Microsecond)
		}
		files = append(files, tracetest.Finish(t, m))
	}
	return files
}

// TestTimelineThreadsUnderRank checks that the timeline draws each rank's
// OpenMP threads together, in their numbers' order, under the rank's label
// (the page data's group), and that the page draws them without errors.
func TestTimelineThreadsUnderRank(t *testing.T) {
	files := hybrid(t, 2, 3)
	page := writePage(t, files, Options{})
	d, _ := parsePage(t, page)
	var got []string
	for _, l := range d.Timeline.Locations {
		got = append(got, l.Group+"/"+l.Name)
	}
	want := []string{"rank 0/thread 0", "rank 0/thread 1", "rank 0/thread 2", "rank 1/thread 0", "rank 1/thread 1", "rank 1/thread 2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline locations %q; want %q", got, want)
	}
	for _, l := range d.Timeline.Locations {
		if l.Label != l.Group+" "+l.Name {
			t.Errorf("location %q in group %q named %q", l.Label, l.Group, l.Name)
		}
	}
	// One file of one location has no group.
	one := writePage(t, files[:1], Options{})
	if d1, _ := parsePage(t, one); d1.Timeline.Locations[0].Group != "" || d1.Timeline.Locations[0].Label != "thread 0" {
		t.Errorf("one file: first location %+v; want thread 0 without a group", d1.Timeline.Locations[0])
	}

	tracetest.Chromium(t)
	dir := artifacts(t)
	path := filepath.Join(dir, "hybrid.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range widths {
		size := fmt.Sprintf("--window-size=%d,900", w)
		if c := load(t, path, "", size); c.Timeline.Rows != len(d.Timeline.Rows) {
			t.Errorf("width %d: page decoded %d rows, want %d", w, c.Timeline.Rows, len(d.Timeline.Rows))
		}
		screenshot(t, path, "#only=timeline", filepath.Join(dir, fmt.Sprintf("hybrid-%d.png", w)), size)
	}
}
