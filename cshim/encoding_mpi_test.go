package cshim_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
)

// TestDirectMPIEncoding compares the encoders of an MPI call's direct
// probe (hmb_put_enter_mpi, hmb_put_enter_pred, hmb_put_message_inline, hmb_put_leave_seq and hmb_put_req_inline
// in lib/direct_mpi.h, which write the common forms themselves and hand
// the rest to direct.c) with encode.Encoder byte for byte, on level
// streams that mix enters, leaves, messages and requests' records: deltas, peers, tags and
// communicators of one, two and more LEB128 bytes, no communicator, sizes
// up to 2^40, records at the previous one's time, sequence numbers that
// need a SEQ prefix of one byte or more, and times that go back (clamped).
func TestDirectMPIEncoding(t *testing.T) {
	bin := encodingProgram(t)
	rng := rand.New(rand.NewPCG(16, 17))
	// size returns a value of 1, 2 or more LEB128 bytes, small ones most often.
	size := func() uint64 {
		switch rng.IntN(6) {
		case 0, 1, 2:
			return rng.Uint64N(0x80)
		case 3, 4:
			return 0x80 + rng.Uint64N(0x4000-0x80)
		}
		return rng.Uint64N(1 << uint(14+rng.IntN(27)))
	}
	var in strings.Builder
	var want []string
	b := make([]byte, 128)
	prefixed := 0
	for bins := 0; bins < 100; bins++ {
		tm := rng.Uint64N(1 << 40)
		open := uint32(rng.IntN(3))
		e := encode.NewEncoder(encode.All)
		e.StartBin(b, tm, open)
		fmt.Fprintf(&in, "B %d %d\n", tm, open)
		var seq uint32
		for i := 0; i < 300; i++ {
			switch rng.IntN(8) {
			case 0:
				seq++ // the next in its tick, as a send after its enter
			case 1:
				tm -= uint64(rng.IntN(3)) // clamped to the stream's time
			default:
				tm += size()
				seq = 0
			}
			if rng.IntN(25) == 0 {
				seq = uint32(rng.Uint64N(1 << uint(rng.IntN(32))))
			}
			var n int
			switch rng.IntN(4) {
			case 3:
				// A point-to-point request's record (hmb_put_req_inline).
				k := []encode.Kind{encode.KindIsend, encode.KindIrecv, encode.KindIsendComplete,
					encode.KindIrecvRequest, encode.KindRequestCancelled}[rng.IntN(5)]
				// A request's peer is a world rank, an int (struct hmb_mpi_req).
				peer, tag, bytes, comm, request := size()&math.MaxInt32, uint32(size()), size(), uint32(size()), size()
				if rng.IntN(4) == 0 {
					request = rng.Uint64N(1 << 40)
				}
				if k == encode.KindIsend || k == encode.KindIrecv {
					n = e.RequestMessage(b, k, tm, seq, peer, true, tag, bytes, comm, request)
				} else {
					peer, tag, bytes, comm = 0, 0, 0, 0
					n = e.Request(b, k, tm, seq, request)
				}
				fmt.Fprintf(&in, "Q %d %d %d %d %d %d %d %d\n", k, tm, seq, peer, tag, bytes, comm, request)
			case 0:
				// Ten regions: every slot of the prediction (eight), and
				// regions that are in none.
				// hmb_put_enter_mpi (N) and hmb_put_enter_pred (P), which
				// the non-blocking calls use for slots 0 and 1 as well.
				region := uint32(1 + rng.IntN(10))
				n = e.Enter(b, tm, seq, region)
				fmt.Fprintf(&in, "%c %d %d %d\n", "NP"[rng.IntN(2)], tm, seq, region)
			case 1:
				n = e.Leave(b, tm, seq)
				fmt.Fprintf(&in, "S %d %d\n", tm, seq)
			default:
				recv := rng.IntN(2)
				k := encode.KindSend
				if recv == 1 {
					k = encode.KindRecv
				}
				peer, tag, bytes, comm := size(), uint32(size()), size(), uint32(size())
				if rng.IntN(10) == 0 {
					comm = 0
				}
				if rng.IntN(4) == 0 {
					bytes = rng.Uint64N(1 << 40)
				}
				n = e.MessageComm(b, k, tm, seq, peer, true, tag, bytes, comm)
				fmt.Fprintf(&in, "M %d %d %d %d %d %d %d\n", recv, tm, seq, peer, tag, bytes, comm)
			}
			if b[0] >= encode.TokSeqInline && b[0] < encode.TokSeqInline+0x20 && n > 1 {
				prefixed++
			}
			want = append(want, hex.EncodeToString(b[:n]))
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("C wrote %d records, Go %d", len(got), len(want))
	}
	rec := 0
	for _, l := range strings.Split(in.String(), "\n") {
		if l == "" || l[0] == 'B' {
			continue
		}
		if got[rec] != want[rec] {
			t.Fatalf("record %d (%s): C % x, Go % x", rec, l, unhex(got[rec]), unhex(want[rec]))
		}
		rec++
	}
	if prefixed < 100 {
		t.Errorf("%d records with a SEQ prefix, want at least 100 to prove the prefixes", prefixed)
	}
}
