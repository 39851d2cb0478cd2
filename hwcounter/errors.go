package hwcounter

import (
	"errors"
	"fmt"
)

var (
	// ErrNoPMU marks an event that needs a hardware PMU on a machine that has
	// none (typically a virtual machine without PMU passthrough).
	ErrNoPMU = errors.New("no hardware PMU")
	// ErrPermission marks an event the kernel refused to this process,
	// usually because of kernel.perf_event_paranoid.
	ErrPermission = errors.New("not permitted")
	// ErrNotSupported is returned on operating systems without perf events.
	ErrNotSupported = errors.New("perf events are supported on Linux only")
	// ErrClosed is returned by Read on a closed or nil Group.
	ErrClosed = errors.New("hwcounter: group is closed")
)

// EventError says why one event could not be counted: the event's name, the
// reason in words (what to change, where that is possible) and the
// underlying error, which is the kernel's errno where there is one, so that
// errors.Is(err, unix.ENOENT) works, as do errors.Is(err, ErrNoPMU) and
// errors.Is(err, ErrPermission).
type EventError struct {
	Event  string // event name as given to Open
	Reason string // e.g. "no hardware PMU (virtual machine?)"
	Err    error  // kernel errno (wrapped) or ErrNotSupported
	kind   error  // ErrNoPMU, ErrPermission or nil
}

func (e *EventError) Error() string {
	return fmt.Sprintf("hwcounter: cannot count %q: %s (%v)", e.Event, e.Reason, e.Err)
}

// Unwrap returns the underlying error and, where it applies, ErrNoPMU or
// ErrPermission.
func (e *EventError) Unwrap() []error {
	if e.kind != nil {
		return []error{e.Err, e.kind}
	}
	return []error{e.Err}
}
