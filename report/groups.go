package report

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Groups of ranks. A run of 512 ranks has more timeline rows than a screen
// shows, and as many rows in every table per location; a reader of such a
// run looks for the ranks that behave unlike the others, as in Vampir's
// summarised process timeline or Cube's system tree. Past Options.Rows rows
// the report draws consecutive ranks (or, in a run of one file, consecutive
// locations) as groups of equal size: a group's row shows, per tile, the
// region that most of its members spent the most time in, how many of them
// did, and their mean coverage with the least and the most of one of them
// (a min/mean/max band, as Cube shows for a metric); the profile, the heat map, the
// communication views and the tables per location show the groups too. The
// page is then as large as that of a run with as many ranks as groups, and
// what the report keeps grows with the number of groups and of tile
// columns, not with the ranks: each member hands its finished tiles to its
// group as they are made.

// DefaultRows is how many timeline rows (calling depths of the locations)
// the report draws before it groups ranks: about what a screen shows.
const DefaultRows = 128

// grouping is how a run's locations are drawn as groups.
type grouping struct {
	byFile bool    // the units grouped are files (ranks), else the locations of the one file
	units  int     // files or locations in all
	size   int     // units per group (the last may have fewer)
	groups []group // in drawing order
	of     [][]int // per file and location index: its group
}

// group is consecutive units drawn as one.
type group struct {
	label   string
	members []locRef // its locations, in drawing order
	depth   int      // rows it has before the depth limit
}

type locRef struct{ file, index int }

// planGroups returns how r's locations are grouped when they have more rows
// than rows, nil when they fit (or there is nothing to group).
func planGroups(r *run, rows int) *grouping {
	if rows <= 0 {
		rows = DefaultRows
	}
	total := 0
	for _, f := range r.files {
		for k := range f.Locations {
			total += max(statsRows(&f.Locations[k]), 1)
		}
	}
	if total <= rows {
		return nil
	}
	g := &grouping{byFile: len(r.files) > 1}
	// The units, each its locations in drawing order.
	var units [][]locRef
	if g.byFile {
		for fi, f := range r.files {
			var u []locRef
			for _, k := range locationOrder(f) {
				u = append(u, locRef{fi, k})
			}
			if len(u) > 0 { // a file without locations has no row
				units = append(units, u)
			}
		}
	} else {
		for _, k := range locationOrder(r.files[0]) {
			units = append(units, []locRef{{0, k}})
		}
	}
	if len(units) < 2 {
		return nil
	}
	depth := make([]int, len(units))
	for i, u := range units {
		for _, m := range u {
			depth[i] = max(depth[i], statsRows(&r.files[m.file].Locations[m.index]), 1)
		}
	}
	rowsOf := func(size int) int {
		n := 0
		for i := 0; i < len(units); i += size {
			d := 0
			for _, x := range depth[i:min(i+size, len(units))] {
				d = max(d, x)
			}
			n += d
		}
		return n
	}
	// Each group has a row at least: no fewer units per group than this.
	size := len(units)
	for s := max(2, (len(units)+rows-1)/rows); s < len(units); s++ {
		if rowsOf(s) <= rows {
			size = s
			break
		}
	}
	g.units, g.size = len(units), size
	g.of = make([][]int, len(r.files))
	for fi, f := range r.files {
		g.of[fi] = make([]int, len(f.Locations))
	}
	for i := 0; i < len(units); i += size {
		j := min(i+size, len(units))
		gr := group{label: g.unitsLabel(r, units[i][0], units[j-1][0], j-i)}
		for k, u := range units[i:j] {
			gr.members = append(gr.members, u...)
			gr.depth = max(gr.depth, depth[i+k])
			for _, m := range u {
				g.of[m.file][m.index] = len(g.groups)
			}
		}
		g.groups = append(g.groups, gr)
	}
	return g
}

// unitsLabel names a group by its first and last unit: "ranks 0–15",
// "lane 0 – lane 15", "rank 7" for a group of one.
func (g *grouping) unitsLabel(r *run, first, last locRef, n int) string {
	if g.byFile {
		if r.byFile {
			a, b := filepath.Base(r.files[first.file].Path), filepath.Base(r.files[last.file].Path)
			if n == 1 {
				return a
			}
			return a + " – " + b
		}
		a, b := r.files[first.file].Header.Rank, r.files[last.file].Header.Rank
		if n == 1 {
			return fmt.Sprintf("rank %d", a)
		}
		return fmt.Sprintf("ranks %d–%d", a, b)
	}
	f := r.files[0]
	a, b := f.Locations[first.index].Name, f.Locations[last.index].Name
	if n == 1 {
		return a
	}
	return a + " – " + b
}

// unitName is what the grouped units are called: ranks or locations.
func (g *grouping) unitName() string {
	if g.byFile {
		return "ranks"
	}
	return "locations"
}

// text says how the run is grouped, as the page says it.
func (g *grouping) text() string {
	s := fmt.Sprintf("%d %s shown as %d groups of %d", g.units, g.unitName(), len(g.groups), g.size)
	if last := g.units % g.size; last != 0 {
		s += fmt.Sprintf(" (the last of %d)", last)
	}
	return s
}

// groupTile is a tile a member finished: what its location did in one
// column of one level at one depth.
type groupTile struct {
	depth, level int32
	region       int32
	coverage     byte
	col          int64
	calls        uint64
}

// groupTiles sums its members' tiles: per depth, level and column, the
// members' votes for the region each spent the most time in, the sum of
// their coverages and of their calls. Members hand their tiles in batches,
// under the mutex, from the workers reading them; sums of integers make
// the result the same in any order. Columns are kept in chunks made when
// first touched, so that a group busy in a part of the run costs that
// part.
type groupTiles struct {
	mu     sync.Mutex
	levels [][]*columnChunk // per depth-1 and level: its chunks of columns
	nlev   int
}

const chunkColumns = 256

type columnChunk [chunkColumns]columnVotes

type columnVotes struct {
	votes    []regionVote
	coverage uint32 // sum of the members' coverage bytes
	lo, hi   byte   // the least and most coverage of a member with calls there
	calls    uint64
}

type regionVote struct{ region, n int32 }

func newGroupTiles(depths, levels int) *groupTiles {
	return &groupTiles{levels: make([][]*columnChunk, depths*levels), nlev: levels}
}

// add takes a member's tiles.
func (gt *groupTiles) add(tiles []groupTile, columns []int) {
	gt.mu.Lock()
	defer gt.mu.Unlock()
	for _, t := range tiles {
		i := int(t.depth)*gt.nlev + int(t.level)
		if i >= len(gt.levels) {
			continue
		}
		chunks := gt.levels[i]
		if chunks == nil {
			chunks = make([]*columnChunk, (columns[t.level]+chunkColumns-1)/chunkColumns)
			gt.levels[i] = chunks
		}
		ch := chunks[t.col/chunkColumns]
		if ch == nil {
			ch = new(columnChunk)
			chunks[t.col/chunkColumns] = ch
		}
		c := &ch[t.col%chunkColumns]
		if len(c.votes) == 0 || t.coverage < c.lo {
			c.lo = t.coverage
		}
		c.hi = max(c.hi, t.coverage)
		c.coverage += uint32(t.coverage)
		c.calls += t.calls
		found := false
		for k := range c.votes {
			if c.votes[k].region == t.region {
				c.votes[k].n++
				found = true
				break
			}
		}
		if !found {
			c.votes = append(c.votes, regionVote{t.region, 1})
		}
	}
}

// encode appends the row of depth d to out as lod.go encodes rows, with
// three more fields per tile: how many of the members voted for its region
// (a varint), and the least and the most coverage of a member (a byte
// each, 0 for the least when a member had no call there): the band of
// its members about the mean that the tile's coverage is. It returns the
// tiles per level.
func (gt *groupTiles) encode(out []byte, d, members int) ([]byte, []int) {
	out = binary.AppendUvarint(out, 0) // no call is drawn one by one
	tiles := make([]int, gt.nlev)
	for l := range gt.nlev {
		var body []byte
		prev := int64(-1)
		for ci, ch := range gt.levels[(d-1)*gt.nlev+l] {
			if ch == nil {
				continue
			}
			for k := range ch {
				cv := &ch[k]
				if len(cv.votes) == 0 {
					continue
				}
				best := cv.votes[0]
				for _, v := range cv.votes[1:] {
					if v.n > best.n || v.n == best.n && v.region < best.region {
						best = v
					}
				}
				c := int64(ci*chunkColumns + k)
				cov := (cv.coverage + uint32(members) - 1) / uint32(members)
				body = binary.AppendUvarint(body, uint64(c-prev-1))
				body = binary.AppendUvarint(body, uint64(best.region))
				body = append(body, byte(min(max(cov, 1), 255)))
				body = binary.AppendUvarint(body, cv.calls)
				body = binary.AppendUvarint(body, uint64(best.n))
				lo := cv.lo
				n := int32(0)
				for _, v := range cv.votes {
					n += v.n
				}
				if int(n) < members {
					lo = 0
				}
				body = append(body, lo, cv.hi)
				prev = c
				tiles[l]++
			}
		}
		out = binary.AppendUvarint(out, uint64(tiles[l]))
		out = append(out, body...)
	}
	return out, tiles
}

// memberSink batches the tiles of one member for its group.
type memberSink struct {
	gt      *groupTiles
	columns []int
	batch   []groupTile
}

const sinkBatch = 1024

func (s *memberSink) tile(depth, level int) func(col int64, region int, coverage byte, calls uint64) {
	return func(col int64, region int, coverage byte, calls uint64) {
		s.batch = append(s.batch, groupTile{depth: int32(depth), level: int32(level), region: int32(region), coverage: coverage, col: col, calls: calls})
		if len(s.batch) == sinkBatch {
			s.flush()
		}
	}
}

func (s *memberSink) flush() {
	if len(s.batch) > 0 {
		s.gt.add(s.batch, s.columns)
		s.batch = s.batch[:0]
	}
}

// groupLocation is the timeline's location of group gi: its label, its
// span on the axis, and its members' notes summed.
func (g *grouping) groupLocation(r *run, gi int) tlLocation {
	gr := &g.groups[gi]
	loc := tlLocation{Label: gr.label, Start: -1, Members: len(gr.members)}
	var recorded, kept, filtered, removed, usage uint64
	var shed, interrupted, windowed int
	for _, m := range gr.members {
		f := r.files[m.file]
		l := &f.Locations[m.index]
		off := r.offsets[m.file]
		if loc.Start < 0 || off < loc.Start {
			loc.Start = off
		}
		loc.End = max(loc.End, off+f.Duration())
		recorded += l.Recorded
		kept += l.Kept()
		filtered += l.FilteredName + l.FilteredDuration
		if n := l.Removed().Total(); n > 0 {
			removed += n
			shed++
		}
		if l.Interrupted {
			interrupted++
		}
		if l.Windowed {
			windowed++
		}
		usage += l.Usage.Total()
	}
	loc.Start = max(loc.Start, 0)
	n := len(gr.members)
	loc.Notes = []string{fmt.Sprintf("a group of %d locations: %s events recorded, %s kept", n, units.Count(recorded), units.Count(kept))}
	if filtered > 0 {
		loc.Notes = append(loc.Notes, fmt.Sprintf("filtered: %s events", units.Count(filtered)))
		loc.Short = append(loc.Short, units.Count(filtered)+" filtered")
	}
	if removed > 0 {
		loc.Notes = append(loc.Notes, fmt.Sprintf("not kept (buffer full): %s events on %d of the %d locations", units.Count(removed), shed, n))
		loc.Short = append(loc.Short, units.Count(removed)+" shed")
	}
	if windowed > 0 {
		loc.Notes = append(loc.Notes, fmt.Sprintf("keep-last window on %d of the %d locations", windowed, n))
	}
	if interrupted > 0 {
		loc.Notes = append(loc.Notes, fmt.Sprintf("interrupted: %d of the %d locations were recording when the trace was written (a caught signal, or a probe under way past Close's wait)", interrupted, n))
		loc.Short = append(loc.Short, "interrupted")
	}
	if usage > 0 {
		loc.Notes = append(loc.Notes, fmt.Sprintf("%s usage errors", units.Count(usage)))
	}
	return loc
}

// groupStats says what the buffers of a group's members did at depth d.
func (g *grouping) groupStats(r *run, gi, d int) string {
	var kept uint64
	var removed tracefile.ByReason
	closed := 0
	for _, m := range g.groups[gi].members {
		l := &r.files[m.file].Locations[m.index]
		c := false
		for _, lv := range l.Levels {
			if lv.Depth != d {
				continue
			}
			kept += lv.Kept()
			for i, v := range lv.Removed() {
				removed[i] += v
			}
			c = c || lv.Closed && lv.Class == tracefile.ClassRegion
		}
		if c {
			closed++
		}
	}
	s := fmt.Sprintf("depth %d over %d locations: %s events kept", d, len(g.groups[gi].members), units.Count(kept))
	if t := removedText(removed); t != "" {
		s += ", removed " + t
	}
	if closed > 0 {
		s += fmt.Sprintf(", closed on %d", closed)
	}
	return s
}

// groupOfID returns the group of location id of file fi, -1 if the file
// has no such location.
func (g *grouping) groupOfID(r *run, fi int, id uint32) int {
	f := r.files[fi]
	for k := range f.Locations {
		if f.Locations[k].ID == id {
			return g.of[fi][k]
		}
	}
	return -1
}

// variation returns v with its rows drawn as the groups: a group's segment
// k spans its members' k-th segments that overlap, and its SOS-time and
// score are those of the hottest of them, so that a rank slower than the others still
// lights its group up. The ranking in text stays per location (v itself).
func (g *grouping) variation(r *run, v *variation.Variation) *variation.Variation {
	out := *v
	out.Rows = make([]variation.Row, len(g.groups))
	for gi, gr := range g.groups {
		out.Rows[gi] = variation.Row{Label: fmt.Sprintf("%s (%d)", gr.label, len(gr.members)), File: gr.members[0].file}
	}
	rowGroup := make([]int, len(v.Rows))
	for i, row := range v.Rows {
		rowGroup[i] = g.groupOfID(r, row.File, row.Location)
	}
	// Members' segments of the same invocation merge when they overlap
	// in time, as the iterations of an MPI code's ranks do; ranks that ran
	// one after the other keep theirs apart.
	type key struct{ group, index int }
	at := map[key][]int{}
	out.Segments = nil
	for _, sg := range v.Segments {
		gi := rowGroup[sg.Row]
		if gi < 0 {
			continue
		}
		k := key{gi, sg.Index}
		merged := false
		for _, i := range at[k] {
			m := &out.Segments[i]
			if sg.Start > m.End() || m.Start > sg.End() {
				continue
			}
			end := max(m.End(), sg.End())
			m.Start = min(m.Start, sg.Start)
			m.Duration = end - m.Start
			m.SOS = max(m.SOS, sg.SOS)
			m.Score = max(m.Score, sg.Score)
			m.Sync = m.Duration - m.SOS
			merged = true
			break
		}
		if !merged {
			at[k] = append(at[k], len(out.Segments))
			sg.Row = gi
			out.Segments = append(out.Segments, sg)
			out.Rows[gi].Segments++
		}
	}
	// By row, then invocation, as package variation orders them.
	sort.SliceStable(out.Segments, func(i, j int) bool {
		a, b := out.Segments[i], out.Segments[j]
		if a.Row != b.Row {
			return a.Row < b.Row
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Start < b.Start
	})
	return &out
}

// matrix returns m with the groups as its nodes: a cell sums what the
// members of one group sent those of another. m's nodes are the
// locations in file and location order.
func (g *grouping) matrix(r *run, m *comm.Matrix) *comm.Matrix {
	var of []int
	for fi, f := range r.files {
		for k := range f.Locations {
			of = append(of, g.of[fi][k])
		}
	}
	if len(of) != len(m.Nodes) {
		return m // not the nodes this function knows: drawn as they are
	}
	out := *m
	out.Nodes = make([]comm.Node, len(g.groups))
	for gi, gr := range g.groups {
		first := gr.members[0]
		out.Nodes[gi] = comm.Node{Name: gr.label, Rank: r.files[first.file].Header.Rank, Loc: r.files[first.file].Locations[first.index].ID}
	}
	cells := map[[2]int]*comm.Cell{}
	for _, c := range m.Cells {
		k := [2]int{of[c.From], of[c.To]}
		x := cells[k]
		if x == nil {
			x = &comm.Cell{From: k[0], To: k[1]}
			cells[k] = x
		}
		x.Messages += c.Messages
		x.Bytes += c.Bytes
	}
	out.Cells = make([]comm.Cell, 0, len(cells))
	for _, c := range cells {
		out.Cells = append(out.Cells, *c)
	}
	sort.Slice(out.Cells, func(i, j int) bool {
		a, b := out.Cells[i], out.Cells[j]
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	return &out
}

// mergeRuns joins identical texts of consecutive names: "rank 0 … rank
// 511" once rather than 512 lines of the same.
func mergeRuns(names, texts []string) (outNames, outTexts []string) {
	for i := 0; i < len(texts); {
		j := i + 1
		for j < len(texts) && texts[j] == texts[i] {
			j++
		}
		name := names[i]
		if j-i > 1 {
			name = fmt.Sprintf("%s … %s (%d files)", names[i], names[j-1], j-i)
		}
		outNames, outTexts = append(outNames, name), append(outTexts, texts[i])
		i = j
	}
	return outNames, outTexts
}
