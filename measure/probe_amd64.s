//go:build amd64 && !race

#include "textflag.h"
#include "go_asm.h"
#include "probe_amd64.h"

// The common case of enterAt and leaveAt (location.go) with the clock read,
// step for step and byte for byte: probe_amd64.go says why it is written
// here. Every test comes before the first store but the busy mark, which a
// failed test clears before the jump to Go, so that Go redoes the probe
// from the start, with the time read here (t) or 0 before the read.
// An event of a closed depth is counted as dropped here too (Level.Drop,
// for the reason ByDepth; any other reason is Go's), so that such a probe
// costs no more than one whose event is kept (issue 23).
// Registers: DI the location, SI the region, BX its profile entry's page
// and R14 the entry's offset in it, which every access adds (a page's
// entries start it, TestProbeAsmLayout: the entry's address would take an
// instruction more; an ABI0 function may use R14, which Go reloads after
// the call), R8 the level, R9 its hierarchy, DX the clock's time (where
// RDTSC leaves its high half, so that no move joins the halves), R12 that
// time clamped, AX reduced, R13 the leave's frame and the enter's bin
// position, R11 the enter's new depth.

// PROBE_ARGS loads the probes' arguments: the location in DI, the region
// in SI.
#define PROBE_ARGS \
	MOVQ	l+0(FP), DI; \
	MOVL	r+8(FP), SI

// OFF_ENTER and OFF_LEAVE test the profile entry at BX+R14 for PROBE_PRELUDE:
// the enter's region measured and of the plain class in one 16-bit compare
// (off and class are adjacent bytes, TestProbeAsmLayout), the leave's
// measured (its class is its frame's, which it compares whole).
#define OFF_ENTER CMPW	profEntry_off(BX)(R14*1), $(const_offNone|(CLASS_REGION<<8))
#define OFF_LEAVE CMPB	profEntry_off(BX)(R14*1), $const_offNone

// PROBE_PRELUDE is the start all probes share, after PROBE_ARGS: the
// region's profile entry at BX+R14 as enterAt and leaveAt find it (tested by
// offtest, OFF_ENTER or OFF_LEAVE: else notread), tsc set and general
// clear in one test (TestProbeAsmLayout: adjacent), then the clock in DX,
// read first so that the rest runs while the read is under way.
#define PROBE_PRELUDE(offtest) \
	MOVL	SI, AX; \
	SHRL	$const_profPageBits, AX; \
	CMPQ	AX, (probeState_prof+8)(DI); \
	JCC	notread; \
	MOVQ	probeState_prof(DI), BX; \
	MOVQ	(BX)(AX*8), BX; \
	TESTQ	BX, BX; \
	JEQ	notread; \
	MOVL	SI, R14; \
	ANDL	$(const_profPageSize-1), R14; \
	IMUL3Q	$profEntry__size, R14, R14; \
	offtest; \
	JNE	notread; \
	CMPW	probeState_tsc(DI), $1; \
	JNE	notread; \
	RDTSC; \
	SHLQ	$32, DX; \
	ORQ	AX, DX

// A frame's region, state, counted and class are one 8-byte word
// (TestProbeAsmLayout), which the probes write and compare whole: for
// region SI (zero-extended) of the class region, counted clear, it is SI
// itself in the state frameDropped (0) and SI with bit FRAME_WRITTEN set
// in the state frameWritten (2, at bit 32), one instruction (BTSQ) where
// or-ing the word's constant half took two (TestProbeAsmLayout asserts
// these values).
#define FRAME_WRITTEN 33

// FRAME_PUSH writes the frame at fr: start the time (R12), child 0, then
// the word of region, state, counted and class, which SI holds. (One
// 16-byte store of start and child, from X0, made the defer form's ratio
// to a pair 0.5 % worse and the pair no faster: not kept.)
#define FRAME_PUSH(fr) \
	MOVQ	R12, frame_start(fr); \
	MOVQ	$0, frame_child(fr); \
	MOVQ	SI, frame_region(fr)

// LEVEL_AT puts the level cached at depth idx in R8; an empty slot goes
// to read.
#define LEVEL_AT(idx) \
	MOVQ	probeState_levels(DI), R8; \
	MOVQ	(R8)(idx*8), R8; \
	TESTQ	R8, R8; \
	JEQ	read

// LEVEL_BEGIN is what the enter and the leave do once their level is in
// R8 and the hierarchy in R9: Hierarchy.Begin (the busy mark, then the
// epoch unchanged, else busy) and the stamp (the time in DX clamped to the
// last one in R12, reduced in AX). CX is overwritten.
#define LEVEL_BEGIN \
	MOVL	$1, HIER_busy(R9); \
	MOVQ	probeState_pool(DI), R10; \
	MOVQ	POOL_epoch(R10), R10; \
	CMPQ	R10, probeState_epoch(DI); \
	JNE	busy; \
	MOVQ	probeState_last(DI), R12; \
	CMPQ	DX, R12; \
	CMOVQHI	DX, R12; \
	MOVQ	R12, AX; \
	MOVBLZX	probeState_shift(DI), CX; \
	SHRQ	CX, AX

// ENTER_STORES is the written enter's stores once every test passed, but
// the record and Level.Advance, which follow it; it leaves the bin in R11.
// ENTER_BODY expands it once for each record's length, so that one test
// of the difference both bounds it and chooses the record.
#define ENTER_STORES \
	MOVQ	R12, probeState_last(DI); \
	MOVQ	AX, probeState_lastTR(DI); \
	MOVL	$0, probeState_run(DI); \
	INCQ	probeState_recorded(DI); \
	/* The frame in DX: the clock's time is not needed past the tests. */ \
	IMUL3Q	$frame__size, R11, DX; \
	ADDQ	probeState_stack(DI), DX; \
	/* SI becomes the frame's word: the region is not needed past here. */ \
	BTSQ	$FRAME_WRITTEN, SI; \
	FRAME_PUSH(DX); \
	MOVQ	R11, probeState_depth(DI); \
	INCQ	profEntry_visits(BX)(R14*1); \
	INCL	profEntry_active(BX)(R14*1); \
	MOVQ	AX, LEVEL_time(R8); \
	MOVL	$1, LEVEL_next(R8); \
	MOVQ	LEVEL_bin(R8), R11

// ENTER_BODY is the rest of enterProbe, after PROBE_PRELUDE, with the
// location in DI, the region in SI (its low half), the profile entry at
// BX+R14 and the clock in DX: the cases it does not do go to the labels
// busy (the busy mark set) and read (the time read), which each TEXT
// that expands it defines, as it defines how its frame hands l, r and t
// to enterSlow.
#define ENTER_BODY \
	/* A plain region (the prelude tested its class), whose level at */ \
	/* the new depth is cached. */ \
	MOVQ	probeState_depth(DI), R11; \
	INCQ	R11; \
	/* A depth within the levels' cache is within the stack, which is */ \
	/* never shorter (newLocation): one test for both. */ \
	CMPQ	R11, (probeState_levels+8)(DI); \
	JCC	read; \
	LEVEL_AT(R11); \
	MOVQ	probeState_h(DI), R9; \
	LEVEL_BEGIN; \
	CMPQ	R11, probeState_limit(DI); \
	JGE	enterdrop; \
	/* Room for the enter and its leave in the bin, the bin's position */ \
	/* kept in R13 for the record, which thus loads it once. */ \
	MOVQ	LEVEL_pos(R8), R13; \
	LEAQ	(2*MAX_ENTER_LEAVE)(R13), R10; \
	CMPQ	R10, (LEVEL_bin+8)(R8); \
	JGT	busy; \
	/* A reduced time equal to the last one takes a sequence number, */ \
	/* which the short records do not carry. */ \
	CMPQ	AX, probeState_lastTR(DI); \
	JEQ	busy; \
	/* encode.Encoder.EnterFast: later than the level's last record by 1 */ \
	/* to (1<<9)-1 (a difference of 0 or less wraps past the bound), and */ \
	/* the region the level entered last. EnterFast's test of region 0 is */ \
	/* the profile's: its entry is never measured (Location.define). R10 */ \
	/* is the difference less 1, which takes one instruction fewer than */ \
	/* the difference and its test; the record adds the 1 back. */ \
	LEAQ	-1(AX), R10; \
	SUBQ	LEVEL_time(R8), R10; \
	CMPL	SI, LEVEL_pred(R8); \
	JNE	busy; \
	/* A difference of 1 to 15, the one-byte record's, falls through: */ \
	/* one test for the range and the record's choice. At the default */ \
	/* timer resolution an enter that follows its level's last leave as */ \
	/* closely as BenchmarkProbeOverClock's do takes it (1.0 bytes an */ \
	/* event in BenchmarkEnterLeave; under callgrind's slowdown, two). */ \
	CMPQ	R10, $(16-1); \
	JCC	enter2; \
	ENTER_STORES; \
	/* The token's low 4 bits are clear (TestProbeAsmLayout): adding */ \
	/* the difference is or-ing it. */ \
	ADDL	$(TOK_PRED_ENTER+1), R10; \
	MOVB	R10, (R11)(R13*1); \
	INCQ	R13; \
advance:; \
	/* Level.Advance: the position, the count, the fill mark after the */ \
	/* bytes, then the busy mark cleared. */ \
	MOVQ	R13, LEVEL_pos(R8); \
	INCL	LEVEL_n(R8); \
	MOVQ	LEVEL_mark(R8), R11; \
	MOVL	R13, (R11); \
	MOVL	$0, HIER_busy(R9); \
	RET; \
enter2:; \
	/* The two-byte record, for a difference up to (1<<9)-1, with the */ \
	/* stores of its own copy. Its bytes, the token or-ed with the */ \
	/* difference's bit 8 (added: the token's bit 0 is clear, */ \
	/* TestProbeAsmLayout), then the difference's low byte, are the */ \
	/* 16-bit word token<<8 + difference with its bytes swapped: one */ \
	/* store. */ \
	CMPQ	R10, $((1<<9)-1); \
	JCC	busy; \
	ENTER_STORES; \
	LEAL	((TOK_PRED_ENTER_SLOT<<8)+1)(R10), CX; \
	ROLW	$8, CX; \
	MOVW	CX, (R11)(R13*1); \
	ADDQ	$2, R13; \
	JMP	advance; \
enterdrop:; \
	/* A closed depth: the frame, dropped, and the drop counted, where */ \
	/* Level.Drop's reason is ByDepth (recording not stopped, the pool not */ \
	/* finalized, the level's depth at its class's limit or deeper). */ \
	CMPB	HIER_Stopped(R9), $0; \
	JNE	busy; \
	CMPB	HIER_Final(R9), $0; \
	JNE	busy; \
	MOVQ	LEVEL_limit(R8), R10; \
	MOVQ	(R10), R10; \
	CMPQ	LEVEL_depth(R8), R10; \
	JLT	busy; \
	MOVQ	R12, probeState_last(DI); \
	CMPQ	AX, probeState_lastTR(DI); \
	JNE	entertick; \
	INCL	probeState_run(DI); \
	JMP	enterstamped; \
entertick:; \
	MOVQ	AX, probeState_lastTR(DI); \
	MOVL	$0, probeState_run(DI); \
enterstamped:; \
	INCQ	probeState_recorded(DI); \
	IMUL3Q	$frame__size, R11, DX; \
	ADDQ	probeState_stack(DI), DX; \
	FRAME_PUSH(DX); \
	MOVQ	R11, probeState_depth(DI); \
	INCQ	profEntry_visits(BX)(R14*1); \
	INCL	profEntry_active(BX)(R14*1); \
	INCQ	(LEVEL_Dropped+8*BY_DEPTH)(R8); \
	MOVL	$0, HIER_busy(R9); \
	RET

// func enterProbe(l *Location, r Region) (t uint64)
TEXT ·enterProbe(SB), NOSPLIT|NOFRAME, $0-24
	PROBE_ARGS
	PROBE_PRELUDE(OFF_ENTER)
	ENTER_BODY
busy:
	MOVL	$0, HIER_busy(R9)
read:
	MOVQ	DX, t+16(FP)
	JMP	·enterSlow(SB)
notread:
	MOVQ	$0, t+16(FP)
	JMP	·enterSlow(SB)

// LEAVE_LEVEL is the part of leaveProbe both its written and its dropped
// enter's leave do, with the depth in CX, the hierarchy in R9 and the
// frame in R13.
#define LEAVE_LEVEL \
	LEVEL_AT(CX); \
	LEVEL_BEGIN

// RULE is throttleDue for the leave, with the region's long calls in SI
// and its visits in CX: a region it switches off goes to due, one it
// keeps to kept (early is a label of its own). From thrCalls visits on,
// which are at least thrEarly (TestProbeAsmLayout), the late step's share
// alone decides, as the early step's smaller share implies it; before,
// the early step's.
#define RULE(kept, early) \
	CMPQ	CX, probeState_thrCalls(DI); \
	JCS	early; \
	MOVQ	SI, R9; \
	SHLQ	$const_throttleLateShift, R9; \
	CMPQ	R9, CX; \
	JLS	due; \
	MOVQ	probeState_h(DI), R9; \
	JMP	kept; \
early:; \
	MOVQ	SI, R9; \
	SHLQ	$const_throttleEarlyShift, R9; \
	CMPQ	R9, CX; \
	JLS	due; \
	MOVQ	probeState_h(DI), R9; \
	JMP	kept

// LEAVE_PROFILE is the leave's flat profile, with the call's time in R11,
// and the rest of its bookkeeping but the stamp's reduced time and the
// record: the last open call of the region counts its inclusive time and
// whether it was long, and a region the rule of throttle.go would switch
// off goes to Go. The open calls are decremented in place, which tests
// them against 1 too: the last one's leave leaves 0, a recursive call's
// inner leave goes out of line (inner), so no register carries the count
// and no compare is needed; the rule's way to Go (due) increments them
// back, so that Go finds the entry as it was. A long call
// (R11 >= thrTicks) is counted out of line, at long: a short one neither
// loads nor stores the count (a store fewer on the common path was
// 0.1-0.2 ns an event). A region visited thrEarly times or more (never,
// with throttling off) has the rule tested out of line. The written leave
// (once for each record's length) and the dropped one expand it each,
// with labels of their own, so that none tests the frame's state or the
// difference again to know which it is (the out-of-line paths, shared,
// do).
#define LEAVE_PROFILE(keep, counted) \
	MOVQ	R12, R11; \
	SUBQ	frame_start(R13), R11; \
	DECL	profEntry_active(BX)(R14*1); \
	JNE	inner; \
	CMPQ	R11, probeState_thrTicks(DI); \
	JCC	long; \
	MOVQ	profEntry_visits(BX)(R14*1), CX; \
	CMPQ	CX, probeState_thrEarly(DI); \
	JCC	shortrule; \
keep:; \
	ADDQ	R11, profEntry_incl(BX)(R14*1); \
counted:; \
	/* The call's time into the caller's child time, then, less its */ \
	/* own child time, into the exclusive time, in R11 itself (no copy). */ \
	ADDQ	R11, (frame_child-frame__size)(R13); \
	SUBQ	frame_child(R13), R11; \
	ADDQ	R11, profEntry_excl(BX)(R14*1); \
	DECQ	probeState_depth(DI); \
	INCQ	probeState_recorded(DI); \
	MOVQ	R12, probeState_last(DI)

// LEAVE_STAMP is the written leave's stores after LEAVE_PROFILE but the
// record and Level.Advance: the stamp, whose reduced time differs from
// the last (tested), and the encoder's state. It leaves the bin in R11.
#define LEAVE_STAMP \
	MOVQ	AX, probeState_lastTR(DI); \
	MOVL	$0, probeState_run(DI); \
	MOVQ	AX, LEVEL_time(R8); \
	MOVL	$1, LEVEL_next(R8); \
	MOVQ	LEVEL_bin(R8), R11

// func leaveProbe(l *Location, r Region) (t uint64)
TEXT ·leaveProbe(SB), NOSPLIT|NOFRAME, $0-24
	PROBE_ARGS
	PROBE_PRELUDE(OFF_LEAVE)
	// Another goroutine inside a probe of this lane: Go counts it.
	MOVQ	probeState_h(DI), R9
	CMPL	HIER_busy(R9), $0
	JNE	read
	// The region on top, of a plain class, with no counters, its enter
	// written (dropped: out of line, at notwritten), its level cached. At
	// depth 0 the frame is the sentinel, whose region 0 is never measured
	// (Location.define): the test of the region covers it. A depth within
	// the levels' cache is within the stack, which is never shorter
	// (newLocation): one test for both.
	MOVQ	probeState_depth(DI), CX
	CMPQ	CX, (probeState_levels+8)(DI)
	JCC	read
	IMUL3Q	$frame__size, CX, R13
	ADDQ	probeState_stack(DI), R13
	// The region, the state, counted and the class in one compare: SI
	// becomes the frame's word (Go reads the region from r).
	BTSQ	$FRAME_WRITTEN, SI
	CMPQ	SI, frame_region(R13)
	JNE	notwritten
	LEAVE_LEVEL
	// Room for the leave in the bin, the bin's position kept in SI for
	// the record (the region is not needed past the frame's test; the
	// out-of-line paths that take SI load the position again).
	MOVQ	LEVEL_pos(R8), SI
	LEAQ	MAX_ENTER_LEAVE(SI), R10
	CMPQ	R10, (LEVEL_bin+8)(R8)
	JGT	busy
	CMPB	LEVEL_tech(R8), $TECH_ALL
	JNE	busy
	CMPQ	AX, probeState_lastTR(DI)
	JEQ	busy
	// encode.Encoder.LeaveFast: later by 1 to (1<<12)-1, the difference
	// in R10. One of 1 to 0x7f, the one-byte record's, falls through: one
	// test for the range and the record's choice (the two-byte record's
	// leave, at leave2, has the profile and the stores of its own copy).
	MOVQ	AX, R10
	SUBQ	LEVEL_time(R8), R10
	LEAQ	-1(R10), CX
	CMPQ	CX, $(0x80-1)
	JCC	leave2
	LEAVE_PROFILE(keep, counted)
	LEAVE_STAMP
	// The one-byte leave is its difference: TOK_PRED_LEAVE is 0
	// (TestProbeAsmLayout).
	MOVB	R10, (R11)(SI*1)
	INCQ	SI
advance:
	MOVQ	SI, LEVEL_pos(R8)
	INCL	LEVEL_n(R8)
	MOVQ	LEVEL_mark(R8), R11
	MOVL	SI, (R11)
	MOVL	$0, HIER_busy(R9)
	RET
leave2:
	// Out of line: the two-byte record, as the enter's (the token's low 4
	// bits are clear, TestProbeAsmLayout).
	CMPQ	CX, $((1<<12)-1)
	JCC	busy
	LEAVE_PROFILE(keep2, counted2)
	LEAVE_STAMP
	LEAL	(TOK_PRED_LEAVE12<<8)(R10), CX
	ROLW	$8, CX
	MOVW	CX, (R11)(SI*1)
	ADDQ	$2, SI
	JMP	advance
long:
	// The long calls with this one in SI, stored once the rule (if due
	// to be tested) keeps the region: one it switches off goes to Go,
	// which counts the call again from the start.
	MOVQ	profEntry_longCalls(BX)(R14*1), SI
	INCQ	SI
	MOVQ	profEntry_visits(BX)(R14*1), CX
	CMPQ	CX, probeState_thrEarly(DI)
	JCS	longkeep
	RULE(longkeep, longearly)
longkeep:
	MOVQ	SI, profEntry_longCalls(BX)(R14*1)
	JMP	shortkeep
shortrule:
	MOVQ	profEntry_longCalls(BX)(R14*1), SI
	RULE(shortkeep, shortearly)
shortkeep:
	// Back to the profile's copy this leave came from: the dropped
	// leave's, else the one of the record's length (the difference in R10).
	MOVQ	LEVEL_pos(R8), SI
	CMPB	frame_state(R13), $const_frameWritten
	JNE	dkeep
	CMPQ	R10, $0x80
	JCS	keep
	JMP	keep2
inner:
	CMPB	frame_state(R13), $const_frameWritten
	JNE	dcounted
	CMPQ	R10, $0x80
	JCS	counted
	JMP	counted2
leavedrop:
	// Level.Drop for the reason ByDepth, as enterdrop, then the profile
	// and the stamp, whose reduced time may equal the last.
	CMPB	HIER_Stopped(R9), $0
	JNE	busy
	CMPB	HIER_Final(R9), $0
	JNE	busy
	MOVQ	LEVEL_limit(R8), R10
	MOVQ	(R10), R10
	CMPQ	LEVEL_depth(R8), R10
	JLT	busy
	LEAVE_PROFILE(dkeep, dcounted)
	CMPQ	AX, probeState_lastTR(DI)
	JEQ	leavesame
	MOVQ	AX, probeState_lastTR(DI)
	MOVL	$0, probeState_run(DI)
	JMP	droppedcount
leavesame:
	INCL	probeState_run(DI)
droppedcount:
	INCQ	(LEVEL_Dropped+8*BY_DEPTH)(R8)
	MOVL	$0, HIER_busy(R9)
	RET
notwritten:
	// Out of line: the leave of an enter dropped for its closed depth (not
	// at the depth whose enter found no bin).
	BTRQ	$FRAME_WRITTEN, SI
	CMPQ	SI, frame_region(R13)
	JNE	read
	CMPQ	CX, probeState_lostAt(DI)
	JEQ	read
	LEAVE_LEVEL
	JMP	leavedrop
due:
	INCL	profEntry_active(BX)(R14*1)
	MOVQ	probeState_h(DI), R9
busy:
	MOVL	$0, HIER_busy(R9)
read:
	MOVQ	DX, t+16(FP)
	JMP	·leaveSlow(SB)
notread:
	// A Span's outermost region (spanOuter set, which puts it past every
	// profile page) on a goroutine's lane goes to endOutermost, with the
	// bit cleared; on another lane it is a usage error, leaveAt's.
	TESTL	SI, SI
	JPL	plain
	CMPB	(Location_lane+laneState_byKey)(DI), $0
	JNE	outermost
plain:
	MOVQ	$0, t+16(FP)
	JMP	·leaveSlow(SB)
outermost:
	BTRL	$31, SI // spanOuter
	MOVL	SI, r+8(FP)
	JMP	·endOutermost(SB)

// func laneEnter(tab *[laneSlots]atomic.Pointer[Location], r Region) (t uint64, l *Location)
// StartRegion's common case in one call: the running goroutine's lane,
// found in the measurement's table (laneSlot's bits of the g's address,
// which goroutine.Key reads), active for that goroutine, then enterProbe
// on it. The lane goes in the first argument's slot, which enterProbe and
// enterSlow read as their l, and in l; a goroutine with no active lane in
// its slot gets a nil l, and nothing is recorded.
TEXT ·laneEnter(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ	tab+0(FP), DI
	MOVQ	(TLS), AX
	MOVL	AX, CX
	SHRL	$const_gSlotShift, CX
	ANDL	$(const_laneSlots-1), CX
	MOVQ	(DI)(CX*8), DI
	TESTQ	DI, DI
	JEQ	none
	ORQ	$const_ownActive, AX
	CMPQ	AX, (Location_lane+laneState_own)(DI)
	JNE	none
	MOVQ	DI, tab+0(FP)
	MOVQ	DI, l+24(FP)
	JMP	·enterProbe(SB)
none:
	MOVQ	$0, l+24(FP)
	RET

// func spanStart(ctx context.Context, s *Site) (sp Span)
// StartRegion's common cases, as startRegion and startIn do them: no
// measurement carried in contexts and a running one (R8; spanCurrent says
// both), the one the site is bound to (its region in SI), the goroutine's
// lane (DI) in its slot of the table (laneSlot's bits of the g's address,
// which goroutine.Key reads) and either active for it (a nested region)
// or idle and its own, taken back with a compare-and-swap (the outermost
// region, unless its runtime events are traced, whose Span's region
// carries spanOuter). The Span goes into the results, then
// the enter probe follows in place (PROBE_PRELUDE, ENTER_BODY); its cases
// for Go put the lane and the region into the first two argument slots
// and the time into the third, where enterSlow reads its l, r and t.
// Anything else jumps to startRegion with the frame untouched.
TEXT ·spanStart(SB), NOSPLIT|NOFRAME, $0-40
	MOVQ	(TLS), DX
	MOVL	DX, R9
	SHRL	$const_gSlotShift, R9
	ANDL	$(const_laneSlots-1), R9
	MOVQ	·spanCurrent(SB), R8
	TESTQ	R8, R8
	JEQ	slow
	MOVQ	s+16(FP), CX
	TESTQ	CX, CX
	JEQ	slow
	MOVQ	Site_bound(CX), SI
	CMPL	SI, Measurement_serial(R8)
	JNE	slow
	SHRQ	$32, SI
	MOVQ	(Measurement_lanes+laneSet_table)(R8)(R9*8), DI
	TESTQ	DI, DI
	JEQ	slow
	LEAQ	const_ownActive(DX), CX
	CMPQ	CX, (Location_lane+laneState_own)(DI)
	JNE	takeback
	MOVL	SI, sp_r+32(FP)
enter:
	MOVQ	DI, sp_l+24(FP)
	PROBE_PRELUDE(OFF_ENTER)
	ENTER_BODY
takeback:
	CMPQ	Measurement_gort(R8), $0
	JNE	slow
	MOVQ	DX, AX
	LOCK
	CMPXCHGQ	CX, (Location_lane+laneState_own)(DI)
	JNE	slow
	MOVL	SI, CX
	ORL	$const_spanOuter, CX
	MOVL	CX, sp_r+32(FP)
	JMP	enter
slow:
	JMP	·startRegion(SB)
busy:
	MOVL	$0, HIER_busy(R9)
read:
	MOVQ	DI, ctx_itable+0(FP)
	MOVQ	SI, ctx_data+8(FP)
	MOVQ	DX, s+16(FP)
	JMP	·enterSlow(SB)
notread:
	MOVQ	DI, ctx_itable+0(FP)
	MOVQ	SI, ctx_data+8(FP)
	MOVQ	$0, s+16(FP)
	JMP	·enterSlow(SB)
