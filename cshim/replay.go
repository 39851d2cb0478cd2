package cshim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The wait-state replay in-situ (analysis/waitstate: Local), in two passes
// after those of runresults.go:
//
//   - PassReplay is not reduced up the tree: libhmbtrace-mpi's replay
//     (cshim/mpi/hmbtrace_mpi.c) calls PassMake once per round of the
//     exchange and once after the last. Its input is the round, the size
//     of the world, whether this is the last call and the messages that
//     came in (round 0: none); its output is the messages of the round.
//     The forward rounds are waitstate.Rounds(world), which the C side
//     computes alike; the backward ones follow, one at least, until no
//     rank has anything to send (the C side asks them all). A rank whose
//     replay failed sends nothing and still takes part in each. Each
//     backward round's output ends with the rank's status (appendSettled):
//     whether it awaits any cost more, so the C side looks for the end
//     only once it does not.
//   - PassWaitStates reduces the ranks' waitstate.InSitu up the tree, in
//     rank order, in its wire form (waitstate.EncodeInSituWire: varints,
//     each string once); rank 0 keeps the run's as JSON
//     (ResultWaitStates).
//
// Both messages are records of a peer's world rank and a length (uint32,
// little-endian each), then the length's bytes; the input begins with the
// round, the world and the last call's flag (uint32 each).
const (
	PassReplay = PassPhases + 1 + iota
	PassWaitStates
)

// replayState is this rank's replay between its rounds.
var replayState struct {
	local *waitstate.Local
	part  *waitstate.InSitu
	err   error
	began time.Time
	took  time.Duration
	sent  int
}

func init() {
	passDefs[PassReplay] = passDef{"wait-state replay", makeReplay, nil, setNone}
	passDefs[PassWaitStates] = passDef{"wait states", makeWaitStates, waitStatesCodec, setWaitStates}
}

func setNone(*Runtime, *runPart) ([]byte, error) {
	return nil, errors.New("the replay's rounds are exchanged, not merged")
}

// makeReplay takes one round's messages and returns the next round's.
// After an error the rank sends nothing more; the error is reported once
// here and again as the reason of its missing wait states.
func makeReplay(rt *Runtime, _ int, in []byte) ([]byte, error) {
	if len(in) < 12 {
		return nil, fmt.Errorf("%d bytes of input, want 12 at least", len(in))
	}
	round := int(binary.LittleEndian.Uint32(in))
	world := int(binary.LittleEndian.Uint32(in[4:]))
	final := binary.LittleEndian.Uint32(in[8:]) != 0
	st := &replayState
	if round == 0 {
		st.local, st.part, st.err, st.began, st.took, st.sent = nil, nil, nil, time.Now(), 0, 0
		f, err := rt.rankTrace()
		if err == nil {
			st.local, err = waitstate.NewLocal(f, world)
		}
		if err != nil {
			st.err = err
			return nil, err
		}
	}
	if st.err != nil || st.local == nil {
		return nil, nil
	}
	fail := func(err error) ([]byte, error) {
		st.err, st.local = err, nil
		return nil, err
	}
	if final {
		part, err := st.local.Finish()
		if err != nil {
			return fail(err)
		}
		st.part, st.local, st.took = part, nil, time.Since(st.began)
		return nil, nil
	}
	if round > 0 {
		// Backward, the records come as they are sent, several from one
		// rank between two calls at times: they are read one after the
		// other.
		msgs, err := splitRecords(in[12:], round-1 >= waitstate.Rounds(world))
		if err != nil {
			return fail(err)
		}
		if err := st.local.Incoming(round-1, msgs); err != nil {
			return fail(err)
		}
	}
	msgs, err := st.local.Outgoing(round)
	if err != nil {
		return fail(err)
	}
	peers := make([]int, 0, len(msgs))
	for p := range msgs {
		peers = append(peers, p)
	}
	slices.Sort(peers)
	var out []byte
	for _, p := range peers {
		b := msgs[p]
		if p < 0 || p >= world || len(b) > math.MaxInt32 {
			return fail(fmt.Errorf("round %d: %d bytes for rank %d of %d", round, len(b), p, world))
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(p))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
		st.sent += len(b)
	}
	if round >= waitstate.Rounds(world) {
		out = appendSettled(out, world, st.local.Settled())
	}
	return out, nil
}

// appendSettled appends the backward replay's status to a round's
// messages: a record to world rank world (no rank), one byte, 1 when the
// rank awaits no cost more (waitstate.Local.Settled). The round's output
// is one buffer of (rank, length, bytes) records, so the status travels
// as the record of that pseudo-rank rather than by another call across
// the C boundary. The C side joins the reductions that find the
// replay's end only once settled.
func appendSettled(out []byte, world int, settled bool) []byte {
	out = binary.LittleEndian.AppendUint32(out, uint32(world))
	out = binary.LittleEndian.AppendUint32(out, 1)
	if settled {
		return append(out, 1)
	}
	return append(out, 0)
}

// splitRecords splits the messages of a round by their senders; with
// concat, a sender's messages are joined in their order, else a second
// one is an error.
func splitRecords(b []byte, concat bool) (map[int][]byte, error) {
	out := map[int][]byte{}
	for off := 0; off < len(b); {
		if len(b)-off < 8 {
			return nil, fmt.Errorf("a message's header at %d of %d bytes", off, len(b))
		}
		from := int(binary.LittleEndian.Uint32(b[off:]))
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		off += 8
		if n > len(b)-off {
			return nil, fmt.Errorf("rank %d's message of %d bytes at %d of %d", from, n, off, len(b))
		}
		if prev, dup := out[from]; dup && !concat {
			return nil, fmt.Errorf("two messages of rank %d in one round", from)
		} else if dup {
			out[from] = append(slices.Clip(prev), b[off:off+n]...)
		} else {
			out[from] = b[off : off+n]
		}
		off += n
	}
	return out, nil
}

// makeWaitStates returns this rank's wait states, replayed in the rounds
// before, and releases the replay.
func makeWaitStates(_ *Runtime, _ int, _ []byte) ([]byte, error) {
	st := &replayState
	part, err := st.part, st.err
	st.part, st.local = nil, nil
	if err != nil {
		return nil, err
	}
	if part == nil {
		return nil, errors.New("the replay did not run its rounds")
	}
	return waitstate.EncodeInSituWire(part), nil
}

// setWaitStates keeps the run's wait states, and what the exchange's
// rounds cost rank 0 (from reading its events to its part), beside the
// pass's own cost.
func setWaitStates(rt *Runtime, p *runPart) ([]byte, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	b, err := waitstate.EncodeInSitu(v.(*waitstate.InSitu))
	if err != nil {
		return nil, err
	}
	rt.setResult(tracefile.ResultWaitStates, b)
	passState.mu.Lock()
	if replayState.took > 0 {
		passState.costs = append(passState.costs, tracefile.PassCost{Pass: "wait-state replay", Seconds: replayState.took.Seconds(), Bytes: replayState.sent})
	}
	passState.mu.Unlock()
	return nil, nil
}
