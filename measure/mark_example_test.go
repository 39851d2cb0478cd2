package measure_test

import (
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Marks are instant events; parameters go with the call they were
// recorded in, as Score-P's SCOREP_USER_PARAMETER_INT64 and _STRING.
func ExampleLocation_EnterInt() {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	defer os.RemoveAll(dir)
	m, err := measure.Start(measure.Config{Output: dir, Name: "params"})
	if err != nil {
		panic(err)
	}
	solve := m.Region("solve")
	size, method := m.IntParam("size"), m.StringParam("method")
	done := m.Mark("converged")

	loc := m.Location("main")
	loc.EnterInt(solve, size, 1024)
	loc.ParamString(method, "cg")
	loc.Mark(done)
	loc.Leave(solve)
	if err := m.Close(); err != nil {
		panic(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		panic(err)
	}
	defer f.Close()
	it := f.Events(loc.ID())
	var e tracefile.Event
	for it.Next(&e) {
		line := fmt.Sprint(e.Kind, " ", f.RegionName(e.Region))
		if d := f.Describe(&e); d != "" {
			line += ": " + d
		}
		fmt.Println(line)
	}
	// Output:
	// ENTER solve
	// PARAM_INT solve: param size = 1024
	// PARAM_STRING solve: param method = "cg"
	// MARK solve: mark "converged"
	// LEAVE solve
}

// A Go channel carries work to whichever worker is free: the sender
// records Send and passes the token along with the value, the receiver
// records Recv with it, and the reader pairs the two exactly.
func ExampleChannel() {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	defer os.RemoveAll(dir)
	m, err := measure.Start(measure.Config{Output: dir, Name: "channel"})
	if err != nil {
		panic(err)
	}
	jobs := m.Channel("jobs")
	type job struct {
		tok measure.ChanToken
		n   int
	}
	c := make(chan job)
	done := make(chan bool)
	worker := m.Location("worker")
	go func() {
		for j := range c {
			jobs.Recv(worker, j.tok, 8)
		}
		done <- true
	}()
	producer := m.Location("producer")
	for i := 0; i < 3; i++ {
		c <- job{jobs.Send(producer, 8), i}
	}
	close(c)
	<-done
	if err := m.Close(); err != nil {
		panic(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		panic(err)
	}
	defer f.Close()
	msgs, err := f.ChannelMessages()
	if err != nil {
		panic(err)
	}
	for _, msg := range msgs {
		fmt.Printf("%s #%d: %s -> %s, %d bytes\n", f.ChannelName(msg.Channel), msg.Token,
			f.Location(msg.From).Name, f.Location(msg.To).Name, msg.Bytes)
	}
	// Output:
	// jobs #1: producer -> worker, 8 bytes
	// jobs #2: producer -> worker, 8 bytes
	// jobs #3: producer -> worker, 8 bytes
}
