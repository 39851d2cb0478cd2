package hwcounter

import (
	"fmt"
	"strconv"
	"strings"
)

// Values of perf_event_attr.type and .config from include/uapi/linux/perf_event.h.
// They are kernel ABI, the same on every architecture; they are spelled out here
// (golang.org/x/sys/unix has them only on Linux) so that event names parse on
// every OS. A Linux test checks them against unix.PERF_*.
const (
	TypeHardware uint32 = 0 // PERF_TYPE_HARDWARE: generalized PMU events
	TypeSoftware uint32 = 1 // PERF_TYPE_SOFTWARE: counted by the kernel, no PMU needed
	TypeRaw      uint32 = 4 // PERF_TYPE_RAW: CPU-specific PMU event code
)

// Event is one countable perf event.
type Event struct {
	Name   string // as `perf list` spells it; raw events as "r" + lower-case hex config
	Type   uint32 // perf_event_attr.type: TypeHardware, TypeSoftware or TypeRaw
	Config uint64 // perf_event_attr.config
}

func (e Event) String() string { return e.Name }

// Hardware reports whether the event is counted by the CPU's PMU (hardware or
// raw), as opposed to a software event the kernel counts itself.
func (e Event) Hardware() bool { return e.Type == TypeHardware || e.Type == TypeRaw }

// kernelOnly reports whether the kernel counts the event only in kernel mode,
// so that a user-space-only counter (exclude_kernel) always reads 0: the
// scheduler raises context switches and migrations with kernel registers.
func (e Event) kernelOnly() bool {
	return e.Type == TypeSoftware && (e.Config == swContextSwitches || e.Config == swCPUMigrations)
}

const (
	swCPUClock        = 0
	swTaskClock       = 1
	swPageFaults      = 2
	swContextSwitches = 3
	swCPUMigrations   = 4
	swMinorFaults     = 5
	swMajorFaults     = 6
	swAlignmentFaults = 7
	swEmulationFaults = 8
)

// namedEvents is the table of symbolic names, in `perf list` order. Aliases
// are the other spellings perf accepts; they parse to the canonical Name.
var namedEvents = []struct {
	event   Event
	aliases []string
}{
	{Event{"cycles", TypeHardware, 0}, []string{"cpu-cycles"}},
	{Event{"instructions", TypeHardware, 1}, nil},
	{Event{"cache-references", TypeHardware, 2}, nil},
	{Event{"cache-misses", TypeHardware, 3}, nil},
	{Event{"branch-instructions", TypeHardware, 4}, []string{"branches"}},
	{Event{"branch-misses", TypeHardware, 5}, nil},
	{Event{"bus-cycles", TypeHardware, 6}, nil},
	{Event{"stalled-cycles-frontend", TypeHardware, 7}, []string{"idle-cycles-frontend"}},
	{Event{"stalled-cycles-backend", TypeHardware, 8}, []string{"idle-cycles-backend"}},
	{Event{"ref-cycles", TypeHardware, 9}, nil},
	{Event{"cpu-clock", TypeSoftware, swCPUClock}, nil},
	{Event{"task-clock", TypeSoftware, swTaskClock}, nil},
	{Event{"page-faults", TypeSoftware, swPageFaults}, []string{"faults"}},
	{Event{"context-switches", TypeSoftware, swContextSwitches}, []string{"cs"}},
	{Event{"cpu-migrations", TypeSoftware, swCPUMigrations}, []string{"migrations"}},
	{Event{"minor-faults", TypeSoftware, swMinorFaults}, nil},
	{Event{"major-faults", TypeSoftware, swMajorFaults}, nil},
	{Event{"alignment-faults", TypeSoftware, swAlignmentFaults}, nil},
	{Event{"emulation-faults", TypeSoftware, swEmulationFaults}, nil},
}

// EventNames returns the canonical symbolic event names ParseEvent accepts,
// in `perf list` order. Raw events (rNNNN) come on top of these.
func EventNames() []string {
	names := make([]string, len(namedEvents))
	for i, n := range namedEvents {
		names[i] = n.event.Name
	}
	return names
}

// ParseEvent parses one event name as `perf list` spells it (case does not
// matter): a symbolic name such as "cycles" or "page-faults", one of perf's
// aliases ("cpu-cycles", "branches", "cs", "faults", "migrations"), or a raw
// PMU event "rNNNN" with up to 16 hex digits of config.
func ParseEvent(name string) (Event, error) {
	if name == "" {
		return Event{}, fmt.Errorf("hwcounter: empty event name")
	}
	lower := strings.ToLower(name)
	for _, n := range namedEvents {
		if lower == n.event.Name {
			return n.event, nil
		}
		for _, a := range n.aliases {
			if lower == a {
				return n.event, nil
			}
		}
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return Event{}, fmt.Errorf("hwcounter: event %q: modifier %q is not supported: user-space-only counting is chosen from kernel.perf_event_paranoid", name, name[i:])
	}
	if strings.IndexByte(name, '/') >= 0 {
		return Event{}, fmt.Errorf("hwcounter: event %q: PMU-qualified events (pmu/term=value/) are not supported: give the raw config as rNNNN", name)
	}
	if len(lower) > 1 && lower[0] == 'r' && isHex(lower[1:]) {
		digits := lower[1:]
		if len(digits) > 16 {
			return Event{}, fmt.Errorf("hwcounter: raw event %q: config %q has %d hex digits, at most 16 fit in 64 bits", name, digits, len(digits))
		}
		config, err := strconv.ParseUint(digits, 16, 64)
		if err != nil { // unreachable after the checks above; kept so a bad input can never panic or pass
			return Event{}, fmt.Errorf("hwcounter: raw event %q: %v", name, err)
		}
		return Event{Name: "r" + strconv.FormatUint(config, 16), Type: TypeRaw, Config: config}, nil
	}
	if len(lower) > 1 && lower[0] == 'r' && isHexPrefixed(lower[1:]) {
		return Event{}, fmt.Errorf("hwcounter: raw event %q: config %q is not hexadecimal (rNNNN, e.g. r00c0)", name, name[1:])
	}
	return Event{}, fmt.Errorf("hwcounter: unknown event %q: valid events are %s, and rNNNN (raw PMU event, hex config)", name, strings.Join(EventNames(), ", "))
}

// ParseEvents parses each name with ParseEvent and rejects an empty list and
// duplicates (two names for the same event, e.g. "cs" and "context-switches").
func ParseEvents(names []string) ([]Event, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("hwcounter: no events given")
	}
	events := make([]Event, 0, len(names))
	for i, name := range names {
		e, err := ParseEvent(name)
		if err != nil {
			return nil, err
		}
		for j, prev := range events {
			if prev.Type == e.Type && prev.Config == e.Config {
				return nil, fmt.Errorf("hwcounter: event %q (position %d) repeats %q (position %d)", name, i+1, names[j], j+1)
			}
		}
		events = append(events, e)
	}
	return events, nil
}

// ParseList parses a comma-separated list of event names, as in HMB_METRICS
// ("cycles, instructions,page-faults"). Spaces around names are ignored. An
// empty or all-blank list means no events and returns nil, nil; an empty name
// inside the list (",," or a trailing comma) is an error.
func ParseList(list string) ([]Event, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	parts := strings.Split(list, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if parts[i] == "" {
			return nil, fmt.Errorf("hwcounter: event list %q: empty name at position %d", list, i+1)
		}
	}
	return ParseEvents(parts)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isHexPrefixed reports whether s starts with a hex digit: "r12g4" is a
// mistyped raw event, while "rx" is just an unknown name.
func isHexPrefixed(s string) bool {
	return s != "" && isHex(s[:1])
}
