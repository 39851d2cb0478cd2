package tracetest

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ManyRegionsName is the name of the region ManyRegions defines i-th
// (0-based): distinct, of a C++ code's length, in the order they are
// defined, so that a tool that sorts by name and one that keeps the
// definition order differ.
func ManyRegionsName(i int) string {
	return fmt.Sprintf("app::kernel_%07d(double*, int)", (i*7919)%maxManyRegions)
}

// maxManyRegions bounds ManyRegions: 7919 is prime, so i*7919 mod it is
// distinct for every i below it.
const maxManyRegions = 10_000_000

// ManyRegions records, with the probes, a run of ranks processes named
// name into dir, each with one location that calls main and, inside it,
// regions distinct regions: every region once, every third one a second
// time, every seventh one a call of the next one nested in it, then an
// MPI_Allreduce, at the probes' pace. It returns the rank files'
// paths in rank order. The tools' time per region at 10³ to 10⁶ regions
// is measured on it (the bench's regions section and the tests of the
// tools' scans).
func ManyRegions(dir, name string, regions, ranks int) ([]string, error) {
	if regions < 1 || regions > maxManyRegions || ranks < 1 {
		return nil, fmt.Errorf("tracetest: ManyRegions: %d regions on %d ranks: want 1 to %d regions, 1 or more ranks", regions, ranks, maxManyRegions)
	}
	var paths []string
	for rank := range ranks {
		m, err := measure.Start(measure.Config{Output: dir, Name: name, Rank: rank, Clock: "monotonic",
			TimerShift: measure.NoTimerShift, IgnoreEnv: true, NoThrottle: true,
			BufferSize: 64<<20 + regions*64})
		if err != nil {
			return nil, err
		}
		rs := make([]measure.Region, regions)
		for i := range rs {
			rs[i] = m.Region(ManyRegionsName(i))
		}
		main, allreduce := m.Region("main"), RegionOf(m, "MPI_Allreduce")
		l := m.Location("main thread")
		l.Enter(main)
		for i, r := range rs {
			calls := 1
			if i%3 == 0 {
				calls = 2
			}
			for range calls {
				l.Enter(r)
				if i%7 == 0 && i+1 < regions {
					l.Enter(rs[i+1])
					l.Leave(rs[i+1])
				}
				l.Leave(r)
			}
		}
		l.Enter(allreduce)
		l.Leave(allreduce)
		l.Leave(main)
		if err := m.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, m.Path())
	}
	return paths, nil
}

// OpenManyRegions records ManyRegions into a temporary directory and
// opens its rank files; they are closed when the test ends.
func OpenManyRegions(t testing.TB, regions, ranks int) []*tracefile.File {
	t.Helper()
	paths, err := ManyRegions(t.TempDir(), "many", regions, ranks)
	if err != nil {
		t.Fatal(err)
	}
	files := make([]*tracefile.File, len(paths))
	for i, p := range paths {
		files[i] = Open(t, p)
	}
	return files
}

// LinearInRegions fails the test unless work, a count of what a tool does
// on a trace of n regions (allocations, entries scanned; never a time),
// grows at most about linearly from 10³ to 10⁴ regions: at most 15 times
// (a scan per region makes it about 100 times).
func LinearInRegions(t *testing.T, what string, work func(t *testing.T, regions int) float64) {
	t.Helper()
	small, large := work(t, 1_000), work(t, 10_000)
	t.Logf("%s: %.0f at 10³ regions, %.0f at 10⁴ (%.1f×)", what, small, large, large/small)
	if small <= 0 || large > 15*small {
		t.Errorf("%s: %.0f at 10³ regions, %.0f at 10⁴: %.1f× for 10× the regions, want at most 15×", what, small, large, large/small)
	}
}
