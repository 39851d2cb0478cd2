package main

import (
	"fmt"
	"io"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
	htmlreport "github.com/hmbtrace/hmbtrace/report"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// runReport times `hmbtrace report` on a trace of 10⁷ events (10⁶ with
// -quick) and measures the page it writes.
func runReport(o *options, r *report) error {
	events := 10_000_000
	if o.quick {
		events = 1_000_000
	}
	path, err := bigTrace(o, events)
	if err != nil {
		return err
	}
	f, err := tracefile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for round := 0; round < min(o.rounds, 2); round++ {
		var cw countingWriter
		start := time.Now()
		if err := htmlreport.Write(&cw, []*tracefile.File{f}, htmlreport.Options{}); err != nil {
			return err
		}
		r.add("hmbtrace report", fmt.Sprintf("seconds for %.0e events", float64(events)), time.Since(start).Seconds())
		r.add("hmbtrace report", "MB of HTML", float64(cw.n)/1e6)
	}
	r.note("the trace: 4 locations, a solver loop over 4 calling depths with messages, recorded with EnterAt")
	return nil
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)

// bigTrace records events enter/leave events of a solver-like call tree
// over 4 locations into a buffer that keeps them all.
func bigTrace(o *options, events int) (string, error) {
	m, err := measure.Start(measure.Config{Output: o.work, Name: "report-bench", BufferSize: 512 << 20, Clock: "monotonic", NoThrottle: true})
	if err != nil {
		return "", err
	}
	names := []string{"main", "timestep", "exchange", "compute", "kernel", "reduce"}
	var rg []measure.Region
	for _, n := range names {
		rg = append(rg, m.Region(n))
	}
	locs := make([]*measure.Location, 4)
	for i := range locs {
		locs[i] = m.Location(fmt.Sprintf("worker %d", i))
	}
	now := m.Now()
	per := events / len(locs)
	for li, l := range locs {
		t := now
		n := 0
		put := func(enter bool, r measure.Region, dt uint64) {
			t += dt
			if enter {
				l.EnterAt(r, t)
			} else {
				l.LeaveAt(r, t)
			}
			n++
		}
		put(true, rg[0], 10)
		for i := 0; n < per-2; i++ {
			put(true, rg[1], 50)
			put(true, rg[2], 20)
			l.Send(locs[(li+1)%len(locs)], 1, 4096)
			put(false, rg[2], 800)
			put(true, rg[3], 20)
			for k := 0; k < 8; k++ {
				put(true, rg[4], 15)
				put(false, rg[4], 400+uint64((i*7+k)%50))
			}
			put(false, rg[3], 10)
			put(true, rg[5], 30)
			put(false, rg[5], 200)
			put(false, rg[1], 10)
		}
		put(false, rg[0], 10)
	}
	if err := m.Close(); err != nil {
		return "", err
	}
	return m.Path(), nil
}
