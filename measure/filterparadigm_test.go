package measure

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A filter file that names MPI and OpenMP regions (as score -g of older
// versions wrote them) filters the user's region and keeps the paradigm
// ones, saying on stderr which it kept and why.
func TestFilterKeepsParadigms(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "filter.txt")
	os.WriteFile(path, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Irecv work\n  EXCLUDE !$omp*\nSCOREP_REGION_NAMES_END\n"), 0o644)
	const critical = "!$omp critical GenerateProblem_ref"

	// The warning goes to the process's stderr, as in a traced program.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	m, err := Start(Config{Output: dir, Name: "test", FilterFile: path})
	var irecv, omp, work Region
	if err == nil {
		irecv = m.RegionParadigm("MPI_Irecv", tracefile.ParadigmMPI)
		omp = m.RegionParadigm(critical, tracefile.ParadigmOpenMP)
		work = m.Region("work")
		m.RegionParadigm("MPI_Irecv", tracefile.ParadigmMPI) // defined before: no second line
	}
	os.Stderr = stderr
	w.Close()
	warned := <-got
	if err != nil {
		t.Fatal(err)
	}

	loc := m.Location("main")
	for _, reg := range []Region{work, irecv, omp} {
		loc.Enter(reg)
		loc.Leave(reg)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.FilteredName != 2 || st.Kept != 4 {
		t.Errorf("filtered %d, kept %d events; want work's 2 filtered, the paradigms' 4 kept", st.FilteredName, st.Kept)
	}
	f := openTrace(t, m)
	var names []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		names = append(names, fmt.Sprintf("%v %s", e.Kind, f.RegionName(e.Region)))
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if got, want := strings.Join(names, ", "), "ENTER MPI_Irecv, LEAVE MPI_Irecv, ENTER "+critical+", LEAVE "+critical; got != want {
		t.Errorf("events %s, want %s", got, want)
	}

	lines := strings.Split(strings.TrimSpace(warned), "\n")
	if len(lines) != 2 {
		t.Fatalf("stderr %q: want one line per kept region", warned)
	}
	for i, want := range []string{`mpi region "MPI_Irecv"`, `openmp region "` + critical + `"`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], path) || !strings.Contains(lines[i], "never filtered") {
			t.Errorf("stderr line %q does not name %s, the filter file and why", lines[i], want)
		}
	}
}
