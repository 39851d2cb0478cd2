package report

import (
	"fmt"
	"sort"
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
	HasTasks  bool // a location ran tasks: the table counts them
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
	Tasks                                             int
	TasksText                                         string
}

// runSection is the page's Run section: what the run was, told once (the
// facts its files share), one table with a row per rank (per location for
// one file, per group past runTableMax ranks), and the buffer's story and
// the locations' table folded away.
type runSection struct {
	Lead  string
	Facts []nameValue
	Table runTable
	// Story is the buffer's story: of the one file, or summed over the
	// files; Open unfolds it (one file).
	Story fileFacts
	Open  bool
}

// runTable is the table of the ranks (or locations, or groups).
type runTable struct {
	What     string // "rank", "location", "group"
	Rows     []runRow
	HasHost  bool
	HasWaits bool
	Capped   bool // more rows than a screen's part: the table scrolls
}

type runRow struct {
	Name, Host                 string
	Start, Duration            int64
	StartText, DurationText    string
	Recorded, Kept, Removed    uint64
	RecordedText, KeptText     string
	KeptShare                  float64
	KeptShareText, RemovedText string
	Wait                       int64
	WaitText                   string
	Notes                      string
}

// runTableMax is the most ranks the run table lists one by one; a run of
// more lists its groups.
const runTableMax = 1024

// runTableVisible is how many rows the run table shows before it scrolls:
// the section stays within a screen whatever the ranks.
const runTableVisible = 12

// writeFacts writes the Run section.
func writeFacts(p *page, r *run, waits *waitInfo) {
	p.execute("facts", runFacts(r, waits))
}

// runFacts makes the Run section of r; waits are the wait states of its
// locations, nil when they could not be made.
func runFacts(r *run, waits *waitInfo) runSection {
	var rs runSection
	if len(r.files) == 1 {
		f := r.files[0]
		rs.Facts = fileFactList(r, 0)
		rs.Story = fileFacts{Path: f.Path}
		bufferStory(&rs.Story, f, r.tasks[0])
		rs.Open = true
		rs.Lead = fmt.Sprintf("%s, %s, %s.", f.Path, units.Plural(len(f.Locations), "location", "locations"), units.Duration(float64(f.Duration())))
	} else {
		ff := sharedFacts(r)
		rs.Facts = ff.Facts
		rs.Story = ff
		hosts := map[string]bool{}
		lo, hi := r.files[0].Duration(), r.files[0].Duration()
		for _, f := range r.files {
			hosts[f.Header.Host] = true
			lo, hi = min(lo, f.Duration()), max(hi, f.Duration())
		}
		rs.Lead = fmt.Sprintf("%s: %s on %s, %s, %s.", r.files[0].Header.Name, units.Plural(len(r.files), "process", "processes"),
			units.Plural(len(hosts), "host", "hosts"), durationRange(lo, hi), ff.Path)
	}
	rs.Table = makeRunTable(r, waits)
	return rs
}

// makeRunTable makes the run table: one row per rank, per location of one
// file, or per group past runTableMax ranks.
func makeRunTable(r *run, waits *waitInfo) runTable {
	var t runTable
	hosts := map[string]bool{}
	for _, f := range r.files {
		hosts[f.Header.Host] = true
	}
	t.HasHost = len(hosts) > 1
	t.HasWaits = waits != nil && waits.any
	add := func(name, host string, start, dur int64, locs []locRef) {
		row := runRow{Name: name, Host: host, Start: start, Duration: dur,
			StartText: units.Duration(float64(start)), DurationText: units.Duration(float64(dur))}
		var notes []string
		for _, m := range locs {
			f := r.files[m.file]
			l := &f.Locations[m.index]
			row.Recorded += l.Recorded
			row.Kept += l.Kept()
			row.Removed += l.Removed().Total()
			if waits != nil {
				row.Wait += waits.byLoc[m.file][m.index]
			}
		}
		if len(locs) > 0 {
			notes = append(notes, lossNotes(r, locs)...)
		}
		row.RecordedText, row.KeptText, row.RemovedText = units.Count(row.Recorded), units.Count(row.Kept), units.Count(row.Removed)
		row.KeptShare = 1
		if row.Recorded > 0 {
			row.KeptShare = float64(row.Kept) / float64(row.Recorded)
		}
		row.KeptShareText = units.Share(float64(row.Kept), float64(row.Recorded))
		row.WaitText = units.Duration(float64(row.Wait))
		if row.Wait > 0 && dur > 0 {
			row.WaitText += " (" + units.Share(float64(row.Wait), float64(dur)) + ")"
		}
		row.Notes = strings.Join(notes, "; ")
		t.Rows = append(t.Rows, row)
	}
	switch {
	case len(r.files) == 1:
		t.What = "location"
		f := r.files[0]
		for _, k := range locationOrder(f) {
			add(r.label(0, &f.Locations[k]), f.Header.Host, 0, f.Duration(), []locRef{{0, k}})
		}
	case len(r.files) <= runTableMax || r.groups == nil:
		t.What = "rank"
		for fi, f := range r.files {
			var locs []locRef
			for k := range f.Locations {
				locs = append(locs, locRef{fi, k})
			}
			add(r.fileName(fi), f.Header.Host, r.offsets[fi], f.Duration(), locs)
		}
	default:
		t.What = "group"
		for _, gr := range r.groups.groups {
			var start, end int64 = -1, 0
			host := ""
			for _, m := range gr.members {
				if start < 0 || r.offsets[m.file] < start {
					start = r.offsets[m.file]
				}
				end = max(end, r.offsets[m.file]+r.files[m.file].Duration())
				host = r.files[m.file].Header.Host
			}
			add(gr.label, host, max(start, 0), end-max(start, 0), gr.members)
		}
	}
	t.Capped = len(t.Rows) > runTableVisible
	return t
}

// lossNotes says in a user's words what the buffer and the filters did
// not keep of the locations locs: "not recorded: buffer full at depth 5
// from 1.2 s", "3 usage errors", "interrupted".
func lossNotes(r *run, locs []locRef) []string {
	var notes []string
	seen := map[string]bool{}
	note := func(s string) {
		if !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	var usage, filtered uint64
	for _, m := range locs {
		f := r.files[m.file]
		l := &f.Locations[m.index]
		usage += l.Usage.Total()
		filtered += l.FilteredName + l.FilteredDuration
		if l.Interrupted {
			note("interrupted")
		}
		if l.Windowed {
			note("keep-last: only the end of the run kept")
		}
		if f.Recovered != nil {
			note("recovered from the mapping")
		}
		for _, red := range f.Reductions {
			at := units.Duration(float64(r.offsets[m.file] + f.Nanos(red.Time)))
			switch red.Reason {
			case tracefile.ByDepth:
				note(fmt.Sprintf("not recorded: buffer full at depth %d (from %s)", red.Depth, at))
			case tracefile.ByFirst:
				note("not recorded: buffer full, recording stopped at " + at)
			case tracefile.ByClass:
				note(fmt.Sprintf("not recorded: buffer full, %s events dropped (from %s)", red.Class, at))
			}
			break // the first reduction says when the buffer filled up
		}
	}
	if filtered > 0 {
		notes = append(notes, units.Count(filtered)+" filtered")
	}
	if usage > 0 {
		notes = append(notes, units.Plural(int(usage), "usage error", "usage errors"))
	}
	return notes
}

// fileFactList is what the Run section tells of file fi.
func fileFactList(r *run, fi int) []nameValue {
	f := r.files[fi]
	h := &f.Header
	var facts []nameValue
	fact := func(name, value string) {
		if value != "" {
			facts = append(facts, nameValue{name, value})
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
	return facts
}

// bufferStory tells the file's Story (what the buffer kept, filtered,
// removed and reduced) as rows of tables.
func bufferStory(ff *fileFacts, f *tracefile.File, tasks []int) {
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
			parts = append(parts, fmt.Sprintf("%s at %s on %s, %s visits timed before, %s counted after",
				r.Name, units.Duration(float64(r.FirstAt)), units.Plural(r.Locations, "location", "locations"), units.Count(r.Visits), units.Count(r.VisitsAfter)))
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
		row := locationRow{
			Name: l.Name, Recorded: l.Recorded, Kept: l.Kept(), Filtered: filtered, Removed: removed,
			RecordedText: units.Count(l.Recorded), KeptText: units.Count(l.Kept()), FilteredText: units.Count(filtered), RemovedText: units.Count(removed),
			Notes: strings.Join(notes, "; "),
		}
		if i < len(tasks) {
			row.Tasks, row.TasksText = tasks[i], units.Count(uint64(tasks[i]))
			ff.HasTasks = ff.HasTasks || tasks[i] > 0
		}
		ff.Locations = append(ff.Locations, row)
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

// sharedFacts is the Run section of a run of several files: the files' facts
// merged (a fact the files share once, else its most common value and how
// many files have it), their buffers' stories summed with the worst file
// named, and the table of locations by group. It is as long for 512 ranks
// as for 32.
func sharedFacts(r *run) fileFacts {
	ff := fileFacts{Path: fmt.Sprintf("%d trace files", len(r.files))}
	if g := r.groups; g != nil {
		ff.Path += ": " + g.text()
	}
	// The processes, told once.
	hosts := map[string]bool{}
	var hostList []string
	for _, f := range r.files {
		if h := f.Header.Host; !hosts[h] {
			hosts[h] = true
			hostList = append(hostList, h)
		}
	}
	if len(hostList) > 4 {
		hostList = append(hostList[:4], "…")
	}
	ff.Facts = append(ff.Facts, nameValue{"processes", fmt.Sprintf("%s on %s (%s)", units.Plural(len(r.files), "rank", "ranks"), units.Plural(len(hosts), "host", "hosts"), strings.Join(hostList, ", "))})
	minDur, maxDur := r.files[0].Duration(), r.files[0].Duration()
	for _, f := range r.files {
		minDur, maxDur = min(minDur, f.Duration()), max(maxDur, f.Duration())
	}
	// Every other fact: the value of most files, first met first.
	type tally struct {
		values []string
		counts []int
	}
	var names []string
	tallies := map[string]*tally{}
	for fi := range r.files {
		for _, nv := range fileFactList(r, fi) {
			switch nv.Name {
			case "process", "on the time axis", "started", "duration":
				continue // told above or below, per file they differ
			}
			t := tallies[nv.Name]
			if t == nil {
				t = &tally{}
				tallies[nv.Name] = t
				names = append(names, nv.Name)
			}
			k := 0
			for k < len(t.values) && t.values[k] != nv.Value {
				k++
			}
			if k == len(t.values) {
				t.values, t.counts = append(t.values, nv.Value), append(t.counts, 0)
			}
			t.counts[k]++
		}
	}
	for _, name := range names {
		t := tallies[name]
		best := 0
		n := 0
		for k := range t.values {
			n += t.counts[k]
			if t.counts[k] > t.counts[best] {
				best = k
			}
		}
		v := t.values[best]
		if t.counts[best] < len(r.files) {
			v += fmt.Sprintf(" (on %d of the %d files; %s)", t.counts[best], len(r.files), units.Plural(len(t.values)-1, "other value", "other values"))
		}
		ff.Facts = append(ff.Facts, nameValue{name, v})
		if name == "trace" {
			ff.Facts = append(ff.Facts, nameValue{"duration", durationRange(minDur, maxDur)})
		}
	}
	groupStory(&ff, r)
	return ff
}

func durationRange(lo, hi int64) string {
	if lo == hi {
		return units.Duration(float64(lo))
	}
	return units.Duration(float64(lo)) + " to " + units.Duration(float64(hi))
}

// groupStory tells the buffers' stories of all files at once: sums, and
// the file that lost the most.
func groupStory(ff *fileFacts, r *run) {
	row := func(name, value string) { ff.Story = append(ff.Story, nameValue{name, value}) }
	var recorded, kept, filtered, removedTotal, usage uint64
	var bytes int64
	var bins, reduced, steps int
	var removed tracefile.ByReason
	worst, worstN := -1, uint64(0)
	depths := map[int]*depthRow{}
	var depthOrder []int
	closedOn := map[int]int{}
	for fi, f := range r.files {
		st := f.Story()
		recorded += st.Recorded
		kept += st.Kept
		filtered += st.Filtered
		removedTotal += st.RemovedTotal
		usage += st.UsageTotal
		bytes += st.Bytes
		bins += st.Bins
		for i, v := range st.Removed {
			removed[i] += v
		}
		if len(st.Reductions) > 0 {
			reduced++
			steps += len(st.Reductions)
		}
		if st.RemovedTotal > worstN {
			worst, worstN = fi, st.RemovedTotal
		}
		for _, dr := range st.Depths {
			d := depths[dr.Depth]
			if d == nil {
				d = &depthRow{Depth: dr.Depth}
				depths[dr.Depth] = d
				depthOrder = append(depthOrder, dr.Depth)
			}
			d.Kept += dr.Kept
			d.Removed += dr.Removed.Total()
			if dr.Closed {
				closedOn[dr.Depth]++
			}
		}
	}
	n := len(r.files)
	row("events recorded", units.Count(recorded))
	k := fmt.Sprintf("%s (%s), %s in %d bins", units.Count(kept), units.Share(float64(kept), float64(recorded)), units.Size(float64(bytes)), bins)
	if kept > 0 {
		k += fmt.Sprintf(", %.2f bytes/event", float64(bytes)/float64(kept))
	}
	row("events kept", k)
	if filtered > 0 {
		row("events filtered", units.Count(filtered))
	}
	rm := units.Count(removedTotal)
	if t := removedText(removed); t != "" {
		rm += " (" + t + ")"
	}
	if worst >= 0 {
		rm += fmt.Sprintf("; the most by %s: %s", r.fileName(worst), units.Count(worstN))
	}
	row("events removed", rm)
	if reduced == 0 {
		row("reductions", fmt.Sprintf("none: the whole run fit on all %d ranks", n))
	} else {
		row("reductions", fmt.Sprintf("%d of the %d ranks reduced their buffers, %d steps in all (hmbtrace summary tells each)", reduced, n, steps))
	}
	if usage > 0 {
		row("usage errors", units.Count(usage))
	} else {
		row("usage errors", "none")
	}
	sort.Ints(depthOrder)
	ff.HasDepths = len(depthOrder) > 0
	for _, d := range depthOrder {
		dr := depths[d]
		if dr.Kept == 0 && dr.Removed == 0 {
			continue
		}
		dr.KeptText, dr.RemovedText = units.Count(dr.Kept), units.Count(dr.Removed)
		if c := closedOn[d]; c > 0 {
			dr.Closed = fmt.Sprintf("closed on %d of %d", c, n)
		}
		ff.Depths = append(ff.Depths, *dr)
	}
	if r.groups == nil {
		// Every location of every file, labelled by its process.
		for fi, f := range r.files {
			for _, k := range locationOrder(f) {
				l := &f.Locations[k]
				lr := locationRow{Name: r.label(fi, l), Recorded: l.Recorded, Kept: l.Kept(), Filtered: l.FilteredName + l.FilteredDuration,
					Removed: l.Removed().Total(), Tasks: r.tasks[fi][k]}
				lr.RecordedText, lr.KeptText, lr.FilteredText, lr.RemovedText = units.Count(lr.Recorded), units.Count(lr.Kept), units.Count(lr.Filtered), units.Count(lr.Removed)
				lr.TasksText = units.Count(uint64(lr.Tasks))
				lr.Notes = strings.Join(lossNotes(r, []locRef{{fi, k}}), "; ")
				ff.HasTasks = ff.HasTasks || lr.Tasks > 0
				ff.Locations = append(ff.Locations, lr)
			}
		}
		return
	}
	for _, gr := range r.groups.groups {
		var lr locationRow
		lr.Name = gr.label
		for _, m := range gr.members {
			l := &r.files[m.file].Locations[m.index]
			lr.Recorded += l.Recorded
			lr.Kept += l.Kept()
			lr.Filtered += l.FilteredName + l.FilteredDuration
			lr.Removed += l.Removed().Total()
			lr.Tasks += r.tasks[m.file][m.index]
		}
		lr.RecordedText, lr.KeptText, lr.FilteredText, lr.RemovedText = units.Count(lr.Recorded), units.Count(lr.Kept), units.Count(lr.Filtered), units.Count(lr.Removed)
		lr.Notes = fmt.Sprintf("%d locations, summed", len(gr.members))
		lr.TasksText = units.Count(uint64(lr.Tasks))
		ff.HasTasks = ff.HasTasks || lr.Tasks > 0
		ff.Locations = append(ff.Locations, lr)
	}
}
