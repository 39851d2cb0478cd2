package main

import (
	"strings"
	"testing"
)

// The RMA kinds record through rma.c's helpers: an operation after a
// successful call with its request when it has one, a window's creation
// between RmaCollectiveBegin and the end that follows whatever the call
// returned, and the Fortran wrappers convert windows and groups.
func TestRmaKinds(t *testing.T) {
	fns, err := parseTable([]byte(
		"rma_op int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_cout, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)\n" +
			"win_create int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)\n" +
			"win_post int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)\n" +
			"win_free int MPI_Win_free(MPI_Win *win)"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(fns)
	if err != nil {
		t.Fatal(err)
	}
	c, f := string(files[1].data), string(files[2].data)
	for _, want := range []string{
		"if (rc == MPI_SUCCESS) {\n\t\thmbmpi_rma_op(win, target_rank, HMB_RMA_PUT, 0, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL, *request);",
		"hmbmpi_enter(r);\n\thmb_rma(HMB_RMA_COLLECTIVE_BEGIN, 0, -1, 0, 0, 0, 0, 0, 0);\n\tint rc = PMPI_Win_create(",
		"hmbmpi_win_created(rc, comm, rc == MPI_SUCCESS ? *win : MPI_WIN_NULL, 0);\n\thmbmpi_leave(r);",
		"hmbmpi_win_free_begin(&wf, *win);\n\tint rc = PMPI_Win_free(win);\n\thmbmpi_win_free_end(&wf);",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("C wrappers lack %q:\n%s", want, c)
		}
	}
	for _, want := range []string{
		"MPI_Win win = MPI_Win_f2c(*f_win);",
		"MPI_Group group = MPI_Group_f2c(*f_group);",
		"win_v = MPI_Win_f2c(*f_win);",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("Fortran wrappers lack %q:\n%s", want, f)
		}
	}
	if _, err := parseTable([]byte("rma_op int MPI_Barrier(MPI_Comm comm)")); err == nil || !strings.Contains(err.Error(), "MPI_Barrier is not an RMA operation") {
		t.Errorf("an operation the generator does not know: %v", err)
	}
}
