package measure

import (
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// syncedNanos (HMB_COLLECTIVE_TIMING's arrival at MPI_Finalize) is the
// written file's GlobalNanos of the same ticks, to the ns: the same sync
// points, here with offsets and drift as between nodes, and the same
// rate, which it fixes over the run so far though the run goes on.
func TestSyncedNanosIsTheFiles(t *testing.T) {
	m, err := Start(Config{Output: t.TempDir(), Name: "synced", IgnoreEnv: true, BinSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.syncedNanos(clock.Now()); ok {
		t.Error("converted before a clock sync")
	}
	ref := m.StartTicks() - 5_000_000 // rank 0 started earlier
	t0 := clock.Now()
	m.SyncClock(t0, 12_345, ref)
	time.Sleep(3 * fullCalibration) // past Start's calibration
	t1 := clock.Now()
	m.SyncClock(t1, 12_345+700, ref) // 700 ticks of drift
	shift := m.shift
	var at []uint64
	for _, ticks := range []uint64{t0, t0 + (t1-t0)/3, t1} {
		at = append(at, ticks>>shift<<shift) // what a reduced timestamp holds
	}
	got := make([]int64, len(at))
	for i, ticks := range at {
		ns, ok := m.syncedNanos(ticks)
		if !ok {
			t.Fatal("not synchronised after SyncClock")
		}
		got[i] = ns
	}
	time.Sleep(fullCalibration) // the run goes on: its rate would be taken again
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	w, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i, ticks := range at {
		if want := w.GlobalNanos(ticks >> shift); got[i] != want {
			t.Errorf("ticks %d: %d ns, the file's %d ns", ticks, got[i], want)
		}
	}
}
