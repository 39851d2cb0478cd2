package main

import "fmt"

// The kinds of one-sided communication (hmbmpi_rma_* in cshim/mpi/rma.c):
// window creation and freeing, the operations, and the synchronisation
// calls that end their epochs.
func init() {
	for k := range rmaKinds {
		kinds[k] = true
	}
	kinds["rma_op"] = true
}

// rmaKinds are the synchronisation and window kinds, each with what it
// does; an operation is "rma_op", described by rmaOps.
var rmaKinds = map[string]spec{
	// Creation is collective: RmaCollectiveBegin before the call, the
	// window and RmaCollectiveEnd after it, whatever it returned.
	"win_create":          {uses: []string{"comm", "win>"}, enter: rmaCollBegin, always: "hmbmpi_win_created(rc, comm, rc == MPI_SUCCESS ? *win : MPI_WIN_NULL, 0);"},
	"win_allocate":        {uses: []string{"comm", "win>"}, enter: rmaCollBegin, always: "hmbmpi_win_created(rc, comm, rc == MPI_SUCCESS ? *win : MPI_WIN_NULL, 1);"},
	"win_free":            {uses: []string{"win"}, pre: "struct hmbmpi_win_free wf;", enter: "hmbmpi_enter(r);\nhmbmpi_win_free_begin(&wf, *win);", always: "hmbmpi_win_free_end(&wf);"},
	"win_name":            {uses: []string{"win", "win_name"}, post: "hmbmpi_win_name(win, win_name);"},
	"win_fence":           {uses: []string{"win"}, enter: rmaCollBegin, always: "hmbmpi_win_fence(rc, win);"},
	"win_lock":            {uses: []string{"lock_type", "rank", "win"}, post: "hmbmpi_win_lock(win, rank, lock_type);"},
	"win_lock_all":        {uses: []string{"win"}, post: "hmbmpi_win_lock(win, HMBMPI_ALL, MPI_LOCK_SHARED);"},
	"win_unlock":          {uses: []string{"rank", "win"}, post: "hmbmpi_win_unlock(win, rank);"},
	"win_unlock_all":      {uses: []string{"win"}, post: "hmbmpi_win_unlock(win, HMBMPI_ALL);"},
	"win_flush":           {uses: []string{"rank", "win"}, post: "hmbmpi_win_flush(win, rank, 1);"},
	"win_flush_all":       {uses: []string{"win"}, post: "hmbmpi_win_flush(win, HMBMPI_ALL, 1);"},
	"win_flush_local":     {uses: []string{"rank", "win"}, post: "hmbmpi_win_flush(win, rank, 0);"},
	"win_flush_local_all": {uses: []string{"win"}, post: "hmbmpi_win_flush(win, HMBMPI_ALL, 0);"},
	"win_sync":            {uses: []string{"win"}, post: "hmbmpi_win_sync(win);"},
	"win_post":            {uses: []string{"group", "win"}, post: "hmbmpi_win_group(win, group, 1);"},
	"win_start":           {uses: []string{"group", "win"}, post: "hmbmpi_win_group(win, group, 0);"},
	"win_complete":        {uses: []string{"win"}, post: "hmbmpi_win_complete(win, 0);"},
	"win_wait":            {uses: []string{"win"}, post: "hmbmpi_win_complete(win, 1);"},
	"win_test":            {uses: []string{"win", "flag>"}, post: "if (*flag) {\n\thmbmpi_win_complete(win, 1);\n}"},
}

const rmaCollBegin = "hmbmpi_enter(r);\nhmb_rma(HMB_RMA_COLLECTIVE_BEGIN, 0, -1, 0, 0, 0, 0, 0, 0);"

// rmaOps gives each operation's arguments of hmbmpi_rma_op after the
// window and target: the RMA kind, the atomic type, the count and datatype
// of what it sends (a get: of what it gets), and of what it receives.
var rmaOps = map[string]string{
	"MPI_Put":              "HMB_RMA_PUT, 0, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL",
	"MPI_Rput":             "HMB_RMA_PUT, 0, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL",
	"MPI_Get":              "HMB_RMA_GET, 0, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL",
	"MPI_Rget":             "HMB_RMA_GET, 0, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL",
	"MPI_Accumulate":       "HMB_RMA_ATOMIC, HMB_RMA_ATOMIC_ACCUMULATE, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL",
	"MPI_Raccumulate":      "HMB_RMA_ATOMIC, HMB_RMA_ATOMIC_ACCUMULATE, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL",
	"MPI_Get_accumulate":   "HMB_RMA_ATOMIC, HMB_RMA_ATOMIC_FETCH_AND_ACCUMULATE, origin_count, origin_datatype, result_count, result_datatype",
	"MPI_Rget_accumulate":  "HMB_RMA_ATOMIC, HMB_RMA_ATOMIC_FETCH_AND_ACCUMULATE, origin_count, origin_datatype, result_count, result_datatype",
	"MPI_Fetch_and_op":     "HMB_RMA_ATOMIC, HMB_RMA_ATOMIC_FETCH_AND_ACCUMULATE, 1, datatype, 1, datatype",
	"MPI_Compare_and_swap": "HMB_RMA_ATOMIC, HMB_RMA_ATOMIC_COMPARE_AND_SWAP, 1, datatype, 1, datatype",
}

// rmaOpUses lists the parameters an operation's arguments read.
var rmaOpUses = map[string][]string{
	"MPI_Put": {"origin_count", "origin_datatype"}, "MPI_Rput": {"origin_count", "origin_datatype"},
	"MPI_Get": {"origin_count", "origin_datatype"}, "MPI_Rget": {"origin_count", "origin_datatype"},
	"MPI_Accumulate": {"origin_count", "origin_datatype"}, "MPI_Raccumulate": {"origin_count", "origin_datatype"},
	"MPI_Get_accumulate":  {"origin_count", "origin_datatype", "result_count", "result_datatype"},
	"MPI_Rget_accumulate": {"origin_count", "origin_datatype", "result_count", "result_datatype"},
	"MPI_Fetch_and_op":    {"datatype"}, "MPI_Compare_and_swap": {"datatype"},
}

// rmaSpec returns what f, of an RMA kind, does; ok is false for another kind.
func rmaSpec(f *fn) (spec, bool) {
	if s, ok := rmaKinds[f.kind]; ok {
		return s, true
	}
	if f.kind != "rma_op" {
		return spec{}, false
	}
	args, ok := rmaOps[f.name]
	if !ok {
		// checkUses reports it: an operation the generator has no arguments for.
		return spec{uses: []string{"(" + f.name + " is not an RMA operation the generator knows)"}}, true
	}
	uses := append([]string{"win", "target_rank"}, rmaOpUses[f.name]...)
	req := "MPI_REQUEST_NULL"
	if f.param("request") != nil {
		uses = append(uses, "request>")
		req = "*request"
	}
	return spec{uses: uses, post: fmt.Sprintf("hmbmpi_rma_op(win, target_rank, %s, %s);", args, req)}, true
}
