package cshim_test

// The wait-state replay in-situ (issue 32, point 2): the ranks of an MPI
// run replay their own events at its collective end and exchange the
// times the patterns need over MPI; their wait states must be those the
// post-mortem replay finds on the same events.

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIInSituWaitStates runs testdata/mpi/waitstate_insitu.c on 4
// ranks: a ring with a late rank 2, an Allreduce and a Barrier after
// imbalanced work, a late Bcast root, an early Reduce root, an Ssend to a
// late receiver, an Allreduce on half the ranks and an Irecv completed by
// MPI_Wait. Every (pattern, call path, location) value the ranks replayed
// in-situ is the post-mortem one: the same count of waits, and times
// within TestMPIInSitu's near for each wait (both paths convert a rank's
// ticks at the rate, sync points and start its file has: seen equal).
// Each planted pattern is there, where it was planted. The clocks are
// synchronised as between nodes (HMB_CLOCK_SYNC=measure).
func TestMPIInSituWaitStates(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "waitstate_insitu", "waitstate_insitu.c")
	const np, iters = 4, 6
	out := filepath.Join(t.TempDir(), "out")
	// Every edge of the clock tree ping-pongs, as between nodes: the
	// ranks' offsets and drifts are not 0 (TestMPIInSitu has one node's
	// zeros), and both replays must still apply the same.
	mpirun(t, np, out, []string{"HMB_CLOCK_SYNC=measure"}, prog, "6")
	files := rankFiles(t, out, "waitstate_insitu", np)
	measured := 0
	for _, f := range files {
		for _, c := range f.Header.ClockSync {
			if c.Offset != 0 {
				measured++
			}
		}
	}
	if measured == 0 {
		t.Errorf("HMB_CLOCK_SYNC=measure: every offset 0, want measured ones")
	}
	path := filepath.Join(out, "waitstate_insitu.hmbrun")

	post, err := waitstate.Analyze(files, waitstate.Options{Procs: 2})
	if err != nil {
		t.Fatal(err)
	}
	in, err := waitstate.DecodeInSitu(inSituResult(t, path, tracefile.ResultWaitStates))
	if err != nil {
		t.Fatal(err)
	}
	got := in.Result()

	type cell struct {
		p         waitstate.Pattern
		path, loc string
	}
	cells := func(r *waitstate.Result) map[cell]waitstate.Value {
		m := map[cell]waitstate.Value{}
		for _, v := range r.Values {
			k := cell{v.Pattern, r.PathName(v.Path), r.Locations[v.Loc].Name}
			if _, dup := m[k]; dup {
				t.Errorf("%v %s %s twice", v.Pattern, k.path, k.loc)
			}
			m[k] = v
		}
		return m
	}
	// The tolerance of a wait: of near for each of the two times on the
	// axis (at most the run's end) it is the difference of.
	slack := 2 * (1e-9*float64(tracefile.NewAxis(files).End) + 4)
	a, b := cells(got), cells(post)
	worst := 0.0 // the largest difference per wait, ns
	for k, v := range b {
		w := a[k]
		tol := 1e-9*float64(v.Time) + slack*float64(max(v.Count, w.Count))
		worst = max(worst, math.Abs(float64(w.Time-v.Time))/float64(max(v.Count, w.Count, 1)))
		if math.Abs(float64(w.Time-v.Time)) > tol {
			t.Errorf("%v in %s on %s: in-situ %d ns (%d waits), post-mortem %d ns (%d waits), tolerance %.0f ns", k.p, k.path, k.loc, w.Time, w.Count, v.Time, v.Count, tol)
		} else if w.Count != v.Count {
			t.Logf("%v in %s on %s: in-situ %d waits, post-mortem %d: a wait within the clocks' tolerance of 0 (%d ns against %d)", k.p, k.path, k.loc, w.Count, v.Count, w.Time, v.Time)
		}
	}
	for k, w := range a {
		if _, ok := b[k]; !ok && float64(w.Time) > slack*float64(w.Count) {
			t.Errorf("%v in %s on %s: in-situ %d ns (%d waits), none post-mortem", k.p, k.path, k.loc, w.Time, w.Count)
		}
	}
	t.Logf("in-situ and post-mortem values differ by %.0f ns per wait at most (tolerance %.0f ns)", worst, slack)
	for p := range waitstate.NumPatterns {
		t.Logf("%-32v in-situ %12d ns %3d waits, post-mortem %12d ns %3d waits", p, got.Totals[p], got.Counts[p], post.Totals[p], post.Counts[p])
	}
	if got.UnmatchedRecvs != post.UnmatchedRecvs || got.UnmatchedSends != post.UnmatchedSends ||
		got.UnmatchedCollectives != post.UnmatchedCollectives || got.Unresolved != post.Unresolved {
		t.Errorf("unmatched in-situ: %d receives, %d sends, %d collectives, %d unresolved; post-mortem %d, %d, %d, %d",
			got.UnmatchedRecvs, got.UnmatchedSends, got.UnmatchedCollectives, got.Unresolved,
			post.UnmatchedRecvs, post.UnmatchedSends, post.UnmatchedCollectives, post.Unresolved)
	}
	if !got.Synced {
		t.Error("in-situ: the ranks' clocks were not synchronised")
	}
	// The planted patterns, where they were planted: the waits of a late
	// party of 2 to 6 ms an iteration (the scheduler of a machine with
	// fewer cores than ranks may add to them, or let a party catch up).
	for _, c := range []struct {
		p      waitstate.Pattern
		region string
		rank   int // -1: any
	}{
		{waitstate.LateSender, "MPI_Recv", 3},
		{waitstate.WaitNxN, "MPI_Allreduce", -1},
		{waitstate.WaitBarrier, "MPI_Barrier", -1},
		{waitstate.LateBroadcast, "MPI_Bcast", -1},
	} {
		if ns := planted(got, c.p, c.region, c.rank); ns < iters*1_000_000 {
			t.Errorf("in-situ %v in %s on rank %d: %d ns, want a few ms an iteration", c.p, c.region, c.rank, ns)
		}
	}
	sameWhyMPI(t, got, post, slack)
	if t.Failed() {
		js, _ := json.MarshalIndent(in, "", " ")
		t.Logf("in-situ:\n%s", js)
	}
	// The command reads them, with the critical path and the delay costs.
	text := hmbtraceRun(t, "waitstate", "-insitu", "-top", "100", out)
	if !containsAll(text, "Late Sender", "MPI_Recv", "rank 3", "In-situ", "Critical path", "Delay costs") {
		t.Errorf("waitstate -insitu:\n%s", text)
	}
	if costs := string(inSituResult(t, path, tracefile.ResultCosts)); !strings.Contains(costs, "wait-state replay") {
		t.Errorf("the passes' costs hold no wait-state replay: %s", costs)
	}
	if !strings.Contains(text, "The replay cost rank 0 ") {
		t.Errorf("waitstate -insitu says nothing of the replay's cost:\n%s", text)
	}

	// Without the events (HMB_OUTPUT_EVENTS=none), summary and waitstate
	// read the wait states the ranks replayed.
	none := filepath.Join(t.TempDir(), "none")
	mpirun(t, np, none, []string{"HMB_OUTPUT_EVENTS=none"}, prog, "2")
	if text := hmbtraceRun(t, "summary", none); !containsAll(text, "Why ranks wait:", "Wait at N x N", "wait-state replay", "caused most by", "critical path") {
		t.Errorf("summary of a run's results only:\n%s", text)
	}
	if text := hmbtraceRun(t, "waitstate", none); !containsAll(text, "In-situ", "Wait at N x N", "The replay cost rank 0 ") {
		t.Errorf("waitstate of a run's results only:\n%s", text)
	}
}

// sameWhyMPI compares what the backward replay found in-situ with the
// post-mortem result of the same run, within the clocks' tolerance (slack
// per time on the axis): the delay costs per pattern, long- and
// short-term; the largest cause; the longest wait and its delay's late
// location; the critical path's start. The in-situ events end at the
// collective end, the files' after MPI_Finalize, which the ranks leave in
// another order: the critical path starts from another end, and its last
// stretch differs. (On the same events the two are equal: the in-memory
// TestInSitu* tests.)
func sameWhyMPI(t *testing.T, got, post *waitstate.Result, slack float64) {
	t.Helper()
	name := func(r *waitstate.Result, i int) string {
		if i < 0 || i >= len(r.Locations) {
			return "-"
		}
		return r.Locations[i].Name
	}
	a, b := got.CriticalPath, post.CriticalPath
	if a == nil || b == nil {
		t.Fatalf("critical path in-situ %v, post-mortem %v", a, b)
	}
	t.Logf("critical path in-situ %d..%d ns, %d hops, from %s; post-mortem %d..%d ns, %d hops, from %s", a.Start, a.End, a.Hops, name(got, a.Last), b.Start, b.End, b.Hops, name(post, b.Last))
	onPath := func(r *waitstate.Result) map[string]int64 {
		m := map[string]int64{}
		for _, v := range r.CriticalPath.Values {
			m[v.Region+" on "+name(r, v.Loc)] += v.Time
		}
		return m
	}
	t.Logf("on the path in-situ %v\npost-mortem %v", onPath(got), onPath(post))
	if math.Abs(float64(a.Start-b.Start)) > 2*slack || a.End > b.End+int64(2*slack) || a.Hops == 0 || b.Hops == 0 {
		t.Errorf("critical path in-situ %d..%d ns (%d hops), post-mortem %d..%d ns (%d hops): want the same start (tolerance %.0f ns), an end no later",
			a.Start, a.End, a.Hops, b.Start, b.End, b.Hops, 2*slack)
	}
	for _, r := range []*waitstate.Result{got, post} {
		var causes []string
		for i, c := range r.Causes() {
			if i < 6 {
				causes = append(causes, fmt.Sprintf("%v %s on %s %d+%d", c.Pattern, r.PathName(c.Path), name(r, c.Loc), c.Short, c.Long))
			}
		}
		t.Logf("causes: %s", strings.Join(causes, "; "))
	}
	type key struct {
		p    waitstate.Pattern
		long bool
	}
	sums := func(r *waitstate.Result) (map[key]int64, int) {
		m := map[key]int64{}
		for _, c := range r.DelayCosts {
			m[key{c.Pattern, c.LongTerm}] += c.Time
		}
		return m, len(r.DelayCosts)
	}
	ca, na := sums(got)
	cb, nb := sums(post)
	waits := 0
	for _, c := range post.Counts {
		waits += c
	}
	for k, v := range cb {
		// Each wait's cost moves with its times, and a long-term cost
		// with the waits it carried.
		tol := 2*slack*float64(waits) + 1e-9*float64(v) + float64(na+nb)
		if math.Abs(float64(ca[k]-v)) > tol {
			t.Errorf("delay costs of %v (long-term %v): in-situ %d ns, post-mortem %d (tolerance %.0f ns)", k.p, k.long, ca[k], v, tol)
		}
	}
	if len(got.Worst) == 0 || len(post.Worst) == 0 {
		t.Fatalf("worst waits in-situ %d, post-mortem %d", len(got.Worst), len(post.Worst))
	}
	wa, wb := got.Worst[0], post.Worst[0]
	if wa.Pattern != wb.Pattern || name(got, wa.Loc) != name(post, wb.Loc) || math.Abs(float64(wa.Time-wb.Time)) > 2*slack ||
		(wa.Delay == nil) != (wb.Delay == nil) || wa.Delay != nil && name(got, wa.Delay.Loc) != name(post, wb.Delay.Loc) {
		t.Errorf("the longest wait in-situ %+v, post-mortem %+v", wa, wb)
	}
	ta, tb := got.Causes(), post.Causes()
	if len(ta) == 0 || len(tb) == 0 || ta[0].Pattern != tb[0].Pattern || got.PathName(ta[0].Path) != post.PathName(tb[0].Path) ||
		name(got, ta[0].Loc) != name(post, tb[0].Loc) || math.Abs(float64(ta[0].Short-tb[0].Short)) > 2*slack*float64(waits) {
		t.Errorf("the largest cause in-situ %+v, post-mortem %+v", ta, tb)
	}
}

// TestMPIWaitStatesOff: with HMB_WAITSTATES=off the collective end skips
// the replay, the archive holds every other result but no wait states,
// `waitstate -insitu` says why, and the post-mortem replay of the same
// archive still finds the planted Late Sender.
func TestMPIWaitStatesOff(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "waitstate_insitu", "waitstate_insitu.c")
	out := filepath.Join(t.TempDir(), "out")
	mpirun(t, 4, out, []string{"HMB_WAITSTATES=off"}, prog, "3")
	path := filepath.Join(out, "waitstate_insitu.hmbrun")
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	_, ws, err := a.Result(tracefile.ResultWaitStates)
	_, prof, _ := a.Result(tracefile.ResultRunProfile)
	a.Close()
	if err != nil || ws || !prof {
		t.Fatalf("HMB_WAITSTATES=off: wait states in the results %v, a profile %v (%v); want none and one", ws, prof, err)
	}
	cmd := exec.Command(built.hmbtrace, "waitstate", "-insitu", out)
	if msg, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(msg), "HMB_WAITSTATES=off") {
		t.Errorf("waitstate -insitu of a run without its replay: %v\n%s", err, msg)
	}
	if text := hmbtraceRun(t, "waitstate", out); !containsAll(text, "Late Sender", "MPI_Recv", "rank 3") {
		t.Errorf("waitstate, post-mortem:\n%s", text)
	}
}
