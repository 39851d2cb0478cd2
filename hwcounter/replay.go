package hwcounter

import (
	"errors"
	"fmt"
)

// ErrReplayExhausted is returned by Replay.Read after the last sample.
var ErrReplayExhausted = errors.New("hwcounter: replay has no more samples")

// ReplaySample is one scripted Read result.
type ReplaySample struct {
	Values  []uint64 // one cumulative count per event
	Scaling Scaling
}

// Replay is a Source that returns scripted samples in order, so that a
// caller's tests can check exact counter values through a whole
// record-and-read-back round trip, on any machine. Like Group, it allocates
// nothing per Read.
type Replay struct {
	events  []Event
	samples []ReplaySample
	next    int
}

var _ Source = (*Replay)(nil)

// NewReplay returns a Replay of samples for events; every sample must have
// one value per event.
func NewReplay(events []Event, samples []ReplaySample) (*Replay, error) {
	for i, s := range samples {
		if len(s.Values) != len(events) {
			return nil, fmt.Errorf("hwcounter: replay sample %d has %d values for %d events", i, len(s.Values), len(events))
		}
	}
	return &Replay{events: append([]Event(nil), events...), samples: samples}, nil
}

// Events returns the replayed events (a copy).
func (r *Replay) Events() []Event { return append([]Event(nil), r.events...) }

// Read copies the next sample into dst and returns its Scaling.
func (r *Replay) Read(dst []uint64) (Scaling, error) {
	if r.next >= len(r.samples) {
		return Scaling{}, ErrReplayExhausted
	}
	if len(dst) < len(r.events) {
		return Scaling{}, shortDst(len(dst), len(r.events))
	}
	s := r.samples[r.next]
	r.next++
	copy(dst, s.Values)
	return s.Scaling, nil
}

// Remaining is the number of samples not yet read.
func (r *Replay) Remaining() int { return len(r.samples) - r.next }
