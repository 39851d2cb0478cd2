package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// unifiedRanks writes three ranks of run "ranks" in dir whose definitions
// differ as the ranks of a real code's can: "work" is a.c:10 on rank 0
// and b.c:5 on rank 1 (two functions of one name), "only" is defined and
// entered on rank 2 alone, and ranks 0 and 1 made a communicator rank 2
// did not, after rank 1 made another (so its id differs), and exchange a
// message on it.
func unifiedRanks(t *testing.T, dir string) []*tracefile.File {
	t.Helper()
	second := []tracefile.Region{{Name: "work", File: "a.c", Line: 10}, {Name: "work", File: "b.c", Line: 5}, {Name: "only", File: "o.c", Line: 3}}
	var files []*tracefile.File
	for rank := range 3 {
		b := tracetest.NewBuilder("ranks", "node", rank, time.Unix(1700000000, 0))
		r := second[rank]
		r.ID = 2
		b.Trace.Regions = []tracefile.Region{{ID: 1, Name: "main", File: "m.c", Line: 1}, r,
			{ID: 3, Name: "MPI_Send", Paradigm: tracefile.ParadigmMPI}, {ID: 4, Name: "MPI_Recv", Paradigm: tracefile.ParadigmMPI}}
		world := b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
		var pair uint32
		if rank == 1 {
			b.Comm("", world, []int32{1}, nil)
		}
		if rank < 2 {
			pair = b.Comm("pair", world, []int32{0, 1}, nil)
		}
		l := b.Location("main")
		work := uint64(1000 * (rank + 1))
		l.Enter(10, 1)
		l.Enter(20, 2)
		l.Leave(20 + work)
		switch rank {
		case 0:
			l.Enter(5000, 3)
			l.MessageComm(5001, encode.KindSend, 1, 7, 8, pair)
			l.Leave(5002)
		case 1:
			l.Enter(5000, 4)
			l.MessageComm(5005, encode.KindRecv, 0, 7, 8, pair)
			l.Leave(5006)
		}
		l.Leave(9000)
		loc := &b.Trace.Locations[0]
		loc.Profile = []tracefile.ProfileEntry{{Region: 1, Visits: 1, Inclusive: 8990, Exclusive: 8990 - work}, {Region: 2, Visits: 1, Inclusive: work, Exclusive: work}}
		if rank < 2 {
			loc.Profile[0].Exclusive -= 2
			loc.Profile = append(loc.Profile, tracefile.ProfileEntry{Region: uint32(3 + rank), Visits: 1, Inclusive: 2, Exclusive: 2})
		}
		files = append(files, b.Write(t, dir))
	}
	return files
}

// TestUnifiedDefinitionsSameOutput: every reader takes the run's
// definitions (tracefile.ReadUnified), from the rank files unified by
// name and from the archive's table alike, so each command prints and
// writes the same both ways; and the run's regions are what they are:
// the two functions named work are two rows, told apart by source.
func TestUnifiedDefinitionsSameOutput(t *testing.T) {
	root := t.TempDir()
	rankDir, archDir := filepath.Join(root, "rfile"), filepath.Join(root, "ar")
	os.Mkdir(rankDir, 0o755)
	os.Mkdir(archDir, 0o755)
	files := unifiedRanks(t, rankDir)
	archive := writeArchives(t, archDir, files, len(files), false)[0]
	rename := func(b []byte) []byte {
		for r := len(files) - 1; r >= 0; r-- {
			rp, fp := fmt.Sprintf("%s#%d", archive, r), filepath.Join(rankDir, fmt.Sprintf("ranks.%d.hmb", r))
			b = bytes.ReplaceAll(b, []byte(rp), []byte(fp))
			b = bytes.ReplaceAll(b, []byte(filepath.Base(rp)), []byte(filepath.Base(fp)))
		}
		return bytes.ReplaceAll(b, []byte(archDir), []byte(rankDir))
	}
	cmds := [][]string{{"summary"}, {"summary", "-tsv"}, {"report", "-o", "OUT/report.html"},
		{"export", "-format", "otf2", "-o", "OUT/otf2"}, {"export", "-format", "pprof", "-o", "OUT/p.pprof"},
		{"export", "-format", "chrome", "-o", "OUT/t.json"}}
	for _, c := range cmds {
		read := func(in string) map[string][]byte {
			out := t.TempDir()
			var args []string
			for _, a := range c {
				args = append(args, strings.ReplaceAll(a, "OUT", out))
			}
			res := outputs(t, append(args, in), out)
			for k, v := range res {
				v = bytes.ReplaceAll(v, []byte(out), []byte("OUT"))
				res[k] = writtenAt.ReplaceAll(v, []byte("written TIME"))
			}
			return res
		}
		want, got := read(rankDir), read(archDir)
		if len(got) != len(want) {
			t.Errorf("%v: %d outputs from the archive, %d from the rank files", c, len(got), len(want))
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || !bytes.Equal(rename(g), w) {
				t.Errorf("%v: %s differs from the rank files' (%d vs %d bytes): %s", c, k, len(g), len(w), firstDiff(w, rename(g)))
			}
		}
		if c[0] == "summary" && len(c) == 2 {
			s := string(want["stdout"])
			for _, row := range []string{"work (b.c:5)\t1\t2000\t2000\n", "work (a.c:10)\t1\t1000\t1000\n", "only\t1\t3000\t3000\n"} {
				if !strings.Contains(s, row) {
					t.Errorf("summary -tsv lacks %q:\n%s", row, s)
				}
			}
		}
		if c[0] == "export" && c[2] == "chrome" {
			s := string(want["t.json"])
			if !strings.Contains(s, `"name":"work (a.c:10)"`) || !strings.Contains(s, `"name":"work (b.c:5)"`) {
				t.Errorf("the chrome trace does not tell the two works apart:\n%s", s)
			}
		}
		if c[0] == "export" && c[2] == "otf2" && bytes.Contains(want["stdout"], []byte("note")) {
			t.Errorf("export -format otf2 left something out:\n%s", want["stdout"])
		}
	}
}
