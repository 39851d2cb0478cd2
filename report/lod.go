package report

import (
	"encoding/binary"
	"math"
)

// The timeline's level of detail. Each row (a location's calling depth)
// holds its calls as intervals that never overlap, in time order. The page
// draws a view at one of a few zoom levels, level l cutting the run into
// columns[l] equal columns (coarsest first, each 4 times finer than the
// one before). At level l a call is drawn exactly when it is exact (at
// least exactMin long) and at least one column wide; every other call is
// summed into its columns' tiles, which tell the region that spent the most
// time there, the share of the column that calls below the bound cover,
// and how many such calls touch it. Exact calls per row are at most
// span/exactMin, tiles per row and level at most columns[l]: the data stays
// bounded whatever the number of events, and the page draws a view with
// about one rectangle per pixel column and row.
//
// The encoding, one stream for all rows in the order of the metadata, every
// integer an unsigned LEB128 varint:
//
//	row   := exact tiles{len(columns)}
//	exact := n (dstart dur regionflags){n}   dstart from the previous start (0 first), ns
//	tiles := n (dcol region coverage count){n}  dcol = column - previous column - 1 (-1 first);
//	                                            coverage one byte, 1..255 for (0, 1]
//
// regionflags is region<<2 | flags with flagTruncated and flagOpen.

const (
	flagTruncated = 1 // entered before the keep-last window: starts at the window
	flagOpen      = 2 // never left (interrupted run): ends at the location's end
)

// Defaults of the timeline's budget (Options): in the worst case about 3
// MiB of exact calls and 5 MiB of tiles before base64.
const (
	DefaultMaxIntervals = 1 << 19
	DefaultMaxCells     = 1 << 20
	maxColumns          = 1 << 16 // finest level, for a few rows
	minColumns          = 256     // coarsest level
)

// lod is the level-of-detail scheme shared by every row of a timeline.
type lod struct {
	span     int64     // ns from the start of the first file to the end of the last
	columns  []int     // per level, coarsest first
	widths   []float64 // ns per column per level, as the page computes them
	exactMin float64   // ns: calls at least this long are kept one by one
}

// newLOD picks the levels for rows over span ns, given how many calls each
// row holds (negative: unknown, as many as there is room for).
//
// The exact bound is the smallest from the finest column's width up that
// keeps at most maxIntervals calls one by one: a row holds at most
// span/exactMin of them, since its calls never overlap. The finest level is
// the finest whose tiles over all levels and rows stay within maxCells and a
// third (the coarser levels' share when every row is full): a row has at
// most a level's columns of tiles, and at most as many as its calls touch
// columns, two per call narrower than a column.
func newLOD(span int64, calls []int, maxIntervals, maxCells int) lod {
	span = max(span, 1)
	var l lod
	for finest := maxColumns; ; finest /= 2 {
		l = lod{span: span}
		for c := finest; ; c /= 4 {
			l.columns = append([]int{c}, l.columns...)
			if c/4 < minColumns {
				break
			}
		}
		l.widths = l.widths[:0]
		for _, c := range l.columns {
			l.widths = append(l.widths, float64(span)/float64(c))
		}
		l.exactMin = l.widths[len(l.widths)-1]
		for l.exactCalls(calls) > max(maxIntervals, 1) {
			l.exactMin *= 1.0442737824274138 // 2^(1/16)
		}
		if finest/2 < minColumns || l.tiles(calls) <= maxCells+maxCells/3 {
			return l
		}
	}
}

// exactCalls bounds the calls kept one by one.
func (l *lod) exactCalls(calls []int) int {
	room := int(math.Min(float64(l.span)/l.exactMin, math.MaxInt32))
	n := 0
	for _, k := range calls {
		if k < 0 || k > room {
			k = room
		}
		n += k
	}
	return n
}

// tiles bounds the tiles of all levels.
func (l *lod) tiles(calls []int) int {
	n := 0
	for i, c := range l.columns {
		// Calls summed into tiles are shorter than the column or than
		// exactMin.
		touched := 2
		if l.exactMin > l.widths[i] {
			touched = int(math.Min(math.Ceil(l.exactMin/l.widths[i]), float64(c))) + 1
		}
		for _, k := range calls {
			if k < 0 || k >= c/touched {
				n += c
			} else {
				n += k * touched
			}
		}
	}
	return n
}

// rowEncoder builds one row's exact calls and tiles from its calls, given
// in time order.
type rowEncoder struct {
	lod *lod
	// tilesOnly sums every call into tiles, none kept one by one: the rows
	// of a group of locations (groups.go), whose calls overlap.
	tilesOnly bool
	exact     []byte
	nExact    int
	prevStart int64
	levels    []tileLevel
}

// tileLevel sums the calls of one row at one level into columns.
type tileLevel struct {
	width   float64
	columns int64
	out     []byte
	n       int
	prevCol int64
	col     int64 // column being summed, -1 before the first
	parts   []regionTime
	index   map[int]int // region -> parts index, once a column has many regions
	calls   uint64
	// sink, when set, takes each finished tile in place of out: a member
	// of a group hands its tiles to the group (groups.go).
	sink func(col int64, region int, coverage byte, calls uint64)
}

type regionTime struct {
	region int
	ns     float64
}

func newRowEncoder(l *lod) *rowEncoder {
	r := &rowEncoder{lod: l, levels: make([]tileLevel, len(l.columns))}
	for i := range r.levels {
		r.levels[i] = tileLevel{width: l.widths[i], columns: int64(l.columns[i]), prevCol: -1, col: -1}
	}
	return r
}

// add takes the next call of the row: [start, end) in ns on the timeline's
// axis, region an index into the page's region table. Calls must come in
// time order and not overlap; add clamps them into [0, span].
func (r *rowEncoder) add(start, end int64, region int, flags int) {
	start = min(max(start, 0), r.lod.span)
	end = min(max(end, start), r.lod.span)
	dur := end - start
	exact := !r.tilesOnly && float64(dur) >= r.lod.exactMin
	if exact {
		r.exact = binary.AppendUvarint(r.exact, uint64(start-r.prevStart))
		r.exact = binary.AppendUvarint(r.exact, uint64(dur))
		r.exact = binary.AppendUvarint(r.exact, uint64(region)<<2|uint64(flags))
		r.prevStart = start
		r.nExact++
	}
	for i := range r.levels {
		lv := &r.levels[i]
		if exact && float64(dur) >= lv.width {
			continue // drawn one by one at this level
		}
		lv.add(start, end, region)
	}
}

func (lv *tileLevel) add(start, end int64, region int) {
	// A call that ends at the end of the run ends on the right edge of
	// the last column, not in a column past it.
	c0 := min(int64(float64(start)/lv.width), lv.columns-1)
	c1 := min(int64(float64(end)/lv.width), lv.columns-1)
	for c := c0; c <= c1; c++ {
		lo := math.Max(float64(start), float64(c)*lv.width)
		hi := math.Min(float64(end), float64(c+1)*lv.width)
		if hi <= lo && !(c == c0 && start == end) {
			continue // the call ends on this column's left edge
		}
		if c != lv.col {
			lv.flush()
			lv.col = c
		}
		lv.calls++
		lv.addTime(region, math.Max(hi-lo, 0))
	}
}

// addTime adds ns to region's time in the column: a scan of the few regions
// a column usually has, a map beyond them.
func (lv *tileLevel) addTime(region int, ns float64) {
	const scanned = 16
	if lv.index != nil {
		if i, ok := lv.index[region]; ok {
			lv.parts[i].ns += ns
			return
		}
	} else {
		for i := range lv.parts {
			if lv.parts[i].region == region {
				lv.parts[i].ns += ns
				return
			}
		}
	}
	lv.parts = append(lv.parts, regionTime{region, ns})
	if lv.index != nil {
		lv.index[region] = len(lv.parts) - 1
	} else if len(lv.parts) > scanned {
		lv.index = make(map[int]int, 2*scanned)
		for i, p := range lv.parts {
			lv.index[p.region] = i
		}
	}
}

// flush writes the tile of the column being summed.
func (lv *tileLevel) flush() {
	if lv.col < 0 || lv.calls == 0 {
		return
	}
	busiest, total := lv.parts[0], 0.0
	for _, p := range lv.parts {
		total += p.ns
		if p.ns > busiest.ns {
			busiest = p
		}
	}
	coverage := int(math.Ceil(math.Min(total/lv.width, 1) * 255))
	coverage = min(max(coverage, 1), 255)
	if lv.sink != nil {
		lv.sink(lv.col, busiest.region, byte(coverage), lv.calls)
		lv.parts = lv.parts[:0]
		lv.index = nil
		lv.calls = 0
		return
	}
	lv.out = binary.AppendUvarint(lv.out, uint64(lv.col-lv.prevCol-1))
	lv.out = binary.AppendUvarint(lv.out, uint64(busiest.region))
	lv.out = append(lv.out, byte(coverage))
	lv.out = binary.AppendUvarint(lv.out, lv.calls)
	lv.n++
	lv.prevCol = lv.col
	lv.parts = lv.parts[:0]
	lv.index = nil
	lv.calls = 0
}

// finish flushes the last tiles and appends the row's encoding to out. It
// returns the counts of exact calls and of tiles per level.
func (r *rowEncoder) finish(out []byte) ([]byte, int, []int) {
	out = binary.AppendUvarint(out, uint64(r.nExact))
	out = append(out, r.exact...)
	tiles := make([]int, len(r.levels))
	for i := range r.levels {
		lv := &r.levels[i]
		lv.flush()
		out = binary.AppendUvarint(out, uint64(lv.n))
		out = append(out, lv.out...)
		tiles[i] = lv.n
	}
	return out, r.nExact, tiles
}
