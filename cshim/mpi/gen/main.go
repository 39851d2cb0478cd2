// Command gen writes libhmbtrace-mpi's wrappers from the table of MPI-3.1
// functions, cshim/mpi/mpi.tbl:
//
//	go run ./cshim/mpi/gen            (from the repository's root)
//	go generate ./cshim/mpi/gen       (the same)
//
// It writes, next to the table, regions_gen.h (a region per wrapped
// function), wrappers_gen.c (the C wrappers, MPI_X calling PMPI_X) and
// fortran_gen.c (the Fortran bindings OpenMPI's mpif.h, use mpi and use
// mpi_f08 call: mpi_x_, mpi_x__, mpi_x, MPI_X and ompi_x_f, calling pmpi_x_).
// What a wrapper records follows from its kind; the helpers the generated
// code calls are written by hand in hmbtrace_mpi.c (see mpi_internal.h).
// With -check it writes nothing and fails if a file differs from what it
// would write.
package main

//go:generate go run .

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	dir := flag.String("dir", defaultDir(), "the directory of mpi.tbl, where the generated files go")
	check := flag.Bool("check", false, "write nothing; fail if a generated file is stale")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// defaultDir is cshim/mpi of the source tree this file is in, so that the
// command works from any directory of the repository.
func defaultDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "cshim/mpi"
	}
	return filepath.Dir(filepath.Dir(file))
}

func run(dir string, check bool) error {
	src, err := os.ReadFile(filepath.Join(dir, "mpi.tbl"))
	if err != nil {
		return err
	}
	fns, err := parseTable(src)
	if err != nil {
		return err
	}
	files, err := generate(fns)
	if err != nil {
		return err
	}
	var stale []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, f.data) {
				stale = append(stale, f.name)
			}
			continue
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%v stale: run go run ./cshim/mpi/gen", stale)
	}
	return nil
}
