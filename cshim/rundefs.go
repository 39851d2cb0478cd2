package cshim

import (
	"errors"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The run's definitions, unified over MPI at its collective end
// (cshim/mpi: defs_unify): each rank makes its tables from its
// measurement's definitions as they stand, the ranks merge them two by two
// up a binomial tree, and rank 0 hands the run's to its measurement, whose
// archive holds them (tracefile's results section ResultDefinitions).

// RunDefinitions returns this rank's definitions now (regions, their
// source locations and paradigms, communicators, locations, metrics), in
// tracefile.RunDefinitions' binary form.
func (rt *Runtime) RunDefinitions() ([]byte, error) {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return nil, errors.New("hmbtrace: the run's definitions: the measurement does not record")
	}
	var d tracefile.RunDefinitions
	d.Add(mi.Snapshot(m))
	return d.MarshalBinary()
}

// MergeRunDefinitions returns the merge of two parts of the run's
// definitions, a's ranks before b's, in binary form.
func MergeRunDefinitions(a, b []byte) ([]byte, error) {
	return defsCodec.mergeParts(defsKey, a, b)
}

var defsCodec = binaryCodec[tracefile.RunDefinitions]()

// SetRunDefinitions gives the measurement the run's definitions (rank 0,
// at the root of the tree) for the archive's results.
func (rt *Runtime) SetRunDefinitions(b []byte) {
	rt.setResult(tracefile.ResultDefinitions, b)
}
