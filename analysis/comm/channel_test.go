package comm_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestChannelMessages: values through a named channel from three senders
// to two receivers show in the matrix between the lanes that exchanged
// them, as the program counted them, plus one value never received.
func TestChannelMessages(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "chan"})
	if err != nil {
		t.Fatal(err)
	}
	jobs := m.Channel("jobs")
	type job struct {
		tok  measure.ChanToken
		from string
	}
	c := make(chan job, 8)
	var mu sync.Mutex
	want := map[[2]string]uint64{}
	var sg, rg sync.WaitGroup
	for s := 0; s < 3; s++ {
		name := fmt.Sprint("sender ", s)
		loc := m.Location(name)
		sg.Add(1)
		go func() {
			defer sg.Done()
			for i := 0; i < 30; i++ {
				c <- job{jobs.Send(loc, 10), name}
			}
		}()
	}
	for r := 0; r < 2; r++ {
		name := fmt.Sprint("receiver ", r)
		loc := m.Location(name)
		rg.Add(1)
		go func() {
			defer rg.Done()
			for j := range c {
				jobs.Recv(loc, j.tok, 10)
				mu.Lock()
				want[[2]string{j.from, name}]++
				mu.Unlock()
			}
		}()
	}
	sg.Wait()
	close(c)
	rg.Wait()
	jobs.Send(m.Location("late"), 10) // never received
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mx, err := FromFiles([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]uint64{}
	for _, c := range mx.Cells {
		got[[2]string{mx.Nodes[c.From].Name, mx.Nodes[c.To].Name}] += c.Messages
		if c.Bytes != 10*c.Messages {
			t.Errorf("%+v: bytes are not 10 a message", c)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("matrix %v\nwant %v", got, want)
	}
	if mx.Channel != 90 || mx.ChannelUnreceived != 1 || mx.Unmatched != 0 {
		t.Errorf("channel %d, unreceived %d, unmatched %d; want 90, 1, 0", mx.Channel, mx.ChannelUnreceived, mx.Unmatched)
	}
	var out bytes.Buffer
	if err := render.CommText(&out, mx); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"90 of these messages went through named channels", "1 value sent on named channels has no receive"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("comm text lacks %q:\n%s", s, out.String())
		}
	}
}
