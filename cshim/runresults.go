package cshim

import (
	"errors"

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
	}
}
