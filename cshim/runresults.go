package cshim

import (
	"errors"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The run-wide results of an MPI run, reduced over MPI at its collective
// end (cshim/mpi: run_reduce): each rank makes its run profile from its
// measurement's statistics as they stand (summary.Local, no events), the
// ranks merge them two by two up a binomial tree, and rank 0 hands the
// run's to its measurement, whose archive holds it (tracefile's results
// section ResultRunProfile). A thread still recording at MPI_Finalize is
// read as it is then.

// RunProfile returns this rank's run profile now, in its binary form.
func (rt *Runtime) RunProfile(rank int) ([]byte, error) {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return nil, errors.New("hmbtrace: the run's profile: the measurement does not record")
	}
	p := summary.Local(mi.Snapshot(m), rank)
	return p.MarshalBinary()
}

// MergeRunProfiles returns the merge of two ranks' (or subtrees') run
// profiles, in binary form.
func MergeRunProfiles(a, b []byte) ([]byte, error) {
	var p, q summary.RunProfile
	if err := p.UnmarshalBinary(a); err != nil {
		return nil, err
	}
	if err := q.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	p.Merge(&q)
	return p.MarshalBinary()
}

// SetRunProfile gives the measurement the run's profile (rank 0, at the
// root of the reduction) for the archive's results.
func (rt *Runtime) SetRunProfile(b []byte) {
	if m := rt.Measurement(); m != nil {
		mi.SetRunResults(m, tracefile.AppendResult(nil, tracefile.ResultRunProfile, b))
		var p summary.RunProfile
		if p.UnmarshalBinary(b) == nil {
			setRunTotals(m, &p)
		}
	}
}

// setRunTotals gives m the run's counts from its profile, for the one
// line rank 0 says at exit for the whole run.
func setRunTotals(m *measure.Measurement, p *summary.RunProfile) {
	b := &p.Buffer
	u := b.Usage
	usage := u.UnknownRegion + u.LeaveNothingOpen + u.LeaveNotOpen + u.LeftImplicitly + u.OpenAtClose + u.AfterClose + u.MessageNoPeer
	worst := 0.0
	if w := b.Worst; w.Recorded > 0 && w.Kept < w.Recorded {
		worst = float64(w.Recorded-w.Kept) / float64(w.Recorded)
	}
	mi.SetRunTotals(m, p.Ranks.Len(), b.Recorded, b.Removed.Total(), usage, b.Worst.Rank, worst)
}

// LastUsage returns the measurement's last usage error in words and the
// CLOCK_MONOTONIC time it was noted at, for hmb_last_error; "" if none.
func (rt *Runtime) LastUsage() (string, uint64) {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return "", 0
	}
	return mi.LastUsage(m)
}
