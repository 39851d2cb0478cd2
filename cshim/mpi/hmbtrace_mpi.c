/*
 * hmbtrace_mpi.c - libhmbtrace-mpi: PMPI wrappers that trace an MPI program
 * with no source change. Linked before the MPI library, each wrapper
 * records its call as a region, point-to-point messages as send and receive
 * events (peer as world rank, tag, bytes), collectives as regions of the
 * collective class with their root and bytes, then calls the PMPI_ entry
 * point and returns what it returned. At MPI_Init the process learns its
 * rank and measures its clock's offset to rank 0; at MPI_Finalize it
 * measures again, and at exit it writes <dir>/<name>.<rank>.hmb.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hmbtrace.h"
#include "shim.h" /* hmb_count_dropped, HMB_NOINST */

/* Region ids, defined on first use (hmb_region is idempotent). */
enum {
	R_INIT, R_INIT_THREAD, R_FINALIZE, R_SEND, R_SSEND, R_BSEND, R_RECV, R_ISEND, R_IRECV,
	R_WAIT, R_WAITALL, R_WAITANY, R_WAITSOME, R_TEST, R_TESTALL, R_TESTANY, R_TESTSOME, R_SENDRECV, R_BARRIER, R_BCAST, R_REDUCE, R_ALLREDUCE,
	R_GATHER, R_SCATTER, R_ALLGATHER, R_ALLTOALL, R_COUNT
};
static const char *region_names[R_COUNT] = {
	"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Recv",
	"MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test",
	"MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Sendrecv", "MPI_Barrier",
	"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall",
};
/* region_ids[r] is the id plus one, 0 until looked up: id 0 (measurement
 * off) is cached too, so an untraced run pays no lookup per call. */
static uint64_t region_ids[R_COUNT];

HMB_NOINST static uint32_t region(int r)
{
	uint64_t id = __atomic_load_n(&region_ids[r], __ATOMIC_RELAXED);
	if (id == 0) {
		/* MPI regions: kept longest by the buffer, never throttled. */
		id = (uint64_t)hmb_region_paradigm(region_names[r], HMB_PARADIGM_MPI) + 1;
		__atomic_store_n(&region_ids[r], id, __ATOMIC_RELAXED);
	}
	return (uint32_t)(id - 1);
}

/*
 * off tells whether the measurement is off (HMB_ENABLE=0): the wrappers
 * then call the MPI library straight away. A measurement that failed to
 * start is not off: its probes are dropped and counted.
 */
static int off_state; /* 0 not known yet, 1 on or failed, 2 off */

HMB_NOINST static int off(void)
{
	int s = __atomic_load_n(&off_state, __ATOMIC_RELAXED);
	if (s == 0) {
		s = hmb_init() == 0 && region(R_INIT) == 0 ? 2 : 1;
		__atomic_store_n(&off_state, s, __ATOMIC_RELAXED);
	}
	return s == 2;
}

static int world_rank = -1, world_size = 0;
static MPI_Comm sync_comm = MPI_COMM_NULL;

/*
 * A communicator's ranks in MPI_COMM_WORLD (the remote group's, for an
 * inter-communicator), cached on it as an attribute, which MPI frees with
 * the communicator: a call on a sub-communicator translates its peer with a
 * lookup, not with two groups per call.
 */
struct world_ranks {
	int n;
	int rank[]; /* MPI_UNDEFINED for a process outside MPI_COMM_WORLD */
};
static int ranks_key = MPI_KEYVAL_INVALID; /* created by after_init */
static pthread_mutex_t ranks_mu = PTHREAD_MUTEX_INITIALIZER;

HMB_NOINST static int ranks_delete(MPI_Comm comm, int key, void *val, void *extra)
{
	(void)comm;
	(void)key;
	(void)extra;
	free(val);
	return MPI_SUCCESS;
}

/* world_ranks_new translates every rank of comm's (remote) group; NULL if MPI or memory fails. */
HMB_NOINST static struct world_ranks *world_ranks_new(MPI_Comm comm)
{
	int inter = 0, n = 0;
	MPI_Group g, wg;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
	    (inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS) {
		return NULL;
	}
	struct world_ranks *w = NULL;
	int *in = NULL;
	if (PMPI_Group_size(g, &n) == MPI_SUCCESS && n >= 0 &&
	    (w = malloc(sizeof *w + (size_t)n * sizeof w->rank[0])) != NULL &&
	    (in = malloc(((size_t)n + 1) * sizeof *in)) != NULL &&
	    PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
		for (int i = 0; i < n; i++) {
			in[i] = i;
		}
		w->n = n;
		int rc = n > 0 ? PMPI_Group_translate_ranks(g, n, in, wg, w->rank) : MPI_SUCCESS;
		PMPI_Group_free(&wg);
		if (rc != MPI_SUCCESS) {
			free(w);
			w = NULL;
		}
	} else {
		free(w);
		w = NULL;
	}
	free(in);
	PMPI_Group_free(&g);
	return w;
}

/*
 * world translates rank of comm into a rank of MPI_COMM_WORLD; it returns
 * -1 for a rank no process has (MPI_ANY_SOURCE, MPI_PROC_NULL, a rank out of
 * range: the call will fail), and NO_TRANSLATION if MPI or memory failed
 * to make the translation.
 */
#define NO_TRANSLATION (-2)

/* world_rank_in looks rank up in w, as world answers (w NULL: not made). */
HMB_NOINST static int world_rank_in(const struct world_ranks *w, int rank)
{
	if (w == NULL) {
		return NO_TRANSLATION;
	}
	return rank < w->n && w->rank[rank] != MPI_UNDEFINED ? w->rank[rank] : -1;
}

HMB_NOINST static int world(MPI_Comm comm, int rank)
{
	if (rank < 0) {
		return -1;
	}
	if (comm == MPI_COMM_WORLD) {
		return rank < world_size ? rank : -1;
	}
	void *val = NULL;
	int flag = 0;
	struct world_ranks *w = NULL;
	if (ranks_key != MPI_KEYVAL_INVALID && PMPI_Comm_get_attr(comm, ranks_key, &val, &flag) == MPI_SUCCESS && flag) {
		w = val;
	} else {
		/* Under a lock, so that two threads do not both set it: the second
		 * would free the first's table while it reads it. */
		pthread_mutex_lock(&ranks_mu);
		if (ranks_key != MPI_KEYVAL_INVALID && PMPI_Comm_get_attr(comm, ranks_key, &val, &flag) == MPI_SUCCESS && flag) {
			w = val;
		} else if ((w = world_ranks_new(comm)) != NULL &&
			   (ranks_key == MPI_KEYVAL_INVALID || PMPI_Comm_set_attr(comm, ranks_key, w) != MPI_SUCCESS)) {
			/* Not cached: used once. */
			int out = world_rank_in(w, rank);
			free(w);
			pthread_mutex_unlock(&ranks_mu);
			return out;
		}
		pthread_mutex_unlock(&ranks_mu);
	}
	return world_rank_in(w, rank);
}

/* root_of is a collective's root in MPI_COMM_WORLD, -1 if none or not known. */
HMB_NOINST static int root_of(MPI_Comm comm, int root)
{
	int w = world(comm, root);
	return w < 0 ? -1 : w;
}

HMB_NOINST static uint64_t bytes(int count, MPI_Datatype type)
{
	int size = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) {
		return 0;
	}
	return (uint64_t)count * (uint64_t)size;
}

/*
 * Non-blocking receives: their message is recorded when they complete, with
 * the actual source and tag, so the request's communicator and type are
 * kept until then, in a small open-addressing table.
 */
struct pending {
	MPI_Request req;
	MPI_Comm comm;
	MPI_Datatype type;
	int used; /* 1 in use, 2 deleted */
};
static struct pending *pend;
static size_t pend_cap, pend_len;
static pthread_mutex_t pend_mu = PTHREAD_MUTEX_INITIALIZER;

HMB_NOINST static size_t hash_req(MPI_Request r)
{
	uint64_t h = 1469598103934665603ULL;
	const unsigned char *p = (const unsigned char *)&r;
	for (size_t i = 0; i < sizeof r; i++) {
		h = (h ^ p[i]) * 1099511628211ULL;
	}
	return (size_t)h;
}

HMB_NOINST static struct pending *find(MPI_Request r, int insert)
{
	if (pend_cap == 0) {
		return NULL;
	}
	struct pending *tomb = NULL;
	for (size_t i = hash_req(r) & (pend_cap - 1), n = 0; n < pend_cap; i = (i + 1) & (pend_cap - 1), n++) {
		struct pending *e = &pend[i];
		if (e->used == 0) {
			return insert ? (tomb != NULL ? tomb : e) : NULL;
		}
		if (e->used == 2) {
			if (tomb == NULL) {
				tomb = e;
			}
			continue;
		}
		if (memcmp(&e->req, &r, sizeof r) == 0) {
			return e;
		}
	}
	return insert ? tomb : NULL;
}

/*
 * pend_drop_unseen counts the receives still pending at MPI_Finalize as
 * dropped: they completed where no wrapper saw them (a call not wrapped,
 * or made untraced for lack of memory), or never.
 */
HMB_NOINST static void pend_drop_unseen(void)
{
	pthread_mutex_lock(&pend_mu);
	size_t n = pend_len;
	free(pend);
	pend = NULL;
	pend_cap = pend_len = 0;
	pthread_mutex_unlock(&pend_mu);
	hmb_count_dropped(n);
}

HMB_NOINST static void pend_add(MPI_Request r, MPI_Comm comm, MPI_Datatype type)
{
	pthread_mutex_lock(&pend_mu);
	if (2 * (pend_len + 1) > pend_cap) {
		size_t cap = pend_cap ? 2 * pend_cap : 64;
		struct pending *old = pend, *grown = calloc(cap, sizeof *grown);
		size_t oldcap = pend_cap;
		if (grown == NULL) {
			pthread_mutex_unlock(&pend_mu);
			hmb_count_dropped(1); /* the message goes unrecorded, the call unharmed */
			return;
		}
		pend = grown;
		pend_cap = cap;
		pend_len = 0;
		for (size_t i = 0; i < oldcap; i++) {
			if (old[i].used == 1) {
				*find(old[i].req, 1) = old[i];
				pend_len++;
			}
		}
		free(old);
	}
	struct pending *e = find(r, 1);
	if (e != NULL) {
		if (e->used != 1) {
			pend_len++;
		}
		*e = (struct pending){.req = r, .comm = comm, .type = type, .used = 1};
	}
	pthread_mutex_unlock(&pend_mu);
}

/* pend_take removes r's entry into *out; it returns 0 if r is not a receive. */
HMB_NOINST static int pend_take(MPI_Request r, struct pending *out)
{
	pthread_mutex_lock(&pend_mu);
	struct pending *e = find(r, 0);
	int ok = e != NULL && e->used == 1;
	if (ok) {
		*out = *e;
		e->used = 2;
		pend_len--;
	}
	pthread_mutex_unlock(&pend_mu);
	return ok;
}

/* recv_event records the message a receive got; a request's receive may
 * have been cancelled instead (blocking ones cannot be). */
HMB_NOINST static void recv_event(MPI_Comm comm, MPI_Datatype type, const MPI_Status *st, int request)
{
	int from = world(comm, st->MPI_SOURCE);
	if (from == NO_TRANSLATION) {
		hmb_count_dropped(1);
	}
	if (from < 0) {
		return; /* MPI_PROC_NULL */
	}
	int cancelled = 0, n = 0;
	if (request) {
		PMPI_Test_cancelled(st, &cancelled);
	}
	if (cancelled) {
		return;
	}
	if (PMPI_Get_count(st, type, &n) != MPI_SUCCESS || n == MPI_UNDEFINED) {
		n = 0;
	}
	hmb_recv(from, (uint32_t)st->MPI_TAG, bytes(n, type));
}

HMB_NOINST static void send_event(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type)
{
	int to = world(comm, dest);
	if (to >= 0) { /* not MPI_PROC_NULL, nor a rank the call will fail on */
		hmb_send(to, (uint32_t)tag, bytes(count, type));
	} else if (to == NO_TRANSLATION) {
		hmb_count_dropped(1);
	}
}

/* complete records the message of a request that completed with status st. */
HMB_NOINST static void complete(MPI_Request before, const MPI_Status *st)
{
	struct pending p;
	if (before != MPI_REQUEST_NULL && pend_take(before, &p)) {
		recv_event(p.comm, p.type, st, 1);
	}
}

/*
 * clock_sync measures this process's clock offset to rank 0's: a few
 * ping-pongs, the shortest round trip wins, its midpoint taken as the
 * moment rank 0 answered. Rank 0 serves the ranks one after the other.
 */
#define SYNC_ROUNDS 8
HMB_NOINST static void clock_sync(void)
{
	if (sync_comm == MPI_COMM_NULL) {
		return;
	}
	uint64_t ref_start = hmb_start_ticks();
	PMPI_Bcast(&ref_start, 1, MPI_UINT64_T, 0, sync_comm);
	if (world_rank == 0) {
		hmb_clock_sync(hmb_clock(), 0, ref_start);
		for (int r = 1; r < world_size; r++) {
			for (int k = 0; k < SYNC_ROUNDS; k++) {
				char ping;
				PMPI_Recv(&ping, 1, MPI_CHAR, r, 1, sync_comm, MPI_STATUS_IGNORE);
				uint64_t t0 = hmb_clock();
				PMPI_Send(&t0, 1, MPI_UINT64_T, r, 2, sync_comm);
			}
		}
		return;
	}
	uint64_t best = UINT64_MAX, mid = 0;
	int64_t offset = 0;
	for (int k = 0; k < SYNC_ROUNDS; k++) {
		char ping = 0;
		uint64_t t0, t1 = hmb_clock();
		PMPI_Send(&ping, 1, MPI_CHAR, 0, 1, sync_comm);
		PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, 2, sync_comm, MPI_STATUS_IGNORE);
		uint64_t t2 = hmb_clock();
		if (t2 - t1 < best) {
			best = t2 - t1;
			mid = t1 + (t2 - t1) / 2;
			offset = (int64_t)(t0 - mid);
		}
	}
	hmb_clock_sync(mid, offset, ref_start);
}

HMB_NOINST static void after_init(void)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ranks_delete, &ranks_key, NULL);
	hmb_set_rank(world_rank);
	char name[32];
	snprintf(name, sizeof name, "rank %d", world_rank);
	hmb_thread_name(name);
	PMPI_Comm_dup(MPI_COMM_WORLD, &sync_comm);
	clock_sync();
}

HMB_NOINST int MPI_Init(int *argc, char ***argv)
{
	if (off()) {
		return PMPI_Init(argc, argv);
	}
	uint32_t r = region(R_INIT);
	hmb_enter(r);
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS) {
		after_init();
	}
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (off()) {
		return PMPI_Init_thread(argc, argv, required, provided);
	}
	uint32_t r = region(R_INIT_THREAD);
	hmb_enter(r);
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS) {
		after_init();
	}
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Finalize(void)
{
	if (off()) {
		return PMPI_Finalize();
	}
	uint32_t r = region(R_FINALIZE);
	hmb_enter(r);
	clock_sync();
	if (sync_comm != MPI_COMM_NULL) {
		PMPI_Comm_free(&sync_comm);
	}
	int rc = PMPI_Finalize();
	hmb_leave(r);
	pend_drop_unseen();
	/* The file is written at exit (hmb_init registered hmb_finalize with
	 * atexit), as Score-P does: what the program does after MPI_Finalize,
	 * down to main's return, is in the trace too. */
	return rc;
}

HMB_NOINST int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Send(buf, count, type, dest, tag, comm);
	}
	uint32_t r = region(R_SEND);
	hmb_enter(r);
	send_event(comm, dest, tag, count, type);
	int rc = PMPI_Send(buf, count, type, dest, tag, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Ssend(buf, count, type, dest, tag, comm);
	}
	uint32_t r = region(R_SSEND);
	hmb_enter(r);
	send_event(comm, dest, tag, count, type);
	int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Bsend(buf, count, type, dest, tag, comm);
	}
	uint32_t r = region(R_BSEND);
	hmb_enter(r);
	send_event(comm, dest, tag, count, type);
	int rc = PMPI_Bsend(buf, count, type, dest, tag, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	if (off()) {
		return PMPI_Recv(buf, count, type, source, tag, comm, status);
	}
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	uint32_t r = region(R_RECV);
	hmb_enter(r);
	int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		recv_event(comm, type, st, 0);
	}
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	if (off()) {
		return PMPI_Isend(buf, count, type, dest, tag, comm, req);
	}
	uint32_t r = region(R_ISEND);
	hmb_enter(r);
	send_event(comm, dest, tag, count, type);
	int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
	if (off()) {
		return PMPI_Irecv(buf, count, type, source, tag, comm, req);
	}
	uint32_t r = region(R_IRECV);
	hmb_enter(r);
	int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
		pend_add(*req, comm, type);
	}
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	if (off()) {
		return PMPI_Wait(req, status);
	}
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	MPI_Request before = *req;
	uint32_t r = region(R_WAIT);
	hmb_enter(r);
	int rc = PMPI_Wait(req, st);
	if (rc == MPI_SUCCESS) {
		complete(before, st);
	}
	hmb_leave(r);
	return rc;
}

/*
 * requests holds a copy of an array of requests taken before a call that
 * completes some of them (the call overwrites completed ones with
 * MPI_REQUEST_NULL), and, for the calls with an array of statuses, those
 * to read their source and tag from when the program passed
 * MPI_STATUSES_IGNORE.
 */
struct requests {
	MPI_Request small[16], *before;
	MPI_Status smallst[16], *st;
	MPI_Status *given;
};

HMB_NOINST static void requests_free(struct requests *q)
{
	if (q->before != q->small) {
		free(q->before);
	}
	if (q->st != q->given && q->st != q->smallst) {
		free(q->st);
	}
}

/*
 * requests_take copies reqs, and gives q->st count statuses when the call
 * takes an array of them (statuses, or its own when the program ignores
 * them). It returns 0 when memory ran out: the caller then makes its call
 * untraced rather than fail it.
 */
HMB_NOINST static int requests_take(struct requests *q, int count, const MPI_Request reqs[], int with_statuses,
				    MPI_Status *statuses)
{
	size_t n = count > 0 ? (size_t)count : 1;
	q->given = q->st = statuses;
	q->before = count <= 16 ? q->small : malloc(n * sizeof *q->before);
	if (with_statuses && statuses == MPI_STATUSES_IGNORE) {
		q->st = count <= 16 ? q->smallst : malloc(n * sizeof *q->st);
	}
	if (q->before == NULL || (with_statuses && q->st == NULL)) {
		requests_free(q);
		/* The call's enter and leave; the receives it completes stay
		 * pending and are counted at MPI_Finalize. */
		hmb_count_dropped(2);
		return 0;
	}
	if (count > 0) {
		memcpy(q->before, reqs, (size_t)count * sizeof *q->before);
	}
	return 1;
}

/* completed_all records the messages of a call that completed all count
 * requests, or, on MPI_ERR_IN_STATUS, those whose status says success. */
HMB_NOINST static void completed_all(struct requests *q, int count, int rc)
{
	if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
		return;
	}
	for (int i = 0; i < count; i++) {
		if (rc == MPI_SUCCESS || q->st[i].MPI_ERROR == MPI_SUCCESS) {
			complete(q->before[i], &q->st[i]);
		}
	}
}

/* completed_some records the messages of the requests at indices[0..n). */
HMB_NOINST static void completed_some(struct requests *q, int n, const int indices[], int rc)
{
	if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || n == MPI_UNDEFINED) {
		return;
	}
	for (int k = 0; k < n; k++) {
		if (rc == MPI_SUCCESS || q->st[k].MPI_ERROR == MPI_SUCCESS) {
			complete(q->before[indices[k]], &q->st[k]);
		}
	}
}

HMB_NOINST int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
	if (off()) {
		return PMPI_Waitall(count, reqs, statuses);
	}
	struct requests q;
	if (!requests_take(&q, count, reqs, 1, statuses)) {
		return PMPI_Waitall(count, reqs, statuses);
	}
	uint32_t r = region(R_WAITALL);
	hmb_enter(r);
	int rc = PMPI_Waitall(count, reqs, q.st);
	completed_all(&q, count, rc);
	hmb_leave(r);
	requests_free(&q);
	return rc;
}

HMB_NOINST int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	if (off()) {
		return PMPI_Testall(count, reqs, flag, statuses);
	}
	struct requests q;
	if (!requests_take(&q, count, reqs, 1, statuses)) {
		return PMPI_Testall(count, reqs, flag, statuses);
	}
	uint32_t r = region(R_TESTALL);
	hmb_enter(r);
	int rc = PMPI_Testall(count, reqs, flag, q.st);
	if (rc == MPI_ERR_IN_STATUS || (rc == MPI_SUCCESS && *flag)) {
		completed_all(&q, count, rc);
	}
	hmb_leave(r);
	requests_free(&q);
	return rc;
}

HMB_NOINST int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	if (off()) {
		return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
	}
	struct requests q;
	if (!requests_take(&q, incount, reqs, 1, statuses)) {
		return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
	}
	uint32_t r = region(R_WAITSOME);
	hmb_enter(r);
	int rc = PMPI_Waitsome(incount, reqs, outcount, indices, q.st);
	completed_some(&q, *outcount, indices, rc);
	hmb_leave(r);
	requests_free(&q);
	return rc;
}

HMB_NOINST int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	if (off()) {
		return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
	}
	struct requests q;
	if (!requests_take(&q, incount, reqs, 1, statuses)) {
		return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
	}
	uint32_t r = region(R_TESTSOME);
	hmb_enter(r);
	int rc = PMPI_Testsome(incount, reqs, outcount, indices, q.st);
	completed_some(&q, *outcount, indices, rc);
	hmb_leave(r);
	requests_free(&q);
	return rc;
}

HMB_NOINST int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	if (off()) {
		return PMPI_Waitany(count, reqs, index, status);
	}
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	struct requests q;
	if (!requests_take(&q, count, reqs, 0, MPI_STATUSES_IGNORE)) {
		return PMPI_Waitany(count, reqs, index, status);
	}
	uint32_t r = region(R_WAITANY);
	hmb_enter(r);
	int rc = PMPI_Waitany(count, reqs, index, st);
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED) {
		complete(q.before[*index], st);
	}
	hmb_leave(r);
	requests_free(&q);
	return rc;
}

HMB_NOINST int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	if (off()) {
		return PMPI_Testany(count, reqs, index, flag, status);
	}
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	struct requests q;
	if (!requests_take(&q, count, reqs, 0, MPI_STATUSES_IGNORE)) {
		return PMPI_Testany(count, reqs, index, flag, status);
	}
	uint32_t r = region(R_TESTANY);
	hmb_enter(r);
	int rc = PMPI_Testany(count, reqs, index, flag, st);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) {
		complete(q.before[*index], st);
	}
	hmb_leave(r);
	requests_free(&q);
	return rc;
}

/*
 * A freed receive request will never tell its source: its message is not
 * recorded, and is counted as dropped.
 */
HMB_NOINST int MPI_Request_free(MPI_Request *req)
{
	if (off()) {
		return PMPI_Request_free(req);
	}
	struct pending p;
	if (req != NULL && *req != MPI_REQUEST_NULL && pend_take(*req, &p)) {
		hmb_count_dropped(1);
	}
	return PMPI_Request_free(req);
}

HMB_NOINST int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	if (off()) {
		return PMPI_Test(req, flag, status);
	}
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	MPI_Request before = *req;
	uint32_t r = region(R_TEST);
	hmb_enter(r);
	int rc = PMPI_Test(req, flag, st);
	if (rc == MPI_SUCCESS && *flag) {
		complete(before, st);
	}
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			    MPI_Comm comm, MPI_Status *status)
{
	if (off()) {
		return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
				     recvtag, comm, status);
	}
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	uint32_t r = region(R_SENDRECV);
	hmb_enter(r);
	send_event(comm, dest, sendtag, sendcount, sendtype);
	int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
			       recvtag, comm, st);
	if (rc == MPI_SUCCESS) {
		recv_event(comm, recvtype, st, 0);
	}
	hmb_leave(r);
	return rc;
}

/* Collectives: regions of the collective class with their root and bytes. */

HMB_NOINST static int comm_size(MPI_Comm comm)
{
	int n = 0;
	PMPI_Comm_size(comm, &n);
	return n;
}

HMB_NOINST int MPI_Barrier(MPI_Comm comm)
{
	if (off()) {
		return PMPI_Barrier(comm);
	}
	uint32_t r = region(R_BARRIER);
	hmb_enter_collective(r, -1, 0);
	int rc = PMPI_Barrier(comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Bcast(buf, count, type, root, comm);
	}
	uint32_t r = region(R_BCAST);
	hmb_enter_collective(r, root_of(comm, root), bytes(count, type));
	int rc = PMPI_Bcast(buf, count, type, root, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
			  MPI_Comm comm)
{
	if (off()) {
		return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
	}
	uint32_t r = region(R_REDUCE);
	hmb_enter_collective(r, root_of(comm, root), bytes(count, type));
	int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
	}
	uint32_t r = region(R_ALLREDUCE);
	hmb_enter_collective(r, -1, bytes(count, type));
	int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	}
	uint32_t r = region(R_GATHER);
	uint64_t b = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
	hmb_enter_collective(r, root_of(comm, root), b);
	int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	}
	uint32_t r = region(R_SCATTER);
	uint64_t b = recvbuf == MPI_IN_PLACE ? bytes(sendcount, sendtype) : bytes(recvcount, recvtype);
	hmb_enter_collective(r, root_of(comm, root), b);
	int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			     MPI_Datatype recvtype, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	}
	uint32_t r = region(R_ALLGATHER);
	uint64_t b = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
	hmb_enter_collective(r, -1, b);
	int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	hmb_leave(r);
	return rc;
}

HMB_NOINST int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype, MPI_Comm comm)
{
	if (off()) {
		return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	}
	uint32_t r = region(R_ALLTOALL);
	uint64_t b = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
	hmb_enter_collective(r, -1, b * (uint64_t)comm_size(comm));
	int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	hmb_leave(r);
	return rc;
}
