package render

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestVariationNote checks the wording of the notes that no small trace of
// analysis/variation's tests produces (those are in its notes.golden).
func TestVariationNote(t *testing.T) {
	all := []variation.Loss{{Kind: variation.LossDepth, Depth: 4}, {Kind: variation.LossClass, Class: tracefile.ClassMessage},
		{Kind: variation.LossFirst}, {Kind: variation.LossLast}, {Kind: variation.LossNoBin}, {Kind: variation.LossDuration}}
	for _, tc := range []struct {
		n    variation.Note
		want string
	}{
		{variation.Note{Kind: variation.NoteTruncated, Missing: 3}, "3 segments began before the window the keep-last policy kept and are left out"},
		{variation.Note{Kind: variation.NoteShedInvocations, Missing: 1234, Of: 5000, Region: "solve"},
			"1,234 of 5,000 invocations of solve are not in the trace; they have no segment"},
		{variation.Note{Kind: variation.NoteRestarted, Missing: 16, Of: 2424, Locations: 8, Region: "MPI_Allreduce"},
			"16 of 2,424 calls of MPI_Allreduce on 8 locations came after the location left the loop that made the one before (it returned above the depth it most often returns to between calls: a later phase): the iterations began again there, and the time between is no segment"},
		{variation.Note{Kind: variation.NoteShedSync, Missing: 7, Of: 9, Locations: 2, Losses: all},
			"7 of 9 synchronization calls on 2 locations are not in the trace (depth >= 4 closed; class " + tracefile.ClassMessage.String() +
				" closed; recording stopped when the buffer was full; oldest events revoked; events dropped for want of a bin; calls shorter than the duration filter left out): segments that held them count that wait as their own time"},
	} {
		if got := VariationNote(tc.n); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// TestErrorText checks that the typed errors are worded in full, also when
// a caller wrapped them, and that other errors keep their text.
func TestErrorText(t *testing.T) {
	ni := &variation.NoInvocationError{Region: "iteration", Losses: []variation.Loss{{Kind: variation.LossLast}}}
	want := `analysis: no invocation of "iteration" is in the trace (oldest events revoked)`
	if got := ErrorText(ni); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := ErrorText(fmt.Errorf("rank 3: %w", ni)); got != "rank 3: "+want {
		t.Errorf("wrapped: got %q", got)
	}
	nc := &variation.NoComputationError{Dominance: variation.Dominance{Locations: 2, MinVisits: 4,
		Paradigm: []variation.RegionTotal{{Name: "MPI_Init", Visits: 2}, {Name: "MPI_Send", Visits: 8}},
		Sync:     []variation.RegionTotal{{Name: "a\tb", Visits: 4}}}}
	if !errors.Is(nc, variation.ErrNoComputation) {
		t.Error("errors.Is(NoComputationError, ErrNoComputation) is false")
	}
	want = `analysis: no computation region: the regions invoked at least 4 times (2 × 2 locations) are MPI calls (MPI_Send), synchronization (a\tb); no MPI collective is called equally often on every location throughout the run; the time-dominant region must be of the program's own computation: instrument it (hmb_region, -finstrument-functions), mark the iterations with HMB_PHASE, or name the region to segment by`
	if got := ErrorText(nc); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := ErrorText(errors.New("plain")); got != "plain" {
		t.Errorf("plain error: got %q", got)
	}
}
