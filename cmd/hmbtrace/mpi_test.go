package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
)

// recordMPI writes rank's trace of a run whose messages sit at calling
// depth 6 into dir, with the given buffer: a ring of sends on a
// communicator and a non-blocking exchange, and a non-blocking collective.
func recordMPI(t *testing.T, dir string, rank, buffer, bin int) string {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: dir, Name: "mpi", Rank: rank, BufferSize: buffer, BinSize: bin})
	if err != nil {
		t.Fatal(err)
	}
	world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
	regions := make([]measure.Region, 6)
	for i := range regions {
		regions[i] = m.Region(fmt.Sprintf("level%d", i))
	}
	iallreduce, wait := m.Region("MPI_Iallreduce"), m.Region("MPI_Wait")
	l := m.Location("main")
	peer := 1 - rank
	for it := 0; it < 2000; it++ {
		for _, r := range regions {
			l.Enter(r)
		}
		req := uint64(3 * it)
		l.SendRankComm(peer, 7, 64, world)
		l.RecvRankComm(peer, 7, 64, world)
		l.Isend(peer, 8, 4096, world, req)
		l.IrecvRequest(req + 1)
		l.Enter(iallreduce)
		l.CollectiveRequest(req + 2)
		l.Leave(iallreduce)
		l.Enter(wait)
		l.IsendComplete(req)
		l.Irecv(peer, 8, 4096, world, req+1)
		l.CollectiveComplete(iallreduce, -1, 8, 8, world, req+2)
		l.Leave(wait)
		for j := len(regions) - 1; j >= 0; j-- {
			l.Leave(regions[j])
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Path()
}

// comm's matrix of a run whose buffer was too small for its messages is the
// unreduced run's, and comm and summary say that the buffer shed messages
// that the counts still include.
func TestCommExactAfterShedding(t *testing.T) {
	fullDir, smallDir := t.TempDir(), t.TempDir()
	full := []string{recordMPI(t, fullDir, 0, 64<<20, 0), recordMPI(t, fullDir, 1, 64<<20, 0)}
	small := []string{recordMPI(t, smallDir, 0, 16<<10, 512), recordMPI(t, smallDir, 1, 16<<10, 512)}
	tsv := func(paths []string) string {
		var out, errOut bytes.Buffer
		if rc := run(append([]string{"comm", "-tsv"}, paths...), &out, &errOut); rc != 0 {
			t.Fatalf("comm: exit %d: %s", rc, errOut.String())
		}
		return out.String()
	}
	want := "rank 0\trank 1\t4000\t8320000\nrank 1\trank 0\t4000\t8320000\n"
	if got := tsv(full); got != want {
		t.Errorf("unreduced comm -tsv:\n%s\nwant\n%s", got, want)
	}
	if got := tsv(small); got != want {
		t.Errorf("reduced comm -tsv:\n%s\nwant the unreduced run's\n%s", got, want)
	}
	var out, errOut bytes.Buffer
	if rc := run(append([]string{"comm"}, small...), &out, &errOut); rc != 0 {
		t.Fatalf("comm: exit %d: %s", rc, errOut.String())
	}
	if !regexp.MustCompile(`the buffer shed the events of \d+ of these messages; the counts include them`).MatchString(out.String()) {
		t.Errorf("comm says nothing of the shed messages:\n%s", out.String())
	}
	out.Reset()
	if rc := run([]string{"summary", small[0]}, &out, &errOut); rc != 0 {
		t.Fatalf("summary: exit %d: %s", rc, errOut.String())
	}
	for _, w := range []string{"messages         sent 4,000 (", "received 4,000 (", "1 peer; exact, counted at the probe",
		"message events; the counts above include their messages"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, out.String())
		}
	}
}

// dump prints every MPI record on one line with its fields.
func TestDumpMPIRecords(t *testing.T) {
	path := recordMPI(t, t.TempDir(), 0, 64<<20, 0)
	var out, errOut bytes.Buffer
	if rc := run([]string{"dump", path}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	var got []string
	for _, line := range strings.Split(out.String(), "\n")[6:20] {
		f := strings.Split(line, "\t")
		f[1] = "T"
		got = append(got, strings.Join(f, " "))
	}
	want := []string{
		"main T SEND 1 7 64 comm=1",
		"main T RECV 1 7 64 comm=1",
		"main T ISEND 1 8 4096 comm=1 req=0",
		"main T IRECV_REQUEST level5 6 req=1",
		"main T ENTER MPI_Iallreduce 7",
		"main T COLL_REQUEST MPI_Iallreduce 7 req=2",
		"main T LEAVE MPI_Iallreduce 7",
		"main T ENTER MPI_Wait 7",
		"main T ISEND_COMPLETE MPI_Wait 7 req=0",
		"main T IRECV 1 8 4096 comm=1 req=1",
		"main T COLL_COMPLETE MPI_Iallreduce 7 root=-1 bytes=8 received=8 comm=1 req=2",
		"main T LEAVE MPI_Wait 7",
		"main T LEAVE level5 6",
		"main T LEAVE level4 5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dump:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
