package measure

import (
	"context"
	"testing"
	"time"
)

// A goroutine still inside its outermost region when Close comes (a
// server's loop blocked on a channel) keeps its lane active past Close's
// wait. Its probes record nothing after the freeze, so its open region
// ends at Close's time, as every other location's do: left open, the
// flat profile (which adds a call's time at its leave) gave it 0 ns under
// children of milliseconds, the exports ended it at its last event, and
// the summary blamed a signal.
func TestCloseEndsOutlivingLane(t *testing.T) {
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 1 << 10, NoThrottle: true})
	ctx := NewContext(context.Background(), m)
	serve, handle := NewRegion("serve"), NewRegion("handle")
	reqs, handled := make(chan int), make(chan struct{})
	go func() {
		defer StartRegion(ctx, serve).End()
		for range reqs {
			Do(ctx, handle, func(context.Context) { time.Sleep(time.Millisecond) })
			handled <- struct{}{}
		}
	}()
	for i := range 5 {
		reqs <- i
		<-handled
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if u := m.Stats().Usage; u.OpenAtClose != 1 {
		t.Errorf("usage %+v; want serve counted open at Close", u)
	}
	f := openTrace(t, m)
	incl := map[uint32]int64{}
	for _, l := range f.Locations {
		if l.Interrupted {
			t.Errorf("location %q interrupted; want its open region ended at Close", l.Name)
		}
		for _, p := range l.Profile {
			incl[p.Region] += f.TicksToNanos(p.Inclusive)
		}
	}
	s, h := incl[uint32(m.RegionOf(serve))], incl[uint32(m.RegionOf(handle))]
	if h < 5*int64(time.Millisecond) || s < h {
		t.Errorf("serve %d ns inclusive, handle %d ns; want serve to hold handle's 5 ms at least", s, h)
	}
	close(reqs)
}
