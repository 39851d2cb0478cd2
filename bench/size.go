package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"

	"github.com/hmbtrace/hmbtrace/bench/internal/longrun"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/measure"
)

// runSize encodes two streams in every format: sizes are exact, so one
// round is enough.
func runSize(o *options, r *report) error {
	iters := 300_000
	if o.quick {
		iters = 20_000
	}
	streams := []*stream{syntheticStream(2, iters)}
	if s, err := heatStream(o); err != nil {
		r.skip("examples/heat stream", err.Error())
	} else {
		streams = append(streams, s)
	}
	variants := []struct {
		name  string
		off   encode.Techniques
		shift int
	}{
		{"hmbtrace", 0, 0},
		{"hmbtrace without split timing", encode.SplitTiming, 0},
		{"hmbtrace without LEB128", encode.LEB128, 0},
		{"hmbtrace without delta", encode.Delta, 0},
		{"hmbtrace without tokens", encode.Tokens, 0},
		{"hmbtrace without region prediction", encode.Predict, 0},
		{"hmbtrace without resolution reduction", 0, measure.NoTimerShift},
	}
	for _, s := range streams {
		metric := "B/event " + s.name
		for _, v := range variants {
			b, err := hmbtraceSize(o, s, v.off, v.shift)
			if err != nil {
				return fmt.Errorf("%s on %s: %v", v.name, s.name, err)
			}
			r.add(v.name, metric, b)
		}
		if b, err := otf2Size(o, s); err != nil {
			r.skip("OTF2 on "+s.name, err.Error())
		} else {
			r.add("OTF2 (native exporter)", metric, b)
		}
		if b, err := runtimeTraceSize(s); err != nil {
			r.skip("runtime/trace on "+s.name, err.Error())
		} else {
			r.add("runtime/trace", metric, b)
		}
		r.add("basic record (Wagner, fig. 1)", metric, longrun.BasicRecordSize)
	}
	r.note("hmbtrace's timestamps are reduced to 8 ns by default (the shift that keeps ticks at most 8 ns); \"without resolution reduction\" keeps every ns")
	return nil
}

// hmbtraceSize replays the stream into a measurement whose buffer keeps it
// all, with the given techniques off, and returns bytes per kept event.
func hmbtraceSize(o *options, s *stream, off encode.Techniques, shift int) (float64, error) {
	m, err := measure.Start(measure.Config{IgnoreEnv: true, Output: o.work, Name: "size", BufferSize: 256 << 20, Clock: "monotonic", EncodingOff: off, TimerShift: shift, NoThrottle: true})
	if err != nil {
		return 0, err
	}
	defer os.Remove(m.Path())
	var regions []measure.Region
	for _, n := range s.regions {
		regions = append(regions, m.Region(n))
	}
	for i, evs := range s.locs {
		loc := m.Location(fmt.Sprint("loc ", i))
		for _, e := range evs {
			if e.enter {
				loc.EnterAt(regions[e.region-1], e.t)
			} else {
				loc.LeaveAt(regions[e.region-1], e.t)
			}
		}
	}
	if err := m.Close(); err != nil {
		return 0, err
	}
	st := m.Stats()
	if st.Kept != uint64(s.events()) {
		return 0, fmt.Errorf("kept %d of %d events", st.Kept, s.events())
	}
	return float64(st.BytesUsed) / float64(st.Kept), nil
}

// otf2Size writes the stream with the native OTF2 writer and returns the
// event files' bytes per event.
func otf2Size(o *options, s *stream) (float64, error) {
	dir := filepath.Join(o.work, "otf2-"+filepath.Base(s.name))
	os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	a, err := otf2.Create(dir, otf2.Options{Creator: "hmbtrace bench"})
	if err != nil {
		return 0, err
	}
	defer a.Abort()
	node, err := a.SystemTreeNode("host", "node", otf2.NoParent)
	if err != nil {
		return 0, err
	}
	group, err := a.LocationGroup("process", node)
	if err != nil {
		return 0, err
	}
	var refs []otf2.RegionRef
	for _, n := range s.regions {
		ref, err := a.Region(otf2.RegionDef{Name: n})
		if err != nil {
			return 0, err
		}
		refs = append(refs, ref)
	}
	for i, evs := range s.locs {
		w, err := a.Location(fmt.Sprint("loc ", i), group)
		if err != nil {
			return 0, err
		}
		for _, e := range evs {
			if e.enter {
				err = w.Enter(e.t, refs[e.region-1])
			} else {
				err = w.Leave(e.t, refs[e.region-1])
			}
			if err != nil {
				return 0, err
			}
		}
		if err := w.Close(); err != nil {
			return 0, err
		}
	}
	first, last, _ := a.TimeRange()
	if err := a.ClockProperties(1e9, first, last-first); err != nil {
		return 0, err
	}
	if err := a.Close(); err != nil {
		return 0, err
	}
	evt, _ := filepath.Glob(filepath.Join(dir, "traces", "*.evt"))
	var size int64
	for _, p := range evt {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	return float64(size) / float64(s.events()), nil
}

// runtimeTraceSize records the same regions, nested alike, with
// runtime/trace (which takes its own timestamps) and returns its bytes per
// region event.
func runtimeTraceSize(s *stream) (float64, error) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		return 0, err
	}
	ctx := context.Background()
	for _, evs := range s.locs {
		var open []*trace.Region
		for _, e := range evs {
			if e.enter {
				open = append(open, trace.StartRegion(ctx, s.regions[e.region-1]))
			} else {
				open[len(open)-1].End()
				open = open[:len(open)-1]
			}
		}
	}
	trace.Stop()
	return float64(buf.Len()) / float64(s.events()), nil
}
