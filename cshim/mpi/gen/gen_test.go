package main

import (
	"strings"
	"testing"
)

// TestMPIGeneratedFresh fails when the checked-in wrappers are not what
// the table makes: after an edit of mpi.tbl or of the generator, run
// go run ./cshim/mpi/gen.
func TestMPIGeneratedFresh(t *testing.T) {
	if err := run(defaultDir(), true); err != nil {
		t.Fatal(err)
	}
}

// TestTableErrors checks that a table line the generator cannot serve is
// an error naming the line and the reason, not a wrapper that would fail
// to compile or record the wrong parameter.
func TestTableErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"sendx int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)", `unknown kind "sendx"`},
		{"send int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int to, int tag, MPI_Comm comm)", `parameter "dest"`},
		{"coll int MPI_Barrier(MPI_Comm comm)", "take a shape"},
		{"coll:fan int MPI_Barrier(MPI_Comm comm)", `unknown collective shape "fan"`},
		{"region double MPI_Wtime(void)", "only functions returning an error code"},
		{"region int MPI_Pcontrol(const int level, ...)", "variadic"},
		{"region int MPI_Barrier(MPI_Comm comm)\nregion int MPI_Barrier(MPI_Comm comm)", "on line 1 already"},
	} {
		_, err := parseTable([]byte(c.line))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.line, err, c.want)
		}
	}
}

// TestKinds checks what a few kinds generate: the C wrapper returns what
// PMPI returned, and the Fortran one converts the handles it reads.
func TestKinds(t *testing.T) {
	fns, err := parseTable([]byte("isend int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)\n" +
		"- int MPI_Comm_rank(MPI_Comm comm, int *rank)"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(fns)
	if err != nil {
		t.Fatal(err)
	}
	c, f := string(files[1].data), string(files[2].data)
	for _, want := range []string{
		"int rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, request);",
		"uint64_t t0 = hmbmpi_now();\n\tint rc = PMPI_Isend(",
		"if (rc == MPI_SUCCESS) {\n\t\thmbmpi_isend(&rq, comm, dest, tag, count, datatype, *request);\n\t}\n\thmb_mpi_req_call(r, t0, &rq);",
		"return rc;",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("C wrapper lacks %q:\n%s", want, c)
		}
	}
	for _, want := range []string{
		"MPI_Comm comm = MPI_Comm_f2c(*f_comm);",
		"request_v = MPI_Request_f2c(*f_request);",
		"pmpi_isend_(f_buf, f_count, f_datatype, f_dest, f_tag, f_comm, f_request, ierr);",
		"hmb_mpi_req_call(r, t0, &rq);",
		"HMBMPI_FORTRAN_ALIAS(hmbf_mpi_isend, mpi_isend_)",
		"pmpi_isend_f08_(f_buf, f_count, f_datatype, f_dest, f_tag, f_comm, f_request, ierr);",
		"HMBMPI_FORTRAN_ALIAS(hmbf08_mpi_isend, mpi_isend_f08_)",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("Fortran wrapper lacks %q:\n%s", want, f)
		}
	}
	if strings.Contains(c, "MPI_Comm_rank(") {
		t.Errorf("a function of kind - is wrapped:\n%s", c)
	}
}
