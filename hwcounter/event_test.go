package hwcounter

import (
	"strings"
	"testing"
)

func TestParseEventNames(t *testing.T) {
	cases := []struct {
		in   string
		want Event
	}{
		{"cycles", Event{"cycles", TypeHardware, 0}},
		{"cpu-cycles", Event{"cycles", TypeHardware, 0}},
		{"CYCLES", Event{"cycles", TypeHardware, 0}},
		{"instructions", Event{"instructions", TypeHardware, 1}},
		{"cache-references", Event{"cache-references", TypeHardware, 2}},
		{"cache-misses", Event{"cache-misses", TypeHardware, 3}},
		{"branch-instructions", Event{"branch-instructions", TypeHardware, 4}},
		{"branches", Event{"branch-instructions", TypeHardware, 4}},
		{"branch-misses", Event{"branch-misses", TypeHardware, 5}},
		{"ref-cycles", Event{"ref-cycles", TypeHardware, 9}},
		{"cpu-clock", Event{"cpu-clock", TypeSoftware, 0}},
		{"task-clock", Event{"task-clock", TypeSoftware, 1}},
		{"page-faults", Event{"page-faults", TypeSoftware, 2}},
		{"faults", Event{"page-faults", TypeSoftware, 2}},
		{"context-switches", Event{"context-switches", TypeSoftware, 3}},
		{"cs", Event{"context-switches", TypeSoftware, 3}},
		{"cpu-migrations", Event{"cpu-migrations", TypeSoftware, 4}},
		{"migrations", Event{"cpu-migrations", TypeSoftware, 4}},
		{"minor-faults", Event{"minor-faults", TypeSoftware, 5}},
		{"major-faults", Event{"major-faults", TypeSoftware, 6}},
		{"r00c0", Event{"rc0", TypeRaw, 0xc0}},
		{"R1A8", Event{"r1a8", TypeRaw, 0x1a8}},
		{"r0", Event{"r0", TypeRaw, 0}},
		{"rffffffffffffffff", Event{"rffffffffffffffff", TypeRaw, ^uint64(0)}},
	}
	for _, c := range cases {
		got, err := ParseEvent(c.in)
		if err != nil {
			t.Errorf("ParseEvent(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseEvent(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseEventErrors(t *testing.T) {
	cases := []struct {
		in       string
		contains []string
	}{
		{"", []string{"empty event name"}},
		{"cylces", []string{`unknown event "cylces"`, "cycles, instructions", "task-clock", "ref-cycles", "rNNNN"}},
		{"cycles:u", []string{`"cycles:u"`, `modifier ":u"`, "perf_event_paranoid"}},
		{"cpu/event=0x3c/", []string{"PMU-qualified", "rNNNN"}},
		{"r12g4", []string{`raw event "r12g4"`, `"12g4" is not hexadecimal`}},
		{"r12345678901234567", []string{"17 hex digits", "at most 16"}},
		{"r", []string{`unknown event "r"`}},
		{" cycles", []string{`unknown event " cycles"`}},
	}
	for _, c := range cases {
		_, err := ParseEvent(c.in)
		if err == nil {
			t.Errorf("ParseEvent(%q) succeeded, want an error", c.in)
			continue
		}
		for _, s := range c.contains {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("ParseEvent(%q) error %q does not mention %q", c.in, err, s)
			}
		}
	}
}

func TestEventNamesAllParse(t *testing.T) {
	names := EventNames()
	if len(names) != len(namedEvents) {
		t.Fatalf("EventNames returned %d names, table has %d", len(names), len(namedEvents))
	}
	seen := map[[2]uint64]string{}
	for _, n := range names {
		e, err := ParseEvent(n)
		if err != nil || e.Name != n {
			t.Errorf("ParseEvent(%q) = %+v, %v; want the canonical event back", n, e, err)
		}
		key := [2]uint64{uint64(e.Type), e.Config}
		if prev, dup := seen[key]; dup {
			t.Errorf("%q and %q have the same type and config", prev, n)
		}
		seen[key] = n
	}
}

func TestEventKinds(t *testing.T) {
	for _, c := range []struct {
		name       string
		hardware   bool
		kernelOnly bool
	}{
		{"cycles", true, false}, {"r1a8", true, false}, {"task-clock", false, false},
		{"page-faults", false, false}, {"context-switches", false, true}, {"cpu-migrations", false, true},
	} {
		e, err := ParseEvent(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if e.Hardware() != c.hardware || e.kernelOnly() != c.kernelOnly {
			t.Errorf("%s: Hardware=%v kernelOnly=%v, want %v %v", c.name, e.Hardware(), e.kernelOnly(), c.hardware, c.kernelOnly)
		}
	}
}

func TestParseList(t *testing.T) {
	evs, err := ParseList(" cycles, instructions ,page-faults,r1a8")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "cycles,instructions,page-faults,r1a8" {
		t.Errorf("ParseList names = %s", got)
	}
	if evs, err := ParseList("  "); evs != nil || err != nil {
		t.Errorf(`ParseList("  ") = %v, %v; want nil, nil`, evs, err)
	}
	for in, want := range map[string]string{
		"cycles,,instructions": "empty name at position 2",
		"cycles,":              "empty name at position 2",
		"cs,context-switches":  `"context-switches" (position 2) repeats "cs" (position 1)`,
		"r1a8,R01A8":           `"R01A8" (position 2) repeats "r1a8" (position 1)`,
		"cycles,bogus":         `unknown event "bogus"`,
	} {
		_, err := ParseList(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseList(%q) error = %v, want it to mention %q", in, err, want)
		}
	}
	if _, err := ParseEvents(nil); err == nil || !strings.Contains(err.Error(), "no events") {
		t.Errorf("ParseEvents(nil) error = %v, want 'no events'", err)
	}
}
