package encode

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// EnterFast and LeaveFast must write what the general encoder writes, and
// leave the Encoder as it does, whenever they write at all. Three encoders
// take the same random streams, every technique set: the general one
// (enterSlow and leaveSlow, which hold every form), Enter and Leave, and
// the fast path with Enter and Leave for what it declines, as the probes
// call it. The streams are randomLoopStream's, with times that go back now
// and then and, for some, start so close to 1<<64 that deltas wrap.
func TestFastPathWritesWhatEnterAndLeaveWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	for _, tech := range allTechniqueSets() {
		var fastBytes int
		for trial := 0; trial < 40; trial++ {
			recs := randomLoopStream(rng, 2+rng.IntN(600))
			if trial%8 == 7 {
				base := uint64(math.MaxUint64 - 1<<10 - rng.Uint64N(1<<9))
				first := recs[0].Time
				for i := range recs {
					recs[i].Time = base + (recs[i].Time-first)%(1<<10)
				}
			}
			for i := range recs {
				switch {
				case rng.IntN(50) == 0 && recs[i].Time > 600:
					recs[i].Time -= uint64(1 + rng.IntN(600)) // earlier than the previous record
				case trial%8 == 7 && rng.IntN(20) == 0:
					recs[i].Time = rng.Uint64N(1 << 9) // earlier, by a difference that wraps below 512
				}
			}
			open := uint32(rng.IntN(4))
			general, public, fast := NewEncoder(tech), NewEncoder(tech), NewEncoder(tech)
			var bg, bp, bf [MaxEnterLeaveSize + 16]byte // as a bin's tail: more room than a record needs
			general.StartBin(bg[:], recs[0].Time, open)
			public.StartBin(bp[:], recs[0].Time, open)
			fast.StartBin(bf[:], recs[0].Time, open)
			for i, r := range recs {
				if rng.IntN(100) == 0 { // a bin starts anew
					open = uint32(rng.IntN(4))
					general.StartBin(bg[:], r.Time, open)
					public.StartBin(bp[:], r.Time, open)
					fast.StartBin(bf[:], r.Time, open)
				}
				var ng, np, nf int
				switch r.Kind {
				case KindEnter:
					ng = general.enterSlow(bg[:], r.Time, r.Seq, r.Region)
					np = public.Enter(bp[:], r.Time, r.Seq, r.Region)
					if nf = fast.EnterFast((*[2]byte)(bf[:]), r.Time, r.Seq, r.Region); nf != 0 {
						fastBytes += nf
					} else {
						nf = fast.Enter(bf[:], r.Time, r.Seq, r.Region)
					}
				case KindLeave:
					ng = general.leaveSlow(bg[:], r.Time, r.Seq)
					np = public.Leave(bp[:], r.Time, r.Seq)
					if nf = fast.LeaveFast((*[2]byte)(bf[:]), r.Time, r.Seq); nf != 0 {
						fastBytes += nf
					} else {
						nf = fast.Leave(bf[:], r.Time, r.Seq)
					}
				}
				if !bytes.Equal(bg[:ng], bp[:np]) || !bytes.Equal(bg[:ng], bf[:nf]) {
					t.Fatalf("%v, trial %d, record %d %+v: general % x, Enter/Leave % x, fast path % x",
						tech, trial, i, r, bg[:ng], bp[:np], bf[:nf])
				}
				if public != general || fast != general {
					t.Fatalf("%v, trial %d, record %d %+v: encoders differ after it:\ngeneral %+v\npublic  %+v\nfast    %+v",
						tech, trial, i, r, general, public, fast)
				}
			}
		}
		// The fast path must have written records where it can, or the
		// comparison proves nothing; it can with Predict's set, whose
		// deltas above 0 SplitTiming does not change.
		if tech&predictOn == predictOn && fastBytes == 0 {
			t.Errorf("%v: the fast path wrote nothing", tech)
		}
		if tech&predictOn != predictOn && fastBytes != 0 {
			t.Errorf("%v: the fast path wrote %d bytes without Predict's set", tech, fastBytes)
		}
	}
}

// Neither allocates, and each writes its short form into the first byte
// of the two it is given and its long form into both, nothing beyond.
func TestFastPathTwoBytes(t *testing.T) {
	e := NewEncoder(All)
	var b [32]byte
	e.StartBin(b[:], 1000, 7)
	at := len(b) - 2 // the last two bytes: a write past them would fail the test of the rest
	for i := range b {
		b[i] = 0xee
	}
	if n := e.EnterFast((*[2]byte)(b[at:]), 1001, 0, 7); n != 1 || b[at] != TokPredEnter|1 || b[at+1] != 0xee {
		t.Errorf("EnterFast: %d, % x; want 1 byte %x", n, b[at:], TokPredEnter|1)
	}
	if n := e.LeaveFast((*[2]byte)(b[at:]), 1001+0x100, 0); n != 2 || b[at] != TokPredLeave12|1 || b[at+1] != 0 {
		t.Errorf("LeaveFast: %d, % x; want 2 bytes %x 00", n, b[at:], TokPredLeave12|1)
	}
	for i := 0; i < at; i++ {
		if b[i] != 0xee {
			t.Fatalf("byte %d written", i)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		tm := e.Time()
		e.EnterFast((*[2]byte)(b[:]), tm+20, 0, 7)
		e.LeaveFast((*[2]byte)(b[:]), tm+200, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per enter and leave", allocs)
	}
}
