package tracetest

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
)

// HaloGrid returns the process grid of a halo code of ranks processes:
// px columns and py rows, px the largest divisor of ranks not above its
// square root, as MPI_Dims_create would choose.
func HaloGrid(ranks int) (px, py int) {
	px = 1
	for d := 1; d*d <= ranks; d++ {
		if ranks%d == 0 {
			px = d
		}
	}
	return px, ranks / px
}

// HaloRank returns the trace of one rank of a 2-D halo-exchange code of
// ranks processes, as the MPI wrappers record it: MPI_COMM_WORLD,
// MPI_COMM_SELF, a cartesian communicator over every rank (MPI_Cart_create)
// and the row and column it splits into (MPI_Cart_sub); steps iterations
// of compute, an exchange with the four neighbours on the row and column
// communicators, and an MPI_Allreduce on the cartesian one. The
// definitions grow with ranks as a real run's do, the events do not: it
// measures what the communicators cost the files and the tools.
func HaloRank(name string, rank, ranks, steps int) *Builder {
	px, py := HaloGrid(ranks)
	b := NewBuilder(name, fmt.Sprintf("node%d", rank/64), rank, time.Unix(1700000000, 0),
		"main", "step", "compute", "MPI_Sendrecv", "MPI_Allreduce")
	world := make([]int32, ranks)
	for i := range world {
		world[i] = int32(i)
	}
	x, y := rank%px, rank/px
	row := make([]int32, px)
	for i := range row {
		row[i] = int32(y*px + i)
	}
	col := make([]int32, py)
	for i := range col {
		col[i] = int32(i*px + x)
	}
	w := b.Comm("MPI_COMM_WORLD", 0, world, nil)
	b.Comm("MPI_COMM_SELF", 0, []int32{int32(rank)}, nil)
	cart := b.Comm("", w, append([]int32(nil), world...), nil)
	rc := b.Comm("", cart, row, nil)
	cc := b.Comm("", cart, col, nil)
	b.Matrix = true
	l := b.Location("rank " + fmt.Sprint(rank))
	now := uint64(1000)
	at := func(dt int) uint64 { now += uint64(dt); return now }
	type nb struct {
		peer int32
		comm uint32
	}
	nbs := []nb{
		{int32(y*px + (x+1)%px), rc}, {int32(y*px + (x+px-1)%px), rc},
		{int32(((y+1)%py)*px + x), cc}, {int32(((y+py-1)%py)*px + x), cc},
	}
	l.Enter(at(10), 1)
	for s := 0; s < steps; s++ {
		l.Enter(at(20), 2)
		l.Enter(at(10), 3)
		l.Leave(at(5000 + (rank*7+s*13)%500))
		for k, n := range nbs {
			if px == 1 && k < 2 || py == 1 && k >= 2 {
				continue // no neighbour in that direction
			}
			l.Enter(at(10), 4)
			l.MessageComm(at(20), encode.KindSend, n.peer, uint32(k), 8192, n.comm)
			back := nbs[k^1].peer
			l.MessageComm(at(300), encode.KindRecv, back, uint32(k), 8192, n.comm)
			l.Leave(at(10))
		}
		l.Enter(at(10), 5)
		l.Collective(at(200), -1, 8, 8, cart)
		l.Leave(at(10))
		l.Leave(at(10))
	}
	l.Leave(at(10))
	return b
}

// HaloSplit adds to a HaloRank trace the communicator an MPI_Comm_split of
// its cartesian communicator (id 3) by an irregular colour makes: the
// ranks whose number of set bits has the parity of rank's. Its members
// form no runs of a stride (the Thue–Morse sequence has no long ones),
// so they take about a byte per member in COMM RUNS, and every rank's
// trace names half the run: what an irregular decomposition costs.
func HaloSplit(b *Builder, rank, ranks int) uint32 {
	var members []int32
	for r := 0; r < ranks; r++ {
		if bits.OnesCount(uint(r))&1 == bits.OnesCount(uint(rank))&1 {
			members = append(members, int32(r))
		}
	}
	return b.Comm("", 3, members, nil)
}

// WriteHaloArchive writes a halo run of ranks processes (HaloRank, steps
// iterations, with HaloSplit's communicator when split is set) as its
// run archive (WriteArchive).
func WriteHaloArchive(dir, name string, ranks, perFile, steps int, split bool) ([]string, error) {
	return WriteArchive(dir, name, ranks, perFile, func(r int) *Builder {
		b := HaloRank(name, r, ranks, steps)
		if split {
			HaloSplit(b, r, ranks)
		}
		return b
	})
}
