package chrome

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestAnnotations: marks and parameters are instants on their lane; each
// channel message is a flow whose two ends are on the lanes that really
// sent and received the value.
func TestAnnotations(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "annot"})
	if err != nil {
		t.Fatal(err)
	}
	jobs := m.Channel("jobs")
	type job struct {
		tok measure.ChanToken
		tid int
	}
	c := make(chan job, 4)
	var mu sync.Mutex
	pairs := map[uint64][2]int{} // token -> sending, receiving track
	var sg, rg sync.WaitGroup
	for s := 0; s < 2; s++ {
		loc := m.Location(fmt.Sprint("sender ", s))
		sg.Add(1)
		go func() {
			defer sg.Done()
			for i := 0; i < 10; i++ {
				c <- job{jobs.Send(loc, 4), int(loc.ID()) + 1}
			}
		}()
	}
	for r := 0; r < 2; r++ {
		loc := m.Location(fmt.Sprint("receiver ", r))
		reg := m.Region("work")
		p := m.StringParam("mode")
		rg.Add(1)
		go func() {
			defer rg.Done()
			for j := range c {
				loc.EnterString(reg, p, "fast")
				jobs.Recv(loc, j.tok, 4)
				loc.MarkName("got")
				loc.Leave(reg)
				mu.Lock()
				pairs[j.tok.Number()] = [2]int{j.tid, int(loc.ID()) + 1}
				mu.Unlock()
			}
		}()
	}
	sg.Wait()
	close(c)
	rg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := exportJSON(t, []*tracefile.File{f})
	var marks, params int
	flows := map[string][2]int{}
	tokens := map[string]uint64{}
	for _, e := range d.TraceEvents {
		switch {
		case e.Cat == "mark" && e.Ph == "i" && e.Name == "got":
			marks++
		case e.Cat == "param" && e.Ph == "i" && e.Name == "mode" && string(e.Args["value"]) == `"fast"`:
			params++
		case e.Cat == "channel" && e.Ph == "s":
			fl := flows[e.ID]
			fl[0] = e.Tid
			flows[e.ID] = fl
		case e.Cat == "channel" && e.Ph == "f":
			fl := flows[e.ID]
			fl[1] = e.Tid
			flows[e.ID] = fl
		case e.Cat == "channel" && e.Ph == "i" && e.Name == "recv":
			var tok uint64
			if err := json.Unmarshal(e.Args["token"], &tok); err != nil {
				t.Fatal(err)
			}
			tokens[fmt.Sprintf("chan-0-1-%d", tok)] = tok
		}
	}
	if marks != 20 || params != 20 || len(flows) != 20 || len(tokens) != 20 {
		t.Fatalf("%d marks, %d parameters, %d flows, %d receives; want 20 each", marks, params, len(flows), len(tokens))
	}
	for id, fl := range flows {
		if want := pairs[tokens[id]]; fl != want {
			t.Errorf("flow %s: tracks %v, the program sent it %v", id, fl, want)
		}
	}
}
