package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
	"golang.org/x/sync/errgroup"
)

var (
	siteHandle = measure.NewRegion("handle request")
	siteParse  = measure.NewRegion("parse")
)

// goroutineTasks records a Go program that handles n requests, a goroutine
// each, at most 4 at once, each a region with a region inside, by
// StartRegion: its goroutines are tasks on a few lanes.
func goroutineTasks(t testing.TB, n int) *tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "lanes", Clock: "monotonic", NoThrottle: true, IgnoreEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := measure.NewContext(context.Background(), m)
	var g errgroup.Group
	sink := make([]uint64, n)
	busy := make(chan struct{}, 4) // requests handled at once
	for i := range n {
		g.Go(func() error {
			runtime.Gosched() // the goroutines pile up: few reuse another's descriptor
			busy <- struct{}{}
			defer func() { <-busy }()
			defer measure.StartRegion(ctx, siteHandle).End()
			sp := measure.StartRegion(ctx, siteParse)
			x := uint64(i)
			for k := 0; k < 2000; k++ {
				x = x*6364136223846793005 + 1442695040888963407
			}
			sink[i] = x
			sp.End()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return tracetest.Finish(t, m)
}

// tasksOf reads, the plain way, the task ids a location switched to.
func tasksOf(t *testing.T, f *tracefile.File, loc uint32) map[uint64]bool {
	t.Helper()
	ids := map[uint64]bool{}
	var e tracefile.Event
	it := f.Events(loc)
	for it.Next(&e) {
		if e.Kind == encode.KindTaskSwitch && e.Task != 0 {
			ids[e.Task] = true
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestLaneTasks checks that the goroutines of a Go program, tasks on its
// lanes, are on the page: one row per lane and depth, not per goroutine;
// per lane the number of its tasks and their spans, in order and within
// the run; a tasks column in the table of locations; and, in Chromium, a
// tooltip over a lane that names the task running there.
func TestLaneTasks(t *testing.T) {
	const n = 25600
	f := goroutineTasks(t, n)
	page := writePage(t, []*tracefile.File{f}, Options{})
	d, _ := parsePage(t, page)
	tl := &d.Timeline
	if len(tl.Locations) != len(f.Locations) || len(f.Locations) > 16 {
		t.Fatalf("%d goroutines: %d locations on the timeline, %d lanes in the trace", n, len(tl.Locations), len(f.Locations))
	}
	total := 0
	var probe string
	var wantTask int64
	for li, loc := range tl.Locations {
		want := len(tasksOf(t, f, f.Locations[li].ID))
		got := 0
		if loc.Tasks != nil {
			got = loc.Tasks.Count
			if !loc.Tasks.Lane {
				t.Errorf("%s: tasks not marked as a lane's", loc.Label)
			}
			spans := loc.Tasks.Spans
			if len(spans) != 3*got {
				t.Errorf("%s: %d spans for %d tasks", loc.Label, len(spans)/3, got)
			}
			at, prevEnd := int64(0), int64(0)
			for k := 0; k+2 < len(spans); k += 3 {
				at += spans[k]
				if at < prevEnd || spans[k+1] < 0 || at+spans[k+1] > tl.Span {
					t.Errorf("%s: task %d spans [%d, %d), the one before ended at %d, the run at %d", loc.Label, spans[k+2], at, at+spans[k+1], prevEnd, tl.Span)
					break
				}
				prevEnd = at + spans[k+1]
				if probe == "" && spans[k+1] > tl.Span/2000 {
					// The first row of this location, the middle of the task.
					for ri, r := range tl.Rows {
						if r.Loc == li {
							probe, wantTask = fmt.Sprintf("%d:%d", ri, at+spans[k+1]/2), spans[k+2]
							break
						}
					}
				}
			}
		}
		if got != want {
			t.Errorf("%s: the page counts %d tasks, the trace switches to %d", loc.Label, got, want)
		}
		total += got
	}
	t.Logf("%d goroutines: %d tasks on %d lanes, %d bytes of HTML", n, total, len(tl.Locations), len(page))
	if total == 0 {
		t.Fatal("no task on any lane")
	}
	if !bytes.Contains(page, []byte("<th>tasks</th>")) {
		t.Error("the table of locations has no tasks column")
	}
	// A run without tasks has no such column.
	if bytes.Contains(writePage(t, fixtures(t)[:1], Options{}), []byte("<th>tasks</th>")) {
		t.Error("a run without tasks has a tasks column")
	}

	tracetest.Chromium(t)
	if probe == "" {
		t.Fatal("no task wide enough to point at")
	}
	dir := artifacts(t)
	path := filepath.Join(dir, "lanes.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	c := load(t, path, "#probe="+probe)
	if len(c.Probes) != 1 || c.Probes[0] == nil || !strings.Contains(c.Probes[0].Text, fmt.Sprintf("in task %d (a goroutine holding the lane)", wantTask)) {
		t.Errorf("probe %s: %+v; want the tooltip to name task %d", probe, c.Probes[0], wantTask)
	}
	screenshot(t, path, "#only=timeline", filepath.Join(dir, "lanes.png"))
}
