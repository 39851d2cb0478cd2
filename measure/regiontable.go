package measure

// regionTable holds the region definitions, id i+1 at index i, in chunks
// that never move: appending copies nothing, so that a million regions
// cost their definitions and not twice as much while a slice grows, and a
// prefix of the table, once read under the measurement's mutex, stays
// valid without it.
type regionTable struct {
	chunks []*[regionChunk]regionDef
	n      int
}

const regionChunk = 4096

func (t *regionTable) len() int { return t.n }

// at returns definition i (id i+1).
func (t *regionTable) at(i int) *regionDef { return &t.chunks[i/regionChunk][i%regionChunk] }

func (t *regionTable) append(d regionDef) {
	if t.n%regionChunk == 0 {
		t.chunks = append(t.chunks, new([regionChunk]regionDef))
	}
	*t.at(t.n) = d
	t.n++
}

// view returns a copy of the table's header: the definitions so far,
// which later appends leave alone.
func (t *regionTable) view() regionTable {
	return regionTable{chunks: t.chunks[:len(t.chunks):len(t.chunks)], n: t.n}
}
