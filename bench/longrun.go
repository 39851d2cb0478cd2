package main

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/internal/longrun"
)

// runLongRun drives a long run into a 16 MiB buffer (once: it is long).
func runLongRun(o *options, r *report) error {
	events := int64(1e9)
	if o.quick {
		events = 2e7
	}
	res, err := longrun.Run(longrun.Options{Events: events, Goroutines: 2, BufferSize: 16 << 20, Output: o.work})
	if err != nil {
		return err
	}
	const s = "hmbtrace"
	r.add(s, "events recorded", float64(res.Events))
	r.add(s, "basic-record trace GiB", float64(res.BasicBytes)/(1<<30))
	r.add(s, "buffer MiB", float64(res.BufferSize)/(1<<20))
	r.add(s, "trace/buffer ratio", res.Ratio())
	r.add(s, "peak RSS MiB", float64(res.PeakRSS)/(1<<20))
	r.add(s, "probe ns/event before reductions", res.NsBefore-res.NsDriver)
	r.add(s, "probe ns/event after reductions", res.NsAfter-res.NsDriver)
	r.note("%d reductions closed depths %v; flat profile equal to the unreduced reference: %v", res.Reductions, res.DepthsClosed, res.ProfileExact)
	if !res.ProfileExact {
		return fmt.Errorf("the flat profile differs from the unreduced reference: %v", res.ProfileIssues)
	}
	return nil
}
