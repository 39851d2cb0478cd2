package waitstate

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ReplayInMemory replays files, one rank's each in rank order, in-situ in
// this one process: a Local per rank, each round's messages handed over
// in memory as libhmbtrace-mpi hands them over MPI (the forward rounds,
// the ship round, then rounds while any rank has something to send). It
// returns each rank's part, unmerged. Tests use it to hold the in-situ
// replay to the post-mortem one without MPI. sent, if not nil, sees each
// message: its round, sender, receiver and bytes.
func ReplayInMemory(files []*tracefile.File, sent func(round, from, to int, b []byte)) ([]*InSitu, error) {
	n := len(files)
	locals := make([]*Local, n)
	for i, f := range files {
		l, err := NewLocal(f, n)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", i, err)
		}
		locals[i] = l
	}
	for round := 0; ; round++ {
		inbox := make([]map[int][]byte, n)
		for i := range inbox {
			inbox[i] = map[int][]byte{}
		}
		more := false
		for i, l := range locals {
			out, err := l.Outgoing(round)
			if err != nil {
				return nil, fmt.Errorf("rank %d, round %d: %w", i, round, err)
			}
			for p, b := range out {
				if p < 0 || p >= n {
					return nil, fmt.Errorf("rank %d, round %d: a message to rank %d of %d", i, round, p, n)
				}
				inbox[p][i] = b
				more = true
				if sent != nil {
					sent(round, i, p, b)
				}
			}
		}
		if round > Rounds(n) && !more {
			break
		}
		for i, l := range locals {
			if err := l.Incoming(round, inbox[i]); err != nil {
				return nil, fmt.Errorf("rank %d, round %d: %w", i, round, err)
			}
		}
	}
	parts := make([]*InSitu, n)
	for i, l := range locals {
		p, err := l.Finish()
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", i, err)
		}
		parts[i] = p
	}
	return parts, nil
}
