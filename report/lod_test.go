package report

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/units"
)

// decodedCall and decodedTile are a row's contents as the page decodes
// them.
type decodedCall struct {
	start, dur    int64
	region, flags int
}

type decodedTile struct {
	col      int64
	region   int
	coverage byte
	calls    uint64
	agree    uint64 // a group's row: the members whose busiest region it is
	lo, hi   byte   // a group's row: the least and most coverage of a member
}

type decodedRow struct {
	exact []decodedCall
	tiles [][]decodedTile // per level
}

// decodeRows reads the timeline encoding as the page's script does (see
// lod.go), checking it against the rows' counts.
func decodeRows(data []byte, rows []tlRow, levels int) ([]decodedRow, error) {
	p := 0
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(data[p:])
		if n <= 0 {
			return 0, fmt.Errorf("bad varint at byte %d", p)
		}
		p += n
		return v, nil
	}
	var out []decodedRow
	for ri, meta := range rows {
		var row decodedRow
		n, err := uv()
		if err != nil {
			return nil, err
		}
		if int(n) != meta.Exact {
			return nil, fmt.Errorf("row %d: %d exact calls, metadata says %d", ri, n, meta.Exact)
		}
		var t int64
		for range n {
			var v [3]uint64
			for i := range v {
				if v[i], err = uv(); err != nil {
					return nil, err
				}
			}
			t += int64(v[0])
			row.exact = append(row.exact, decodedCall{start: t, dur: int64(v[1]), region: int(v[2] >> 2), flags: int(v[2] & 3)})
		}
		if len(meta.Tiles) != levels {
			return nil, fmt.Errorf("row %d: %d tile counts for %d levels", ri, len(meta.Tiles), levels)
		}
		for l := range levels {
			m, err := uv()
			if err != nil {
				return nil, err
			}
			if int(m) != meta.Tiles[l] {
				return nil, fmt.Errorf("row %d level %d: %d tiles, metadata says %d", ri, l, m, meta.Tiles[l])
			}
			var tiles []decodedTile
			col := int64(-1)
			for range m {
				dc, err := uv()
				if err != nil {
					return nil, err
				}
				region, err := uv()
				if err != nil {
					return nil, err
				}
				if p >= len(data) {
					return nil, errors.New("data ends in a tile")
				}
				cov := data[p]
				p++
				calls, err := uv()
				if err != nil {
					return nil, err
				}
				var agree uint64
				var band [2]byte
				if meta.Members > 0 {
					if agree, err = uv(); err != nil {
						return nil, err
					}
					if p+2 > len(data) {
						return nil, errors.New("data ends in a group's tile")
					}
					band = [2]byte{data[p], data[p+1]}
					p += 2
				}
				col += int64(dc) + 1
				tiles = append(tiles, decodedTile{col: col, region: int(region), coverage: cov, calls: calls, agree: agree, lo: band[0], hi: band[1]})
			}
			row.tiles = append(row.tiles, tiles)
		}
		out = append(out, row)
	}
	if p != len(data) {
		return nil, fmt.Errorf("%d bytes left over", len(data)-p)
	}
	return out, nil
}

// call is a call given to a row encoder.
type call struct {
	start, end    int64
	region, flags int
}

// expectTiles sums calls into the tiles of one level the plain way: every
// column a call overlaps, regions in the order they first appear in it.
func expectTiles(l *lod, level int, calls []call) []decodedTile {
	w := l.widths[level]
	type part struct {
		region int
		ns     float64
	}
	cols := map[int64][]part{}
	counts := map[int64]uint64{}
	var order []int64
	for _, c := range calls {
		c.start = min(max(c.start, 0), l.span)
		c.end = min(max(c.end, c.start), l.span)
		dur := c.end - c.start
		if float64(dur) >= l.exactMin && float64(dur) >= w {
			continue
		}
		last := int64(l.columns[level] - 1)
		c0, c1 := min(int64(float64(c.start)/w), last), min(int64(float64(c.end)/w), last)
		for col := c0; col <= c1; col++ {
			lo, hi := math.Max(float64(c.start), float64(col)*w), math.Min(float64(c.end), float64(col+1)*w)
			if hi <= lo && !(col == c0 && dur == 0) {
				continue
			}
			if _, ok := counts[col]; !ok {
				order = append(order, col)
			}
			counts[col]++
			ps := cols[col]
			found := false
			for i := range ps {
				if ps[i].region == c.region {
					ps[i].ns += math.Max(hi-lo, 0)
					found = true
				}
			}
			if !found {
				ps = append(ps, part{c.region, math.Max(hi-lo, 0)})
			}
			cols[col] = ps
		}
	}
	var out []decodedTile
	for _, col := range order {
		ps := cols[col]
		best, total := ps[0], 0.0
		for _, p := range ps {
			total += p.ns
			if p.ns > best.ns {
				best = p
			}
		}
		cov := min(max(int(math.Ceil(math.Min(total/w, 1)*255)), 1), 255)
		out = append(out, decodedTile{col: col, region: best.region, coverage: byte(cov), calls: counts[col]})
	}
	return out
}

// checkRow encodes calls as one row and checks what a page decodes: the
// exact calls are those at least exactMin long, unchanged; every level's
// tiles are the plain sum of the others.
func checkRow(t *testing.T, l *lod, calls []call) (exact int, tiles []int) {
	t.Helper()
	enc := newRowEncoder(l)
	for _, c := range calls {
		enc.add(c.start, c.end, c.region, c.flags)
	}
	data, nExact, nTiles := enc.finish(nil)
	rows, err := decodeRows(data, []tlRow{{Exact: nExact, Tiles: nTiles}}, len(l.columns))
	if err != nil {
		t.Fatal(err)
	}
	row := rows[0]
	var want []decodedCall
	for _, c := range calls {
		c.start = min(max(c.start, 0), l.span)
		c.end = min(max(c.end, c.start), l.span)
		if float64(c.end-c.start) >= l.exactMin {
			want = append(want, decodedCall{c.start, c.end - c.start, c.region, c.flags})
		}
	}
	if len(row.exact) != len(want) {
		t.Fatalf("%d exact calls, want %d", len(row.exact), len(want))
	}
	for i := range want {
		if row.exact[i] != want[i] {
			t.Fatalf("exact call %d: %+v, want %+v", i, row.exact[i], want[i])
		}
	}
	for level := range l.columns {
		want := expectTiles(l, level, calls)
		got := row.tiles[level]
		if len(got) != len(want) {
			t.Fatalf("level %d: %d tiles, want %d", level, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("level %d tile %d: %+v, want %+v", level, i, got[i], want[i])
			}
			if got[i].col < 0 || got[i].col >= int64(l.columns[level]) {
				t.Fatalf("level %d: tile in column %d of %d", level, got[i].col, l.columns[level])
			}
		}
	}
	return nExact, nTiles
}

// randomCalls makes up to n calls that do not overlap, in [0, span], of
// durations spread over orders of magnitude up to 20 times their mean.
func randomCalls(rng *rand.Rand, n int, span int64) []call {
	var calls []call
	t := int64(0)
	mean := float64(span) / float64(n)
	for len(calls) < n && t < span {
		t = min(t+int64(rng.ExpFloat64()*mean*float64(rng.IntN(3))/4), span)
		d := int64(math.Pow(10, rng.Float64()*math.Log10(max(20*mean, 1))))
		if rng.IntN(50) == 0 {
			d = 0
		}
		end := min(t+d, span)
		calls = append(calls, call{start: t, end: end, region: rng.IntN(5), flags: rng.IntN(4)})
		t = end
	}
	return calls
}

func TestRowEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		span               int64
		rows, maxIntervals int
		n                  int
	}{
		{span: 1e6, rows: 1, maxIntervals: DefaultMaxIntervals, n: 2000},
		{span: 1e8, rows: 4, maxIntervals: 500, n: 20000},
		{span: 3e9, rows: 300, maxIntervals: 10000, n: 20000},
		{span: 50, rows: 1, maxIntervals: 10, n: 100},
	} {
		l := newLOD(tc.span, unknownCalls(tc.rows), tc.maxIntervals, DefaultMaxCells)
		calls := randomCalls(rng, tc.n, tc.span)
		exact, tiles := checkRow(t, &l, calls)
		t.Logf("span %d, %d rows: levels %v, exact from %.1f ns: %d of %d calls exact, tiles %v", tc.span, tc.rows, l.columns, l.exactMin, exact, len(calls), tiles)
	}
}

// The budget holds whatever the calls: no more exact calls than
// maxIntervals over all rows, no more tiles per level than columns.
func TestLODBudget(t *testing.T) {
	const span, rows, maxIntervals, maxCells = int64(1e9), 64, 4096, 1 << 16
	l := newLOD(span, unknownCalls(rows), maxIntervals, maxCells)
	if f := l.columns[len(l.columns)-1]; f*rows > maxCells {
		t.Fatalf("finest level %d columns × %d rows > %d cells", f, rows, maxCells)
	}
	total := 0
	for range rows {
		// The worst case for the exact calls: back to back, each just
		// long enough.
		var calls []call
		d := int64(math.Ceil(l.exactMin))
		for s := int64(0); s+d <= span; s += d {
			calls = append(calls, call{start: s, end: s + d, region: 1})
		}
		enc := newRowEncoder(&l)
		for _, c := range calls {
			enc.add(c.start, c.end, c.region, 0)
		}
		_, n, tiles := enc.finish(nil)
		total += n
		for i, nt := range tiles {
			if nt > l.columns[i] {
				t.Fatalf("level %d: %d tiles in %d columns", i, nt, l.columns[i])
			}
		}
	}
	if total > maxIntervals {
		t.Fatalf("%d exact calls, budget %d", total, maxIntervals)
	}
	if len(l.columns) < 2 || l.columns[0] < minColumns {
		t.Fatalf("levels %v", l.columns)
	}
	for i := 1; i < len(l.columns); i++ {
		if l.columns[i] != 4*l.columns[i-1] {
			t.Fatalf("levels %v are not 4 times finer each", l.columns)
		}
	}
}

// FuzzRowEncoding encodes calls made from the fuzzer's bytes and checks
// what the page would decode (checkRow).
func FuzzRowEncoding(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, int64(1000), uint16(1))
	f.Add([]byte{0, 0, 0, 255, 255, 255, 0, 1, 0}, int64(1e9), uint16(200))
	f.Add([]byte{}, int64(1), uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, span int64, rows uint16) {
		span = max(span%(1<<40), 1)
		l := newLOD(span, unknownCalls(int(rows%1000)+1), 1+int(rows)*7, DefaultMaxCells)
		var calls []call
		pos := int64(0)
		for i := 0; i+2 < len(b) && pos <= span; i += 3 {
			// Gaps and durations on a log scale, so that calls of every
			// level of detail occur.
			gap := int64(math.Pow(2, float64(b[i]%48))) - 1
			d := int64(math.Pow(2, float64(b[i+1]%48))) - 1
			start := min(pos+gap, span)
			end := min(start+d, span)
			calls = append(calls, call{start: start, end: end, region: int(b[i+2] % 7), flags: int(b[i+2] >> 6)})
			pos = end
		}
		checkRow(t, &l, calls)
	})
}

// unknownCalls plans n rows of unknown calls: as many as fit.
func unknownCalls(n int) []int {
	calls := make([]int, n)
	for i := range calls {
		calls[i] = -1
	}
	return calls
}

// With the calls per row known, the bounds newLOD plans with hold for the
// rows as encoded: exact calls within maxIntervals, tiles within the cells
// it counted.
func TestLODBudgetKnownCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		rows, calls, maxIntervals, maxCells int
	}{
		{rows: 8, calls: 20000, maxIntervals: 1 << 12, maxCells: 1 << 16},
		{rows: 40, calls: 3000, maxIntervals: 1 << 10, maxCells: 1 << 14},
		{rows: 3, calls: 10, maxIntervals: 1 << 10, maxCells: 1 << 12},
	} {
		const span = int64(1e9)
		rows := make([][]call, tc.rows)
		counts := make([]int, tc.rows)
		for i := range rows {
			rows[i] = randomCalls(rng, 1+rng.IntN(tc.calls), span)
			counts[i] = len(rows[i])
		}
		l := newLOD(span, counts, tc.maxIntervals, tc.maxCells)
		exact, tiles := 0, 0
		for _, calls := range rows {
			e, ts := checkRow(t, &l, calls)
			exact += e
			for _, n := range ts {
				tiles += n
			}
		}
		if exact > tc.maxIntervals || exact > l.exactCalls(counts) {
			t.Errorf("%d rows: %d exact calls, budget %d, planned %d", tc.rows, exact, tc.maxIntervals, l.exactCalls(counts))
		}
		if tiles > l.tiles(counts) {
			t.Errorf("%d rows: %d tiles, planned at most %d", tc.rows, tiles, l.tiles(counts))
		}
		if l.columns[len(l.columns)-1] > minColumns && l.tiles(counts) > tc.maxCells+tc.maxCells/3 {
			t.Errorf("%d rows: planned %d tiles, budget %d", tc.rows, l.tiles(counts), tc.maxCells+tc.maxCells/3)
		}
		t.Logf("%d rows: levels %v, exact from %s: %d exact calls, %d tiles (planned %d)", tc.rows, l.columns, units.Duration(l.exactMin), exact, tiles, l.tiles(counts))
	}
}
