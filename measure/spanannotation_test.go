package measure_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var (
	annotSolve = measure.NewRegion("annot solve")
	annotStep  = measure.NewRegion("annot step")
)

// TestSpanAnnotations: the context forms put marks and parameters on the
// goroutine's lane, inside the span's region; a parameter while a region
// inside the span is open is refused, a mark outside any region lies at
// depth 0; a channel goes between the lanes the spans record into.
func TestSpanAnnotations(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "spanannot", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	measure.Instant(ctx, "begin")
	ch := m.Channel("work")
	tokens := make(chan measure.ChanToken, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sp := measure.StartRegion(ctx, annotStep)
		defer sp.End()
		ch.Recv(sp.Lane(), <-tokens, 8)
	}()
	func() {
		sp := measure.StartRegion(ctx, annotSolve)
		defer sp.End()
		sp.Int("n", 7)
		sp.String("mode", "cg")
		sp.Mark("inside")
		measure.Instant(ctx, "instant")
		inner := measure.StartRegion(ctx, annotStep)
		sp.Int("late", 1) // a region inside the span is open: not the span's call
		inner.End()
		tokens <- ch.Send(sp.Lane(), 8)
	}()
	<-done
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []string
	for _, l := range f.Locations {
		all = append(all, eventsOf(t, f, l.ID)...)
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		`MARK region#0 d0: mark "begin"`,
		`PARAM_INT annot solve d1: param n = 7`,
		`PARAM_STRING annot solve d1: param mode = "cg"`,
		`MARK annot solve d1: mark "inside"`,
		`MARK annot solve d1: mark "instant"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "late") {
		t.Errorf("a parameter while an inner region was open was recorded:\n%s", got)
	}
	msgs, err := f.ChannelMessages()
	// The receiver may run on the sender's lane, given back by then.
	if err != nil || len(msgs) != 1 || !msgs[0].Sent || !msgs[0].Received {
		t.Fatalf("channel messages %+v, %v: want 1, sent and received", msgs, err)
	}
}
