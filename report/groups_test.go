package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// scaleRun records a run of ranks ranks of one location each (4 calling
// depths), small buffers, as tracetest.Ranks makes them.
func scaleRun(t testing.TB, ranks int) []*tracefile.File {
	t.Helper()
	return tracetest.Ranks(t, t.TempDir(), ranks, 1, 40, 256<<10)
}

// TestGroupsAtScale checks that a run of 512 ranks is drawn as groups: its
// page has no more timeline rows than that of 32 ranks drawn one by one,
// is within a small factor of its size, says how it grouped them, and
// shows the groups in the profile, the tables, the heat map and the
// matrix; runs of 16 and 32 ranks are drawn rank by rank. In Chromium, a
// group's tile names the region most of its members were in and how many.
func TestGroupsAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("records 512 ranks")
	}
	sizes := map[int]int{}
	rows := map[int]int{}
	heap := map[int]uint64{}
	var big []byte
	var bigData *pageData
	var bigRows []decodedRow
	for _, n := range []int{16, 32, 512} {
		files := scaleRun(t, n)
		var page []byte
		heap[n] = peakHeap(func() { page = writePage(t, files, Options{}) })
		d, decoded := parsePage(t, page)
		sizes[n], rows[n] = len(page), len(d.Timeline.Rows)
		t.Logf("%d ranks: %d bytes of HTML, %d timeline rows, %d locations on the timeline, peak heap %.1f MB", n, len(page), len(d.Timeline.Rows), len(d.Timeline.Locations), float64(heap[n])/1e6)
		if n < 512 && bytes.Contains(page, []byte(`id="tl-grouped"`)) {
			t.Errorf("%d ranks are grouped", n)
		}
		big, bigData, bigRows = page, d, decoded
	}
	if rows[16] != 16*4 || rows[32] != 32*4 {
		t.Errorf("16 and 32 ranks: %d and %d rows, want every rank's 4 depths", rows[16], rows[32])
	}
	if rows[512] > rows[32] || rows[512] > DefaultRows {
		t.Errorf("512 ranks: %d rows, more than 32 ranks' %d", rows[512], rows[32])
	}
	// Memory at most linear in the ranks: per rank no more at 512 than at
	// 32, with a margin for the heap's sampling.
	if heap[512]/512 > heap[32]/32*3/2 {
		t.Errorf("peak heap %d bytes per rank at 512 ranks, %d at 32", heap[512]/512, heap[32]/32)
	}
	if sizes[512] > sizes[32]*3/2 {
		t.Errorf("512 ranks: %d bytes, more than 1.5 times 32 ranks' %d", sizes[512], sizes[32])
	}
	for _, want := range []string{
		"512 ranks shown as 32 groups of 16", // the timeline says so
		`ranks 0–15 (16 locations, summed)`,  // the profile's groups
		`<td>ranks 496–511</td>`,             // the table of locations
		"The heat map shows the 512 ranks",   // the heat map's note
		"The matrix and the diagram show the 512 ranks",
	} {
		if !bytes.Contains(big, []byte(want)) {
			t.Errorf("the page of 512 ranks lacks %q", want)
		}
	}
	facts := sectionOf(t, big, "facts")
	if n := bytes.Count(facts, []byte("<h3>")); n != 0 {
		t.Errorf("the page of 512 ranks has %d file headings in its Run section, want none: one run table", n)
	}
	if n := bytes.Count(facts, []byte(`id="run-table"`)); n != 1 {
		t.Errorf("the page of 512 ranks has %d run tables, want 1", n)
	}
	tl := &bigData.Timeline
	if len(tl.Locations) != 32 {
		t.Fatalf("%d groups on the timeline, want 32", len(tl.Locations))
	}
	// Every group's tiles: its members' votes, at most all of them, and
	// the calls of every rank in the tiles of the coarsest level.
	var calls uint64
	for ri, r := range bigRows {
		meta := tl.Rows[ri]
		if meta.Members != 16 || len(r.exact) != 0 {
			t.Fatalf("row %d: %d members, %d exact calls; want 16 and none", ri, meta.Members, len(r.exact))
		}
		for _, tile := range r.tiles[0] {
			if tile.agree < 1 || tile.agree > 16 || tile.lo > tile.coverage || tile.coverage > tile.hi {
				t.Fatalf("row %d: a tile with %d of 16 members agreeing, coverage %d in [%d, %d]", ri, tile.agree, tile.coverage, tile.lo, tile.hi)
			}
		}
	}
	for _, tile := range bigRows[0].tiles[0] {
		calls += tile.calls
	}
	if calls == 0 {
		t.Error("the first group's first row has no calls")
	}

	tracetest.Chromium(t)
	dir := artifacts(t)
	path := filepath.Join(dir, "ranks512.html")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	first := load(t, path, "")
	if first.Timeline.Rows != len(tl.Rows) {
		t.Fatalf("the page decoded %d rows, want %d", first.Timeline.Rows, len(tl.Rows))
	}
	points, want := probePoints(tl, bigRows, bigData.Regions, first.Timeline.Level, first.Timeline.PxTime, first.Timeline.V0, first.Timeline.V1)
	if len(points) > 40 {
		points, want = points[:40], want[:40]
	}
	c := load(t, path, "#probe="+strings.Join(points, ","))
	for i := range want {
		if !sameHit(c.Probes[i], want[i]) {
			t.Errorf("at %s the page draws %+v, want %+v", points[i], c.Probes[i], want[i])
		} else if !strings.Contains(c.Probes[i].Text, fmt.Sprintf("mostly %s: the busiest region of", want[i].Region)) || !strings.Contains(c.Probes[i].Text, "of the 16 locations") ||
			!strings.Contains(c.Probes[i].Text, "of a location's time here") {
			t.Errorf("at %s the tooltip says %q", points[i], c.Probes[i].Text)
		}
	}
	// A user's wheel, drag and buttons work on groups as on locations.
	if in := load(t, path, "#interact=1").Interaction; in == nil || in.WheelZoom <= 1.1 || math.Abs(in.DragPixels-100) > 1 || !in.Reset || in.LocationRows == 0 {
		t.Errorf("interaction: %+v", in)
	}
	screenshot(t, path, "#only=timeline", filepath.Join(dir, "ranks512.png"))
}

// A run drawn in groups gives the same page whatever the number of
// workers, who hand their members' tiles to the groups in any order; and
// one of a few ranks is grouped when -rows asks for fewer rows.
func TestGroupsSameForProcs(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 6, 2, 20, 0)
	opt := Options{Now: time.Unix(0, 0), Procs: 1, Rows: 12}
	one := writePage(t, files, opt)
	d, rows := parsePage(t, one)
	if len(d.Timeline.Locations) != 3 || d.Timeline.Locations[0].Label != "ranks 0–1" || d.Timeline.Locations[0].Members != 4 {
		t.Fatalf("6 ranks of 2 locations in 12 rows: timeline locations %+v; want 3 groups of 2 ranks", d.Timeline.Locations)
	}
	if !bytes.Contains(one, []byte("6 ranks shown as 3 groups of 2")) {
		t.Error("the page does not say how it grouped the ranks")
	}
	for ri, r := range rows {
		for l, tiles := range r.tiles {
			for _, tile := range tiles {
				if tile.agree < 1 || tile.agree > 4 || tile.lo > tile.coverage || tile.coverage > tile.hi {
					t.Fatalf("row %d level %d: a tile with %d of 4 members agreeing, coverage %d in [%d, %d]", ri, l, tile.agree, tile.coverage, tile.lo, tile.hi)
				}
			}
		}
	}
	for _, procs := range []int{2, 5} {
		opt.Procs = procs
		if many := writePage(t, files, opt); !bytes.Equal(one, many) {
			t.Errorf("%d workers: the page differs from the sequential one", procs)
		}
	}
	// Without -rows the same run is drawn location by location.
	opt.Rows = 0
	if d, _ := parsePage(t, writePage(t, files, opt)); len(d.Timeline.Locations) != 12 || d.Timeline.Locations[0].Members != 0 {
		t.Errorf("6 ranks of 2 locations: %d locations on the timeline, want 12", len(d.Timeline.Locations))
	}
}

// sectionOf returns the HTML of the page's section id.
func sectionOf(t testing.TB, page []byte, id string) []byte {
	t.Helper()
	start := bytes.Index(page, []byte(`<section id="`+id+`">`))
	if start < 0 {
		t.Fatalf("the page has no section %s", id)
	}
	end := bytes.Index(page[start:], []byte("</section>"))
	if end < 0 {
		t.Fatalf("section %s does not end", id)
	}
	return page[start : start+end]
}
