package convert

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestUnifiedDefinitions exports three ranks whose definitions differ:
// "work" is a.c:10 on rank 0 and b.c:5 on rank 1 (two functions of one
// name), "only" is defined and entered on rank 2 alone, and ranks 0 and
// 1 made a communicator rank 2 did not. The archive holds the run's
// definitions (tracefile.ReadUnified): two work regions, only once, the
// communicator once, and the message on it resolved on both sides.
func TestUnifiedDefinitions(t *testing.T) {
	dir := t.TempDir()
	type reg struct {
		name, file string
		line       int
	}
	ranks := [][]reg{
		{{"main", "m.c", 1}, {"work", "a.c", 10}, {"MPI_Send", "", 0}},
		{{"main", "m.c", 1}, {"work", "b.c", 5}, {"MPI_Recv", "", 0}},
		{{"main", "m.c", 1}, {"only", "o.c", 3}},
	}
	var files []*tracefile.File
	for rank, regs := range ranks {
		b := tracetest.NewBuilder("run", "node", rank, time.Unix(1700000000, 0))
		for i, r := range regs {
			b.Trace.Regions = append(b.Trace.Regions, tracefile.Region{ID: uint32(i + 1), Name: r.name, File: r.file, Line: r.line})
		}
		world := b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
		var pair uint32
		if rank < 2 {
			pair = b.Comm("pair", world, []int32{0, 1}, nil)
		}
		l := b.Location("main")
		l.Enter(10, 1)
		l.Enter(20, 2)
		l.Leave(30)
		switch rank {
		case 0:
			l.Enter(40, 3)
			l.MessageComm(41, encode.KindSend, 1, 7, 8, pair)
			l.Leave(42)
		case 1:
			l.Enter(40, 3)
			l.MessageComm(45, encode.KindRecv, 0, 7, 8, pair)
			l.Leave(46)
		}
		l.Leave(50)
		files = append(files, b.Write(t, dir))
	}
	anchor, st := export(t, files, otf2.Options{})
	if st.UndefinedComms != 0 || len(st.InvalidComms) != 0 || st.MessagesWithoutPeer != 0 {
		t.Errorf("stats %+v, want nothing left out", st)
	}
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	defs := definitions(t, anchor)
	for re, n := range map[string]int{
		`(?m)^REGION .*Name: "work" .*File: "a\.c" <\d+>, Begin: 10,`: 1,
		`(?m)^REGION .*Name: "work" .*File: "b\.c" <\d+>, Begin: 5,`:  1,
		`(?m)^REGION .*Name: "work" `:                                 2,
		`(?m)^REGION .*Name: "only" `:                                 1,
		`(?m)^REGION .*Name: "main" `:                                 1,
		`(?m)^COMM .*Name: "pair" `:                                   1,
	} {
		if got := len(regexp.MustCompile(re).FindAllString(defs, -1)); got != n {
			t.Errorf("%d definitions match %s, want %d, in\n%s", got, re, n, defs)
		}
	}
	printed, err := otf2print.Run(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(printed); strings.Count(s, "MPI_SEND ") != 1 || strings.Count(s, "MPI_RECV ") != 1 {
		t.Errorf("want the message on pair sent and received:\n%s", s)
	}
}
