package measure

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// runThreads records, on each of threads locations at once, iters calls
// nested depth deep, as an OpenMP loop of many threads does (issue 37,
// S15: 256 threads with a 4 MiB buffer kept 0.2 % of their events).
func runThreads(t *testing.T, c Config, threads, depth, iters int) *Measurement {
	t.Helper()
	c.NoThrottle = true
	m := startTest(t, c)
	regions := make([]Region, depth)
	for d := range regions {
		regions[d] = m.Region(fmt.Sprintf("level%d", d))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A thread's own location, as the C shim makes: a
			// goroutine's lane is held only while a region is open.
			loc := m.threadLocation(fmt.Sprintf("thread %d", i))
			<-start
			for k := 0; k < iters; k++ {
				for _, r := range regions {
					loc.Enter(r)
				}
				for d := len(regions) - 1; d >= 0; d-- {
					loc.Leave(regions[d])
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManyThreadsStarve(t *testing.T) {
	const threads, depth, iters = 256, 8, 30
	// 8 KiB bins, as before bins adapted: 512 bins for 2,048 levels.
	m := runThreads(t, Config{BufferSize: 4 << 20, BinSize: 8 << 10}, threads, depth, iters)
	st := m.Stats()
	d := m.pool.FirstDry()
	if !d.Starved() || d.Bins != 512 || d.Levels > threads*depth || d.Levels < d.Current || m.pool.Levels() != threads*depth {
		t.Fatalf("FirstDry = %+v, want a starved pool of 512 bins", d)
	}
	if st.Kept == st.Recorded {
		t.Fatalf("kept all %d events in 512 bins for %d levels", st.Kept, threads*depth)
	}
	w := starvedWarning(d, m.pool.Levels(), m.pool.BinSize(), 4<<20, &st)
	for _, want := range []string{"ran out of bins, not of memory", "of its 512 bins of 8K", "HMB_BIN_SIZE=512 keeps them (8192 bins)"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q does not say %q", w, want)
		}
	}

	// The default bin size for that buffer keeps every event.
	m = runThreads(t, Config{BufferSize: 4 << 20}, threads, depth, iters)
	st = m.Stats()
	if m.pool.BinSize() != 1<<10 || m.pool.Bins() != 4096 {
		t.Errorf("4 MiB buffer: %d bins of %d bytes, want 4096 of 1 KiB", m.pool.Bins(), m.pool.BinSize())
	}
	if st.Kept != st.Recorded || st.Recorded != 2*threads*depth*iters {
		t.Errorf("default bins: kept %d of %d events, want all %d", st.Kept, st.Recorded, 2*threads*depth*iters)
	}
	if d := m.pool.FirstDry(); d.Happened {
		t.Errorf("default bins: the pool ran dry: %+v", d)
	}
}

func TestAutoBinSize(t *testing.T) {
	for _, c := range []struct{ size, want int }{
		{64 << 20, 8 << 10}, {32 << 20, 8 << 10}, {16 << 20, 4 << 10}, {4 << 20, 1 << 10}, {1 << 20, 1 << 10}, {64 << 10, 1 << 10},
	} {
		if got := autoBinSize(c.size); got != c.want {
			t.Errorf("autoBinSize(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

func TestStarvedRemedy(t *testing.T) {
	for _, c := range []struct {
		levels, bin, size int
		want              string
	}{
		{2048, 8 << 10, 4 << 20, "HMB_BIN_SIZE=512 keeps them (8192 bins)"},
		{100000, 1 << 10, 4 << 20, "HMB_BIN_SIZE=256 with HMB_BUFFER_SIZE=98M keeps them"},
	} {
		if got := starvedRemedy(c.levels, c.bin, c.size); got != c.want {
			t.Errorf("starvedRemedy(%d, %d, %d) = %q, want %q", c.levels, c.bin, c.size, got, c.want)
		}
	}
}

// A buffer too small for the events says nothing of bins, though most of
// its bins were current ones when it ran dry: smaller bins would not have
// kept the events.
func TestTooSmallNotStarved(t *testing.T) {
	m := startTest(t, Config{BufferSize: 64 << 10, NoThrottle: true})
	const locs, depth = 16, 4
	regions := make([]Region, depth)
	for d := range regions {
		regions[d] = m.Region(fmt.Sprintf("level%d", d))
	}
	threads := make([]*Location, locs)
	for i := range threads {
		threads[i] = m.threadLocation(fmt.Sprintf("thread %d", i))
	}
	// Round robin, so that every level has its bin before the pool
	// runs dry, as threads running at once do.
	for k := 0; k < 2000; k++ {
		for _, loc := range threads {
			for _, r := range regions {
				loc.Enter(r)
			}
			for d := depth - 1; d >= 0; d-- {
				loc.Leave(regions[d])
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	d := m.pool.FirstDry()
	if !d.Starved() || st.Kept == st.Recorded {
		t.Fatalf("a 64 KiB buffer for 64 levels: kept %d of %d events, FirstDry %+v; want a starved pool that removed events", st.Kept, st.Recorded, d)
	}
	if w := starvedWarning(d, m.pool.Levels(), m.pool.BinSize(), 64<<10, &st); w != "" {
		t.Errorf("%d events of %d bytes each (kept %d) in a 64 KiB buffer: warned %q", st.Recorded, st.BytesUsed/int64(max(st.Kept, 1)), st.Kept, w)
	}
}
