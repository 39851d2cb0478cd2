package hwcounter

import "fmt"

// Source is anything that yields counter values per region: a Group, or a
// Replay in tests. Read fills dst[:len(Events())] with cumulative counts
// (scaled for multiplexing) and returns the times used to scale them; the
// difference between two reads is the region's count.
type Source interface {
	Events() []Event
	Read(dst []uint64) (Scaling, error)
}

// ReadPath names how a Group reads its counters.
type ReadPath string

const (
	// ReadRDPMC reads the counters from user space with the RDPMC
	// instruction through the page the kernel maps for each event: no
	// system call.
	ReadRDPMC ReadPath = "rdpmc"
	// ReadSyscall reads the whole group with one read() system call.
	ReadSyscall ReadPath = "read"
)

// groupInfo is the OS-independent part of a Group (see group_linux.go).
type groupInfo struct {
	events     []Event
	userOnly   bool
	tid        int
	path       ReadPath
	pathReason string
}

var _ Source = (*Group)(nil)

// Events returns the group's events in read order (a copy).
func (g *Group) Events() []Event {
	if g == nil {
		return nil
	}
	return append([]Event(nil), g.events...)
}

// Len is the number of events, and so of values Read writes.
func (g *Group) Len() int {
	if g == nil {
		return 0
	}
	return len(g.events)
}

// ReadPath tells whether Read uses RDPMC or read().
func (g *Group) ReadPath() ReadPath {
	if g == nil {
		return ""
	}
	return g.path
}

// ReadPathReason says why the group reads with read() rather than RDPMC
// (empty on the rdpmc path), for a one-line notice to the user.
func (g *Group) ReadPathReason() string {
	if g == nil {
		return ""
	}
	return g.pathReason
}

// UserOnly reports whether the events count user space only
// (exclude_kernel), because kernel.perf_event_paranoid did not allow more.
func (g *Group) UserOnly() bool { return g != nil && g.userOnly }

// Tid is the OS thread the group counts: the thread that called Open.
func (g *Group) Tid() int {
	if g == nil {
		return 0
	}
	return g.tid
}

// shortDst reports a destination slice that cannot hold the group's values.
func shortDst(have, want int) error {
	return fmt.Errorf("hwcounter: Read into %d values, need %d (one per event)", have, want)
}
