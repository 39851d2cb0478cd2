package report

import (
	"fmt"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// fileFacts is what the page's Run section shows of one file: its facts,
// the buffer's story and its tables.
type fileFacts struct {
	Path      string
	Facts     []nameValue
	Story     []nameValue
	HasDepths bool
	Depths    []depthRow
	Locations []locationRow
}

type nameValue struct{ Name, Value string }

type depthRow struct {
	Depth                 int
	Kept, Removed         uint64
	KeptText, RemovedText string
	Closed                string
}

type locationRow struct {
	Name                                              string
	Recorded, Kept, Filtered, Removed                 uint64
	RecordedText, KeptText, FilteredText, RemovedText string
	Notes                                             string
}

// writeFacts writes the run's facts and the buffer's story, per file: what
// hmbtrace summary prints, as tables.
func writeFacts(p *page, r *run) {
	var files []fileFacts
	for fi, f := range r.files {
		h := &f.Header
		ff := fileFacts{Path: f.Path}
		fact := func(name, value string) {
			if value != "" {
				ff.Facts = append(ff.Facts, nameValue{name, value})
			}
		}
		fact("trace", h.Name)
		fact("process", fmt.Sprintf("rank %d on %s, pid %d", h.Rank, h.Host, h.PID))
		fact("program", h.Program)
		if !h.StartWall.IsZero() {
			fact("started", h.StartWall.Format("2006-01-02 15:04:05.000 MST"))
		}
		if len(r.files) > 1 {
			fact("on the time axis", "from "+units.Duration(float64(r.offsets[fi])))
		}
		fact("duration", units.Duration(float64(f.Duration())))
		fact("locations", fmt.Sprint(len(f.Locations)))
		fact("regions", fmt.Sprint(len(f.Regions)))
		fact("clock", fmt.Sprintf("%s at %s; timestamps kept to %s (shift %d)", h.Clock, units.Rate(h.TicksPerSecond), units.Duration(f.Resolution()), h.TimerShift))
		if h.ProbeCost > 0 {
			fact("probe cost", fmt.Sprintf("%.1f ns per event (measured at the start)", h.ProbeCost))
		}
		fact("CPU", h.CPU)
		fact("Go", h.GoVersion)
		buffer := fmt.Sprintf("%s in %d bins of %s, reduction policy %s", units.Size(float64(h.BufferSize)), h.BufferSize/max(h.BinSize, 1), units.Size(float64(h.BinSize)), h.Policy)
		if h.Policy == "class" && len(h.ClassOrder) > 0 {
			buffer += " (classes shed in the order " + strings.Join(h.ClassOrder, ", ") + ")"
		}
		fact("buffer", buffer)
		if h.FilterFile != "" {
			fact("filter file", h.FilterFile)
		}
		if h.MinDuration > 0 {
			fact("duration filter", "calls shorter than "+units.Duration(float64(h.MinDuration))+" with nothing kept inside vanish")
		}
		if len(h.Metrics) > 0 {
			fact("counters", strings.Join(h.Metrics, ", "))
		}
		if off := h.Techniques.Off(); off != 0 {
			fact("encoding", fmt.Sprintf("techniques switched off: %v", off))
		}
		bufferStory(&ff, f)
		files = append(files, ff)
	}
	p.execute("facts", files)
}

// bufferStory tells the file's Story (what the buffer kept, filtered,
// removed and reduced) as rows of tables.
func bufferStory(ff *fileFacts, f *tracefile.File) {
	st := f.Story()
	row := func(name, value string) { ff.Story = append(ff.Story, nameValue{name, value}) }
	if r := f.Recovered; r != nil {
		row("recovered", "by hmbtrace recover from the mapping the process left: "+r.EndText()+"; lower bounds: "+strings.Join(r.LowerBounds(), "; "))
		row("events recorded", ">= "+units.Count(st.Recorded+r.Unaccounted)+" (a lower bound)")
	} else {
		row("events recorded", units.Count(st.Recorded))
	}
	k := fmt.Sprintf("%s (%s), %s in %d bins", units.Count(st.Kept), units.Share(float64(st.Kept), float64(st.Recorded)), units.Size(float64(st.Bytes)), st.Bins)
	if st.Kept > 0 {
		k += fmt.Sprintf(", %.2f bytes/event", st.BytesPerEvent())
	}
	row("events kept", k)
	if len(st.KeptClasses) > 1 {
		var classes []string
		for _, c := range st.KeptClasses {
			classes = append(classes, fmt.Sprintf("%s %s", c.Class, units.Count(c.N)))
		}
		row("kept by class", strings.Join(classes, ", "))
	}
	byName, byDuration := st.FilteredName, st.FilteredDuration
	if f.Header.FilterFile != "" || f.Header.MinDuration > 0 || st.Filtered > 0 {
		var why []string
		if f.Header.FilterFile != "" || byName > 0 {
			why = append(why, units.Count(byName)+" of regions the filter file excludes")
		}
		if f.Header.MinDuration > 0 || byDuration > 0 {
			why = append(why, units.Count(byDuration)+" of calls shorter than "+units.Duration(float64(f.Header.MinDuration)))
		}
		row("events filtered", units.Count(st.Filtered)+": "+strings.Join(why, ", "))
	}
	rm := units.Count(st.RemovedTotal)
	if s := removedText(st.Removed); s != "" {
		rm += " (" + s + ")"
	}
	row("events removed", rm)
	if !st.Balanced {
		row("warning", fmt.Sprintf("recorded != kept + filtered + removed (%d != %d + %d + %d)", st.Recorded, st.Kept, st.Filtered, st.RemovedTotal))
	}
	if len(st.Reductions) == 0 {
		row("reductions", "none: the whole run fit")
	} else {
		var b strings.Builder
		for i, red := range st.Reductions {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(reductionText(red))
		}
		row(fmt.Sprintf("reductions (%d)", len(st.Reductions)), b.String())
	}
	for i := range f.Locations {
		if l := &f.Locations[i]; l.Windowed {
			row("keep-last window", fmt.Sprintf("%s complete from %s on", l.Name, units.Duration(float64(f.Nanos(l.WindowTime)))))
		}
		if l := &f.Locations[i]; l.Interrupted {
			what := "a signal ended the run"
			if r := f.Recovered; r != nil && r.End != tracefile.EndSignal {
				what = "the process ended (" + r.EndText() + ")"
			}
			row("interrupted", l.Name+" was still running when "+what+": its last event may be uncounted, its open regions stay open")
		}
	}
	if th := st.Throttled; len(th) > 0 {
		var parts []string
		for _, r := range th {
			parts = append(parts, fmt.Sprintf("%s at %s on %d location(s), %s visits timed before, %s counted after",
				r.Name, units.Duration(float64(r.FirstAt)), r.Locations, units.Count(r.Visits), units.Count(r.VisitsAfter)))
		}
		row(fmt.Sprintf("throttled (%d)", len(th)), "switched off by HMB_THROTTLE, visits after it counted but not timed: "+strings.Join(parts, "; "))
	}
	if len(st.UsageKinds) > 0 {
		var parts []string
		for _, c := range st.UsageKinds {
			parts = append(parts, units.Count(c.N)+" "+c.What)
		}
		row("usage errors", strings.Join(parts, "; "))
	} else {
		row("usage errors", "none")
	}
	ff.HasDepths = len(st.Depths) > 0
	if ff.HasDepths {
		for _, dr := range st.Depths {
			removed := dr.Removed.Total()
			if dr.Kept == 0 && removed == 0 {
				continue
			}
			closed := ""
			if dr.Closed {
				closed = "closed"
			}
			ff.Depths = append(ff.Depths, depthRow{dr.Depth, dr.Kept, removed, units.Count(dr.Kept), units.Count(removed), closed})
		}
	}
	for i := range f.Locations {
		l := &f.Locations[i]
		var notes []string
		if l.Windowed {
			notes = append(notes, "keep-last window from "+units.Duration(float64(f.Nanos(l.WindowTime))))
		}
		if l.Interrupted {
			notes = append(notes, "interrupted")
		}
		if s := removedText(l.Removed()); s != "" {
			notes = append(notes, "removed "+s)
		}
		if l.Multiplexed {
			notes = append(notes, "counters multiplexed")
		}
		if l.CountersMissing != "" {
			notes = append(notes, "no counters: "+l.CountersMissing)
		}
		if u := l.Usage.Total(); u > 0 {
			notes = append(notes, units.Count(u)+" usage errors")
		}
		filtered := l.FilteredName + l.FilteredDuration
		removed := l.Removed().Total()
		ff.Locations = append(ff.Locations, locationRow{
			Name: l.Name, Recorded: l.Recorded, Kept: l.Kept(), Filtered: filtered, Removed: removed,
			RecordedText: units.Count(l.Recorded), KeptText: units.Count(l.Kept()), FilteredText: units.Count(filtered), RemovedText: units.Count(removed),
			Notes: strings.Join(notes, "; "),
		})
	}
}

// reductionText tells one reduction step as hmbtrace summary does.
func reductionText(r tracefile.StoryReduction) string {
	at := units.Duration(float64(r.At))
	switch r.Reason {
	case tracefile.ByDepth:
		what := ""
		switch r.Class {
		case tracefile.ClassParadigm:
			what = " of MPI and OpenMP regions"
		case tracefile.ClassMessage:
			what = " of messages and collectives"
		}
		return fmt.Sprintf("at %s closed depth %d and deeper%s, revoking %d bins (%s events)", at, r.Depth, what, r.Bins, units.Count(r.Records))
	case tracefile.ByClass:
		return fmt.Sprintf("at %s closed event class %s, revoking %d bins (%s events)", at, r.Class, r.Bins, units.Count(r.Records))
	case tracefile.ByFirst:
		if r.Depth > 0 {
			return fmt.Sprintf("at %s the buffer was full with only depth %d left: recording stopped", at, r.Depth)
		}
		return fmt.Sprintf("at %s the buffer was full: recording stopped (keep first)", at)
	case tracefile.ByLast:
		return fmt.Sprintf("until %s revoked the oldest bin %d times (%s events), keeping the last", at, r.Steps, units.Count(r.Records))
	}
	return fmt.Sprintf("at %s %s: %d bins (%s events)", at, r.Reason, r.Bins, units.Count(r.Records))
}
