package waitstate

import "fmt"

// Pattern is a wait-state pattern: a metric over (region, location) in
// nanoseconds.
type Pattern uint8

// The patterns. The numbering is the order of the metric tree: a pattern's
// parent (Parent) comes before it.
const (
	// LateSender is the time a receive (a blocking receive, or the
	// Wait/Waitall/Test that completed an Irecv) spent before the matching
	// send was entered: min(send enter, receive leave) − receive enter,
	// when positive; the send's enter is that of the call that holds it
	// (MPI_Send, MPI_Isend, ...). A call that completes several receives
	// (Waitall, Waitsome, Testall, Testsome) counts the largest of their
	// waits once, as Scalasca does. Unlike Scalasca, a Test that completed
	// a receive counts too (its wait is at most its own duration). Sends
	// and receives are paired by MPI's non-overtaking rule: the k-th
	// receive of (sender, communicator, tag) on a location gets the k-th
	// send.
	LateSender Pattern = iota
	// LateSenderWrongOrder is the part of LateSender waits for a message
	// sent after another that the same receiver received later: the
	// receiver asked for messages in another order than they were sent.
	// As in Scalasca, each receive looks at the last 100 Late Sender
	// waits of its location and moves here those whose message was sent
	// after its own (from the same sender or another).
	LateSenderWrongOrder
	// LateReceiver is the time a blocking send (MPI_Send, MPI_Ssend,
	// MPI_Rsend) spent before the matching receive was posted, when the
	// send returned only after that: receive enter − send enter, when
	// positive and send leave > receive enter. The receive's enter is that
	// of the call that posted it (MPI_Irecv for a non-blocking one).
	// MPI_Bsend never waits; MPI_Sendrecv returns after its own receive,
	// so its send is not counted.
	LateReceiver
	// WaitNxN is the time in an N-to-N collective (Allreduce, Alltoall(v,w),
	// Allgather(v), Reduce_scatter(_block), and their non-blocking forms
	// where they complete) before the last member entered it:
	// min(last enter, leave) − enter, for a member that receives data. A
	// non-blocking one enters with its start (MPI_Iallreduce) and waits in
	// the call that completes it (MPI_Wait): min(last start, completing
	// call's leave) − completing call's enter. The k-th collective on a
	// communicator of each member is one operation.
	WaitNxN
	// WaitBarrier is the same for MPI_Barrier (and MPI_Ibarrier).
	WaitBarrier
	// LateBroadcast is the time a non-root member of a 1-to-N collective
	// (Bcast, Scatter(v)) that receives data spent before the root entered
	// it: min(root enter, leave) − enter.
	LateBroadcast
	// EarlyReduce is the time the root of an N-to-1 collective (Reduce,
	// Gather(v)) spent before the first other member entered it:
	// min(first other enter, leave) − enter.
	EarlyReduce
	// OMPBarrier is the time an OpenMP thread spent in an explicit barrier
	// ("!$omp barrier", which the adapter also uses for the barriers of
	// static loops and single constructs) before the last thread of its
	// team arrived: min(last enter, leave) − enter. The threads of a team
	// share the place of their forking thread (tracefile.Location.Team);
	// the n-th visit of a barrier in the k-th implicit task of each is one
	// barrier, which holds when every parallel region uses the whole team.
	OMPBarrier
	// OMPImplicitBarrier is the same for the implicit barrier at the end
	// of a parallel region or work-sharing construct.
	OMPImplicitBarrier
	// NumPatterns is the number of patterns.
	NumPatterns
)

var patternInfo = [NumPatterns]struct {
	name, metric, parent string
}{
	LateSender:           {"Late Sender", "mpi_latesender", ""},
	LateSenderWrongOrder: {"Late Sender, wrong order", "mpi_latesender_wo", "mpi_latesender"},
	LateReceiver:         {"Late Receiver", "mpi_latereceiver", ""},
	WaitNxN:              {"Wait at N x N", "mpi_wait_nxn", ""},
	WaitBarrier:          {"Wait at Barrier", "mpi_barrier_wait", ""},
	LateBroadcast:        {"Late Broadcast", "mpi_latebroadcast", ""},
	EarlyReduce:          {"Early Reduce", "mpi_earlyreduce", ""},
	OMPBarrier:           {"OpenMP wait at explicit barrier", "omp_ebarrier_wait", ""},
	OMPImplicitBarrier:   {"OpenMP wait at implicit barrier", "omp_ibarrier_wait", ""},
}

// String returns the pattern's name as Scalasca's metric tree shows it.
func (p Pattern) String() string {
	if p < NumPatterns {
		return patternInfo[p].name
	}
	return fmt.Sprintf("Pattern(%d)", uint8(p))
}

// Metric returns the pattern's unique metric name, as a CUBE4 metric's
// unique name (Scalasca's where it has one).
func (p Pattern) Metric() string {
	if p < NumPatterns {
		return patternInfo[p].metric
	}
	return ""
}

// Parent returns the pattern whose time includes p's, and false for a
// pattern at the top of the tree: LateSenderWrongOrder is part of
// LateSender.
func (p Pattern) Parent() (Pattern, bool) {
	if p == LateSenderWrongOrder {
		return LateSender, true
	}
	return 0, false
}

// ParsePattern returns the pattern of a metric name (Pattern.Metric).
func ParsePattern(metric string) (Pattern, error) {
	for p := Pattern(0); p < NumPatterns; p++ {
		if patternInfo[p].metric == metric {
			return p, nil
		}
	}
	return 0, fmt.Errorf("waitstate: no pattern %q", metric)
}
