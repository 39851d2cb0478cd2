package hwcounter

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseEvent: any input either parses to an event whose canonical name
// parses back to the same event, or fails with an error quoting the input.
func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{"cycles", "CPU-CYCLES", "cs", "r00c0", "R1A8", "r", "r12g4", "cycles:u",
		"cpu/event=0x3c/", "rffffffffffffffff", "r1ffffffffffffffff", "", " task-clock", "ref-cycles", "rabbit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		e, err := ParseEvent(name)
		if err != nil {
			if name != "" && !strings.Contains(err.Error(), strconv.Quote(name)) {
				t.Fatalf("error %q does not name the input %q", err, name)
			}
			return
		}
		back, err := ParseEvent(e.Name)
		if err != nil || back != e {
			t.Fatalf("%q parsed to %+v, whose name parses to %+v, %v", name, e, back, err)
		}
		if e.Type != TypeHardware && e.Type != TypeSoftware && e.Type != TypeRaw {
			t.Fatalf("%q parsed to type %d", name, e.Type)
		}
	})
}

// FuzzParseList: a list that parses has no duplicate events and as many
// events as names.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"cycles,instructions", " cycles , page-faults ", "cs,context-switches", ",", "cycles,,x", "", "r1a8,R01A8,task-clock"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		evs, err := ParseList(list)
		if err != nil {
			return
		}
		if strings.TrimSpace(list) == "" {
			if evs != nil {
				t.Fatalf("blank list %q gave %v", list, evs)
			}
			return
		}
		if len(evs) != strings.Count(list, ",")+1 {
			t.Fatalf("%q gave %d events", list, len(evs))
		}
		for i := range evs {
			for j := i + 1; j < len(evs); j++ {
				if evs[i].Type == evs[j].Type && evs[i].Config == evs[j].Config {
					t.Fatalf("%q: duplicate events %v and %v accepted", list, evs[i], evs[j])
				}
			}
		}
	})
}

// FuzzDecodeGroupRead: arbitrary bytes from read() never panic, and a
// decode that succeeds matches the kernel's layout.
func FuzzDecodeGroupRead(f *testing.F) {
	f.Add(groupReadBytes(1, 10, 10, 5), uint8(1))
	f.Add(groupReadBytes(3, 200, 100, 10, 20, 30), uint8(3))
	f.Add(groupReadBytes(2, 1, 0, 1, 2), uint8(2))
	f.Add([]byte{1, 2, 3}, uint8(0))
	f.Fuzz(func(t *testing.T, buf []byte, n uint8) {
		dst := make([]uint64, n%32)
		s, err := decodeGroupRead(buf, dst)
		if err != nil {
			return
		}
		if len(buf) != groupReadSize(len(dst)) || binary.NativeEndian.Uint64(buf) != uint64(len(dst)) {
			t.Fatalf("accepted %d bytes for %d events", len(buf), len(dst))
		}
		for i := range dst {
			raw := binary.NativeEndian.Uint64(buf[groupReadHeader+8*i:])
			if dst[i] != bigScale(raw, s.Enabled, s.Running) {
				t.Fatalf("value %d: raw %d scaled to %d with %+v", i, raw, dst[i], s)
			}
		}
	})
}

// FuzzPageValues: any page content (as a kernel bug or a torn read might
// leave it) yields values without panicking, and scaling matches arbitrary
// precision.
func FuzzPageValues(f *testing.F) {
	f.Add(uint32(5), int64(10000), uint64(100), uint64(50), uint64(rdpmcCaps|capUserTime), packWidthShiftMult(48, 10, 1000), uint64(0), uint64(0), uint64(0), uint64(0xFFFF_FFFF_FC18), uint64(4000))
	f.Add(uint32(0), int64(-1), uint64(0), uint64(0), uint64(0xFFFF_FFFF_FFFF_FFFF), packWidthShiftMult(0, 200, 0xFFFFFFFF), uint64(1), uint64(2), uint64(3), uint64(4), uint64(5))
	f.Fuzz(func(t *testing.T, index uint32, offset int64, enabled, running, caps, wsm, timeOffset, timeCycles, timeMask, pmc, cyc uint64) {
		s := pageSnapshot{index: index, offset: offset, enabled: enabled, running: running, caps: caps,
			pmcWidth: uint16(wsm), timeShift: uint16(wsm >> 16), timeMult: uint32(wsm >> 32),
			timeOffset: timeOffset, timeCycles: timeCycles, timeMask: timeMask, pmc: pmc, cyc: cyc}
		c, e, r := s.values()
		if caps&capUserTime == 0 && (e != enabled || r != running) {
			t.Fatalf("times changed without cap_user_time: %d %d", e, r)
		}
		if got, want := scaleCount(c, e, r), bigScale(c, e, r); got != want {
			t.Fatalf("scaleCount(%d, %d, %d) = %d, want %d", c, e, r, got, want)
		}
	})
}
