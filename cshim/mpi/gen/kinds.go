package main

import "strings"

// spec is what a wrapper of some kind does around its PMPI call, as C
// statements that read the call's parameters by name. The C wrapper has
// them as its own parameters; the Fortran wrapper converts the ones in
// uses from the Fortran arguments (f_<name>) into C locals of the same
// names first, so the same statements serve both.
type spec struct {
	uses   []string // parameters the statements read; "x>" is read after the call (an output)
	status string   // an MPI_Status * parameter filled even when the program ignores it
	pre    string   // before the region is entered; $PLAIN is the untraced call and return
	enter  string   // enters the region r (hmbmpi_enter(r) when empty)
	post   string   // after a successful call
	always string   // after the call, whatever rc it returned
	leave  string   // leaves the region r (hmbmpi_leave(r) when empty)
	after  string   // after the region is left
	// The Fortran wrapper's own statements where they differ (arrays of
	// requests and statuses, 1-based indices), and arguments it passes
	// to pmpi_x_ in place of the program's.
	fpre, fpost, falways, fafter string
	ccall, fcall                 map[string]string
}

// shapes lists the arguments each collective shape's helper,
// hmbmpi_coll_<shape>(struct hmbmpi_coll *, ...), takes. A name ending in
// _f is the Fortran array of a datatype array (NULL in C).
var shapes = map[string][]string{
	"barrier":              {"comm"},
	"bcast":                {"count", "datatype", "root", "comm"},
	"reduce":               {"count", "datatype", "root", "comm"},
	"allreduce":            {"count", "datatype", "comm"},
	"scan":                 {"count", "datatype", "comm"},
	"gather":               {"sendbuf", "sendcount", "sendtype", "recvcount", "recvtype", "root", "comm"},
	"gatherv":              {"sendbuf", "sendcount", "sendtype", "recvcounts", "recvtype", "root", "comm"},
	"scatter":              {"sendcount", "sendtype", "recvbuf", "recvcount", "recvtype", "root", "comm"},
	"scatterv":             {"sendcounts", "sendtype", "recvbuf", "recvcount", "recvtype", "root", "comm"},
	"allgather":            {"sendbuf", "sendcount", "sendtype", "recvcount", "recvtype", "comm"},
	"allgatherv":           {"sendbuf", "sendcount", "sendtype", "recvcounts", "recvtype", "comm"},
	"alltoall":             {"sendbuf", "sendcount", "sendtype", "recvcount", "recvtype", "comm"},
	"alltoallv":            {"sendbuf", "sendcounts", "sendtype", "recvcounts", "recvtype", "comm"},
	"alltoallw":            {"sendbuf", "sendcounts", "sendtypes", "sendtypes_f", "recvcounts", "recvtypes", "recvtypes_f", "comm"},
	"reduce_scatter":       {"recvcounts", "datatype", "comm"},
	"reduce_scatter_block": {"recvcount", "datatype", "comm"},
	"neighbor_allgather":   {"sendcount", "sendtype", "recvcount", "recvtype", "comm"},
	"neighbor_allgatherv":  {"sendcount", "sendtype", "recvcounts", "recvtype", "comm"},
	"neighbor_alltoall":    {"sendcount", "sendtype", "recvcount", "recvtype", "comm"},
	"neighbor_alltoallv":   {"sendcounts", "sendtype", "recvcounts", "recvtype", "comm"},
	"neighbor_alltoallw":   {"sendcounts", "sendtypes", "sendtypes_f", "recvcounts", "recvtypes", "recvtypes_f", "comm"},
}

// A blocking point-to-point call is recorded whole when it returns
// (hmb_mpi_call, cshim/lib/mpicall.h): callBegin reads the clock before the
// PMPI call, the call's post fills c.send and c.recv, and callEnd records
// the region with its messages. A failed call records no message.
// hmbmpi_call sets the fields that say there is no message yet and leaves
// the messages' others unset, where an initializer zeroed all 64 bytes.
const (
	callBegin = "struct hmb_mpi_call c;\nhmbmpi_call(&c, r);"
	callEnd   = "hmb_mpi_call(&c);"
)

// A completion of one request (MPI_Waitany, MPI_Testany; MPI_Wait and
// MPI_Test but on the requests below) writes its request's record with
// its leave, in one probe
// and one clock read (hmb_mpi_leave, cshim/lib/mpicall.h): reqDecl starts
// the record empty, the call's post fills it, reqLeave writes it and
// leaves r. A call that completes several (MPI_Waitall, MPI_Waitsome,
// MPI_Testall, MPI_Testsome) writes the records its struct hmbmpi_reqs
// gathered (reqsLeave).
const (
	reqDecl   = "struct hmb_mpi_req rq = HMBMPI_NO_REQ;"
	reqLeave  = "hmb_mpi_leave(r, &rq, 1);"
	reqsLeave = "hmb_mpi_leave(r, q.rq, q.nrq);"
)

// MPI_Wait and MPI_Test on a point-to-point request the wrappers started
// are recorded whole as well; on any other request they keep their two
// probes (hmbmpi_p2p_request, cshim/mpi/mpi_internal.h). The request's
// entry that hmbmpi_p2p_request found is taken after the call without a
// second lookup (hmbmpi_complete_ref).
const (
	completionDecl  = "MPI_Request before = *request;\n" + reqDecl + "\nstruct hmbmpi_ref ref;\nint whole = hmbmpi_p2p_request(before, &ref);"
	completionEnter = "uint64_t t0 = hmbmpi_completion_enter(r, whole);"
	completionLeave = "hmbmpi_completion_leave(r, whole, t0, &rq);"
)

// A call that starts a request (MPI_Isend, MPI_Irecv, MPI_Imrecv) runs no
// program code, so it is recorded whole when it returns, as a blocking
// call is (hmb_mpi_req_call, cshim/lib/mpicall.h): reqBegin reads the
// clock before the PMPI call, reqCall writes the enter at that time, the
// request's record and the leave.
const (
	reqBegin = "uint64_t t0 = hmbmpi_now();"
	reqCall  = "hmb_mpi_req_call(r, t0, &rq);"
)

// specOf returns what f's kind does.
func specOf(f *fn) spec {
	switch f.kind {
	case "region":
		return spec{}
	case "init", "init_thread":
		return spec{post: "hmbmpi_after_init();"}
	case "finalize":
		// The collective end of the run is inside MPI_Finalize's region:
		// its time is the measurement's, not the program's between its
		// last call and MPI_Finalize (which variation would take for
		// work).
		return spec{enter: "hmbmpi_enter(r);\nhmbmpi_before_finalize();", after: "hmbmpi_after_finalize();"}
	case "abort":
		return spec{uses: []string{"comm"}}
	// A blocking call's messages go with its region, recorded in one probe
	// after the call, which reads the clock once before it and once after.
	case "send":
		return spec{uses: []string{"comm", "dest", "tag", "count", "datatype"}, enter: callBegin,
			post: "hmbmpi_send(&c.send, comm, dest, tag, count, datatype);", leave: callEnd}
	case "recv":
		return spec{uses: []string{"comm", "datatype"}, status: "status", enter: callBegin,
			post: "hmbmpi_recv(&c.recv, comm, datatype, status);", leave: callEnd}
	case "sendrecv":
		return spec{uses: []string{"comm", "dest", "sendtag", "sendcount", "sendtype", "recvtype"}, status: "status",
			enter: callBegin, leave: callEnd,
			post: "hmbmpi_send(&c.send, comm, dest, sendtag, sendcount, sendtype);\nhmbmpi_recv(&c.recv, comm, recvtype, status);"}
	case "sendrecv_replace":
		return spec{uses: []string{"comm", "dest", "sendtag", "count", "datatype"}, status: "status",
			enter: callBegin, leave: callEnd,
			post: "hmbmpi_send(&c.send, comm, dest, sendtag, count, datatype);\nhmbmpi_recv(&c.recv, comm, datatype, status);"}
	case "isend":
		return spec{uses: []string{"comm", "dest", "tag", "count", "datatype", "request>"}, pre: reqDecl,
			enter: reqBegin, post: "hmbmpi_isend(&rq, comm, dest, tag, count, datatype, *request);", leave: reqCall}
	case "send_init":
		return spec{uses: []string{"comm", "dest", "tag", "count", "datatype", "request>"},
			post: "hmbmpi_send_init(comm, dest, tag, count, datatype, *request);"}
	case "irecv":
		return spec{uses: []string{"comm", "source", "datatype", "request>"}, pre: reqDecl,
			enter: reqBegin, post: "hmbmpi_irecv(&rq, comm, source, datatype, *request);", leave: reqCall}
	case "recv_init":
		return spec{uses: []string{"comm", "source", "datatype", "request>"},
			post: "hmbmpi_recv_init(comm, source, datatype, *request);"}
	case "start":
		return spec{uses: []string{"request"}, post: "hmbmpi_start(*request);"}
	case "startall":
		return spec{uses: []string{"count"},
			post:  "for (int i = 0; i < count; i++) {\n\thmbmpi_start(array_of_requests[i]);\n}",
			fpost: "for (int i = 0; i < count; i++) {\n\thmbmpi_start(MPI_Request_f2c(f_array_of_requests[i]));\n}"}
	case "wait":
		return spec{uses: []string{"request"}, status: "status", pre: completionDecl, enter: completionEnter,
			post: "hmbmpi_complete_ref(&rq, before, status, &ref);", leave: completionLeave}
	case "test":
		return spec{uses: []string{"request", "flag>"}, status: "status", pre: completionDecl, enter: completionEnter,
			post: "if (*flag) {\n\thmbmpi_complete_ref(&rq, before, status, &ref);\n}", leave: completionLeave}
	case "request_free":
		return spec{uses: []string{"request"},
			pre: "MPI_Request before = *request;", post: "hmbmpi_request_free(before);"}
	case "waitany", "testany":
		cond := "*index != MPI_UNDEFINED"
		fcond := "*f_index != MPI_UNDEFINED"
		if f.kind == "testany" {
			cond, fcond = "*flag && "+cond, "*f_flag && "+fcond
		}
		return spec{uses: []string{"count"}, status: "status",
			pre:    "struct hmbmpi_reqs q;\nif (!hmbmpi_reqs_take(&q, count, array_of_requests, 0, MPI_STATUSES_IGNORE)) {\n\t$PLAIN\n}\n" + reqDecl,
			fpre:   "struct hmbmpi_reqs q;\nif (!hmbmpi_reqs_take_f(&q, count, f_array_of_requests, 0, NULL)) {\n\t$PLAIN\n}\n" + reqDecl,
			post:   "if (" + cond + ") {\n\thmbmpi_complete(&rq, q.before[*index], status);\n}",
			fpost:  "if (" + fcond + ") { /* a Fortran index counts from 1 */\n\thmbmpi_complete(&rq, q.before[*f_index - 1], status);\n}",
			leave:  reqLeave,
			after:  "hmbmpi_reqs_free(&q);",
			fafter: "hmbmpi_reqs_free(&q);"}
	case "waitall", "testall":
		done, fdone := "", ""
		if f.kind == "testall" {
			done, fdone = "if (rc == MPI_ERR_IN_STATUS || (rc == MPI_SUCCESS && *flag)) ", "if (rc == MPI_ERR_IN_STATUS || (rc == MPI_SUCCESS && *f_flag)) "
		}
		return spec{uses: []string{"count"},
			pre:     "struct hmbmpi_reqs q;\nif (!hmbmpi_reqs_take(&q, count, array_of_requests, 1, array_of_statuses)) {\n\t$PLAIN\n}",
			fpre:    "struct hmbmpi_reqs q;\nif (!hmbmpi_reqs_take_f(&q, count, f_array_of_requests, 1, f_array_of_statuses)) {\n\t$PLAIN\n}",
			always:  done + "hmbmpi_completed_all(&q, count, rc);",
			falways: fdone + "hmbmpi_completed_all_f(&q, count, rc);",
			leave:   reqsLeave,
			after:   "hmbmpi_reqs_free(&q);", fafter: "hmbmpi_reqs_free(&q);",
			ccall: map[string]string{"array_of_statuses": "q.st"}, fcall: map[string]string{"array_of_statuses": "q.fst"}}
	case "waitsome", "testsome":
		return spec{uses: []string{"incount"},
			pre:     "struct hmbmpi_reqs q;\nif (!hmbmpi_reqs_take(&q, incount, array_of_requests, 1, array_of_statuses)) {\n\t$PLAIN\n}",
			fpre:    "struct hmbmpi_reqs q;\nif (!hmbmpi_reqs_take_f(&q, incount, f_array_of_requests, 1, f_array_of_statuses)) {\n\t$PLAIN\n}",
			always:  "hmbmpi_completed_some(&q, *outcount, array_of_indices, rc);",
			falways: "hmbmpi_completed_some_f(&q, *f_outcount, f_array_of_indices, rc);",
			leave:   reqsLeave,
			after:   "hmbmpi_reqs_free(&q);", fafter: "hmbmpi_reqs_free(&q);",
			ccall: map[string]string{"array_of_statuses": "q.st"}, fcall: map[string]string{"array_of_statuses": "q.fst"}}
	case "mprobe":
		s := spec{uses: []string{"comm", "message>"}, post: "hmbmpi_mprobe(comm, *message);"}
		if f.param("flag") != nil {
			s.uses = append(s.uses, "flag>")
			s.post = "if (*flag) {\n\t" + s.post + "\n}"
		}
		return s
	case "mrecv":
		return spec{uses: []string{"message", "datatype"}, status: "status",
			pre: "MPI_Message before = *message;", enter: callBegin,
			post: "hmbmpi_mrecv(&c.recv, before, datatype, status);", leave: callEnd}
	case "imrecv":
		return spec{uses: []string{"message", "datatype", "request>"},
			pre: "MPI_Message before = *message;\n" + reqDecl, enter: reqBegin,
			post: "hmbmpi_imrecv(&rq, before, datatype, *request);", leave: reqCall}
	case "coll", "icoll":
		args := shapes[f.shape]
		var uses, cargs []string
		pre := "struct hmbmpi_coll c;\n"
		for _, a := range args {
			cargs = append(cargs, a)
			if strings.HasSuffix(a, "_f") {
				continue
			}
			uses = append(uses, a)
		}
		cpre := pre
		for _, a := range args {
			if strings.HasSuffix(a, "_f") {
				cpre += "const MPI_Fint *" + a + " = NULL; /* C: the MPI_Datatype array */\n"
			}
		}
		call := "hmbmpi_coll_" + f.shape + "(&c, " + strings.Join(cargs, ", ") + ");"
		s := spec{uses: uses, pre: cpre + call, fpre: pre + call, enter: "hmbmpi_coll_enter(r, &c);"}
		if f.kind == "icoll" {
			s.uses = append(s.uses, "request>")
			s.enter = "hmbmpi_icoll_enter(r, &c);"
			s.post = "hmbmpi_icoll(r, &c, *request);"
		}
		return s
	case "comm", "comm_idup":
		parent, out := "MPI_COMM_NULL", ""
		var uses []string
		for _, p := range f.params {
			switch {
			case p.typ == "MPI_Comm" && parent == "MPI_COMM_NULL":
				parent = p.name
				uses = append(uses, p.name)
			case p.typ == "MPI_Comm *" && out == "":
				out = p.name
			}
		}
		if f.kind == "comm_idup" {
			return spec{uses: append(uses, "request>"),
				post:  "hmbmpi_comm_idup(" + parent + ", " + out + ", NULL, *request);",
				fpost: "hmbmpi_comm_idup(" + parent + ", NULL, f_" + out + ", *request);"}
		}
		return spec{uses: append(uses, out+">"), post: "hmbmpi_comm_created(" + parent + ", *" + out + ");"}
	}
	if s, ok := rmaSpec(f); ok {
		return s
	}
	return spec{}
}
