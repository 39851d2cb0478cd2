package cshim_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIStaticConstructor runs an MPI C++ program whose shared library
// computes a table in a static constructor, with instrumented code, before
// libhmbtrace's own constructor has started the Go runtime: the probes
// stage their events, which reach the trace after the measurement started.
// They must keep their times on the trace's clock (not all at 0, before
// main and MPI_Init), and no region may last longer than the run.
func TestMPIStaticConstructor(t *testing.T) {
	build := mpiLibrary(t)
	pc, err := run(root, pkgEnv(build), "pkg-config", "--libs", "hmbtrace-mpi")
	if err != nil {
		t.Fatalf("pkg-config hmbtrace-mpi: %v\n%s", err, pc)
	}
	dir := t.TempDir()
	src := filepath.Join(root, "cshim", "testdata", "mpi")
	lib := filepath.Join(dir, "libtable.so")
	if msg, err := run(root, nil, "mpicxx", "-O2", "-g", "-finstrument-functions", "-shared", "-fPIC", "-o", lib, filepath.Join(src, "table.cc")); err != nil {
		t.Fatalf("mpicxx libtable.so: %v\n%s", err, msg)
	}
	prog := filepath.Join(dir, "tabled")
	// libtable comes first, and does not need libhmbtrace: the loader runs
	// its constructor before libhmbtrace's.
	args := append([]string{"-O2", "-g", "-finstrument-functions", "-o", prog, filepath.Join(src, "tabled.cc"),
		"-L" + dir, "-Wl,-rpath," + dir, "-ltable"}, strings.Fields(string(pc))...)
	if msg, err := run(root, nil, "mpicxx", args...); err != nil {
		t.Fatalf("mpicxx %v: %v\n%s", args, err, msg)
	}
	out := t.TempDir()
	mpirun(t, 2, out, nil, prog)
	files := rankFiles(t, out, "tabled", 2)
	for _, f := range files {
		r := f.Header.Rank
		type open struct {
			name string
			at   int64
		}
		var (
			e                  tracefile.Event
			stack              []open
			tableAt, initAt    int64 = -1, -1
			tableCalls, atZero int
		)
		it := f.Events(f.Locations[0].ID)
		for it.Next(&e) {
			at := f.Nanos(e.Time)
			if at == 0 {
				atZero++
			}
			switch e.Kind {
			case encode.KindEnter:
				name := f.RegionName(e.Region)
				stack = append(stack, open{name, at})
				if name == "table_entry(int)" {
					tableCalls++
					if tableAt < 0 {
						tableAt = at
					}
				}
				if name == "MPI_Init" {
					initAt = at
				}
			case encode.KindLeave:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if tableCalls != 2000 || tableAt < 0 || initAt <= tableAt {
			t.Errorf("rank %d: %d table_entry calls from %d ns, MPI_Init at %d ns; want 2000, all before MPI_Init", r, tableCalls, tableAt, initAt)
		}
		if atZero > 2 {
			t.Errorf("rank %d: %d events at time 0; want only the first ones", r, atZero)
		}
		for _, p := range f.Locations[0].Profile {
			if incl := f.TicksToNanos(p.Inclusive); incl > f.Duration() {
				t.Errorf("rank %d: %s lasts %d ns, longer than the run's %d", r, f.RegionName(p.Region), incl, f.Duration())
			}
		}
	}
}
