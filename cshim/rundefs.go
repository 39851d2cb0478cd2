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

// MergeRunDefinitions merges b, the definitions of the ranks after this
// rank's running merge of them, into it: the one it holds when isHeld,
// else a, its own (PassMerge's rule).
func MergeRunDefinitions(a []byte, isHeld bool, b []byte) error {
	return defsCodec.mergeInto(defsKey, a, isHeld, b)
}

// RunDefinitionsHeld returns this rank's running merge of the definitions
// in binary form, to send up the tree, and lets it go.
func RunDefinitionsHeld() ([]byte, error) {
	return defsCodec.takeHeld(defsKey)
}

var defsCodec = binaryCodec[tracefile.RunDefinitions]()

// SetRunDefinitions gives the measurement the run's definitions (rank 0,
// at the root of the tree: its running merge when isHeld, else b) for the
// archive's results.
func (rt *Runtime) SetRunDefinitions(b []byte, isHeld bool) error {
	p := &runPart{codec: defsCodec, pass: defsKey, b: b, isHeld: isHeld}
	b, err := p.bytes()
	if err != nil {
		return err
	}
	rt.setResult(tracefile.ResultDefinitions, b)
	return nil
}
