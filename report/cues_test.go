package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ringRun writes a run of ranks processes that pass a message around a
// ring and then meet in an MPI_Allreduce, iters times: rank r sends to
// r+1 at sendAt(r, i) and receives from r-1 at recvAt(r, i), rank 0 in a
// receive posted before its message was sent; it enters the allreduce at
// collAt(r, i). Times are ns from a common start.
func ringRun(t testing.TB, ranks, iters int) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	var files []*tracefile.File
	for r := range ranks {
		// Region ids: 1 main, 2 compute, 3 MPI_Send, 4 MPI_Recv, 5 MPI_Allreduce.
		b := tracetest.NewBuilder("ring", "node", r, start, "main", "compute", "MPI_Send", "MPI_Recv", "MPI_Allreduce")
		l := b.Location(fmt.Sprintf("rank %d", r))
		l.Enter(10, 1)
		for i := range iters {
			base := uint64(1000 + 10000*i)
			l.Enter(base, 2)
			l.Leave(base + 1000 + 300*uint64(r))
			l.Enter(sendAt(r, i)-10, 3)
			l.MessageComm(sendAt(r, i), encode.KindSend, int32((r+1)%ranks), 7, 64, 0)
			l.Leave(sendAt(r, i) + 10)
			post := recvAt(r, ranks, i) - 100
			if r == 0 {
				// Rank 0 waits in its receive for the last rank's send: a
				// late sender.
				post = sendAt(ranks-1, i) - 500
			}
			l.Enter(post, 4)
			l.MessageComm(recvAt(r, ranks, i), encode.KindRecv, int32((r+ranks-1)%ranks), 7, 64, 0)
			l.Leave(recvAt(r, ranks, i) + 5)
			l.Enter(collAt(r, i), 5)
			l.Collective(collAt(r, i)+1, -1, 8, 8, 0)
			l.Leave(base + 9000)
		}
		l.Leave(uint64(10000*iters + 2000))
		files = append(files, b.Write(t, dir))
	}
	return files
}

func sendAt(r, i int) uint64        { return uint64(1000+10000*i) + 2500 + 300*uint64(r) }
func recvAt(r, ranks, i int) uint64 { return sendAt((r+ranks-1)%ranks, i) + 800 }
func collAt(r, i int) uint64        { return uint64(1000+10000*i) + 5000 + 500*uint64(r) }

// TestMessageLinesAndCollectives checks the timeline's first cue: every
// message of a ring is a line from its sender's row at the send to its
// receiver's at the receive, and every allreduce joins its members where
// the last one entered; the legend names the paradigms with their colours
// and the two marks.
func TestMessageLinesAndCollectives(t *testing.T) {
	const ranks, iters = 3, 5
	files := ringRun(t, ranks, iters)
	page := writePage(t, files, Options{})
	d, _ := parsePage(t, page)
	tl := &d.Timeline
	rankOf := func(row int64) int {
		var r int
		if _, err := fmt.Sscanf(tl.Locations[tl.Rows[row].Loc].Label, "rank %d", &r); err != nil {
			t.Fatalf("row %d: label %q", row, tl.Locations[tl.Rows[row].Loc].Label)
		}
		return r
	}
	if n := len(tl.Messages); n != 4*ranks*iters {
		t.Fatalf("%d message numbers, want 4 for each of %d messages", n, ranks*iters)
	}
	var want, got []string
	for r := range ranks {
		for i := range iters {
			want = append(want, fmt.Sprintf("%d@%d->%d@%d", r, sendAt(r, i), (r+1)%ranks, recvAt((r+1)%ranks, ranks, i)))
		}
	}
	late := 0
	for m := 0; m < len(tl.Messages); m += 4 {
		r0, t0, r1, t1 := tl.Messages[m], tl.Messages[m+1], tl.Messages[m+2], tl.Messages[m+3]
		if r1 < 0 {
			r1 = -1 - r1
			late++
			if rankOf(r1) != 0 {
				t.Errorf("message %d to rank %d marked a late sender", m/4, rankOf(r1))
			}
		}
		got = append(got, fmt.Sprintf("%d@%d->%d@%d", rankOf(r0), t0, rankOf(r1), t1))
		// The call's row: MPI_Send and MPI_Recv are at depth 2.
		if tl.Rows[r0].Depth != 2 || tl.Rows[r1].Depth != 2 {
			t.Errorf("message %d: rows at depths %d and %d, want the calls' depth 2", m/4, tl.Rows[r0].Depth, tl.Rows[r1].Depth)
		}
	}
	if late != iters {
		t.Errorf("%d late senders marked, want the %d messages to rank 0", late, iters)
	}
	slices.Sort(want)
	slices.Sort(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages\n%v\nwant\n%v", got, want)
	}
	// Collectives: region, release, members, then row and entry per member.
	ops := 0
	for c := 0; c < len(tl.Collectives); {
		region, release, n := tl.Collectives[c], tl.Collectives[c+1], int(tl.Collectives[c+2])
		if d.Regions[region] != "MPI_Allreduce" {
			t.Errorf("collective %d: region %q", ops, d.Regions[region])
		}
		if n != ranks {
			t.Errorf("collective %d: %d members, want %d", ops, n, ranks)
		}
		var last int64
		for j := range n {
			last = max(last, tl.Collectives[c+3+2*j+1])
		}
		if release != last || release != int64(collAt(ranks-1, ops)) {
			t.Errorf("collective %d: released at %d, last entry %d, want %d", ops, release, last, collAt(ranks-1, ops))
		}
		c += 3 + 2*n
		ops++
	}
	if ops != iters {
		t.Errorf("%d collectives, want %d", ops, iters)
	}
	legend := legendOf(t, page)
	for _, want := range []string{"MPI", "your code", "message, sender to receiver", "late sender", "collective"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the legend lacks %q: %s", want, legend)
		}
	}
	if strings.Contains(legend, "hatch") {
		t.Errorf("the legend explains the buffer's marks, but the buffer kept everything: %s", legend)
	}
	if strings.Contains(legend, "OpenMP") || strings.Contains(legend, "I/O") {
		t.Errorf("the legend names paradigms the run does not have: %s", legend)
	}
	if !strings.Contains(legend, kindInfo[kindMPI].Color) {
		t.Errorf("the legend's MPI swatch is not %s: %s", kindInfo[kindMPI].Color, legend)
	}
	// Every region's paradigm, for the script's colours.
	var kinds struct {
		Kinds     []int `json:"kinds"`
		Paradigms []struct {
			Name, Color string
		} `json:"paradigms"`
	}
	if err := json.Unmarshal(between(t, page, `<script type="application/json" id="report-data">`, "</script>"), &kinds); err != nil {
		t.Fatal(err)
	}
	for i, name := range d.Regions {
		want := kindUser
		if strings.HasPrefix(name, "MPI_") {
			want = kindMPI
		}
		if kinds.Kinds[i] != int(want) {
			t.Errorf("region %s: paradigm %d, want %d", name, kinds.Kinds[i], want)
		}
	}
	if len(kinds.Paradigms) != int(numKinds) || kinds.Paradigms[kindMPI].Color != "#d62728" {
		t.Errorf("paradigms %+v", kinds.Paradigms)
	}
}

// TestKindOf checks the paradigm of regions by their recorded paradigm
// and, for I/O, their names.
func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		name string
		p    tracefile.Paradigm
		want kind
	}{
		{"MPI_Allreduce", tracefile.ParadigmMPI, kindMPI},
		{"MPI_Send", tracefile.ParadigmUser, kindMPI},
		{"MPI_File_write_all", tracefile.ParadigmMPI, kindIO},
		{"!$omp parallel @x.c:3", tracefile.ParadigmOpenMP, kindOpenMP},
		{"fwrite", tracefile.ParadigmCompiler, kindIO},
		{"H5Dwrite", tracefile.ParadigmUser, kindIO},
		{"GC", tracefile.ParadigmGo, kindRuntime},
		{"main", tracefile.ParadigmCompiler, kindUser},
		{"readme", tracefile.ParadigmUser, kindUser},
	} {
		if got := kindOf(c.name, c.p); got != c.want {
			t.Errorf("kindOf(%q, %v) = %v, want %v", c.name, c.p, got, c.want)
		}
	}
}

// legendOf returns the timeline legend's HTML.
func legendOf(t testing.TB, page []byte) string {
	t.Helper()
	return string(between(t, page, `<div class="tl-legend" id="tl-legend">`, "</div>"))
}

func between(t testing.TB, page []byte, start, end string) []byte {
	t.Helper()
	i := bytes.Index(page, []byte(start))
	if i < 0 {
		t.Fatalf("page lacks %q", start)
	}
	rest := page[i+len(start):]
	j := bytes.Index(rest, []byte(end))
	if j < 0 {
		t.Fatalf("page lacks %q after %q", end, start)
	}
	return rest[:j]
}

// Rough heights of what the Run section shows, in px at 14px type: a
// line of the facts, a row of a table, the cap of a scrolled table.
const (
	lineHeight  = 24
	rowHeight   = 27
	cappedTable = 340
	screen      = 900 // a laptop's window at 1400 or 800 px wide
)

var (
	kvItem     = regexp.MustCompile(`<div><span class="k">`)
	tableRow   = regexp.MustCompile(`<tr>`)
	summaryTag = regexp.MustCompile(`<summary>`)
)

// runSectionHeight estimates how tall the Run section is drawn at a
// window width: its facts in two columns at 1400 px, one at 800; its run
// table's rows up to the cap of its scroll box; a line for each folded
// part; the heading and the lead.
func runSectionHeight(t testing.TB, facts []byte, width int) int {
	t.Helper()
	columns := 1
	if width >= 1400 {
		columns = 2
	}
	h := 60 + 2*lineHeight // heading, lead
	items := len(kvItem.FindAll(facts, -1))
	h += (items + columns - 1) / columns * lineHeight
	table := between(t, facts, `id="run-table-wrap"`, "</table>")
	rows := len(tableRow.FindAll(table, -1)) // with the header
	th := rows * rowHeight
	if bytes.Contains(facts, []byte(`class="scroll capped" id="run-table-wrap"`)) {
		th = min(th, cappedTable)
	}
	h += th
	// The folded parts show their summaries only.
	h += len(summaryTag.FindAll(facts, -1)) * lineHeight
	return h
}

// TestRunSectionAtScale checks that at 64 ranks what comes before the
// profile is one screen: one run table with a row per rank, scrolling past
// a dozen, the facts told once, no block per file, the buffer's story
// folded away.
func TestRunSectionAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("records 64 ranks")
	}
	files := tracetest.Ranks(t, t.TempDir(), 64, 1, 8, 0)
	page := writePage(t, files, Options{})
	facts := sectionOf(t, page, "facts")
	if n := bytes.Count(facts, []byte("<h3>")); n != 0 {
		t.Errorf("the Run section has %d headings, want none: no block per file", n)
	}
	table := between(t, facts, `<table id="run-table"`, "</table>")
	if n := bytes.Count(table, []byte("<tr><td>rank ")); n != 64 {
		t.Errorf("the run table has %d rank rows, want 64", n)
	}
	if !bytes.Contains(facts, []byte(`class="scroll capped" id="run-table-wrap"`)) {
		t.Error("the run table of 64 ranks does not scroll")
	}
	if bytes.Contains(facts, []byte("<details open>")) {
		t.Error("the buffer's story of 64 ranks is unfolded")
	}
	for _, w := range []int{1400, 800} {
		if h := runSectionHeight(t, facts, w); h > screen {
			t.Errorf("at %d px the Run section is about %d px tall, more than a screen (%d)", w, h, screen)
		}
	}
	// Its label says each rank once.
	if bytes.Contains(page, []byte("rank 1: rank 1")) || bytes.Contains(page, []byte("1:rank 1")) {
		t.Error("the page labels a rank twice")
	}
	// In Chromium, at both widths, the section is within a screen and the
	// profile's panes are filled.
	tracetest.Chromium(t)
	dir := artifacts(t)
	path := filepath.Join(dir, "ranks64.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1400, 800} {
		size := fmt.Sprintf("--window-size=%d,%d", w, screen)
		c := load(t, path, "", size)
		if h := c.Heights["facts"]; h == 0 || h > screen {
			t.Errorf("at %d px the Run section is %.0f px tall in Chromium, want at most %d", w, h, screen)
		}
		if c.Cube.Nodes == 0 || c.Cube.Calls == 0 || c.Cube.System < 32 {
			t.Errorf("at %d px the profile's panes: %+v", w, c.Cube)
		}
		if c.Timeline.Messages == 0 || c.Timeline.MessagesDrawn == 0 {
			t.Errorf("at %d px: %d messages in the data, %d drawn", w, c.Timeline.Messages, c.Timeline.MessagesDrawn)
		}
		if !strings.HasPrefix(c.Timeline.MessageTip, "message rank") {
			t.Errorf("at %d px the first message's line says %q when hovered", w, c.Timeline.MessageTip)
		}
		if os.Getenv("HMB_ARTIFACTS") != "" {
			// For a reader to look at: HMB_ARTIFACTS=dir keeps them.
			screenshot(t, path, "", filepath.Join(dir, fmt.Sprintf("ranks64-%d.png", w)), size)
		}
	}
}

// TestCallTree checks the profile's call tree made of the trace: the ring's
// paths main → compute, MPI_Send, MPI_Recv, MPI_Allreduce with their
// visits and times per rank, and the wait states under their paths.
func TestCallTree(t *testing.T) {
	const ranks, iters = 3, 5
	files := ringRun(t, ranks, iters)
	r := testRun(t, files)
	r.procs = 1
	r.groups = nil
	if _, err := readAll(r, planTimeline(r, DefaultMaxIntervals, DefaultMaxCells), nil); err != nil {
		t.Fatal(err)
	}
	prof := newProfile(r)
	w, err := waitsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	ct := newCallTree(r, r.trees, func(fi, k int) int { return prof.unitOf[fi][k] }, w)
	path := func(n int32) string {
		var s []string
		for ; n >= 0; n = ct.nodes[n][0] {
			s = append([]string{r.regions[ct.nodes[n][1]]}, s...)
		}
		return strings.Join(s, "/")
	}
	sum := func(m int, node int32, unit int64) int64 {
		var v int64
		for k := 0; k+2 < len(ct.values[m]); k += 3 {
			if int32(ct.values[m][k]) == node && (unit < 0 || ct.values[m][k+1] == unit) {
				v += ct.values[m][k+2]
			}
		}
		return v
	}
	var paths []string
	for n := range ct.nodes {
		p := path(int32(n))
		paths = append(paths, p)
		switch p {
		case "main":
			if v := sum(metricVisits, int32(n), -1); v != ranks {
				t.Errorf("main: %d visits, want %d", v, ranks)
			}
		case "main/compute":
			if v := sum(metricVisits, int32(n), 2); v != iters {
				t.Errorf("main/compute on rank 2: %d visits, want %d", v, iters)
			}
			if v := sum(metricTime, int32(n), 2); v != iters*1600 {
				t.Errorf("main/compute on rank 2: %d ns, want %d", v, iters*1600)
			}
		}
	}
	slices.Sort(paths)
	want := []string{"main", "main/MPI_Allreduce", "main/MPI_Recv", "main/MPI_Send", "main/compute"}
	if fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	// The allreduce's wait: ranks enter 500 ns apart, so rank 0 waits
	// 1,000 ns and rank 1 500 ns per iteration (Wait at N x N).
	var waits int
	for m, mt := range ct.metrics {
		if mt.Name == "Wait at N x N" {
			waits = m
		}
	}
	if waits == 0 {
		t.Fatalf("no Wait at N x N metric among %+v", ct.metrics)
	}
	for n := range ct.nodes {
		if path(int32(n)) != "main/MPI_Allreduce" {
			continue
		}
		for u, want := range []int64{1000 * iters, 500 * iters, 0} {
			if v := sum(waits, int32(n), int64(u)); v != want {
				t.Errorf("Wait at N x N on rank %d: %d ns, want %d", u, v, want)
			}
		}
	}
}

// TestCommBudget checks that a location keeps at most its share of the
// messages and collectives: the first ones on both ends, so that every
// line drawn pairs a kept send with its own receive, and the page says
// how many it left out.
func TestCommBudget(t *testing.T) {
	const ranks, iters, limit = 3, 150, 100
	files := ringRun(t, ranks, iters)
	r := testRun(t, files)
	r.procs = 2
	tp := planTimeline(r, DefaultMaxIntervals, DefaultMaxCells)
	if tp.commLimit != commBudget/ranks {
		t.Errorf("%d locations keep %d each, want %d", ranks, tp.commLimit, commBudget/ranks)
	}
	tp.commLimit = limit
	tl, err := readAll(r, tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tl.Messages) / 4; n != ranks*limit {
		t.Errorf("%d lines, want the first %d messages of each of %d ranks", n, limit, ranks)
	}
	for m := 0; m < len(tl.Messages); m += 4 {
		// A line joins a send to its own receive: 800 ns later.
		if tl.Messages[m+3]-tl.Messages[m+1] != 800 {
			t.Fatalf("message %d: sent at %d, received at %d", m/4, tl.Messages[m+1], tl.Messages[m+3])
		}
	}
	ops := 0
	for c := 0; c < len(tl.Collectives); c += 3 + 2*int(tl.Collectives[c+2]) {
		ops++
	}
	if ops != limit {
		t.Errorf("%d collectives, want %d", ops, limit)
	}
	if !strings.Contains(strings.Join(tl.Omitted, "\n"), "messages and collectives are not drawn") {
		t.Errorf("the timeline does not say what it left out: %q", tl.Omitted)
	}
	if commPerLocation(1<<20) != minCommPerLocation {
		t.Errorf("10⁶ locations keep %d each, want the floor %d", commPerLocation(1<<20), minCommPerLocation)
	}
}
