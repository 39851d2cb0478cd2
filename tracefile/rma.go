package tracefile

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// secRma lists the MPI windows and the groups RMA synchronisations name.
const secRma = 0x24

func init() { sectionNames[secRma] = "RMA" }

// Win is an MPI window of one-sided communication as this process saw it
// created (MPI_Win_create, _allocate, _allocate_shared, _create_dynamic).
type Win struct {
	ID   uint32 // >= 1, as RMA records name it
	Comm uint32 // the communicator it was created on, an id of Trace.Comms
	Name string // from MPI_Win_set_name, "" if none was given
}

// RmaGroup is a group of processes that an RMA synchronisation names
// (MPI_Win_post, MPI_Win_start, ...): its members as world ranks, in the
// order of the group's ranks.
type RmaGroup struct {
	ID      uint32 // >= 1, as KindRmaGroupSync records name it
	Members []int32
}

// Win returns the window with the given id, or nil.
func (t *Trace) Win(id uint32) *Win {
	if id >= 1 && int(id) <= len(t.Wins) && t.Wins[id-1].ID == id {
		return &t.Wins[id-1]
	}
	for i := range t.Wins {
		if t.Wins[i].ID == id {
			return &t.Wins[i]
		}
	}
	return nil
}

// RmaGroup returns the RMA group with the given id, or nil.
func (t *Trace) RmaGroup(id uint32) *RmaGroup {
	if id >= 1 && int(id) <= len(t.RmaGroups) && t.RmaGroups[id-1].ID == id {
		return &t.RmaGroups[id-1]
	}
	for i := range t.RmaGroups {
		if t.RmaGroups[i].ID == id {
			return &t.RmaGroups[i]
		}
	}
	return nil
}

// encodeRma writes the windows and the RMA groups, nil if there are none.
func encodeRma(t *Trace) []byte {
	if len(t.Wins) == 0 && len(t.RmaGroups) == 0 {
		return nil
	}
	var p wirecodec.Writer
	p.Uvarint(uint64(len(t.Wins)))
	for _, w := range t.Wins {
		p.Uvarint(uint64(w.ID))
		p.Uvarint(uint64(w.Comm))
		p.String(w.Name)
	}
	p.Uvarint(uint64(len(t.RmaGroups)))
	for _, g := range t.RmaGroups {
		p.Uvarint(uint64(g.ID))
		encodeRanks(&p, g.Members)
	}
	return p
}

// decodeRma reads the RMA section into t. A window's communicator must be
// one the COMMS section defined (it comes first), and ids are unique.
func decodeRma(f *fields, t *Trace) {
	n := f.Count("windows", 3)
	ids := make(map[uint32]bool, n)
	for i := 0; i < n && f.OK(); i++ {
		w := Win{ID: f.U32("window id"), Comm: f.U32("window communicator"), Name: f.String("window name")}
		switch {
		case !f.OK():
		case w.ID == 0:
			f.Fail("window id", "0 is not a valid window id")
		case ids[w.ID]:
			f.Fail("window id", fmt.Sprintf("id %d defined twice", w.ID))
		case t.Comm(w.Comm) == nil:
			f.Fail("window communicator", fmt.Sprintf("window %d names communicator %d, which is not defined", w.ID, w.Comm))
		}
		ids[w.ID] = true
		t.Wins = append(t.Wins, w)
	}
	n = f.Count("RMA groups", 2)
	gids := make(map[uint32]bool, n)
	for i := 0; i < n && f.OK(); i++ {
		g := RmaGroup{ID: f.U32("RMA group id")}
		g.Members = decodeRanks(f, "RMA group members")
		switch {
		case !f.OK():
		case g.ID == 0:
			f.Fail("RMA group id", "0 is not a valid group id")
		case gids[g.ID]:
			f.Fail("RMA group id", fmt.Sprintf("id %d defined twice", g.ID))
		}
		gids[g.ID] = true
		t.RmaGroups = append(t.RmaGroups, g)
	}
}
