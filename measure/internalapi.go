package measure

import "github.com/hmbtrace/hmbtrace/internal/measureinternal"

// The operations only this module's packages call: the C shim's (cprobe.go,
// recordAt, tiedTaskAt, setTeam, the RMA definitions) and measure/live's
// registration. Unexported here, they reach those packages through
// internal/measureinternal, which code outside the module cannot import, so
// that the public API is what a Go program uses. Registered before any
// importer of measure is initialised.
func init() {
	measureinternal.Register(&measureinternal.Funcs[*Location, *Measurement]{
		PinForC:    (*Location).pinForC,
		NewThread:  (*Measurement).threadLocation,
		UnpinC:     (*Location).unpinC,
		Interrupt:  (*Location).interrupt,
		AddDropped: (*Location).addDropped,
		RecordAt:   (*Location).recordAt,
		TiedTaskAt: (*Location).tiedTaskAt,
		SetTeam:    (*Location).setTeam,
		DefineWin: func(m *Measurement, comm uint32) (uint32, error) {
			w, err := m.defineWin(CommID(comm))
			return uint32(w), err
		},
		NameWin: func(m *Measurement, w uint32, name string) error {
			return m.nameWin(winID(w), name)
		},
		DefineRmaGroup: func(m *Measurement, members []int32) (uint32, error) {
			g, err := m.defineRmaGroup(members)
			return uint32(g), err
		},
		CaughtSignal:   (*Measurement).caughtSignal,
		RegisterLive:   registerLive,
		RunEnd:         (*Measurement).runEnd,
		TraceSize:      (*Measurement).traceSize,
		CreateArchive:  (*Measurement).createArchive,
		SetArchiveSlot: (*Measurement).setArchiveSlot,
		Snapshot:       (*Measurement).snapshot,
		SetRunResults:  (*Measurement).setRunResults,
		SetRunTotals: func(m *Measurement, ranks int, recorded, notKept, usage uint64, worstRank int, worstNotKept float64) {
			m.setRunTotals(runTotals{Ranks: ranks, Recorded: recorded, NotKept: notKept, Usage: usage, WorstRank: worstRank, WorstNotKept: worstNotKept})
		},
		LastUsage:      (*Measurement).lastUsage,
		MemoryTrace:    (*Measurement).memoryTrace,
		SyncedNanos:    (*Measurement).syncedNanos,
		ResultsOnly:    (*Measurement).resultsOnly,
		ResultsWritten: (*Measurement).setResultsWritten,
		MarkAutomatic:  (*Measurement).markAutomatic,
		EndJoins:       (*Measurement).endJoins,
	})
}
