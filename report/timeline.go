package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// timeline is the data of the page's timeline: its rows (a location's
// calling depths) with their marks, and the level-of-detail encoding of
// their calls (lod.go), which the page decodes.
type timeline struct {
	Span      int64        `json:"span"`    // ns
	Columns   []int        `json:"columns"` // per level, coarsest first
	ExactMin  float64      `json:"exactMin"`
	Locations []tlLocation `json:"locations"`
	Rows      []tlRow      `json:"rows"`
	Omitted   []string     `json:"omitted,omitempty"`
	// Messages are the lines from sends to receives: per message its
	// sender's row, the send's time, the receiver's row (-1 - row when the
	// receive waited for the send: a late sender), the receive's time
	// (messages.go).
	Messages []int64 `json:"messages,omitempty"`
	// Collectives are the collective operations: per operation its
	// region, the time its last member entered, the number of members
	// drawn, and per member its row and the time it entered.
	Collectives []int64 `json:"collectives,omitempty"`

	data []byte // the rows' encoding, in the order of Rows

	// What the legend explains: calls entered before the kept window
	// (truncated), calls never left (open); the marks' kinds are in Rows.
	truncated, open bool
}

// tlLocation is a location of the timeline.
type tlLocation struct {
	Label string `json:"label"`
	// Group is the process a location belongs to when a process has
	// several (OpenMP or other threads of an MPI rank): its rank's label,
	// drawn once for all of them; Name is then the location's own name,
	// drawn under it. Both are empty for a process of one location and
	// for a single file.
	Group       string   `json:"group,omitempty"`
	Name        string   `json:"name,omitempty"`
	Start       int64    `json:"start"` // its file's start on the axis, ns
	End         int64    `json:"end"`
	Notes       []string `json:"notes,omitempty"`
	Short       []string `json:"short,omitempty"` // the notes in a few words, one per row under the label
	Interrupted bool     `json:"interrupted,omitempty"`
	// Members is how many locations a group of them (groups.go) has; 0
	// for a location.
	Members int `json:"members,omitempty"`
	// Tasks are the location's tasks (a Go lane's goroutines, OpenMP's
	// explicit tasks) in time order: what tasks.go keeps of them.
	Tasks *tlTasks `json:"tasks,omitempty"`
}

// tlRow is one calling depth of one location.
type tlRow struct {
	Loc   int      `json:"loc"`
	Depth int      `json:"depth"`
	Exact int      `json:"exact"` // exact calls in the encoding
	Tiles []int    `json:"tiles"` // tiles per level
	Stats string   `json:"stats"` // what the buffer did at this depth
	Marks []tlMark `json:"marks,omitempty"`
	// Points are the row's marks, region parameters and channel messages,
	// in time order: at the depth of the call they happened in (a mark
	// outside any call on the first row).
	Points []tlPoint `json:"points,omitempty"`
	// Members is the locations a group's row sums (groups.go): its tiles
	// carry how many of them spent the most time in the tile's region and
	// the least and most coverage of one of them. 0 for a location's row.
	Members int `json:"members,omitempty"`
}

// tlPoint is an instant on a row, drawn as a tick: kind is mark, param or
// chan, label what it says (`mark "converged"`, `param n = 5`).
type tlPoint struct {
	T     int64  `json:"t"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
}

// maxPointsPerRow bounds the ticks a row carries into the page: beyond,
// they are counted in the location's notes, and hmbtrace dump lists all.
const maxPointsPerRow = 2000

// tlMark is a stretch of a row where the buffer shed events: drawn hatched,
// its label shown on hover.
type tlMark struct {
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Kind  string `json:"kind"` // closed, revoked, window, stopped
	Label string `json:"label"`
}

// run is what every view shares: the files on one time axis and the run's
// regions, communicators and metrics (tracefile.ReadUnified).
type run struct {
	files   []*tracefile.File
	offsets []int64 // per file: ns from the earliest start
	span    int64   // ns: the end of the last file on the axis
	regions []string
	// kinds are the regions' paradigms, by index into regions.
	kinds []kind
	// regionIndex maps a file's region ids to indices into regions.
	regionIndex [][]int
	metrics     []string
	metricIndex [][]int // per file: its metric index -> index into metrics
	byFile      bool    // files share a rank: locations are labelled by file
	// groups is how the locations are drawn in groups, nil when each is
	// drawn on its own (groups.go).
	groups *grouping
	// tasks counts the tasks of each location, per file and location
	// index, once the events are read; trees are their call trees
	// (calltree.go).
	tasks [][]int
	trees [][]*pathTree
	// procs is the number of workers reading the locations (and making
	// the analyses): 1 or less reads them one after the other.
	procs int
	// peers finds the other end of a message; u names the files'
	// communicators alike on every member (messages.go: commKey).
	peers *tracefile.Peers
	u     *tracefile.Unified
	// world is the run's MPI_COMM_WORLD, 0 if no file defines it: what a
	// record that names no communicator (id 0) means.
	world int32
}

func newRun(files []*tracefile.File) (*run, error) {
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return nil, err
	}
	r := &run{files: files, byFile: tracefile.SharedRank(files), peers: tracefile.NewPeers(files), u: u}
	for k := range u.Defs.Comms {
		if c := &u.Defs.Comms[k]; c.Name == "MPI_COMM_WORLD" && c.Parent == 0 && c.Remote == nil {
			r.world = int32(k + 1)
			break
		}
	}
	// The page's regions are the run's, in the order of its table, each
	// labelled as the tools label it; a file's ids map to them through
	// its DefinitionMap.
	r.regions = u.Defs.RegionLabels()
	for k := range u.Defs.Regions {
		r.kinds = append(r.kinds, kindOf(u.Defs.Regions[k].Name, u.Defs.Regions[k].Paradigm))
	}
	r.metrics = slices.Clone(u.Defs.Metrics)
	for i, f := range files {
		ids := make([]int, 0, len(f.Regions)+1)
		for _, reg := range f.Regions {
			for int(reg.ID) >= len(ids) {
				ids = append(ids, -1)
			}
			if _, k := u.Region(i, reg.ID); k > 0 {
				ids[reg.ID] = int(k - 1)
			}
		}
		r.regionIndex = append(r.regionIndex, ids)
		mi := make([]int, len(f.Header.Metrics))
		for k, g := range u.Maps[i].Metrics {
			mi[k] = int(g) - 1
		}
		r.metricIndex = append(r.metricIndex, mi)
	}
	var earliest int
	for i, f := range files {
		if f.Header.StartWall.Before(files[earliest].Header.StartWall) {
			earliest = i
		}
	}
	for _, f := range files {
		off := int64(0)
		if len(files) > 1 {
			off = f.Header.StartWall.Sub(files[earliest].Header.StartWall).Nanoseconds()
		}
		r.offsets = append(r.offsets, off)
		r.span = max(r.span, off+f.Duration())
	}
	return r, nil
}

// region returns the page's index of region id of file i, defining a
// placeholder for an id the file does not define.
func (r *run) region(i int, id uint32) int {
	if ids := r.regionIndex[i]; int(id) < len(ids) && ids[id] >= 0 {
		return ids[id]
	}
	name := r.files[i].RegionName(id)
	for j, n := range r.regions {
		if n == name {
			r.grow(i, id, j)
			return j
		}
	}
	r.regions = append(r.regions, name)
	r.kinds = append(r.kinds, kindOf(name, tracefile.ParadigmUser))
	r.grow(i, id, len(r.regions)-1)
	return len(r.regions) - 1
}

// lookup returns the page's index of region id of file i when the file
// defines it; it does not change r, so that workers may call it at once.
func (r *run) lookup(i int, id uint32) (int, bool) {
	if ids := r.regionIndex[i]; int(id) < len(ids) && ids[id] >= 0 {
		return ids[id], true
	}
	return 0, false
}

func (r *run) grow(i int, id uint32, idx int) {
	for int(id) >= len(r.regionIndex[i]) {
		r.regionIndex[i] = append(r.regionIndex[i], -1)
	}
	r.regionIndex[i][id] = idx
}

// group names the process of file i when its locations are drawn as a
// group: "rank N", or the file's name when ranks repeat.
func (r *run) group(i int) string {
	if r.byFile {
		return filepath.Base(r.files[i].Path)
	}
	return fmt.Sprintf("rank %d", r.files[i].Header.Rank)
}

// fileName names file i for the reader: "rank N", or the file's name when
// ranks repeat.
func (r *run) fileName(i int) string {
	if r.byFile || len(r.files) == 1 {
		return filepath.Base(r.files[i].Path)
	}
	return fmt.Sprintf("rank %d", r.files[i].Header.Rank)
}

// locationOrder returns the indices of f's locations in the order the
// timeline draws them: as recorded, except that threads named "thread <n>"
// (OpenMP's, whose runtime may start them in any order) follow the others
// by their number.
func locationOrder(f *tracefile.File) []int {
	order := make([]int, len(f.Locations))
	for i := range order {
		order[i] = i
	}
	num := func(i int) (int, bool) {
		rest, ok := strings.CutPrefix(f.Locations[i].Name, "thread ")
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(rest)
		return n, err == nil
	}
	sort.SliceStable(order, func(a, b int) bool {
		na, ta := num(order[a])
		nb, tb := num(order[b])
		if ta != tb {
			return !ta
		}
		return ta && na < nb
	})
	return order
}

// label names location l of file i: with several files, prefixed by the
// file's rank, or by its name when ranks repeat (unrelated runs).
//
// The process is said once: "rank 1" for a process of one location or for
// the location named as its process, "rank 1 thread 2" for another of its
// threads ("x.0.hmb: thread 2" by file), never "rank 1: rank 1".
func (r *run) label(i int, l *tracefile.Location) string {
	if len(r.files) == 1 && !r.byFile {
		return l.Name
	}
	group := r.group(i)
	if len(r.files[i].Locations) == 1 || l.Name == group || l.Name == "" {
		return group
	}
	if r.byFile {
		return group + ": " + l.Name // a file's name, then its location's
	}
	return group + " " + l.Name
}

// ownName is location l of file i as drawn under its process's label:
// its name, or "main" for the location named as its process.
func (r *run) ownName(i int, l *tracefile.Location) string {
	if l.Name == r.group(i) || l.Name == "" {
		return "main"
	}
	return l.Name
}

// callDepths returns the calling depths at which the statistics of l know
// of calls, outermost first. They are the location's rows: the depths that
// occur, not every depth down to the deepest, so that calls at depth 10^9
// below removed ancestors take one row, not 10^9.
func callDepths(l *tracefile.Location) []int {
	var ds []int
	for _, lv := range l.Levels {
		if !lv.Class.Calls() {
			continue
		}
		if lv.Written > 0 || lv.Kept() > 0 || lv.Removed().Total() > 0 {
			ds = append(ds, lv.Depth)
		}
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}

// statsRows is the number of rows the statistics of l ask for.
func statsRows(l *tracefile.Location) int { return len(callDepths(l)) }

// timelinePlan is the timeline's budget applied to the run's statistics:
// the level-of-detail scheme, the depths drawn, and which locations are
// drawn for sure not (they come after the budget's rows are used up).
type timelinePlan struct {
	lod           lod
	limit         int // deepest depth drawn
	maxRows       int
	beyond        [][]bool // per file and location index: no row left for it
	depthsOmitted string
	// groups, when the run is drawn in groups: gtiles holds each group's
	// tiles, nil for a group after the budget's rows.
	groups *grouping
	gtiles []*groupTiles
	// taskLimit is the task spans each location drawn keeps (tasks.go);
	// commLimit its sends, receives and collectives (messages.go).
	taskLimit, commLimit int
}

// planTimeline plans the timeline from the statistics: the budget bounds
// rows, exact calls and tiles (see lod.go); the calls per row that it plans
// for come from the statistics. A run drawn in groups (r.groups) is planned
// by planGroupTimeline.
func planTimeline(r *run, maxIntervals, maxCells int) *timelinePlan {
	maxRows := max(maxCells/minColumns, 1)
	if r.groups != nil {
		return planGroupTimeline(r, maxCells, maxRows)
	}
	// Rows from the statistics, deepest levels left out first when there
	// are more than the budget allows.
	var depths []int
	total := 0
	for _, f := range r.files {
		for _, k := range locationOrder(f) {
			d := max(statsRows(&f.Locations[k]), 1)
			depths = append(depths, d)
			total += d
		}
	}
	limit := depthLimit(depths, maxRows)
	var calls []int
	for _, f := range r.files {
		for _, k := range locationOrder(f) {
			loc := &f.Locations[k]
			depths := callDepths(loc)
			for d := 1; d <= min(max(len(depths), 1), limit) && len(calls) < maxRows; d++ {
				depth := d
				if d <= len(depths) {
					depth = depths[d-1]
				}
				calls = append(calls, statsCalls(loc, depth))
			}
		}
	}
	p := &timelinePlan{lod: newLOD(r.span, calls, maxIntervals, maxCells), limit: limit, maxRows: maxRows, taskLimit: tasksPerLocation(len(depths)),
		commLimit: commPerLocation(len(depths))}
	if limit < maxDepth(depths) {
		p.depthsOmitted = fmt.Sprintf("calls below the %d outermost calling depths are not drawn: %d rows would exceed the timeline's budget of %d", limit, total, maxRows)
	}
	// A location has at least as many rows as its statistics' depths
	// (up to limit): once those of the locations before it fill the
	// budget, it is not drawn, and its calls need not be encoded.
	rows := 0
	for _, f := range r.files {
		beyond := make([]bool, len(f.Locations))
		for _, k := range locationOrder(f) {
			beyond[k] = rows >= maxRows
			rows += min(max(statsRows(&f.Locations[k]), 1), limit)
		}
		p.beyond = append(p.beyond, beyond)
	}
	return p
}

// depthLimit is the deepest calling depth drawn when rows of the given
// depths are to fit into maxRows: the deepest levels are left out first.
func depthLimit(depths []int, maxRows int) int {
	limit := maxDepth(depths)
	fits := func(lim int) bool {
		n := 0
		for _, d := range depths {
			n += min(d, lim)
		}
		return n <= maxRows
	}
	for limit > 1 && !fits(limit) {
		limit--
	}
	return max(limit, 1)
}

// planGroupTimeline plans the rows of the groups of r: no call of a group's
// row is drawn one by one (its members' calls overlap), every call is
// summed into tiles, and a group whose rows come after the budget's is not
// read for the timeline.
func planGroupTimeline(r *run, maxCells, maxRows int) *timelinePlan {
	g := r.groups
	var depths []int
	total := 0
	for _, gr := range g.groups {
		depths = append(depths, gr.depth)
		total += gr.depth
	}
	limit := depthLimit(depths, maxRows)
	var calls []int
	for _, gr := range g.groups {
		for d := 1; d <= min(gr.depth, limit) && len(calls) < maxRows; d++ {
			n := 0
			for _, m := range gr.members {
				c := statsCalls(&r.files[m.file].Locations[m.index], d)
				if c < 0 {
					n = -1
					break
				}
				n = min(n, callsCap-c) + c
			}
			calls = append(calls, n)
		}
	}
	locations := 0
	for _, gr := range g.groups {
		locations += len(gr.members)
	}
	p := &timelinePlan{lod: newLOD(r.span, calls, 1, maxCells), limit: limit, maxRows: maxRows, groups: g, commLimit: commPerLocation(locations)}
	if limit < maxDepth(depths) {
		p.depthsOmitted = fmt.Sprintf("calling depths below %d are not drawn: %d rows would exceed the timeline's budget of %d", limit, total, maxRows)
	}
	for _, f := range r.files {
		p.beyond = append(p.beyond, make([]bool, len(f.Locations)))
	}
	rows := 0
	for _, gr := range g.groups {
		var gt *groupTiles
		if rows < maxRows {
			gt = newGroupTiles(min(gr.depth, limit), len(p.lod.columns))
		}
		for _, m := range gr.members {
			p.beyond[m.file][m.index] = gt == nil
		}
		p.gtiles = append(p.gtiles, gt)
		rows += min(gr.depth, limit)
	}
	return p
}

// assemble makes the timeline of the locations' encoded calls in drawing
// order, as many as the budget's rows take; get returns location k of file
// fi encoded, or ok false when it is to be encoded again one location after
// the other (its events use a region id the file does not define).
func (p *timelinePlan) assemble(r *run, get func(fi, k int) (lt *locationTimeline, ok bool)) (*timeline, bool, error) {
	tl := &timeline{Span: p.lod.span, Columns: p.lod.columns, ExactMin: p.lod.exactMin}
	if p.depthsOmitted != "" {
		tl.Omitted = append(tl.Omitted, p.depthsOmitted)
	}
	var lts []*locationTimeline
	places := map[tracefile.Endpoint]place{}
	if p.groups != nil {
		ok, err := p.assembleGroups(r, tl, func(fi, k int) (*locationTimeline, bool) {
			lt, ok := get(fi, k)
			if ok {
				lts = append(lts, lt)
			}
			return lt, ok
		}, places)
		if ok && err == nil {
			tl.connect(r, lts, places)
		}
		return tl, ok, err
	}
	skipped := 0
	for i, f := range r.files {
		for _, k := range locationOrder(f) {
			if len(tl.Rows) >= p.maxRows {
				skipped++
				continue
			}
			lt, ok := get(i, k)
			if !ok {
				return nil, false, nil
			}
			if lt.err != nil {
				return nil, true, lt.err
			}
			first := len(tl.Rows)
			tl.appendLocation(lt, p.maxRows)
			if n := len(tl.Rows) - first; n > 0 {
				places[tracefile.Endpoint{File: i, Loc: k}] = place{loc: len(tl.Locations) - 1, first: first, rows: n}
			}
			lts = append(lts, lt)
		}
	}
	if skipped > 0 {
		tl.Omitted = append(tl.Omitted, fmt.Sprintf("%d locations are not drawn: the timeline's budget is %d rows", skipped, p.maxRows))
	}
	tl.connect(r, lts, places)
	return tl, true, nil
}

// assembleGroups appends the groups' rows, made of their members' tiles,
// once every member drawn is encoded.
func (p *timelinePlan) assembleGroups(r *run, tl *timeline, get func(fi, k int) (*locationTimeline, bool), places map[tracefile.Endpoint]place) (bool, error) {
	g := p.groups
	skipped := 0
	for gi, gr := range g.groups {
		gt := p.gtiles[gi]
		if gt == nil || len(tl.Rows) >= p.maxRows {
			skipped++
			continue
		}
		tasks := 0
		for _, m := range gr.members {
			lt, ok := get(m.file, m.index)
			if !ok {
				return false, nil
			}
			if lt.err != nil {
				return true, lt.err
			}
			tasks += lt.tasks.total()
		}
		li := len(tl.Locations)
		loc := g.groupLocation(r, gi)
		if tasks > 0 {
			loc.Tasks = &tlTasks{Count: tasks}
			loc.Notes = append(loc.Notes, fmt.Sprintf("%s tasks on its locations", units.Count(uint64(tasks))))
		}
		tl.Locations = append(tl.Locations, loc)
		first := len(tl.Rows)
		for d := 1; d <= min(gr.depth, p.limit) && len(tl.Rows) < p.maxRows; d++ {
			var tiles []int
			tl.data, tiles = gt.encode(tl.data, d, len(gr.members))
			tl.Rows = append(tl.Rows, tlRow{Loc: li, Depth: d, Tiles: tiles, Stats: g.groupStats(r, gi, d), Members: len(gr.members)})
		}
		if n := len(tl.Rows) - first; n > 0 {
			for _, m := range gr.members {
				places[tracefile.Endpoint{File: m.file, Loc: m.index}] = place{loc: li, first: first, rows: n}
			}
		}
	}
	if skipped > 0 {
		tl.Omitted = append(tl.Omitted, fmt.Sprintf("%d groups are not drawn: the timeline's budget is %d rows", skipped, p.maxRows))
	}
	return true, nil
}

// sequential encodes the locations one after the other, as many as the
// budget draws, and defines a placeholder region for every region id their
// events use that their file does not define, in the order met.
func (p *timelinePlan) sequential(r *run) (*timeline, error) {
	if p.groups != nil {
		// The groups' tiles of the parallel pass are incomplete: start over.
		for gi, gt := range p.gtiles {
			if gt != nil {
				p.gtiles[gi] = newGroupTiles(len(gt.levels)/gt.nlev, gt.nlev)
			}
		}
	}
	tl, _, err := p.assemble(r, func(fi, k int) (*locationTimeline, bool) {
		f := r.files[fi]
		lt := p.newLocation(r, fi, k, func(fi int, id uint32) (int, bool) { return r.region(fi, id), true })
		var e tracefile.Event
		it := f.Events(lt.loc.ID)
		for it.Next(&e) {
			lt.event(&e)
		}
		lt.err = it.Err()
		lt.done()
		if r.tasks != nil {
			r.tasks[fi][k] = lt.tasks.total()
		}
		return lt, true
	})
	return tl, err
}

// statsCalls is how many calls depth d of l holds according to its
// statistics: half its kept enter and leave records, and one that the
// records may leave unpaired (entered before a keep-last window, or never
// left). It is -1 when the statistics say nothing of the calls.
func statsCalls(l *tracefile.Location, d int) int {
	if len(l.Levels) == 0 {
		return -1
	}
	var kept uint64
	for _, lv := range l.Levels {
		if lv.Depth == d && lv.Class.Calls() {
			kept += lv.Kept()
		}
	}
	return int(min(kept/2+1, 1<<40))
}

func maxDepth(depths []int) int {
	m := 0
	for _, d := range depths {
		m = max(m, d)
	}
	return m
}

// openCall is a call whose leave has not been read yet.
type openCall struct {
	start  int64
	region int
	flags  int
	depth  int
}

// locationTimeline encodes one location's calls into rows of at most
// limit depths as its events stream by.
type locationTimeline struct {
	r      *run
	fi, k  int // the file and the location's index in it
	loc    *tracefile.Location
	off    int64
	lod    *lod
	limit  int
	enc    []*rowEncoder
	stack  []openCall
	region func(fi int, id uint32) (int, bool)
	// missed is set when region did not know an id: the encoding is
	// incomplete, and the location is encoded again by sequential.
	missed bool
	// truncated is set by a call entered before a keep-last window.
	truncated bool
	err       error

	points        [][]tlPoint // by row-1
	pointsOmitted int

	// sink, for a member of a group, takes its tiles for the group's
	// rows; nil for a location drawn on its own.
	sink  *memberSink
	tasks taskTrack
	comm  commTrack // its messages and collectives (messages.go)

	// A row holds the calls at one position of the stack of known calls:
	// depths whose levels were removed take none. depths are the calls'
	// depths the statistics know, by row; seen those the events had.
	depths []int
	seen   []int
}

// rowDepth is the calling depth row d (from 1) shows.
func (lt *locationTimeline) rowDepth(d int) int {
	switch {
	case d <= len(lt.seen) && lt.seen[d-1] > 0:
		return lt.seen[d-1]
	case d <= len(lt.depths):
		return lt.depths[d-1]
	}
	return d
}

// see notes that row d drew a call at depth.
func (lt *locationTimeline) see(d, depth int) {
	for len(lt.seen) < d {
		lt.seen = append(lt.seen, 0)
	}
	if lt.seen[d-1] == 0 {
		lt.seen[d-1] = depth
	}
}

func (p *timelinePlan) newLocation(r *run, fi, k int, region func(fi int, id uint32) (int, bool)) *locationTimeline {
	loc := &r.files[fi].Locations[k]
	lt := &locationTimeline{r: r, fi: fi, k: k, loc: loc, off: r.offsets[fi], lod: &p.lod, limit: p.limit, region: region}
	lt.tasks.limit = p.taskLimit
	lt.comm.limit = p.commLimit
	if p.groups != nil {
		gt := p.gtiles[p.groups.of[fi][k]]
		lt.sink = &memberSink{gt: gt, columns: p.lod.columns}
		lt.tasks.countOnly = true
	}
	lt.depths = callDepths(loc)
	lt.row(min(max(len(lt.depths), 1), p.limit))
	return lt
}

// row returns the encoder of depth d, nil below the limit.
func (lt *locationTimeline) row(d int) *rowEncoder {
	for len(lt.enc) < d && len(lt.enc) < lt.limit {
		enc := newRowEncoder(lt.lod)
		if lt.sink != nil {
			enc.tilesOnly = true
			for i := range enc.levels {
				enc.levels[i].sink = lt.sink.tile(len(lt.enc), i)
			}
		}
		lt.enc = append(lt.enc, enc)
	}
	if d > len(lt.enc) {
		return nil
	}
	return lt.enc[d-1]
}

// event takes the location's next event.
func (lt *locationTimeline) event(e *tracefile.Event) {
	if lt.missed {
		return
	}
	f := lt.r.files[lt.fi]
	switch e.Kind {
	case encode.KindEnter:
		region, ok := lt.region(lt.fi, e.Region)
		if !ok {
			lt.missed = true
			return
		}
		c := openCall{start: lt.off + f.Nanos(e.Time), region: region, depth: e.Depth}
		if e.Truncated {
			c.flags = flagTruncated
			lt.truncated = true
		}
		lt.stack = append(lt.stack, c)
	case encode.KindLeave:
		if len(lt.stack) == 0 {
			return // the reader checks nesting; nothing to draw
		}
		c := lt.stack[len(lt.stack)-1]
		lt.stack = lt.stack[:len(lt.stack)-1]
		if enc := lt.row(len(lt.stack) + 1); enc != nil {
			lt.see(len(lt.stack)+1, c.depth)
			enc.add(c.start, lt.off+f.Nanos(e.Time), c.region, c.flags)
		}
	case encode.KindTaskSwitch, encode.KindTaskComplete, encode.KindTaskSuspend:
		lt.tasks.event(e, lt.off+f.Nanos(e.Time))
	case encode.KindSend, encode.KindIsend, encode.KindRecv, encode.KindIrecv, encode.KindCollective:
		lt.message(f, e)
	default:
		if e.Kind.IsAnnotation() {
			lt.point(f, e)
		}
	}
}

// done is called after the location's last event: a task still running
// ends at its end, and a group's member hands its last tiles over.
func (lt *locationTimeline) done() {
	lt.tasks.finish(lt.off + lt.r.files[lt.fi].Duration())
	lt.finishMember()
}

// finishMember hands a group's member's last tiles to its group, its calls
// never left lasting to its end; it does nothing for a location drawn on
// its own, which appendLocation finishes.
func (lt *locationTimeline) finishMember() {
	if lt.sink == nil || lt.missed {
		return
	}
	end := lt.off + lt.r.files[lt.fi].Duration()
	for d := len(lt.stack); d >= 1; d-- {
		if enc := lt.row(d); enc != nil {
			c := lt.stack[d-1]
			enc.add(c.start, end, c.region, c.flags|flagOpen)
		}
	}
	for _, enc := range lt.enc {
		for i := range enc.levels {
			enc.levels[i].flush()
		}
	}
	lt.sink.flush()
	// What stays of a member until the timeline is assembled is its
	// counts, not its encoders: memory grows with the groups' tiles.
	lt.sink.batch, lt.enc, lt.stack = nil, nil, nil
}

// point keeps an annotation for the row of its depth.
func (lt *locationTimeline) point(f *tracefile.File, e *tracefile.Event) {
	// Its row is that of the call open around it (the rows skip removed
	// depths), the first one at the top level.
	d := max(len(lt.stack), 1)
	if d > lt.limit || lt.sink != nil {
		return // a group's row draws no annotation
	}
	for len(lt.points) < d {
		lt.points = append(lt.points, nil)
	}
	if len(lt.points[d-1]) >= maxPointsPerRow {
		lt.pointsOmitted++
		return
	}
	kind := "chan"
	switch e.Kind {
	case encode.KindMark:
		kind = "mark"
	case encode.KindParamInt, encode.KindParamString:
		kind = "param"
	}
	label := f.Describe(e)
	if e.Kind == encode.KindChanRecv && e.Peer <= 0xFFFFFFFF {
		if l := f.Location(uint32(e.Peer)); l != nil {
			label = fmt.Sprintf("chan %q recv #%d from %s, %d bytes", f.ChannelName(e.Key), e.Token, l.Name, e.Bytes)
		}
	}
	lt.points[d-1] = append(lt.points[d-1], tlPoint{T: lt.off + f.Nanos(e.Time), Kind: kind, Label: label})
}

// appendLocation appends the location's rows, while the budget's rows
// last.
func (tl *timeline) appendLocation(lt *locationTimeline, maxRows int) {
	r, fi, loc, off := lt.r, lt.fi, lt.loc, lt.off
	f := r.files[fi]
	end := off + f.Duration()
	li := len(tl.Locations)
	tl.Locations = append(tl.Locations, tlLocation{Label: r.label(fi, loc), Start: off, End: end,
		Notes: locationNotes(f, loc, off), Short: shortNotes(loc), Interrupted: loc.Interrupted})
	if len(r.files) > 1 && len(f.Locations) > 1 {
		tl.Locations[li].Group, tl.Locations[li].Name = r.group(fi), r.ownName(fi, loc)
	}
	tl.truncated = tl.truncated || lt.truncated
	tl.open = tl.open || len(lt.stack) > 0
	// Calls never left (a run ended by a signal) last to the end.
	for d := len(lt.stack); d >= 1; d-- {
		if enc := lt.row(d); enc != nil {
			c := lt.stack[d-1]
			lt.see(d, c.depth)
			enc.add(c.start, end, c.region, c.flags|flagOpen)
		}
	}
	if t := lt.tasks.page(); t != nil {
		tl.Locations[li].Tasks = t
		tl.Locations[li].Notes = append(tl.Locations[li].Notes, t.notes()...)
		tl.Locations[li].Short = append(tl.Locations[li].Short, units.Count(uint64(t.Count))+" tasks")
	}
	if lt.pointsOmitted > 0 {
		tl.Locations[li].Notes = append(tl.Locations[li].Notes, fmt.Sprintf(
			"%s marks, parameters and channel messages not drawn: more than %d on a row (hmbtrace dump lists them)", units.Count(uint64(lt.pointsOmitted)), maxPointsPerRow))
	}
	marks := shedMarks(f, loc, off, end)
	for d := 1; d <= len(lt.enc) && len(tl.Rows) < maxRows; d++ {
		var nExact int
		var tiles []int
		tl.data, nExact, tiles = lt.enc[d-1].finish(tl.data)
		depth := lt.rowDepth(d)
		row := tlRow{Loc: li, Depth: depth, Exact: nExact, Tiles: tiles, Stats: depthStats(loc, depth), Marks: marks(depth)}
		if d <= len(lt.points) {
			row.Points = lt.points[d-1]
		}
		tl.Rows = append(tl.Rows, row)
	}
}

// locationNotes says what happened to a location's events besides being
// kept: filters, removals, a signal, a keep-last window (on the timeline's
// axis, where its file starts at off).
func locationNotes(f *tracefile.File, l *tracefile.Location, off int64) []string {
	notes := []string{fmt.Sprintf("%s events recorded, %s kept", units.Count(l.Recorded), units.Count(l.Kept()))}
	if l.FilteredName > 0 {
		what := "the filter file"
		if f.Header.FilterFile != "" {
			what = f.Header.FilterFile
		}
		notes = append(notes, fmt.Sprintf("filtered: %s events of regions excluded by %s", units.Count(l.FilteredName), what))
	}
	if l.FilteredDuration > 0 {
		notes = append(notes, fmt.Sprintf("filtered: %s events of calls shorter than %s", units.Count(l.FilteredDuration), units.Duration(float64(f.Header.MinDuration))))
	}
	if s := removedText(l.Removed()); s != "" {
		notes = append(notes, "not kept (buffer full): "+s)
	}
	if l.Windowed {
		notes = append(notes, fmt.Sprintf("keep-last window: complete from %s on", units.Duration(float64(off+f.Nanos(l.WindowTime)))))
	}
	if r := f.Recovered; r != nil {
		notes = append(notes, "recovered by hmbtrace recover: "+r.EndText()+"; its counts are lower bounds")
	}
	if l.Interrupted {
		what := "a signal ended the run"
		if r := f.Recovered; r != nil && r.End != tracefile.EndSignal {
			what = "the process ended"
		}
		notes = append(notes, "interrupted: "+what+" while it recorded; calls still open are drawn to the end")
	}
	if u := l.Usage.Total(); u > 0 {
		notes = append(notes, fmt.Sprintf("%s usage errors", units.Count(u)))
	}
	return notes
}

// shortNotes says in a few words what the filters and the buffer took
// from a location: "430 filtered", "14,700 shed".
func shortNotes(l *tracefile.Location) []string {
	var parts []string
	if n := l.FilteredName + l.FilteredDuration; n > 0 {
		parts = append(parts, units.Count(n)+" filtered")
	}
	if n := l.Removed().Total(); n > 0 {
		parts = append(parts, units.Count(n)+" shed")
	}
	if l.Interrupted {
		parts = append(parts, "interrupted")
	}
	return parts
}

// removedText lists removed events by reason: "206,800 by depth, 12 no bin".
func removedText(removed tracefile.ByReason) string {
	s := ""
	for reason, n := range removed {
		if n == 0 {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s by %s", units.Count(n), tracefile.Reason(reason))
	}
	return s
}

// depthStats says what the buffer did at depth d of l, all classes.
func depthStats(l *tracefile.Location, d int) string {
	var kept uint64
	var removed tracefile.ByReason
	closed := ""
	for _, lv := range l.Levels {
		if lv.Depth != d {
			continue
		}
		kept += lv.Kept()
		for i, v := range lv.Removed() {
			removed[i] += v
		}
		if lv.Closed && (lv.Class == tracefile.ClassRegion || closed == "") {
			closed = fmt.Sprintf(", %s closed by %s", lv.Class, lv.By)
		}
	}
	s := fmt.Sprintf("depth %d: %s events kept", d, units.Count(kept))
	if r := removedText(removed); r != "" {
		s += ", removed " + r
	}
	return s + closed
}

// shedMarks returns, per depth, the stretches of location l where the
// buffer shed events: a closed depth (everything there revoked when it
// closed, everything after dropped), a keep-last window's start, a
// keep-first stop. Their labels tell times on the timeline's axis.
func shedMarks(f *tracefile.File, l *tracefile.Location, off, end int64) func(d int) []tlMark {
	at := func(t uint64) int64 { return off + f.Nanos(t) }
	var common []tlMark
	if l.Windowed {
		w := at(l.WindowTime)
		common = append(common, tlMark{From: off, To: w, Kind: "window",
			Label: fmt.Sprintf("not kept: before the last part of the run the buffer keeps (from %s on)", units.Duration(float64(w)))})
	}
	for _, red := range f.Reductions {
		if red.Reason == tracefile.ByFirst {
			t := at(red.Time)
			common = append(common, tlMark{From: t, To: end, Kind: "stopped",
				Label: fmt.Sprintf("not recorded: buffer full at %s, recording stopped", units.Duration(float64(t)))})
			break
		}
	}
	// A closed depth: its mark, and the label of what was dropped before.
	type closedMark struct {
		tlMark
		dropped string
	}
	closedAt := map[int]closedMark{}
	for _, lv := range l.Levels {
		if !lv.Closed || lv.Class != tracefile.ClassRegion || lv.By == tracefile.ByFirst {
			continue
		}
		var t int64 = -1
		for _, red := range f.Reductions {
			// A depth reduction of the communication classes closes no enter/leave level.
			if red.Reason == lv.By && (red.Reason != tracefile.ByDepth || red.Depth <= lv.Depth && red.Class != tracefile.ClassParadigm) {
				t = at(red.Time)
				break
			}
		}
		label := fmt.Sprintf("not recorded: buffer full at depth %d", lv.Depth)
		at := ""
		if t >= 0 {
			at = units.Duration(float64(t))
			label += " from " + at + " on"
		} else {
			t = off
		}
		when := ""
		if at != "" {
			when = " at " + at
		}
		closedAt[lv.Depth] = closedMark{tlMark{From: t, To: end, Kind: "closed", Label: label},
			fmt.Sprintf("not kept: recorded, then dropped when the buffer filled up%s (depth %d and deeper)", when, lv.Depth)}
	}
	return func(d int) []tlMark {
		marks := append([]tlMark(nil), common...)
		if c, ok := closedAt[d]; ok {
			if c.From > off {
				marks = append(marks, tlMark{From: off, To: c.From, Kind: "revoked",
					Label: c.dropped})
			}
			marks = append(marks, c.tlMark)
		}
		return marks
	}
}

// callsCap bounds a row's count of calls summed over its members: 2^40,
// or the largest int on a 32-bit platform.
const callsCap = int(min(uint64(math.MaxInt), 1<<40))
