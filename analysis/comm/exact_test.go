package comm_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	. "github.com/hmbtrace/hmbtrace/analysis/comm"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// recordDeep makes 4 ranks' traces whose messages sit at calling depth 7,
// each in its own file, with the given buffer: a ring of blocking sends and
// a non-blocking exchange with the opposite rank.
func recordDeep(t *testing.T, dir string, buffer, bin int) []*tracefile.File {
	t.Helper()
	var files []*tracefile.File
	for rank := 0; rank < 4; rank++ {
		m, err := measure.Start(measure.Config{Output: dir, Name: "deep", Rank: rank, BufferSize: buffer, BinSize: bin})
		if err != nil {
			t.Fatal(err)
		}
		world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2, 3}, nil)
		regions := make([]measure.Region, 7)
		for i := range regions {
			regions[i] = m.Region(fmt.Sprintf("level%d", i))
		}
		l := m.Location("main")
		for it := 0; it < 3000; it++ {
			for _, r := range regions {
				l.Enter(r)
			}
			l.SendRankComm((rank+1)%4, 0, uint64(8+rank), world)
			l.RecvRankComm((rank+3)%4, 0, uint64(8+(rank+3)%4), world)
			req := uint64(2 * it)
			l.Isend((rank+2)%4, 1, 1000, world, req)
			l.IrecvRequest(req + 1)
			l.IsendComplete(req)
			l.Irecv((rank+2)%4, 1, 1000, world, req+1)
			for j := len(regions) - 1; j >= 0; j-- {
				l.Leave(regions[j])
			}
		}
		files = append(files, tracetest.Finish(t, m))
	}
	return files
}

// The matrix of a run whose buffer was too small, and shed most message
// events, is the unreduced run's: it comes from the exact matrices.
func TestMatrixExactWhateverTheBufferShed(t *testing.T) {
	full := recordDeep(t, t.TempDir(), 64<<20, 0)
	small := recordDeep(t, t.TempDir(), 32<<10, 1<<10)
	mf, err := FromFiles(full)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := FromFiles(small)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Shed != 0 || mf.Counted != 0 || mf.Exact != 4 {
		t.Errorf("unreduced: shed %d, counted %d, exact %d", mf.Shed, mf.Counted, mf.Exact)
	}
	if ms.Shed == 0 || ms.Counted != 0 || ms.Exact != 4 {
		t.Errorf("reduced: shed %d, counted %d, exact %d: want sends shed and every sender exact", ms.Shed, ms.Counted, ms.Exact)
	}
	if !reflect.DeepEqual(mf.Cells, ms.Cells) || mf.Unmatched != 0 || ms.Unmatched != 0 {
		t.Errorf("reduced run's matrix\n%+v\nunreduced\n%+v", ms.Cells, mf.Cells)
	}
	if msgs, bytes := ms.Totals(); msgs != 4*3000*2 || bytes != 3000*(8+9+10+11)+4*3000*1000 {
		t.Errorf("totals %d messages, %d bytes", msgs, bytes)
	}
}

// A file without exact matrices (written before they were kept) is counted
// from its send events, and says so.
func TestMatrixFromEventsWithoutExactMatrix(t *testing.T) {
	b := tracetest.NewBuilder("old", "node", 0, time.Unix(1700000000, 0), "main")
	a, c := b.Location("a"), b.Location("c")
	a.Enter(1, 1)
	a.Message(2, encode.KindSend, 1, false, 0, 100)
	a.Message(3, encode.KindSend, 1, false, 0, 50)
	a.Leave(4)
	c.Enter(1, 1)
	c.Message(2, encode.KindRecv, 0, false, 0, 100)
	c.Leave(5)
	f := b.Write(t, t.TempDir())
	m, err := FromFiles([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if m.Counted != 1 || m.Exact != 0 || len(m.Cells) != 1 || m.Cells[0].Messages != 2 || m.Cells[0].Bytes != 150 {
		t.Errorf("counted %d, exact %d, cells %+v", m.Counted, m.Exact, m.Cells)
	}
}
