package tracetest

import (
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// WriteArchive writes a run of ranks processes, rank(r) making rank r's
// trace, as the collective end of an MPI run writes it: run archives in
// dir of perFile ranks each, group 0's with the run's unified definitions
// (tracefile.ResultDefinitions), each rank's trace written into its slot
// through a tracefile.Writer, as a measurement writes it. It returns the
// archives' paths. rank is called twice per rank (for the definitions,
// then for the slot) and its trace dropped at once, so that a run of 10^4
// ranks takes the memory of one rank's trace, not of the run's.
func WriteArchive(dir, name string, ranks, perFile int, rank func(r int) *Builder) ([]string, error) {
	var defs tracefile.RunDefinitions
	capacity := make([]int64, ranks)
	for r := 0; r < ranks; r++ {
		b := rank(r)
		defs.Add(&b.Trace)
		var n countWriter
		if err := b.WriteTrace(&n); err != nil {
			return nil, err
		}
		capacity[r] = tracefile.SlotCapacity(int64(n))
	}
	d, err := defs.MarshalBinary()
	if err != nil {
		return nil, err
	}
	groups := (ranks + perFile - 1) / perFile
	var paths []string
	for g := 0; g < groups; g++ {
		plan := tracefile.ArchivePlan{Name: name, World: ranks, Group: g, Groups: groups, Start: time.Now().Add(-time.Hour)}
		if g == 0 {
			plan.Results = tracefile.AppendResult(nil, tracefile.ResultDefinitions, d)
		}
		for r := g * perFile; r < min(ranks, (g+1)*perFile); r++ {
			plan.Ranks = append(plan.Ranks, r)
			plan.Capacity = append(plan.Capacity, capacity[r])
		}
		path := tracefile.ArchiveName(dir, name, g, groups)
		if _, err := tracefile.CreateArchive(path, plan); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	// Group 0 exists before any slot is written, as at the collective end.
	for _, path := range paths {
		a, err := tracefile.OpenArchive(path)
		if err != nil {
			return nil, err
		}
		slots := a.Slots
		a.Close()
		for _, s := range slots {
			if err := tracefile.WriteSlot(path, s.Off, s.Cap, s.Rank, rank(s.Rank).WriteTrace); err != nil {
				return nil, err
			}
		}
	}
	return paths, nil
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
