/*
 * mpi_internal.h - what the generated wrappers (wrappers_gen.c,
 * fortran_gen.c) call: the helpers of hmbtrace_mpi.c, written by hand,
 * which keep the request table, translate ranks into world ranks, number
 * communicators and requests, and record through hmbtrace.h.
 */
#ifndef HMBTRACE_MPI_INTERNAL_H
#define HMBTRACE_MPI_INTERNAL_H

#include <mpi.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "hmbtrace.h"
#include "shim.h" /* hmb_count_dropped, HMB_NOINST */
#include "mpicall.h"
#include "api_compat.h"
#include "regions_gen.h"

/* Region ids plus one, 0 until looked up (see hmbmpi_region). */
extern uint64_t hmbmpi_region_ids[HMBMPI_R_COUNT];
extern const char *const hmbmpi_region_names[HMBMPI_R_COUNT];
uint32_t hmbmpi_region_slow(int r);

/* hmbmpi_region returns the region of wrapped function r, defined on first
 * use; id 0 (measurement off) is cached too. */
HMB_NOINST static inline uint32_t hmbmpi_region(int r)
{
	uint64_t id = __atomic_load_n(&hmbmpi_region_ids[r], __ATOMIC_RELAXED);
	return id != 0 ? (uint32_t)(id - 1) : hmbmpi_region_slow(r);
}

/*
 * 0 not known yet, 2 off; on (or failed to start: probes are counted), 1
 * with the TSC as the clock, 3 with CLOCK_MONOTONIC. One word says both, so
 * that a thread that sees the wrappers on sees their clock.
 */
enum { HMBMPI_ON_TSC = 1, HMBMPI_OFF = 2, HMBMPI_ON_MONOTONIC = 3 };
extern int hmbmpi_off_state;
int hmbmpi_off_slow(void);

/* hmbmpi_off tells whether HMB_ENABLE=0: the wrappers then call PMPI_X only. */
HMB_NOINST static inline int hmbmpi_off(void)
{
	int s = __atomic_load_n(&hmbmpi_off_state, __ATOMIC_RELAXED);
	return s != 0 ? s == HMBMPI_OFF : hmbmpi_off_slow();
}

/*
 * hmbmpi_now reads hmb_clock() inline, after hmbmpi_off said the wrappers
 * are on: a blocking call's time before its PMPI call (hmb_mpi_call), which
 * a call into libhmbtrace would delay.
 */
HMB_NOINST static inline uint64_t hmbmpi_now(void)
{
	return hmb_clock_read(__atomic_load_n(&hmbmpi_off_state, __ATOMIC_RELAXED) == HMBMPI_ON_TSC);
}

/* The environment. */
void hmbmpi_after_init(void);
void hmbmpi_before_finalize(void);
void hmbmpi_after_finalize(void);
void hmbmpi_abort(uint32_t region, MPI_Comm comm);

/*
 * Point-to-point: peers are ranks of comm, translated into world ranks. A
 * blocking call is recorded whole when it returns, its messages with its
 * region, in one probe (hmb_mpi_call, mpicall.h): hmbmpi_send, hmbmpi_recv
 * and hmbmpi_mrecv say what they are, a peer of -1 for none.
 */
/*
 * hmbmpi_call begins call c of region r: its time before the PMPI call, no
 * message yet. A message's fields other than its peer are read only where
 * the peer is not -1 (hmbmpi_send and hmbmpi_recv set them all), so they
 * are left unset: an initializer would store all 64 bytes of c first.
 */
HMB_NOINST static inline void hmbmpi_call(struct hmb_mpi_call *c, uint32_t r)
{
	c->t0 = hmbmpi_now();
	c->region = r;
	c->send.peer = -1;
	c->recv.peer = -1;
}
void hmbmpi_send_slow(struct hmb_mpi_msg *m, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type);
void hmbmpi_recv_slow(struct hmb_mpi_msg *m, MPI_Comm comm, MPI_Datatype type, const MPI_Status *st);
uint64_t hmbmpi_status_bytes_slow(const MPI_Status *st, MPI_Datatype type);

/* MPI_COMM_WORLD, whose ranks are world ranks: its size (0 before
 * MPI_Init) and its id in the trace. */
extern int hmbmpi_world_size;
extern uint32_t hmbmpi_world_id;

/*
 * hmbmpi_type_size is PMPI_Type_size without the call for the predefined
 * types programs send most, whose sizes are those of their C types; 0 if
 * the size is not known.
 */
HMB_NOINST static inline int hmbmpi_type_size(MPI_Datatype type, int *size)
{
	if (type == MPI_DOUBLE) {
		*size = (int)sizeof(double);
	} else if (type == MPI_BYTE || type == MPI_CHAR) {
		*size = 1;
	} else if (type == MPI_INT) {
		*size = (int)sizeof(int);
	} else if (type == MPI_FLOAT) {
		*size = (int)sizeof(float);
	} else if (PMPI_Type_size(type, size) != MPI_SUCCESS || *size < 0) {
		return 0;
	}
	return 1;
}

/*
 * hmbmpi_send says what a blocking send sends, a peer of -1 for nothing to
 * record. The common call, on MPI_COMM_WORLD to a rank of it, is seen to
 * inline; any other goes to hmbmpi_send_slow, which translates the rank.
 */
HMB_NOINST static inline void hmbmpi_send(struct hmb_mpi_msg *m, MPI_Comm comm, int dest, int tag, int count,
					  MPI_Datatype type)
{
	int size;
	if (__builtin_expect(comm == MPI_COMM_WORLD && dest >= 0 && dest < hmbmpi_world_size && tag >= 0 && count >= 0 &&
				     type != MPI_DATATYPE_NULL,
			     1) &&
	    __builtin_expect(hmbmpi_type_size(type, &size), 1)) {
		m->peer = dest;
		m->tag = (uint32_t)tag;
		m->comm = hmbmpi_world_id;
		m->bytes = (uint64_t)count * (uint64_t)size;
		return;
	}
	hmbmpi_send_slow(m, comm, dest, tag, count, type);
}

/*
 * hmbmpi_status_bytes returns the bytes a completed receive's status
 * tells. Open MPI keeps them in the status (_ucount, from 1.7 to 5 at
 * least): read there, they cost no call and no division (MPI_Get_count
 * divides by the datatype's size).
 */
#if defined(OPEN_MPI) && OPEN_MPI && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 2 && OMPI_MAJOR_VERSION <= 5
#define HMBMPI_UCOUNT 1
#else
#define HMBMPI_UCOUNT 0
#endif
HMB_NOINST static inline uint64_t hmbmpi_status_bytes(const MPI_Status *st, MPI_Datatype type)
{
#if HMBMPI_UCOUNT
	(void)type;
	return (uint64_t)st->_ucount;
#else
	return hmbmpi_status_bytes_slow(st, type);
#endif
}

/*
 * hmbmpi_status_cancelled says whether a completed request's status tells
 * that it was cancelled: read in the status where Open MPI keeps it
 * (_cancelled, beside _ucount), else through PMPI_Test_cancelled, a call
 * on every completion.
 */
HMB_NOINST static inline int hmbmpi_status_cancelled(const MPI_Status *st)
{
#if HMBMPI_UCOUNT
	return st->_cancelled != 0;
#else
	int flag = 0;
	PMPI_Test_cancelled(st, &flag);
	return flag;
#endif
}

/* hmbmpi_recv says what a blocking receive received, as hmbmpi_send does. */
HMB_NOINST static inline void hmbmpi_recv(struct hmb_mpi_msg *m, MPI_Comm comm, MPI_Datatype type,
					  const MPI_Status *st)
{
	if (__builtin_expect(comm == MPI_COMM_WORLD && st->MPI_SOURCE >= 0 && st->MPI_SOURCE < hmbmpi_world_size, 1)) {
		m->peer = st->MPI_SOURCE;
		m->tag = (uint32_t)st->MPI_TAG;
		m->comm = hmbmpi_world_id;
		m->bytes = hmbmpi_status_bytes(st, type);
		return;
	}
	hmbmpi_recv_slow(m, comm, type, st);
}

/*
 * HMBMPI_ABLATE takes part of a blocking call's work out of its wrapper, to
 * measure what each part costs (cshim/bench/mpi_ablate.sh builds the
 * library once per level; never in a library a user gets, whose traces it
 * would empty): 1, the two clock reads only, nothing recorded; 2, the clock
 * reads and the call's region recorded (hmb_mpi_call), but no message: no
 * status read, no rank translation, no matrix line, no message encoded.
 * 0, the default, is the whole wrapper.
 */
#ifndef HMBMPI_ABLATE
#define HMBMPI_ABLATE 0
#endif
#if HMBMPI_ABLATE == 1
/* The second clock read goes to a sink, so that the compiler keeps it. */
extern volatile uint64_t hmbmpi_ablate_sink;
#define hmb_mpi_call(c) ((void)(hmbmpi_ablate_sink = hmbmpi_now() - (c)->t0))
#endif
#if HMBMPI_ABLATE == 1 || HMBMPI_ABLATE == 2
#define hmbmpi_send(m, comm, dest, tag, count, type) ((void)(m))
#define hmbmpi_recv(m, comm, type, st) ((void)(m))
#endif

/* The enter and leave of MPI region r with no message. */
#define hmbmpi_enter(r) hmb_enter_send((r), -1, 0, 0, 0)
#define hmbmpi_leave(r) hmb_recv_leave((r), -1, 0, 0, 0)
/*
 * A non-blocking call and a completion write their request's record with
 * their leave, at one clock read (hmb_mpi_leave, mpicall.h): hmbmpi_isend,
 * hmbmpi_irecv, hmbmpi_imrecv and hmbmpi_complete say in *q what to write
 * (kind 0: nothing; HMBMPI_NO_REQ starts it so), and hmb_mpi_leave leaves
 * the region with it.
 */
#define HMBMPI_NO_REQ {.kind = 0}
void hmbmpi_isend(struct hmb_mpi_req *q, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
		  MPI_Request req);
void hmbmpi_irecv(struct hmb_mpi_req *q, MPI_Comm comm, int source, MPI_Datatype type, MPI_Request req);
/*
 * A completion of one request (MPI_Wait, MPI_Test) is recorded whole when
 * it returns (hmb_mpi_req_call) if the request is a point-to-point one the
 * wrappers started (hmbmpi_p2p_request; MPI_REQUEST_NULL too): completing
 * it runs no program code. Any other (a generalized request, whose
 * callbacks run inside the call; a collective's, whose completion record
 * is written before the leave) keeps a probe before the call and one
 * after. hmbmpi_completion_enter returns the time before the PMPI call if
 * whole, after the enter's probe if not; hmbmpi_completion_leave writes
 * the record q and the leave.
 */
/*
 * What hmbmpi_p2p_request found of a request, for hmbmpi_complete_ref:
 * the slot of its entry and the entry's insertion number (0: none).
 */
struct hmbmpi_ref {
	size_t slot;
	uint64_t seq;
};
int hmbmpi_p2p_request(MPI_Request req, struct hmbmpi_ref *ref);
HMB_NOINST static inline uint64_t hmbmpi_completion_enter(uint32_t r, int whole)
{
	if (whole) {
		return hmbmpi_now();
	}
	hmbmpi_enter(r);
	return 0;
}
HMB_NOINST static inline void hmbmpi_completion_leave(uint32_t r, int whole, uint64_t t0, const struct hmb_mpi_req *q)
{
	if (whole) {
		hmb_mpi_req_call(r, t0, q);
	} else {
		hmb_mpi_leave(r, q, 1);
	}
}
void hmbmpi_send_init(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type, MPI_Request req);
void hmbmpi_recv_init(MPI_Comm comm, int source, MPI_Datatype type, MPI_Request req);
void hmbmpi_start(MPI_Request req);
void hmbmpi_complete(struct hmb_mpi_req *q, MPI_Request before, const MPI_Status *st);
/*
 * hmbmpi_complete_ref is hmbmpi_complete for a request whose entry
 * hmbmpi_p2p_request found before the call (*ref): taken from its slot if
 * it is still there, without a second lookup.
 */
void hmbmpi_complete_ref(struct hmb_mpi_req *q, MPI_Request before, const MPI_Status *st,
			 const struct hmbmpi_ref *ref);
void hmbmpi_request_free(MPI_Request before);
void hmbmpi_mprobe(MPI_Comm comm, MPI_Message msg);
void hmbmpi_mrecv(struct hmb_mpi_msg *m, MPI_Message before, MPI_Datatype type, const MPI_Status *st);
void hmbmpi_imrecv(struct hmb_mpi_req *q, MPI_Message before, MPI_Datatype type, MPI_Request req);

/*
 * Arrays of requests: a copy taken before a call that completes some of
 * them (it overwrites completed ones with MPI_REQUEST_NULL), statuses to
 * read when the program passed MPI_STATUSES_IGNORE, and the records of the
 * completions, rq[0..nrq), which the call's leave writes (hmb_mpi_leave).
 */
struct hmbmpi_reqs {
	MPI_Request small[16], *before;
	MPI_Status smallst[16], *st, *given;
	MPI_Fint *fst, *fgiven; /* Fortran: statuses of HMBMPI_F_STATUS_SIZE integers */
	struct hmb_mpi_req smallrq[16], *rq;
	int nrq;
};
int hmbmpi_reqs_take(struct hmbmpi_reqs *q, int count, const MPI_Request reqs[], int with_statuses,
		     MPI_Status *statuses);
void hmbmpi_reqs_free(struct hmbmpi_reqs *q);
void hmbmpi_completed_all(struct hmbmpi_reqs *q, int count, int rc);
void hmbmpi_completed_some(struct hmbmpi_reqs *q, int n, const int indices[], int rc);

/* Collectives: the root as a world rank (-1: none or not this side's), the
 * bytes of this process's send buffers and of its receive buffers. */
struct hmbmpi_coll {
	int root;
	uint64_t sent, received;
	uint32_t comm;
};
void hmbmpi_coll_enter(uint32_t region, const struct hmbmpi_coll *c);
void hmbmpi_icoll_enter(uint32_t region, const struct hmbmpi_coll *c);
void hmbmpi_icoll(uint32_t region, const struct hmbmpi_coll *c, MPI_Request req);
void hmbmpi_coll_barrier(struct hmbmpi_coll *c, MPI_Comm comm);
void hmbmpi_coll_bcast(struct hmbmpi_coll *c, int count, MPI_Datatype type, int root, MPI_Comm comm);
void hmbmpi_coll_reduce(struct hmbmpi_coll *c, int count, MPI_Datatype type, int root, MPI_Comm comm);
void hmbmpi_coll_allreduce(struct hmbmpi_coll *c, int count, MPI_Datatype type, MPI_Comm comm);
void hmbmpi_coll_scan(struct hmbmpi_coll *c, int count, MPI_Datatype type, MPI_Comm comm);
void hmbmpi_coll_gather(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
void hmbmpi_coll_gatherv(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			 const int recvcounts[], MPI_Datatype recvtype, int root, MPI_Comm comm);
void hmbmpi_coll_scatter(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype, const void *recvbuf,
			 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
void hmbmpi_coll_scatterv(struct hmbmpi_coll *c, const int sendcounts[], MPI_Datatype sendtype,
			  const void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
void hmbmpi_coll_allgather(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_allgatherv(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_alltoall(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_alltoallv(struct hmbmpi_coll *c, const void *sendbuf, const int sendcounts[],
			   MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_alltoallw(struct hmbmpi_coll *c, const void *sendbuf, const int sendcounts[],
			   const MPI_Datatype sendtypes[], const MPI_Fint *sendtypes_f, const int recvcounts[],
			   const MPI_Datatype recvtypes[], const MPI_Fint *recvtypes_f, MPI_Comm comm);
void hmbmpi_coll_reduce_scatter(struct hmbmpi_coll *c, const int recvcounts[], MPI_Datatype type, MPI_Comm comm);
void hmbmpi_coll_reduce_scatter_block(struct hmbmpi_coll *c, int recvcount, MPI_Datatype type, MPI_Comm comm);
void hmbmpi_coll_neighbor_allgather(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype, int recvcount,
				    MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_neighbor_allgatherv(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype,
				     const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_neighbor_alltoall(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype, int recvcount,
				   MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_neighbor_alltoallv(struct hmbmpi_coll *c, const int sendcounts[], MPI_Datatype sendtype,
				    const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm);
void hmbmpi_coll_neighbor_alltoallw(struct hmbmpi_coll *c, const int sendcounts[], const MPI_Datatype sendtypes[],
				    const MPI_Fint *sendtypes_f, const int recvcounts[],
				    const MPI_Datatype recvtypes[], const MPI_Fint *recvtypes_f, MPI_Comm comm);

/* Communicators: define newcomm, made from parent (MPI_COMM_NULL: none). */
void hmbmpi_comm_created(MPI_Comm parent, MPI_Comm newcomm);
void hmbmpi_comm_idup(MPI_Comm parent, MPI_Comm *newcomm, MPI_Fint *fnewcomm, MPI_Request req);

/*
 * One-sided communication (rma.c). HMBMPI_ALL stands for every target of a
 * window (MPI_Win_lock_all, MPI_Win_flush_all, ...).
 */
#define HMBMPI_ALL INT_MIN
struct hmbmpi_win_free {
	uint32_t id; /* the window's id in the trace, 0 if it has none */
	unsigned op; /* the collective operation of its RmaCollectiveEnd */
};
void hmbmpi_win_created(int rc, MPI_Comm comm, MPI_Win win, int allocated);
void hmbmpi_win_free_begin(struct hmbmpi_win_free *f, MPI_Win win);
void hmbmpi_win_free_end(const struct hmbmpi_win_free *f);
void hmbmpi_win_name(MPI_Win win, const char *name);
void hmbmpi_rma_op(MPI_Win win, int target, unsigned kind, unsigned type, int scount, MPI_Datatype stype, int rcount,
		   MPI_Datatype rtype, MPI_Request req);
void hmbmpi_win_fence(int rc, MPI_Win win);
void hmbmpi_win_lock(MPI_Win win, int rank, int lock_type);
void hmbmpi_win_unlock(MPI_Win win, int rank);
void hmbmpi_win_flush(MPI_Win win, int rank, int remote);
void hmbmpi_win_sync(MPI_Win win);
void hmbmpi_win_group(MPI_Win win, MPI_Group group, int exposure);
void hmbmpi_win_complete(MPI_Win win, int exposure);
/* What rma.c takes from hmbtrace_mpi.c: a communicator's id, a group's
 * world ranks (malloc'd), this process's world rank, a new matching id
 * (the requests' counter), and the request of an R* operation, which
 * MPI_Wait or MPI_Test completes with RmaOpCompleteNonBlocking. */
uint32_t hmbmpi_comm_id(MPI_Comm comm);
int *hmbmpi_group_world(MPI_Group g, int *n);
int hmbmpi_world_rank(void);
uint64_t hmbmpi_new_id(void);
void hmbmpi_rma_request(MPI_Request req, uint32_t win, uint64_t id);

/*
 * Fortran: OpenMPI's bindings (mpif.h, use mpi, use mpi_f08) are C
 * functions named after the compilers' mangling; libhmbtrace-mpi is built
 * with them when libmpi_mpifh is there (HMBMPI_FORTRAN).
 */
#ifndef HMBMPI_FORTRAN
#define HMBMPI_FORTRAN 0
#endif
#ifndef HMBMPI_F08
#define HMBMPI_F08 0
#endif
#define HMBMPI_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#define HMBMPI_EXPORT __attribute__((visibility("default")))
#define HMBMPI_FORTRAN_ALIAS(impl, name) \
	extern __typeof__(impl) name __attribute__((alias(#impl), visibility("default")));
const void *hmbmpi_fbuf(const void *p);
int hmbmpi_f_status_ignore(const MPI_Fint *st);
int hmbmpi_reqs_take_f(struct hmbmpi_reqs *q, int count, const MPI_Fint reqs[], int with_statuses,
		       MPI_Fint *statuses);
void hmbmpi_completed_all_f(struct hmbmpi_reqs *q, int count, int rc);
void hmbmpi_completed_some_f(struct hmbmpi_reqs *q, int n, const MPI_Fint indices[], int rc);

#endif
