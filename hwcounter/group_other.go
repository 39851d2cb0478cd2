//go:build !linux

package hwcounter

import (
	"errors"
	"runtime"
)

// Group is a set of perf events counted together for one OS thread. Outside
// Linux none can be opened.
type Group struct {
	groupInfo
}

func notSupported(name string) *EventError {
	return &EventError{Event: name, Reason: "perf events need Linux (GOOS=" + runtime.GOOS + ")", Err: ErrNotSupported}
}

// Paranoid returns ErrNotSupported: kernel.perf_event_paranoid is Linux's.
func Paranoid() (int, error) { return 0, ErrNotSupported }

// Open returns an error naming each event: perf events exist on Linux only.
func Open(names []string) (*Group, error) {
	if _, err := ParseEvents(names); err != nil {
		return nil, err
	}
	errs := make([]error, len(names))
	for i, name := range names {
		errs[i] = notSupported(name)
	}
	return nil, errors.Join(errs...)
}

// OpenAvailable returns no group and an EventError per event: perf events
// exist on Linux only.
func OpenAvailable(names []string) (*Group, []*EventError, error) {
	if _, err := ParseEvents(names); err != nil {
		return nil, nil, err
	}
	failed := make([]*EventError, len(names))
	for i, name := range names {
		failed[i] = notSupported(name)
	}
	return nil, failed, nil
}

// HasHardwarePMU returns false and ErrNotSupported outside Linux.
func HasHardwarePMU() (bool, error) { return false, ErrNotSupported }

// Read returns ErrClosed: no Group can be opened outside Linux.
func (g *Group) Read(dst []uint64) (Scaling, error) { return Scaling{}, ErrClosed }

// Close does nothing outside Linux.
func (g *Group) Close() error { return nil }
