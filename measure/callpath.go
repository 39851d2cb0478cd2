package measure

import (
	"sync"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// callTree is a location's exact call-path profile: one node per distinct
// path of regions from the top of the stack, with its visits and times.
// The probes keep it only when Config.CallPaths is set (or a live view
// listens): finding a call's node costs a walk over its siblings.
type callTree struct {
	nodes []cpNode // nodes[0] is the root: the empty path
}

type cpNode struct {
	parent, child, next int32 // tree links; -1 for none
	region              uint32
	visits, incl, excl  uint64
}

func newCallTree() *callTree {
	return &callTree{nodes: []cpNode{{parent: -1, child: -1, next: -1}}}
}

// enter returns the node of region r below node at, making it if needed.
// The node found moves to the front of its siblings: loops call the same
// children again and again.
func (t *callTree) enter(at int32, r uint32) int32 {
	prev := int32(-1)
	for c := t.nodes[at].child; c >= 0; c = t.nodes[c].next {
		if t.nodes[c].region == r {
			if prev >= 0 {
				t.nodes[prev].next = t.nodes[c].next
				t.nodes[c].next = t.nodes[at].child
				t.nodes[at].child = c
			}
			t.nodes[c].visits++
			return c
		}
		prev = c
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, cpNode{parent: at, child: -1, next: t.nodes[at].child, region: r, visits: 1})
	t.nodes[at].child = n
	return n
}

// leave adds a call of node n that took dur ticks, child of them in calls
// it made.
func (t *callTree) leave(n int32, dur, child uint64) {
	t.nodes[n].incl += dur
	t.nodes[n].excl += dur - min(dur, child)
}

// export lists the nodes, parents before children.
func (t *callTree) export() []tracefile.CallPath {
	out := make([]tracefile.CallPath, 0, len(t.nodes)-1)
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		out = append(out, tracefile.CallPath{Parent: uint32(n.parent), Region: n.region, Visits: n.visits, Inclusive: n.incl, Exclusive: n.excl})
	}
	return out
}

// published is what a location's owner last copied for readers that run
// while it records (the live view): taken at its syncs, never waited for.
type published struct {
	mu         sync.Mutex
	generation uint64 // the pool epoch the copy was taken at
	recorded   uint64
	filtered   uint64
	profile    []tracefile.ProfileEntry
	paths      []tracefile.CallPath
}
