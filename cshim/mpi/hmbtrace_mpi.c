/*
 * hmbtrace_mpi.c - libhmbtrace-mpi: PMPI wrappers that trace an MPI program
 * with no source change. The wrappers themselves are generated from the
 * table mpi.tbl (wrappers_gen.c for C, fortran_gen.c for the Fortran
 * bindings); this file holds what they call: region lookup, rank
 * translation into MPI_COMM_WORLD, communicator ids, the table of
 * requests, the bytes of collectives, clock sync at MPI_Init and
 * MPI_Finalize, and the collective end of the run: the ranks agree on one
 * run archive per group of HMB_AGGREGATE ranks, <dir>/<name>.hmbrun, into
 * whose slots each writes its trace at exit (HMB_OUTPUT_LAYOUT=rank-files:
 * each process writes <dir>/<name>.<rank>.hmb).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "mpi_internal.h"

uint64_t hmbmpi_region_ids[HMBMPI_R_COUNT];
int hmbmpi_off_state;
#if HMBMPI_ABLATE == 1
volatile uint64_t hmbmpi_ablate_sink;
#endif

HMB_NOINST uint32_t hmbmpi_region_slow(int r)
{
	uint32_t id = hmb_region_paradigm(hmbmpi_region_names[r], HMB_PARADIGM_MPI);
	__atomic_store_n(&hmbmpi_region_ids[r], (uint64_t)id + 1, __ATOMIC_RELAXED);
	return id;
}

/* A measurement that failed to start is not off: its probes are dropped and counted. */
HMB_NOINST int hmbmpi_off_slow(void)
{
	int s = HMBMPI_OFF;
	if (hmb_init() != 0 || hmbmpi_region(HMBMPI_R_MPI_Init) != 0) {
		s = hmb_clock_tsc() ? HMBMPI_ON_TSC : HMBMPI_ON_MONOTONIC;
	}
	__atomic_store_n(&hmbmpi_off_state, s, __ATOMIC_RELAXED);
	return s == HMBMPI_OFF;
}

static int world_rank = -1;
int hmbmpi_world_size;
uint32_t hmbmpi_world_id;
static uint32_t self_id;
static MPI_Comm sync_comm = MPI_COMM_NULL;

/*
 * A communicator as the wrappers know it, cached on it as an attribute,
 * which MPI frees with the communicator: its id in the trace, and the
 * world ranks of the group its peers are ranks of (the remote group of an
 * inter-communicator), so that a call on it translates a peer with a
 * lookup, not with two groups per call.
 */
struct comm_info {
	uint32_t id;
	int inter, rank_in; /* rank_in: this process's rank in the local group */
	int n;
	int rank[]; /* MPI_UNDEFINED for a process outside MPI_COMM_WORLD */
};
static int info_key = MPI_KEYVAL_INVALID; /* created by hmbmpi_after_init */
static pthread_mutex_t info_mu = PTHREAD_MUTEX_INITIALIZER;

HMB_NOINST static int info_delete(MPI_Comm comm, int key, void *val, void *extra)
{
	(void)comm, (void)key, (void)extra;
	free(val);
	return MPI_SUCCESS;
}

/* group_world translates every rank of g into a world rank: a malloc'd array of *n. */
HMB_NOINST static int *group_world(MPI_Group g, int *n)
{
	MPI_Group wg;
	*n = 0;
	if (PMPI_Group_size(g, n) != MPI_SUCCESS || *n < 0) {
		return NULL;
	}
	int *in = malloc(((size_t)*n + 1) * sizeof *in), *out = malloc(((size_t)*n + 1) * sizeof *out);
	if (in == NULL || out == NULL || PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS) {
		free(in);
		free(out);
		return NULL;
	}
	for (int i = 0; i < *n; i++) {
		in[i] = i;
	}
	int rc = *n > 0 ? PMPI_Group_translate_ranks(g, *n, in, wg, out) : MPI_SUCCESS;
	PMPI_Group_free(&wg);
	free(in);
	if (rc != MPI_SUCCESS) {
		free(out);
		return NULL;
	}
	return out;
}

HMB_NOINST static uint32_t comm_id(MPI_Comm comm);

/*
 * info_new defines comm in the trace, made from parent, and returns its
 * info; NULL if MPI or memory fails (the communicator is then not defined).
 */
HMB_NOINST static struct comm_info *info_new(MPI_Comm comm, MPI_Comm parent)
{
	int inter = 0, n = 0, nr = 0, rank = -1;
	MPI_Group g, rg;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_group(comm, &g) != MPI_SUCCESS) {
		return NULL;
	}
	int *members = group_world(g, &n), *remote = NULL;
	PMPI_Group_free(&g);
	if (members == NULL) {
		return NULL;
	}
	if (inter) {
		if (PMPI_Comm_remote_group(comm, &rg) != MPI_SUCCESS) {
			free(members);
			return NULL;
		}
		remote = group_world(rg, &nr);
		PMPI_Group_free(&rg);
		if (remote == NULL) {
			free(members);
			return NULL;
		}
	}
	int np = inter ? nr : n;
	struct comm_info *info = malloc(sizeof *info + (size_t)np * sizeof info->rank[0]);
	if (info != NULL) {
		info->inter = inter;
		info->rank_in = rank;
		info->n = np;
		memcpy(info->rank, inter ? remote : members, (size_t)np * sizeof info->rank[0]);
		info->id = hmb_comm_define("", parent == MPI_COMM_NULL ? 0 : comm_id(parent), (const int32_t *)members,
					   n, (const int32_t *)remote, nr);
	}
	free(members);
	free(remote);
	return info;
}

/*
 * info_of returns comm's info, defining the communicator if no wrapper saw
 * it made (MPI_Comm_get_parent, a call not wrapped): its parent is then
 * unknown. NULL for MPI_COMM_WORLD and MPI_COMM_SELF (see world and
 * comm_id) and when MPI or memory failed.
 */
HMB_NOINST static struct comm_info *info_of(MPI_Comm comm, MPI_Comm parent)
{
	void *val = NULL;
	int flag = 0;
	if (info_key == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) {
		return NULL;
	}
	if (PMPI_Comm_get_attr(comm, info_key, &val, &flag) == MPI_SUCCESS && flag) {
		return val;
	}
	/* Under a lock, so that two threads do not both set it: the second
	 * would free the first's info while it reads it. */
	pthread_mutex_lock(&info_mu);
	struct comm_info *info = NULL;
	if (PMPI_Comm_get_attr(comm, info_key, &val, &flag) == MPI_SUCCESS && flag) {
		info = val;
	} else if ((info = info_new(comm, parent)) != NULL && PMPI_Comm_set_attr(comm, info_key, info) != MPI_SUCCESS) {
		/* Not cached: it would be defined again at each call. */
		free(info);
		info = NULL;
		hmb_count_dropped(HMB_DROP_MPI, 1);
	}
	pthread_mutex_unlock(&info_mu);
	return info;
}

HMB_NOINST static uint32_t comm_id(MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD) {
		return hmbmpi_world_id;
	}
	if (comm == MPI_COMM_SELF) {
		return self_id;
	}
	struct comm_info *info = info_of(comm, MPI_COMM_NULL);
	return info != NULL ? info->id : 0;
}

/*
 * world translates rank of comm (of its remote group for an
 * inter-communicator) into a rank of MPI_COMM_WORLD; it returns -1 for a
 * rank no process has (MPI_ANY_SOURCE, MPI_PROC_NULL, a rank out of range:
 * the call will fail), and NO_TRANSLATION if MPI or memory failed to make
 * the translation.
 */
#define NO_TRANSLATION (-2)

HMB_NOINST static int world(MPI_Comm comm, int rank, uint32_t *id)
{
	if (comm == MPI_COMM_WORLD) {
		*id = hmbmpi_world_id;
		return rank >= 0 && rank < hmbmpi_world_size ? rank : -1;
	}
	if (comm == MPI_COMM_SELF) {
		*id = self_id;
		return rank == 0 ? world_rank : -1;
	}
	struct comm_info *info = info_of(comm, MPI_COMM_NULL);
	if (info == NULL) {
		*id = 0;
		return NO_TRANSLATION;
	}
	*id = info->id;
	return rank >= 0 && rank < info->n && info->rank[rank] != MPI_UNDEFINED ? info->rank[rank] : -1;
}

HMB_NOINST static uint64_t bytes(int count, MPI_Datatype type)
{
	int size = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL || !hmbmpi_type_size(type, &size)) {
		return 0;
	}
	return (uint64_t)count * (uint64_t)size;
}

/*
 * send_bytes sets *n to a send's bytes and tells whether MPI will accept
 * its arguments as far as the wrappers can tell without MPI's help, so
 * that a send that MPI rejects (with MPI_ERRORS_RETURN) is never recorded,
 * whatever the wrapper asks first. A rank out of range is caught by the
 * translation into a world rank.
 */
HMB_NOINST static int send_bytes(int tag, int count, MPI_Datatype type, uint64_t *n)
{
	int size = 0;
	if (tag < 0 || count < 0 || type == MPI_DATATYPE_NULL || !hmbmpi_type_size(type, &size)) {
		return 0;
	}
	*n = (uint64_t)count * (uint64_t)size;
	return 1;
}

/*
 * The request table: what a request will have done when it completes. A
 * request's id counts per process (never the MPI_Request value, which MPI
 * reuses); a persistent request keeps its entry between its starts, with
 * id 0 while it is inactive. Matched messages of MPI_Mprobe are kept here
 * too, under their MPI_Message, until MPI_Mrecv or MPI_Imrecv.
 *
 * One handle can stand for several live requests: Open MPI returns the
 * same predefined, already complete request from every MPI_Isend it could
 * send at once (small messages), so a key may have many entries. They are
 * taken oldest first (seq), the order in which the program started them.
 */
enum { P_SEND = 1, P_RECV, P_COLL, P_IDUP, P_MESSAGE, P_RMA };
struct pending {
	uint64_t key;
	uint64_t id;
	uint64_t seq;  /* insertion order, to take a shared key's entries oldest first */
	uint8_t used; /* 1 in use, 2 deleted */
	uint8_t what, persistent;
	int peer;             /* P_SEND: world rank */
	uint32_t tag, commid; /* P_SEND, P_COLL; P_RMA: commid is the window's id */
	uint64_t bytes, received;
	MPI_Comm comm; /* P_RECV, P_MESSAGE: to translate the status's source; P_IDUP: the parent */
	MPI_Datatype type;
	uint32_t region; /* P_COLL */
	int root;
	MPI_Comm *newcomm; /* P_IDUP: where MPI puts the new communicator, */
	MPI_Fint *fnewcomm; /* or, from Fortran, its handle */
};
static struct pending *pend;
static size_t pend_cap, pend_len, pend_deleted;
static uint64_t pend_seq;
static pthread_mutex_t pend_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_request;

/*
 * pend_single is set at MPI_Init when MPI gave less than
 * MPI_THREAD_MULTIPLE: the program then calls MPI from one thread at a
 * time, ordered by its own synchronisation, and so the wrappers that use
 * the table, which then need no lock. An uncontended lock and unlock took
 * 7 ns here, on every MPI_Isend, MPI_Irecv and completion.
 */
static int pend_single;

HMB_NOINST static void pend_lock(void)
{
	if (!pend_single) {
		pthread_mutex_lock(&pend_mu);
	}
}

HMB_NOINST static void pend_unlock(void)
{
	if (!pend_single) {
		pthread_mutex_unlock(&pend_mu);
	}
}

/* Keys: a request's handle, a message's handle with the top bit flipped
 * (handles are pointers or small integers, never both spaces at once). */
HMB_NOINST static uint64_t req_key(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
	return k;
}

HMB_NOINST static uint64_t msg_key(MPI_Message m)
{
	uint64_t k = 0;
	memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
	return k ^ (1ULL << 63);
}

HMB_NOINST static size_t slot_of(uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (pend_cap - 1);
}

/* free_slot returns where an entry of key goes: the first deleted or
 * unused slot of its probe sequence (there is one: the table is at most
 * half full). Entries of the same key are kept side by side, never
 * replaced. */
HMB_NOINST static struct pending *free_slot(uint64_t key)
{
	for (size_t i = slot_of(key), n = 0; n < pend_cap; i = (i + 1) & (pend_cap - 1), n++) {
		if (pend[i].used != 1) {
			return &pend[i];
		}
	}
	return NULL;
}

/* Which entries of a key find returns. */
enum { ANY_ENTRY, PERSISTENT_ENTRY };

/*
 * find returns key's entry: the active one started first (an inactive
 * persistent request only when none is active), or with PERSISTENT_ENTRY
 * the persistent one. NULL if there is none.
 */
HMB_NOINST static struct pending *find(uint64_t key, int which)
{
	if (pend_cap == 0) {
		return NULL;
	}
	struct pending *best = NULL;
	for (size_t i = slot_of(key), n = 0; n < pend_cap; i = (i + 1) & (pend_cap - 1), n++) {
		struct pending *e = &pend[i];
		if (e->used == 0) {
			break;
		}
		if (e->used != 1 || e->key != key || (which == PERSISTENT_ENTRY && !e->persistent)) {
			continue;
		}
		if (best == NULL || (e->id != 0 && best->id == 0) ||
		    ((e->id != 0) == (best->id != 0) && e->seq < best->seq)) {
			best = e;
		}
	}
	return best;
}

/* pend_rehash moves the entries into a table of cap slots, dropping the
 * deleted ones that lengthen every probe; 0 when memory ran out. */
HMB_NOINST static int pend_rehash(size_t cap)
{
	struct pending *old = pend, *grown = calloc(cap, sizeof *grown);
	size_t oldcap = pend_cap;
	if (grown == NULL) {
		return 0;
	}
	pend = grown;
	pend_cap = cap;
	pend_deleted = 0;
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].used == 1) {
			*free_slot(old[i].key) = old[i];
		}
	}
	free(old);
	return 1;
}

/*
 * pend_new returns the slot where an entry of key goes, next to any entry
 * of the same key, counted in the table, with the lock held: the caller
 * writes the entry there in place, used set and numbered (pend_seq), and
 * unlocks. On failure (memory) it returns NULL, the lock released, and
 * counts n probes as dropped: those the entry would have recorded at
 * completion.
 */
HMB_NOINST static struct pending *pend_new(uint64_t key, uint64_t n)
{
	pend_lock();
	if (2 * (pend_len + pend_deleted + 1) > pend_cap) {
		size_t cap = pend_cap ? pend_cap : 64;
		if (2 * (pend_len + 1) > cap / 2) {
			cap *= 2; /* grow, unless deleted slots make most of the load */
		}
		if ((cap != pend_cap || pend_deleted > 0) && !pend_rehash(cap)) {
			pend_unlock();
			hmb_count_dropped(HMB_DROP_MPI, n);
			return NULL;
		}
	}
	struct pending *e = free_slot(key);
	if (e->used == 2) {
		pend_deleted--;
	}
	pend_len++;
	return e;
}

/* pend_add puts p into the table (pend_new): for the calls that are rare. */
HMB_NOINST static void pend_add(struct pending p, uint64_t n)
{
	struct pending *e = pend_new(p.key, n);
	if (e == NULL) {
		return;
	}
	p.used = 1;
	p.seq = ++pend_seq;
	*e = p;
	pend_unlock();
}

/*
 * pend_take_at copies entry e of the table (NULL: none) into *out and
 * removes it, unless it is a persistent request and keep is set: then it
 * is marked inactive. It returns 0 if e is NULL. The lock is held.
 */
HMB_NOINST static int pend_take_at(struct pending *e, struct pending *out, int keep)
{
	if (e == NULL) {
		return 0;
	}
	*out = *e;
	if (keep && e->persistent) {
		e->id = 0;
	} else {
		e->used = 2;
		pend_len--;
		pend_deleted++;
	}
	return 1;
}

/*
 * pend_take copies key's entry into *out and removes it, unless it is a
 * persistent request and keep is set: then it is marked inactive. It
 * returns 0 if the table has no such entry.
 */
HMB_NOINST static int pend_take(uint64_t key, struct pending *out, int keep)
{
	pend_lock();
	int ok = pend_take_at(find(key, ANY_ENTRY), out, keep);
	pend_unlock();
	return ok;
}

/*
 * pend_ref_entry returns the entry that ref names if it is still in its
 * slot (ref->seq 0: none): an entry's insertion number names it until it
 * is taken, and a request's entry is the one find would return for its
 * key as long as the request is active, so that a completion need not
 * look it up again. If other threads' inserts moved it meanwhile (a
 * rehash), it returns NULL. The lock is held.
 */
HMB_NOINST static struct pending *pend_ref_entry(uint64_t key, const struct hmbmpi_ref *ref)
{
	if (ref == NULL || ref->seq == 0 || ref->slot >= pend_cap) {
		return NULL;
	}
	struct pending *e = &pend[ref->slot];
	return e->used == 1 && e->key == key && e->seq == ref->seq ? e : NULL;
}

/*
 * pend_drop_unseen counts the requests still active at MPI_Finalize (or
 * MPI_Abort) as dropped: they completed where no wrapper saw them (a call
 * not wrapped), or never.
 */
HMB_NOINST static uint64_t pend_drop_unseen(void)
{
	pend_lock();
	uint64_t n = 0;
	for (size_t i = 0; i < pend_cap; i++) {
		if (pend[i].used == 1 && pend[i].id != 0) {
			n++;
		}
	}
	free(pend);
	pend = NULL;
	pend_cap = pend_len = pend_deleted = 0;
	pend_unlock();
	hmb_count_dropped(HMB_DROP_MPI_ACTIVE, n);
	return n;
}

HMB_NOINST static uint64_t new_request(void)
{
	return __atomic_add_fetch(&next_request, 1, __ATOMIC_RELAXED);
}

/* For rma.c. */

HMB_NOINST uint32_t hmbmpi_comm_id(MPI_Comm comm)
{
	return comm_id(comm);
}

HMB_NOINST int *hmbmpi_group_world(MPI_Group g, int *n)
{
	return group_world(g, n);
}

HMB_NOINST int hmbmpi_world_rank(void)
{
	return world_rank;
}

HMB_NOINST uint64_t hmbmpi_new_id(void)
{
	return new_request();
}

HMB_NOINST void hmbmpi_rma_request(MPI_Request req, uint32_t win, uint64_t id)
{
	pend_add((struct pending){.key = req_key(req), .what = P_RMA, .commid = win, .id = id}, 1);
}

/* Point-to-point. */

HMB_NOINST void hmbmpi_send_slow(struct hmb_mpi_msg *m, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type)
{
	int to = world(comm, dest, &m->comm);
	m->peer = -1;
	if (to >= 0 && send_bytes(tag, count, type, &m->bytes)) { /* not MPI_PROC_NULL, nor a rank the call will fail on */
		m->peer = to;
		m->tag = (uint32_t)tag;
	} else if (to == NO_TRANSLATION) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
	}
}

/* received translates a completed receive's status; it returns 0 for none
 * to record (MPI_PROC_NULL; a request cancelled: *cancelled set; a
 * blocking receive, cancelled NULL, cannot be). */
HMB_NOINST static int received(MPI_Comm comm, MPI_Datatype type, const MPI_Status *st, int *from, uint64_t *n,
			       uint32_t *id, int *cancelled)
{
	if (cancelled != NULL) {
		*cancelled = hmbmpi_status_cancelled(st);
		if (*cancelled) {
			return 0;
		}
	}
	*from = world(comm, st->MPI_SOURCE, id);
	if (*from == NO_TRANSLATION) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
	}
	if (*from < 0) {
		return 0;
	}
	*n = hmbmpi_status_bytes(st, type);
	return 1;
}

/* The bytes at once, counted in MPI_BYTE; in the datatype's elements only
 * when they are too many for an int. */
HMB_NOINST uint64_t hmbmpi_status_bytes_slow(const MPI_Status *st, MPI_Datatype type)
{
	int count = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &count) == MPI_SUCCESS && count != MPI_UNDEFINED) {
		return count >= 0 ? (uint64_t)count : 0;
	}
	if (PMPI_Get_count(st, type, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) {
		count = 0;
	}
	return bytes(count, type);
}

HMB_NOINST void hmbmpi_recv_slow(struct hmb_mpi_msg *m, MPI_Comm comm, MPI_Datatype type, const MPI_Status *st)
{
	int from;
	if (received(comm, type, st, &from, &m->bytes, &m->comm, NULL)) {
		m->peer = from;
		m->tag = (uint32_t)st->MPI_TAG;
	}
}

HMB_NOINST static void isend_start(struct pending *p)
{
	p->id = new_request();
	hmb_isend(p->peer, p->tag, p->bytes, p->commid, p->id);
}

/*
 * send_entry says what send request req sends, in *m (a peer of -1 for
 * nothing to record): a blocking send's message (hmbmpi_send, inline for
 * MPI_COMM_WORLD; the parentheses keep HMBMPI_ABLATE's macro, which is for
 * blocking calls, out of it).
 */
HMB_NOINST static inline void send_entry(struct hmb_mpi_msg *m, MPI_Comm comm, int dest, int tag, int count,
					 MPI_Datatype type)
{
	m->peer = -1;
	(hmbmpi_send)(m, comm, dest, tag, count, type);
}

/*
 * hmbmpi_isend and hmbmpi_irecv write the request's entry in place
 * (pend_new): built on the stack, passed by value and copied into its
 * slot, it cost some 40 instructions more per call.
 */
HMB_NOINST void hmbmpi_isend(struct hmb_mpi_req *q, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
			     MPI_Request req)
{
	struct hmb_mpi_msg m;
	send_entry(&m, comm, dest, tag, count, type);
	if (m.peer < 0) {
		return;
	}
	uint64_t id = new_request(), key = req_key(req);
	*q = (struct hmb_mpi_req){
		.kind = HMB_ENC_ISEND, .peer = m.peer, .tag = m.tag, .comm = m.comm, .bytes = m.bytes, .request = id};
	struct pending *e = pend_new(key, 1);
	if (e != NULL) {
		*e = (struct pending){.key = key, .id = id, .seq = ++pend_seq, .used = 1, .what = P_SEND,
				      .peer = m.peer, .tag = m.tag, .commid = m.comm, .bytes = m.bytes};
		pend_unlock();
	}
}

HMB_NOINST void hmbmpi_send_init(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type, MPI_Request req)
{
	struct hmb_mpi_msg m;
	send_entry(&m, comm, dest, tag, count, type);
	if (m.peer >= 0) {
		pend_add((struct pending){.key = req_key(req), .what = P_SEND, .persistent = 1, .peer = m.peer,
					  .tag = m.tag, .commid = m.comm, .bytes = m.bytes},
			 0);
	}
}

HMB_NOINST void hmbmpi_irecv(struct hmb_mpi_req *q, MPI_Comm comm, int source, MPI_Datatype type, MPI_Request req)
{
	if (source == MPI_PROC_NULL) {
		return; /* completes at once, with nothing received */
	}
	uint64_t id = new_request(), key = req_key(req);
	*q = (struct hmb_mpi_req){.kind = HMB_ENC_IRECV_REQUEST, .request = id};
	struct pending *e = pend_new(key, 1);
	if (e != NULL) {
		*e = (struct pending){
			.key = key, .id = id, .seq = ++pend_seq, .used = 1, .what = P_RECV, .comm = comm, .type = type};
		pend_unlock();
	}
}

HMB_NOINST void hmbmpi_recv_init(MPI_Comm comm, int source, MPI_Datatype type, MPI_Request req)
{
	if (source == MPI_PROC_NULL) {
		return;
	}
	pend_add((struct pending){.key = req_key(req), .what = P_RECV, .persistent = 1, .comm = comm, .type = type}, 0);
}

/* hmbmpi_start starts a persistent request: an Isend or an IrecvRequest. */
HMB_NOINST void hmbmpi_start(MPI_Request req)
{
	pend_lock();
	struct pending *e = find(req_key(req), PERSISTENT_ENTRY);
	if (e == NULL) {
		pend_unlock();
		return;
	}
	if (e->what == P_SEND) {
		isend_start(e);
	} else {
		e->id = new_request();
		hmb_irecv_request(e->id);
	}
	pend_unlock();
}

HMB_NOINST static void comm_idup_done(const struct pending *p);

int hmbmpi_p2p_request(MPI_Request req, struct hmbmpi_ref *ref)
{
	ref->seq = 0;
	if (req == MPI_REQUEST_NULL) {
		return 1;
	}
	pend_lock();
	struct pending *e = find(req_key(req), ANY_ENTRY);
	int p2p = e != NULL && (e->what == P_SEND || e->what == P_RECV);
	if (e != NULL) {
		ref->slot = (size_t)(e - pend);
		ref->seq = e->seq;
	}
	pend_unlock();
	return p2p;
}

/*
 * hmbmpi_complete records what the request before did, now complete with
 * status st. A point-to-point request's record goes into *q, which the
 * call's leave writes in its tick (hmb_mpi_leave); with q NULL (a call
 * that completes several) it is recorded at once. *q is written on every
 * path, kind 0 when there is no record (a null request, one the wrappers
 * never saw): the Wait and Test families pass an element of an array on
 * their stack, whose garbage would otherwise be read as a record.
 */
HMB_NOINST void hmbmpi_complete(struct hmb_mpi_req *q, MPI_Request before, const MPI_Status *st)
{
	hmbmpi_complete_ref(q, before, st, NULL);
}

HMB_NOINST void hmbmpi_complete_ref(struct hmb_mpi_req *q, MPI_Request before, const MPI_Status *st,
				    const struct hmbmpi_ref *ref)
{
	if (q != NULL) {
		*q = (struct hmb_mpi_req)HMBMPI_NO_REQ;
	}
	if (before == MPI_REQUEST_NULL) {
		return;
	}
	struct pending p;
	uint64_t key = req_key(before);
	pend_lock();
	struct pending *e = pend_ref_entry(key, ref);
	int ok = pend_take_at(e != NULL ? e : find(key, ANY_ENTRY), &p, 1);
	pend_unlock();
	if (!ok || p.id == 0) {
		return;
	}
	int cancelled = 0, from;
	uint64_t n;
	uint32_t id;
	struct hmb_mpi_req r = {0};
	switch (p.what) {
	case P_SEND:
		cancelled = hmbmpi_status_cancelled(st);
		r = (struct hmb_mpi_req){.kind = cancelled ? HMB_ENC_REQUEST_CANCELLED : HMB_ENC_ISEND_COMPLETE,
					 .request = p.id};
		break;
	case P_RECV:
		if (received(p.comm, p.type, st, &from, &n, &id, &cancelled)) {
			r = (struct hmb_mpi_req){.kind = HMB_ENC_IRECV, .peer = from, .tag = (uint32_t)st->MPI_TAG,
						 .comm = id, .bytes = n, .request = p.id};
		} else if (cancelled) {
			r = (struct hmb_mpi_req){.kind = HMB_ENC_REQUEST_CANCELLED, .request = p.id};
		} /* else a source that did not translate: counted as dropped */
		break;
	case P_COLL:
		hmb_collective_complete(p.region, p.root, p.bytes, p.received, p.commid, p.id);
		break;
	case P_IDUP:
		comm_idup_done(&p);
		break;
	case P_RMA:
		hmb_rma(HMB_RMA_OP_COMPLETE_NON_BLOCKING, p.commid, -1, 0, 0, p.id, 0, 0, 0);
		break;
	}
	if (q != NULL) {
		*q = r;
		return;
	}
	switch (r.kind) {
	case HMB_ENC_ISEND_COMPLETE:
		hmb_isend_complete(r.request);
		break;
	case HMB_ENC_REQUEST_CANCELLED:
		hmb_request_cancelled(r.request);
		break;
	case HMB_ENC_IRECV:
		hmb_irecv(r.peer, r.tag, r.bytes, r.comm, r.request);
		break;
	}
}

/*
 * A freed active request will never tell its completion: it is counted as
 * dropped (the completion record that cannot be written).
 */
HMB_NOINST void hmbmpi_request_free(MPI_Request before)
{
	struct pending p;
	if (before != MPI_REQUEST_NULL && pend_take(req_key(before), &p, 0) && p.id != 0) {
		hmb_count_dropped(HMB_DROP_MPI_ACTIVE, 1);
	}
}

HMB_NOINST void hmbmpi_mprobe(MPI_Comm comm, MPI_Message msg)
{
	if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC) {
		return;
	}
	pend_add((struct pending){.key = msg_key(msg), .what = P_MESSAGE, .comm = comm, .id = 1}, 1);
}

HMB_NOINST void hmbmpi_mrecv(struct hmb_mpi_msg *m, MPI_Message before, MPI_Datatype type, const MPI_Status *st)
{
	struct pending p;
	if (before != MPI_MESSAGE_NULL && pend_take(msg_key(before), &p, 0)) {
		hmbmpi_recv(m, p.comm, type, st);
	}
}

HMB_NOINST void hmbmpi_imrecv(struct hmb_mpi_req *q, MPI_Message before, MPI_Datatype type, MPI_Request req)
{
	struct pending p;
	if (before != MPI_MESSAGE_NULL && pend_take(msg_key(before), &p, 0)) {
		hmbmpi_irecv(q, p.comm, 0, type, req); /* 0: a source other than MPI_PROC_NULL */
	}
}

/* Arrays of requests (the Wait and Test families). */

HMB_NOINST void hmbmpi_reqs_free(struct hmbmpi_reqs *q)
{
	if (q->before != q->small) {
		free(q->before);
	}
	if (q->st != q->given && q->st != q->smallst) {
		free(q->st);
	}
	if (q->fst != q->fgiven) {
		free(q->fst);
	}
	if (q->rq != q->smallrq) {
		free(q->rq);
	}
}

/* reqs_fail counts the call's enter and leave as dropped when memory ran
 * out: the caller makes its call untraced rather than fail it, and the
 * requests it completes stay active, counted at MPI_Finalize. */
HMB_NOINST static int reqs_fail(struct hmbmpi_reqs *q)
{
	hmbmpi_reqs_free(q);
	hmb_count_dropped(HMB_DROP_MPI, 2);
	return 0;
}

HMB_NOINST int hmbmpi_reqs_take(struct hmbmpi_reqs *q, int count, const MPI_Request reqs[], int with_statuses,
				MPI_Status *statuses)
{
	size_t n = count > 0 ? (size_t)count : 1;
	q->given = q->st = statuses;
	q->fst = q->fgiven = NULL;
	q->nrq = 0;
	q->rq = count <= 16 ? q->smallrq : malloc(n * sizeof *q->rq);
	q->before = count <= 16 ? q->small : malloc(n * sizeof *q->before);
	if (with_statuses && statuses == MPI_STATUSES_IGNORE) {
		q->st = count <= 16 ? q->smallst : malloc(n * sizeof *q->st);
	}
	if (q->rq == NULL || q->before == NULL || (with_statuses && q->st == NULL)) {
		return reqs_fail(q);
	}
	if (count > 0) {
		memcpy(q->before, reqs, (size_t)count * sizeof *q->before);
	}
	return 1;
}

/*
 * completed adds the record of request before's completion with status st
 * to q's records, for the call's leave, if it has one.
 */
HMB_NOINST static void completed(struct hmbmpi_reqs *q, MPI_Request before, const MPI_Status *st)
{
	hmbmpi_complete(&q->rq[q->nrq], before, st);
	if (q->rq[q->nrq].kind != 0) {
		q->nrq++;
	}
}

/* hmbmpi_completed_all records the requests of a call that completed all
 * count, or, on MPI_ERR_IN_STATUS, those whose status says success. */
HMB_NOINST void hmbmpi_completed_all(struct hmbmpi_reqs *q, int count, int rc)
{
	if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
		return;
	}
	for (int i = 0; i < count; i++) {
		if (rc == MPI_SUCCESS || q->st[i].MPI_ERROR == MPI_SUCCESS) {
			completed(q, q->before[i], &q->st[i]);
		}
	}
}

/* hmbmpi_completed_some records the requests at indices[0..n). */
HMB_NOINST void hmbmpi_completed_some(struct hmbmpi_reqs *q, int n, const int indices[], int rc)
{
	if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || n == MPI_UNDEFINED) {
		return;
	}
	for (int k = 0; k < n; k++) {
		if (rc == MPI_SUCCESS || q->st[k].MPI_ERROR == MPI_SUCCESS) {
			completed(q, q->before[indices[k]], &q->st[k]);
		}
	}
}

/* Collectives. */

/* peers is how many processes a collective on comm exchanges with: the
 * remote group's size for an inter-communicator. */
HMB_NOINST static int peers(MPI_Comm comm, int *rank, int *inter)
{
	*inter = 0;
	if (comm == MPI_COMM_WORLD) {
		*rank = world_rank;
		return hmbmpi_world_size;
	}
	if (comm == MPI_COMM_SELF) {
		*rank = 0;
		return 1;
	}
	struct comm_info *info = info_of(comm, MPI_COMM_NULL);
	if (info == NULL) {
		*rank = -1;
		return 0;
	}
	*rank = info->rank_in;
	*inter = info->inter;
	return info->n;
}

/* coll_root sets c's root and comm and tells whether this process is the root. */
HMB_NOINST static int coll_root(struct hmbmpi_coll *c, int root, MPI_Comm comm, int *n)
{
	int rank, inter;
	*n = peers(comm, &rank, &inter);
	c->sent = c->received = 0;
	c->root = -1;
	c->comm = comm_id(comm);
	if (inter) {
		/* The root's group passes MPI_ROOT (the root) or MPI_PROC_NULL;
		 * the other group the root's rank in the remote group. */
		if (root == MPI_ROOT) {
			c->root = world_rank;
			return 1;
		}
		if (root >= 0) {
			uint32_t id;
			int w = world(comm, root, &id);
			c->root = w < 0 ? -1 : w;
		}
		return 0;
	}
	if (root >= 0) {
		uint32_t id;
		int w = world(comm, root, &id);
		c->root = w < 0 ? -1 : w;
	}
	return root >= 0 && root == rank;
}

HMB_NOINST static int coll_all(struct hmbmpi_coll *c, MPI_Comm comm)
{
	int n;
	coll_root(c, -1, comm, &n);
	return n;
}

HMB_NOINST static uint64_t sum(const int counts[], int n, MPI_Datatype type)
{
	uint64_t s = 0;
	for (int i = 0; counts != NULL && i < n; i++) {
		s += bytes(counts[i], type);
	}
	return s;
}

HMB_NOINST static uint64_t sum_w(const int counts[], const MPI_Datatype types[], const MPI_Fint *ftypes, int n)
{
	uint64_t s = 0;
	for (int i = 0; counts != NULL && i < n; i++) {
		s += bytes(counts[i], ftypes != NULL ? MPI_Type_f2c(ftypes[i]) : types[i]);
	}
	return s;
}

HMB_NOINST void hmbmpi_coll_barrier(struct hmbmpi_coll *c, MPI_Comm comm)
{
	coll_all(c, comm);
}

HMB_NOINST void hmbmpi_coll_bcast(struct hmbmpi_coll *c, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	int n, inter = 0, rank;
	peers(comm, &rank, &inter);
	if (coll_root(c, root, comm, &n)) {
		c->sent = bytes(count, type);
	} else if (!inter || root >= 0) {
		c->received = bytes(count, type);
	}
}

HMB_NOINST void hmbmpi_coll_reduce(struct hmbmpi_coll *c, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	int n, inter = 0, rank;
	peers(comm, &rank, &inter);
	if (coll_root(c, root, comm, &n)) {
		c->received = bytes(count, type);
		if (!inter) {
			c->sent = bytes(count, type);
		}
	} else if (!inter || root >= 0) {
		c->sent = bytes(count, type);
	}
}

HMB_NOINST void hmbmpi_coll_allreduce(struct hmbmpi_coll *c, int count, MPI_Datatype type, MPI_Comm comm)
{
	coll_all(c, comm);
	c->sent = c->received = bytes(count, type);
}

HMB_NOINST void hmbmpi_coll_scan(struct hmbmpi_coll *c, int count, MPI_Datatype type, MPI_Comm comm)
{
	coll_all(c, comm);
	c->sent = c->received = bytes(count, type);
}

HMB_NOINST void hmbmpi_coll_gather(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int n;
	int is_root = coll_root(c, root, comm, &n);
	if (is_root) {
		c->received = (uint64_t)n * bytes(recvcount, recvtype);
	}
	if (sendbuf == MPI_IN_PLACE) {
		c->sent = bytes(recvcount, recvtype);
	} else if (root != MPI_PROC_NULL && root != MPI_ROOT) {
		c->sent = bytes(sendcount, sendtype);
	}
}

HMB_NOINST void hmbmpi_coll_gatherv(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				    const int recvcounts[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int n;
	int is_root = coll_root(c, root, comm, &n);
	if (is_root) {
		c->received = sum(recvcounts, n, recvtype);
	}
	if (sendbuf == MPI_IN_PLACE) {
		int rank, inter;
		peers(comm, &rank, &inter);
		c->sent = rank >= 0 && rank < n ? bytes(recvcounts[rank], recvtype) : 0;
	} else if (root != MPI_PROC_NULL && root != MPI_ROOT) {
		c->sent = bytes(sendcount, sendtype);
	}
}

HMB_NOINST void hmbmpi_coll_scatter(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype, const void *recvbuf,
				    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int n;
	if (coll_root(c, root, comm, &n)) {
		c->sent = (uint64_t)n * bytes(sendcount, sendtype);
	}
	if (recvbuf == MPI_IN_PLACE) {
		c->received = bytes(sendcount, sendtype);
	} else if (root != MPI_PROC_NULL && root != MPI_ROOT) {
		c->received = bytes(recvcount, recvtype);
	}
}

HMB_NOINST void hmbmpi_coll_scatterv(struct hmbmpi_coll *c, const int sendcounts[], MPI_Datatype sendtype,
				     const void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int n;
	if (coll_root(c, root, comm, &n)) {
		c->sent = sum(sendcounts, n, sendtype);
	}
	if (recvbuf == MPI_IN_PLACE) {
		int rank, inter;
		peers(comm, &rank, &inter);
		c->received = rank >= 0 && rank < n ? bytes(sendcounts[rank], sendtype) : 0;
	} else if (root != MPI_PROC_NULL && root != MPI_ROOT) {
		c->received = bytes(recvcount, recvtype);
	}
}

HMB_NOINST void hmbmpi_coll_allgather(struct hmbmpi_coll *c, const void *sendbuf, int sendcount,
				      MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int n = coll_all(c, comm);
	c->received = (uint64_t)n * bytes(recvcount, recvtype);
	c->sent = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
}

HMB_NOINST void hmbmpi_coll_allgatherv(struct hmbmpi_coll *c, const void *sendbuf, int sendcount,
				       MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype,
				       MPI_Comm comm)
{
	int n = coll_all(c, comm), rank, inter;
	c->received = sum(recvcounts, n, recvtype);
	if (sendbuf == MPI_IN_PLACE) {
		peers(comm, &rank, &inter);
		c->sent = rank >= 0 && rank < n ? bytes(recvcounts[rank], recvtype) : 0;
	} else {
		c->sent = bytes(sendcount, sendtype);
	}
}

HMB_NOINST void hmbmpi_coll_alltoall(struct hmbmpi_coll *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				     int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int n = coll_all(c, comm);
	c->received = (uint64_t)n * bytes(recvcount, recvtype);
	c->sent = sendbuf == MPI_IN_PLACE ? c->received : (uint64_t)n * bytes(sendcount, sendtype);
}

HMB_NOINST void hmbmpi_coll_alltoallv(struct hmbmpi_coll *c, const void *sendbuf, const int sendcounts[],
				      MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype,
				      MPI_Comm comm)
{
	int n = coll_all(c, comm);
	c->received = sum(recvcounts, n, recvtype);
	c->sent = sendbuf == MPI_IN_PLACE ? c->received : sum(sendcounts, n, sendtype);
}

HMB_NOINST void hmbmpi_coll_alltoallw(struct hmbmpi_coll *c, const void *sendbuf, const int sendcounts[],
				      const MPI_Datatype sendtypes[], const MPI_Fint *sendtypes_f,
				      const int recvcounts[], const MPI_Datatype recvtypes[],
				      const MPI_Fint *recvtypes_f, MPI_Comm comm)
{
	int n = coll_all(c, comm);
	c->received = sum_w(recvcounts, recvtypes, recvtypes_f, n);
	c->sent = sendbuf == MPI_IN_PLACE ? c->received : sum_w(sendcounts, sendtypes, sendtypes_f, n);
}

HMB_NOINST void hmbmpi_coll_reduce_scatter(struct hmbmpi_coll *c, const int recvcounts[], MPI_Datatype type,
					   MPI_Comm comm)
{
	int n = coll_all(c, comm), rank, inter;
	peers(comm, &rank, &inter);
	c->sent = sum(recvcounts, n, type);
	c->received = rank >= 0 && rank < n ? bytes(recvcounts[rank], type) : 0;
}

HMB_NOINST void hmbmpi_coll_reduce_scatter_block(struct hmbmpi_coll *c, int recvcount, MPI_Datatype type,
						 MPI_Comm comm)
{
	int n = coll_all(c, comm);
	c->sent = (uint64_t)n * bytes(recvcount, type);
	c->received = bytes(recvcount, type);
}

/* degrees returns comm's numbers of sources and destinations in its
 * virtual topology (0 and 0 without one: the call will fail). */
HMB_NOINST static void degrees(MPI_Comm comm, int *in, int *out)
{
	int topo = MPI_UNDEFINED, rank = 0, weighted = 0;
	*in = *out = 0;
	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) {
		return;
	}
	switch (topo) {
	case MPI_CART:
		if (PMPI_Cartdim_get(comm, in) == MPI_SUCCESS) {
			*in = *out = 2 * *in;
		}
		break;
	case MPI_GRAPH:
		if (PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && PMPI_Graph_neighbors_count(comm, rank, in) == MPI_SUCCESS) {
			*out = *in;
		}
		break;
	case MPI_DIST_GRAPH:
		PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
		break;
	}
}

HMB_NOINST void hmbmpi_coll_neighbor_allgather(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype,
					       int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int in, out;
	coll_all(c, comm);
	degrees(comm, &in, &out);
	c->sent = (uint64_t)out * bytes(sendcount, sendtype);
	c->received = (uint64_t)in * bytes(recvcount, recvtype);
}

HMB_NOINST void hmbmpi_coll_neighbor_allgatherv(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype,
						const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int in, out;
	coll_all(c, comm);
	degrees(comm, &in, &out);
	c->sent = (uint64_t)out * bytes(sendcount, sendtype);
	c->received = sum(recvcounts, in, recvtype);
}

HMB_NOINST void hmbmpi_coll_neighbor_alltoall(struct hmbmpi_coll *c, int sendcount, MPI_Datatype sendtype,
					      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	hmbmpi_coll_neighbor_allgather(c, sendcount, sendtype, recvcount, recvtype, comm);
}

HMB_NOINST void hmbmpi_coll_neighbor_alltoallv(struct hmbmpi_coll *c, const int sendcounts[], MPI_Datatype sendtype,
					       const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int in, out;
	coll_all(c, comm);
	degrees(comm, &in, &out);
	c->sent = sum(sendcounts, out, sendtype);
	c->received = sum(recvcounts, in, recvtype);
}

HMB_NOINST void hmbmpi_coll_neighbor_alltoallw(struct hmbmpi_coll *c, const int sendcounts[],
					       const MPI_Datatype sendtypes[], const MPI_Fint *sendtypes_f,
					       const int recvcounts[], const MPI_Datatype recvtypes[],
					       const MPI_Fint *recvtypes_f, MPI_Comm comm)
{
	int in, out;
	coll_all(c, comm);
	degrees(comm, &in, &out);
	c->sent = sum_w(sendcounts, sendtypes, sendtypes_f, out);
	c->received = sum_w(recvcounts, recvtypes, recvtypes_f, in);
}

HMB_NOINST void hmbmpi_coll_enter(uint32_t region, const struct hmbmpi_coll *c)
{
	hmb_enter_collective_comm(region, c->root, c->sent, c->received, c->comm);
}

/* A non-blocking collective's region is an MPI region like any other: the
 * collective itself is recorded where its request completes. */
HMB_NOINST void hmbmpi_icoll_enter(uint32_t region, const struct hmbmpi_coll *c)
{
	(void)c;
	hmbmpi_enter(region);
}

HMB_NOINST void hmbmpi_icoll(uint32_t region, const struct hmbmpi_coll *c, MPI_Request req)
{
	struct pending p = {.key = req_key(req), .what = P_COLL, .region = region, .root = c->root,
			    .bytes = c->sent, .received = c->received, .commid = c->comm};
	p.id = new_request();
	hmb_collective_request(p.id);
	pend_add(p, 1);
}

/* Communicators. */

HMB_NOINST void hmbmpi_comm_created(MPI_Comm parent, MPI_Comm newcomm)
{
	if (newcomm != MPI_COMM_NULL) {
		info_of(newcomm, parent);
	}
}

HMB_NOINST void hmbmpi_comm_idup(MPI_Comm parent, MPI_Comm *newcomm, MPI_Fint *fnewcomm, MPI_Request req)
{
	pend_add((struct pending){.key = req_key(req), .what = P_IDUP, .comm = parent, .newcomm = newcomm,
				  .fnewcomm = fnewcomm, .id = 1},
		 0);
}

/* The new communicator of MPI_Comm_idup is there once its request completed. */
HMB_NOINST static void comm_idup_done(const struct pending *p)
{
	MPI_Comm c = p->newcomm != NULL ? *p->newcomm : MPI_Comm_f2c(*p->fnewcomm);
	hmbmpi_comm_created(p->comm, c);
}

/*
 * The collective steps of MPI_Init and MPI_Finalize run on sync_comm, the
 * private duplicate of MPI_COMM_WORLD, so that no message of the program
 * can match theirs. Their waits are bounded (HMB_COLLECTIVE_TIMEOUT): a
 * rank that died, or never reaches MPI_Finalize, would otherwise hold the
 * others there for ever. Each step waits with nonblocking calls until its
 * deadline; past it, this rank gives the collective end up, says why, and
 * writes its own file as without an archive.
 */
enum { TAG_PING = 1, TAG_PONG, TAG_PARENT, TAG_CAPACITY, TAG_SLOT, TAG_RUN_SIZE, TAG_RUN_DATA };
static int64_t coll_timeout_ns = 120LL * 1000000000LL;
static int64_t coll_deadline;
static int coll_abandoned; /* a wait timed out or failed: no collective step any more */

HMB_NOINST static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* step_begins sets the deadline of a collective step's waits. */
HMB_NOINST static void step_begins(void)
{
	coll_deadline = mono_ns() + coll_timeout_ns;
}

/*
 * abandon gives the collective steps up, with one line naming what this
 * rank waited for. The point-to-point requests still active are cancelled
 * and freed; sync_comm is left to MPI_Finalize, since freeing it is a
 * collective call of its own.
 */
HMB_NOINST static void abandon(int n, MPI_Request *r, const char *what, const char *why)
{
	for (int i = 0; i < n; i++) {
		if (r[i] != MPI_REQUEST_NULL) {
			PMPI_Cancel(&r[i]);
			PMPI_Request_free(&r[i]);
		}
	}
	if (!coll_abandoned) {
		fprintf(stderr,
			"hmbtrace: rank %d: %s %s (a rank died, or did not reach MPI_Finalize): this rank writes its own "
			"file <name>.%d.hmb (HMB_COLLECTIVE_TIMEOUT sets the wait)\n",
			world_rank, why, what, world_rank);
	}
	coll_abandoned = 1;
}

/*
 * coll_meter counts, for HMB_COLLECTIVE_TIMING, what this rank's thread
 * spends in the collective end: its CPU time in the calls into Go (the
 * parts, merges and the replay's rounds) and the waits' polls that
 * yielded and slept. The process's CPU time beside it holds the rest:
 * MPI's progress, the polls themselves, and the Go runtime's own threads.
 */
static struct {
	int64_t go_cpu;
	long yields, sleeps;
} coll_meter;

/* thread_ns is the calling thread's CPU time so far. */
HMB_NOINST static int64_t thread_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
		return 0;
	}
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * How the collective steps wait. A wait that spins, even yielding between
 * tests, keeps its rank runnable, and where a node's ranks outnumber its
 * cores (8 ranks on 2 cores) the ranks that wait then take their share of
 * a core from those still making their parts. So there a wait yields a few
 * times (the answer is usually a message away) and then sleeps, each sleep
 * twice the last, up to WAIT_SLEEP_MAX_NS, which bounds what a step adds
 * to the answer's arrival. With a core per rank, as on a cluster, a
 * spinning rank takes nobody's core and a sleep only adds latency to each
 * of the tree's rounds: there the waits spin as the clock
 * synchronisation's ping-pongs always do (WAIT_SPIN), whose round trip is
 * the offset's error.
 */
enum wait_mode { WAIT_IDLE, WAIT_SPIN };
#define WAIT_YIELDS 16
#define WAIT_SLEEP_MIN_NS 8000
#define WAIT_SLEEP_MAX_NS 250000

/* oversubscribed is set at MPI_Init when this node runs more ranks than it
 * has cores online: then WAIT_IDLE waits sleep. */
static int oversubscribed;

/*
 * wait_mode_for waits for n point-to-point requests until the step's
 * deadline; 0 if they did not all complete (then the collective steps are
 * given up).
 */
HMB_NOINST static int wait_mode_for(int n, MPI_Request *r, const char *what, enum wait_mode mode)
{
	if (coll_abandoned) {
		abandon(n, r, what, "");
		return 0;
	}
	if (!oversubscribed) {
		mode = WAIT_SPIN;
	}
	long sleep_ns = mode == WAIT_SPIN ? 100000 : WAIT_SLEEP_MIN_NS;
	for (long spin = 0;; spin++) {
		int done = 0;
		if (PMPI_Testall(n, r, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
			abandon(n, r, what, "MPI failed while waiting for");
			return 0;
		}
		if (done) {
			return 1;
		}
		if ((mode == WAIT_IDLE || (spin & 63) == 0) && mono_ns() > coll_deadline) {
			char why[64];
			snprintf(why, sizeof why, "waited %.0f s in vain for", (double)coll_timeout_ns / 1e9);
			abandon(n, r, what, why);
			return 0;
		}
		if (mode == WAIT_SPIN ? spin < 2000 : spin < WAIT_YIELDS) {
			sched_yield();
			coll_meter.yields++;
		} else {
			struct timespec ts = {0, sleep_ns};
			nanosleep(&ts, NULL);
			coll_meter.sleeps++;
			if (mode == WAIT_IDLE) {
				sleep_ns = sleep_ns * 2 < WAIT_SLEEP_MAX_NS ? sleep_ns * 2 : WAIT_SLEEP_MAX_NS;
			}
		}
	}
}

/* bounded_wait is wait_mode_for a step that may idle. */
HMB_NOINST static int bounded_wait(int n, MPI_Request *r, const char *what)
{
	return wait_mode_for(n, r, what, WAIT_IDLE);
}

/*
 * Clock synchronisation in ceil(log2 p) rounds: a binomial tree over the
 * ranks of sync_comm. In the round of step s (from the highest power of
 * two below p down to 1), each rank r with r mod 2s = s measures its
 * offset to its parent r - s with a few ping-pongs, the shortest round
 * trip winning (its midpoint taken as the moment the parent answered); the
 * parent, whose own offset to rank 0 is known since an earlier round, then
 * passes that offset (and rank 0's start) down, and the two compose. Each
 * rank takes part in at most one round as a child and serves a child in
 * each later one: no rank serves more than log2 p, where rank 0 served
 * every rank one after the other before.
 */
#define SYNC_ROUNDS 8
#define SYNC_MAX_ROUNDS 64
#define SYNC_GOOD_NS 100000 /* a round trip of 100 µs bounds the error at 50 µs */
#define SYNC_DONE 1

/* What a parent passes down: its offset to rank 0, and rank 0's start. */
struct sync_down {
	int64_t offset;
	uint64_t ref_start;
};

/*
 * The ranks of one node read one clock: the invariant TSC, which the
 * kernel keeps in step across the node's cores, or CLOCK_MONOTONIC. So an
 * edge of the tree between two of them has an offset of exactly 0, and
 * its ping-pongs would only measure the scheduler (under half their round
 * trip each, which adds up along the tree). Only edges between nodes are
 * measured; on one node the synchronisation is the tree's small messages
 * that pass rank 0's offset and start down, and at MPI_Finalize, when the
 * whole run is on one node, nothing. node_ranks are the world ranks of
 * this node that picked the same clock as this rank (set at MPI_Init).
 */
static int32_t *node_ranks;
static int node_n, node_whole_run;
static uint64_t init_ref_start; /* rank 0's start, from MPI_Init's sync */

/* same_clock says whether world rank r reads this rank's clock. */
HMB_NOINST static int same_clock(int r)
{
	for (int i = 0; i < node_n; i++) {
		if (node_ranks[i] == r) {
			return 1;
		}
	}
	return 0;
}

/*
 * node_clock learns which ranks of node (this rank's node's communicator)
 * share this rank's clock: an allgather of each member's world rank and
 * clock kind on the node. Without it (out of memory, MPI failed) every
 * edge is measured, as between nodes.
 */
HMB_NOINST static void node_clock(MPI_Comm node, int local)
{
	/* HMB_CLOCK_SYNC=measure: every edge ping-pongs, as between nodes
	 * (measure's configuration checked the value at hmb_init). */
	const char *how = getenv("HMB_CLOCK_SYNC");
	if (how != NULL && strcasecmp(how, "measure") == 0) {
		return;
	}
	int32_t me[2] = {world_rank, hmb_clock_tsc()};
	int32_t *all = malloc((size_t)local * sizeof me);
	node_ranks = malloc((size_t)local * sizeof *node_ranks);
	if (all == NULL || node_ranks == NULL ||
	    PMPI_Allgather(me, 2, MPI_INT32_T, all, 2, MPI_INT32_T, node) != MPI_SUCCESS) {
		free(all);
		free(node_ranks);
		node_ranks = NULL;
		return;
	}
	for (int i = 0; i < local; i++) {
		if (all[2 * i + 1] == me[1]) {
			node_ranks[node_n++] = all[2 * i];
		}
	}
	free(all);
	node_whole_run = node_n == hmbmpi_world_size;
}

HMB_NOINST static int serve_child(int child, const struct sync_down *mine)
{
	char what[64];
	snprintf(what, sizeof what, "rank %d's clock synchronisation", child);
	if (same_clock(child)) {
		MPI_Request r = MPI_REQUEST_NULL;
		PMPI_Isend((void *)mine, (int)sizeof *mine, MPI_BYTE, child, TAG_PARENT, sync_comm, &r);
		return bounded_wait(1, &r, what);
	}
	/* The child decides how many ping-pongs it needs, SYNC_MAX_ROUNDS at
	 * most: a last ping says it is done. */
	for (int k = 0; k <= SYNC_MAX_ROUNDS; k++) {
		char ping;
		MPI_Request r = MPI_REQUEST_NULL;
		PMPI_Irecv(&ping, 1, MPI_CHAR, child, TAG_PING, sync_comm, &r);
		/* The first ping waits for the child's arrival: idle. */
		if (!wait_mode_for(1, &r, what, k == 0 ? WAIT_IDLE : WAIT_SPIN)) {
			return 0;
		}
		if (ping == SYNC_DONE) {
			break;
		}
		uint64_t t0 = hmb_clock();
		PMPI_Isend(&t0, 1, MPI_UINT64_T, child, TAG_PONG, sync_comm, &r);
		if (!wait_mode_for(1, &r, what, WAIT_SPIN)) {
			return 0;
		}
	}
	MPI_Request r = MPI_REQUEST_NULL;
	PMPI_Isend((void *)mine, (int)sizeof *mine, MPI_BYTE, child, TAG_PARENT, sync_comm, &r);
	return bounded_wait(1, &r, what);
}

HMB_NOINST static int sync_with_parent(int parent, uint64_t *mid, struct sync_down *mine)
{
	char what[64];
	snprintf(what, sizeof what, "rank %d for the clock synchronisation", parent);
	uint64_t best = UINT64_MAX;
	int64_t offset = 0, best_ns = INT64_MAX;
	if (same_clock(parent)) {
		*mid = hmb_clock(); /* any moment: the offset is 0 at all */
	}
	for (int k = 0; !same_clock(parent); k++) {
		/* At least SYNC_ROUNDS; more, up to SYNC_MAX_ROUNDS, while no
		 * round trip was short: under load (ranks sharing cores) every
		 * one may have waited for a time slice, and the offset's error is
		 * up to half the round trip, which adds up along the tree. */
		char ping = (k >= SYNC_ROUNDS && (best_ns <= SYNC_GOOD_NS || k >= SYNC_MAX_ROUNDS)) ? SYNC_DONE : 0;
		MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
		if (ping == SYNC_DONE) {
			PMPI_Isend(&ping, 1, MPI_CHAR, parent, TAG_PING, sync_comm, &r[1]);
			if (!bounded_wait(1, &r[1], what)) {
				return 0;
			}
			break;
		}
		uint64_t t0 = 0;
		PMPI_Irecv(&t0, 1, MPI_UINT64_T, parent, TAG_PONG, sync_comm, &r[0]);
		int64_t n1 = mono_ns();
		uint64_t t1 = hmb_clock();
		PMPI_Isend(&ping, 1, MPI_CHAR, parent, TAG_PING, sync_comm, &r[1]);
		/* The first waits for the parent to serve this rank: idle. */
		if (!wait_mode_for(2, r, what, k == 0 ? WAIT_IDLE : WAIT_SPIN)) {
			return 0;
		}
		uint64_t t2 = hmb_clock();
		int64_t rtt = mono_ns() - n1;
		if (t2 - t1 < best) {
			best = t2 - t1;
			*mid = t1 + (t2 - t1) / 2;
			offset = (int64_t)(t0 - *mid);
		}
		if (rtt < best_ns) {
			best_ns = rtt;
		}
	}
	struct sync_down up;
	MPI_Request r = MPI_REQUEST_NULL;
	PMPI_Irecv(&up, (int)sizeof up, MPI_BYTE, parent, TAG_PARENT, sync_comm, &r);
	if (!bounded_wait(1, &r, what)) {
		return 0;
	}
	mine->offset = offset + up.offset;
	mine->ref_start = up.ref_start;
	return 1;
}

HMB_NOINST static void clock_sync(void)
{
	if (sync_comm == MPI_COMM_NULL || coll_abandoned) {
		return;
	}
	step_begins();
	int p = hmbmpi_world_size, r = world_rank, top = 1;
	while (top < p) {
		top <<= 1;
	}
	struct sync_down mine = {0, 0};
	uint64_t mid = 0;
	if (r == 0) {
		mine.ref_start = hmb_start_ticks();
		mid = hmb_clock();
	}
	if (init_ref_start != 0 && node_whole_run) {
		/* MPI_Finalize's, the run on one node: one clock, no drift. */
		hmb_clock_sync(hmb_clock(), 0, init_ref_start);
		return;
	}
	for (int step = top >> 1; step >= 1; step >>= 1) {
		if (r % (2 * step) == 0 && r + step < p) {
			if (!serve_child(r + step, &mine)) {
				return;
			}
		} else if (r % (2 * step) == step) {
			if (!sync_with_parent(r - step, &mid, &mine)) {
				return;
			}
		}
	}
	hmb_clock_sync(mid, mine.offset, mine.ref_start);
	init_ref_start = mine.ref_start;
}

/*
 * The run-wide results are reduced in passes (cshim/runresults.go says
 * what each holds): in each, every rank makes its part, and the ranks
 * merge the parts up a binomial tree to rank 0 in ceil(log2 p) rounds,
 * each rank merging what its children send before it sends the result to
 * its parent, so that no rank holds more than the run's result and no
 * rank waits for more than log2 p messages. Rank 0 keeps the run's for
 * group 0's archive, and may send something down the same tree for the
 * next pass (the time-dominant region, which every rank then cuts its own
 * events by). A part travels as its size, then its bytes. A rank whose
 * part cannot be made sends an empty one (size 0), which merges as
 * nothing.
 */
enum { TAG_DOWN_SIZE = 64, TAG_DOWN_DATA };

/* send_part sends n bytes at p (n may be 0) to rank to; 0 if it failed.
 * A part past one MPI message's count goes as an empty one. */
HMB_NOINST static int send_part(int to, int tag_size, int tag_data, const char *p, size_t n, const char *what)
{
	if (n > (size_t)INT32_MAX) {
		fprintf(stderr, "hmbtrace: rank %d: sending to %s: %zu bytes are more than one MPI message holds; sent empty\n", world_rank, what, n);
		n = 0;
	}
	uint64_t size = n;
	MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	PMPI_Isend(&size, 1, MPI_UINT64_T, to, tag_size, sync_comm, &q[0]);
	if (n > 0) {
		PMPI_Isend((void *)p, (int)n, MPI_BYTE, to, tag_data, sync_comm, &q[1]);
	}
	return bounded_wait(2, q, what);
}

/* recv_part receives what send_part sent from rank from into *p (malloc'd,
 * NULL when empty); 0 if it failed. */
HMB_NOINST static int recv_part(int from, int tag_size, int tag_data, char **p, size_t *n, const char *what)
{
	*p = NULL;
	*n = 0;
	uint64_t size = 0;
	MPI_Request q = MPI_REQUEST_NULL;
	PMPI_Irecv(&size, 1, MPI_UINT64_T, from, tag_size, sync_comm, &q);
	if (!bounded_wait(1, &q, what)) {
		return 0;
	}
	if (size == 0) {
		return 1;
	}
	if (size > (uint64_t)INT32_MAX) {
		abandon(0, NULL, what, "more than 2 GB in one message for");
		return 0;
	}
	char *b = malloc((size_t)size);
	if (b == NULL) {
		abandon(0, NULL, what, "out of memory for");
		return 0;
	}
	PMPI_Irecv(b, (int)size, MPI_BYTE, from, tag_data, sync_comm, &q);
	if (!bounded_wait(1, &q, what)) {
		free(b);
		return 0;
	}
	*p = b;
	*n = (size_t)size;
	return 1;
}

static const char *const pass_names[] = {
	[HMB_PASS_PROFILE] = "run profile",
	[HMB_PASS_COMM] = "communication matrix",
	[HMB_PASS_CHOICE] = "choice of the time-dominant region",
	[HMB_PASS_SEGMENTS] = "segments",
	[HMB_PASS_PHASES] = "phase series",
	[HMB_PASS_REPLAY] = "wait-state replay",
	[HMB_PASS_WAITSTATES] = "wait states",
};

/*
 * The passes travel up the tree in bundles: the parts of several passes
 * that a rank made go to its parent in one message (each part a size,
 * then its bytes), and the parent merges them pass by pass. A tree trip
 * costs ceil(log2 p) rounds of waiting for a child, each a time slice of
 * another rank where ranks outnumber cores, whatever the message holds;
 * so all that depends on nothing sent down the tree (the profile, the
 * matrix, the choice, the phase series and the definitions) goes up in
 * the first bundle, and the segments, cut as rank 0 chose, go with the
 * wait states after the replay: two trips up and one down, where each pass
 * and the definitions made a trip of their own (eight up, one down).
 *
 * A rank's running merge of a pass stays in Go (held[i]) from one child's
 * part to the next, and is written only when it goes to the parent
 * (bundle_encode) or never, at rank 0: written and read again at every
 * level it cost the root as much again as reading its children's parts.
 *
 * PASS_DEFS is the definitions' slot (hmb_run_definitions, not a pass of
 * enum hmb_pass). A rank whose definitions are missing makes the run's
 * incomplete: its slot travels empty from there up, and rank 0 keeps no
 * unified tables (readers then unify by name, as for rank files). Any
 * other pass's empty part merges as nothing.
 */
#define PASS_DEFS 0
#define BUNDLE_MAX 8

/*
 * PASS_DROPS is the probes the ranks dropped (by cause) and their MPI
 * requests still active at MPI_Finalize, summed in C on the way up: rank 0
 * says them once for the run (say_run_drops), where 256 ranks said 512
 * lines, two each.
 */
#define PASS_DROPS (-1)

/* A tally is a count over ranks: all of it, the ranks with any, the most
 * of one rank and that rank (the lowest of equals). */
struct tally {
	uint64_t n, ranks, most, rank;
};

struct drop_part {
	uint64_t by[HMB_DROP_WHYS];
	struct tally dropped, active; /* probes dropped; requests active at MPI_Finalize */
};

static uint64_t active_unseen;		   /* this rank's requests active at MPI_Finalize */
static uint64_t drops_sent[HMB_DROP_WHYS]; /* this rank's drops in its PASS_DROPS part */
static int drops_in_part;		   /* they went up in the part (not out of memory) */
static struct drop_part run_drops;	   /* rank 0: the run's */
static int run_drops_known;

/* tally_of is one rank's tally of n. */
HMB_NOINST static struct tally tally_of(uint64_t n, int rank)
{
	return (struct tally){.n = n, .ranks = n > 0, .most = n, .rank = (uint64_t)rank};
}

/* tally_add adds o (ranks after t's) into t. */
HMB_NOINST static void tally_add(struct tally *t, const struct tally *o)
{
	if (o->most > t->most) {
		t->most = o->most, t->rank = o->rank;
	}
	t->n += o->n;
	t->ranks += o->ranks;
}

/* drop_part_merge adds o (ranks after d's) into d. */
HMB_NOINST static void drop_part_merge(struct drop_part *d, const struct drop_part *o)
{
	for (int i = 0; i < HMB_DROP_WHYS; i++) {
		d->by[i] += o->by[i];
	}
	tally_add(&d->dropped, &o->dropped);
	tally_add(&d->active, &o->active);
}

/* tally_ranks writes into who which ranks t counts: "on rank 5", "on 32 of
 * 32 ranks, 1 each", "on 3 of 32 ranks (rank 7 the most: 4)". */
HMB_NOINST static void tally_ranks(char *who, size_t size, const struct tally *t)
{
	if (t->ranks == 1) {
		snprintf(who, size, "on rank %llu", (unsigned long long)t->rank);
	} else if (t->most * t->ranks == t->n) {
		snprintf(who, size, "on %llu of %d ranks, %llu each", (unsigned long long)t->ranks, hmbmpi_world_size,
			 (unsigned long long)t->most);
	} else {
		snprintf(who, size, "on %llu of %d ranks (rank %llu the most: %llu)", (unsigned long long)t->ranks,
			 hmbmpi_world_size, (unsigned long long)t->rank, (unsigned long long)t->most);
	}
}

/* say_run_drops says, at rank 0, the run's drops and requests active at MPI_Finalize: a line each, for all ranks. */
HMB_NOINST static void say_run_drops(void)
{
	const struct drop_part *d = &run_drops;
	char who[96];
	if (d->active.n > 0) {
		tally_ranks(who, sizeof who, &d->active);
		fprintf(stderr,
			"hmbtrace: %llu MPI requests were still active at MPI_Finalize %s: their completions are not in "
			"the trace (counted as dropped probes)\n",
			(unsigned long long)d->active.n, who);
	}
	if (d->dropped.n > 0) {
		char causes[1024];
		tally_ranks(who, sizeof who, &d->dropped);
		hmb_drop_causes_of(d->by, causes, sizeof causes);
		fprintf(stderr, "hmbtrace: %llu probes dropped up to MPI_Finalize %s, not in the trace: %s\n",
			(unsigned long long)d->dropped.n, who, causes);
	}
}

struct bundle {
	int k;
	int pass[BUNDLE_MAX];
	char *part[BUNDLE_MAX]; /* NULL when empty or held */
	size_t n[BUNDLE_MAX];
	int held[BUNDLE_MAX]; /* the part is the running merge Go holds */
};

/* bundle_add makes this rank's part of pass (given in, what came down the
 * tree before, or NULL) and adds it to b; a part that cannot be made is
 * empty, and said. */
HMB_NOINST static void bundle_add(struct bundle *b, int pass, const char *in, size_t in_n)
{
	int i = b->k++;
	b->pass[i] = pass;
	b->part[i] = NULL;
	b->n[i] = 0;
	b->held[i] = 0;
	if (pass == PASS_DROPS) {
		struct drop_part *d = calloc(1, sizeof *d);
		hmb_drops_now(drops_sent);
		if (d != NULL) {
			uint64_t n = 0;
			for (int k = 0; k < HMB_DROP_WHYS; k++) {
				n += drops_sent[k];
			}
			memcpy(d->by, drops_sent, sizeof d->by);
			d->dropped = tally_of(n, world_rank);
			d->active = tally_of(active_unseen, world_rank);
			b->part[i] = (char *)d;
			b->n[i] = sizeof *d;
			drops_in_part = 1;
		}
		return;
	}
	if (pass == PASS_DEFS) {
		int64_t c0 = thread_ns();
		int bad = hmb_run_definitions(&b->part[i], &b->n[i]) != 0;
		coll_meter.go_cpu += thread_ns() - c0;
		if (bad) {
			fprintf(stderr, "hmbtrace: rank %d: %s: the archive has no unified definitions\n", world_rank,
				hmb_last_error());
			b->part[i] = NULL;
			b->n[i] = 0;
		}
		return;
	}
	int64_t c0 = thread_ns();
	int bad = hmb_pass_make(pass, world_rank, in, in_n, &b->part[i], &b->n[i]) != 0;
	coll_meter.go_cpu += thread_ns() - c0;
	if (bad) {
		fprintf(stderr, "hmbtrace: rank %d: %s: the run's %s, without this rank\n", world_rank, hmb_last_error(),
			pass_names[pass]);
		b->part[i] = NULL;
		b->n[i] = 0;
	}
}

/* bundle_empty reports whether b has no part i: none written, none held. */
HMB_NOINST static int bundle_empty(const struct bundle *b, int i)
{
	return b->part[i] == NULL && !b->held[i];
}

/* bundle_free frees b's parts; what Go holds is let go at hmb_pass_end. */
HMB_NOINST static void bundle_free(struct bundle *b)
{
	for (int i = 0; i < b->k; i++) {
		free(b->part[i]);
		b->part[i] = NULL;
		b->n[i] = 0;
		b->held[i] = 0;
	}
}

/* bundle_write has Go write b's held parts, to send them; a part that
 * cannot be written goes as empty (that pass's result then lacks these
 * ranks, the definitions are incomplete), and is said. */
HMB_NOINST static void bundle_write(struct bundle *b)
{
	for (int i = 0; i < b->k; i++) {
		if (!b->held[i]) {
			continue;
		}
		b->held[i] = 0;
		int64_t c0 = thread_ns();
		int bad = b->pass[i] == PASS_DEFS ? hmb_run_defs_held(&b->part[i], &b->n[i]) != 0
						  : hmb_pass_held(b->pass[i], &b->part[i], &b->n[i]) != 0;
		coll_meter.go_cpu += thread_ns() - c0;
		if (bad) {
			fprintf(stderr, "hmbtrace: rank %d: %s: the run's %s, without this rank's subtree\n", world_rank,
				hmb_last_error(), b->pass[i] == PASS_DEFS ? "definitions" : pass_names[b->pass[i]]);
			b->part[i] = NULL;
			b->n[i] = 0;
		}
	}
}

/* bundle_encode returns b's parts in one malloc'd message of *n bytes, or
 * NULL when out of memory; none may be held (bundle_write). */
HMB_NOINST static char *bundle_encode(const struct bundle *b, size_t *n)
{
	size_t len = 0;
	for (int i = 0; i < b->k; i++) {
		len += sizeof(uint64_t) + b->n[i];
	}
	char *m = malloc(len > 0 ? len : 1), *at = m;
	if (m == NULL) {
		return NULL;
	}
	for (int i = 0; i < b->k; i++) {
		uint64_t size = b->n[i];
		memcpy(at, &size, sizeof size);
		at += sizeof size;
		if (size > 0) {
			memcpy(at, b->part[i], b->n[i]);
			at += b->n[i];
		}
	}
	*n = len;
	return m;
}

/*
 * bundle_merge merges into b the bundle that ranks lo to hi sent (m, n
 * bytes, as bundle_encode made it), pass by pass, theirs after b's; 0 when
 * the message is not a bundle of b's passes.
 */
HMB_NOINST static int bundle_merge(struct bundle *b, const char *m, size_t n, int lo, int hi)
{
	const char *at = m, *end = m + n;
	for (int i = 0; i < b->k; i++) {
		uint64_t size;
		if ((size_t)(end - at) < sizeof size) {
			return 0;
		}
		memcpy(&size, at, sizeof size);
		at += sizeof size;
		if (size > (uint64_t)(end - at)) {
			return 0;
		}
		const char *theirs = at;
		at += size;
		if (b->pass[i] == PASS_DROPS) {
			if (size != sizeof(struct drop_part)) {
				return 0;
			}
			if (bundle_empty(b, i)) {
				if ((b->part[i] = malloc(sizeof(struct drop_part))) == NULL) {
					return 0;
				}
				memcpy(b->part[i], theirs, sizeof(struct drop_part));
				b->n[i] = sizeof(struct drop_part);
			} else {
				struct drop_part o;
				memcpy(&o, theirs, sizeof o);
				drop_part_merge((struct drop_part *)b->part[i], &o);
			}
			continue;
		}
		if (b->pass[i] == PASS_DEFS) {
			if (bundle_empty(b, i)) {
				continue; /* incomplete already */
			}
			int64_t c0 = thread_ns();
			int bad = size == 0 || hmb_run_defs_merge(b->part[i], b->n[i], b->held[i], theirs, (size_t)size) != 0;
			coll_meter.go_cpu += thread_ns() - c0;
			if (bad && size > 0) {
				fprintf(stderr, "hmbtrace: rank %d: %s: the archive has no unified definitions\n", world_rank,
					hmb_last_error());
			}
			/* Incomplete: held no more, what Go holds goes at hmb_pass_end. */
			b->held[i] = !bad;
			free(b->part[i]);
			b->part[i] = NULL, b->n[i] = 0;
			continue;
		}
		if (size == 0) {
			continue;
		}
		if (bundle_empty(b, i)) {
			if ((b->part[i] = malloc((size_t)size)) == NULL) {
				return 0;
			}
			memcpy(b->part[i], theirs, (size_t)size);
			b->n[i] = (size_t)size;
			continue;
		}
		int64_t c0 = thread_ns();
		int good = hmb_pass_merge(b->pass[i], b->part[i], b->n[i], b->held[i], theirs, (size_t)size) == 0;
		coll_meter.go_cpu += thread_ns() - c0;
		if (good) {
			free(b->part[i]);
			b->part[i] = NULL, b->n[i] = 0;
			b->held[i] = 1;
		} else {
			/* "the run's wait states, without ranks 47 to 51" ("rank 47" for one): said alike of any pass's name. */
			if (lo == hi) {
				fprintf(stderr, "hmbtrace: rank %d: %s: the run's %s, without rank %d\n", world_rank,
					hmb_last_error(), pass_names[b->pass[i]], lo);
			} else {
				fprintf(stderr, "hmbtrace: rank %d: %s: the run's %s, without ranks %d to %d\n", world_rank,
					hmb_last_error(), pass_names[b->pass[i]], lo, hi);
			}
		}
	}
	return at == end;
}

/*
 * run_bundle takes b's parts up the binomial tree to rank 0 in ceil(log2 p)
 * rounds, each rank merging what its children send before it sends the
 * result to its parent, so that no rank holds more than the run's results
 * and no rank waits for more than log2 p messages. At rank 0 each pass's
 * result goes to the measurement, and *next (when asked for) is what a
 * pass sends down the tree next, malloc'd, or NULL. b's parts are freed.
 */
HMB_NOINST static void run_bundle(struct bundle *b, char **next, size_t *next_n)
{
	if (next != NULL) {
		*next = NULL;
		*next_n = 0;
	}
	if (sync_comm == MPI_COMM_NULL || coll_abandoned) {
		bundle_free(b);
		return;
	}
	step_begins();
	int p = hmbmpi_world_size, r = world_rank;
	char what[96];
	for (int step = 1; step < p; step <<= 1) {
		if (r % (2 * step) == step) {
			size_t n = 0;
			bundle_write(b);
			char *m = bundle_encode(b, &n);
			snprintf(what, sizeof what, "rank %d to take this rank's results", r - step);
			if (m == NULL) {
				abandon(0, NULL, what, "out of memory for");
			} else {
				send_part(r - step, TAG_RUN_SIZE, TAG_RUN_DATA, m, n, what);
			}
			free(m);
			bundle_free(b);
			return;
		}
		if (r % (2 * step) == 0 && r + step < p) {
			int hi = (r + 2 * step < p ? r + 2 * step : p) - 1;
			snprintf(what, sizeof what, "the results of ranks %d to %d", r + step, hi);
			char *theirs = NULL;
			size_t tn = 0;
			if (!recv_part(r + step, TAG_RUN_SIZE, TAG_RUN_DATA, &theirs, &tn, what)) {
				bundle_free(b);
				return;
			}
			if (!bundle_merge(b, theirs, tn, r + step, hi)) {
				fprintf(stderr, "hmbtrace: rank %d: %s: %zu bytes that are not a bundle of %d passes' parts: "
						"the run's results lack them\n", r, what, tn, b->k);
			}
			free(theirs);
		}
	}
	if (r == 0) {
		for (int i = 0; i < b->k; i++) {
			if (bundle_empty(b, i)) {
				continue;
			}
			if (b->pass[i] == PASS_DROPS) {
				memcpy(&run_drops, b->part[i], sizeof run_drops);
				run_drops_known = 1;
				continue;
			}
			if (b->pass[i] == PASS_DEFS) {
				int64_t c0 = thread_ns();
				int bad = hmb_run_set_definitions(b->part[i], b->n[i], b->held[i]) != 0;
				coll_meter.go_cpu += thread_ns() - c0;
				if (bad) {
					fprintf(stderr, "hmbtrace: rank 0: %s: the archive has no unified definitions\n",
						hmb_last_error());
				}
				continue;
			}
			char *nb = NULL;
			size_t nn = 0;
			int64_t c0 = thread_ns();
			int bad = hmb_pass_set(b->pass[i], b->part[i], b->n[i], b->held[i], &nb, &nn) != 0;
			coll_meter.go_cpu += thread_ns() - c0;
			if (bad) {
				fprintf(stderr, "hmbtrace: rank 0: %s\n", hmb_last_error());
			}
			if (next != NULL && nb != NULL) {
				free(*next);
				*next = nb, *next_n = nn;
			} else {
				free(nb);
			}
		}
	}
	bundle_free(b);
}

/*
 * pass_down sends rank 0's *b (n bytes, maybe none) down the binomial tree
 * to every rank, in ceil(log2 p) rounds; a rank that could not receive it
 * is left with none.
 */
HMB_NOINST static void pass_down(char **b, size_t *n)
{
	if (sync_comm == MPI_COMM_NULL || coll_abandoned) {
		free(*b);
		*b = NULL;
		*n = 0;
		return;
	}
	step_begins();
	int p = hmbmpi_world_size, r = world_rank, top = 1;
	while (top < p) {
		top <<= 1;
	}
	char what[96];
	for (int step = top >> 1; step >= 1; step >>= 1) {
		if (r % (2 * step) == 0 && r + step < p) {
			snprintf(what, sizeof what, "rank %d to take the run's next pass", r + step);
			if (!send_part(r + step, TAG_DOWN_SIZE, TAG_DOWN_DATA, *b, *n, what)) {
				return;
			}
		} else if (r % (2 * step) == step) {
			snprintf(what, sizeof what, "rank %d for the run's next pass", r - step);
			if (!recv_part(r - step, TAG_DOWN_SIZE, TAG_DOWN_DATA, b, n, what)) {
				return;
			}
		}
	}
}

/*
 * replay_pause waits before a rank of the wait-state replay polls again
 * for its messages: the first yields polls yield (the message a chain
 * waits for is often on its way, and a yield hands the core to its
 * sender), the later ones sleep 20 us doubling up to cap_us, leaving
 * shared cores to the ranks with work.
 */
HMB_NOINST static void replay_pause(long spin, long yields, long cap_us)
{
	if (spin < yields) {
		sched_yield();
		coll_meter.yields++;
		return;
	}
	long us = 20L << (spin - yields < 6 ? spin - yields : 6);
	if (us > cap_us) {
		us = cap_us;
	}
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
	coll_meter.sleeps++;
}

/*
 * replay_exchange sends this rank's messages of one round of the
 * wait-state replay (out: records of a peer, a size and the bytes, as Go
 * wrote them) and receives the ones for it, appended to *in (from *in_n
 * on, as records of a sender, a size and the bytes), without knowing who
 * sends to it: each send is synchronous (MPI_Issend), the rank takes
 * whatever arrives (MPI_Iprobe) and, once its own sends were all matched,
 * joins a max reduction of sent (whether it sent anything) into *any.
 * When the reduction completes every rank's sends were matched, so every
 * message of the round is in (Hoefler et al.'s NBX exchange, with the
 * reduction as its barrier): one O(log p) collective a round, messages to
 * the peers only. 0 when the step's deadline passed or MPI failed (then
 * the collective steps are given up). A rank may begin the next round
 * while another still takes this one's messages, never the one after
 * (it needs that rank in this round's reduction): the rounds alternate
 * two tags.
 */
enum { TAG_REPLAY = 96 };

HMB_NOINST static int replay_exchange(int round, const char *out, size_t on, char **in, size_t *in_n, int *any)
{
	int tag = TAG_REPLAY + (round & 1);
	int p = hmbmpi_world_size, n = 0;
	for (size_t off = 0; off + 8 <= on;) {
		uint32_t rec[2];
		memcpy(rec, out + off, sizeof rec);
		if (rec[0] >= (uint32_t)p || rec[1] > on - off - 8) {
			break; /* not Go's records: the rest is sent as nothing */
		}
		n += rec[1] > 0;
		off += 8 + rec[1];
	}
	MPI_Request *q = malloc(((size_t)n + 1) * sizeof *q);
	if (q == NULL) {
		abandon(0, NULL, "the wait-state replay's messages", "out of memory for");
		return 0;
	}
	int k = 0;
	for (size_t off = 0; off + 8 <= on && k < n;) {
		uint32_t rec[2];
		memcpy(rec, out + off, sizeof rec);
		if (rec[1] > 0) {
			PMPI_Issend(out + off + 8, (int)rec[1], MPI_BYTE, (int)rec[0], tag, sync_comm, &q[k++]);
		}
		off += 8 + rec[1];
	}
	int sent = n > 0, reducing = 0;
	MPI_Request *red = &q[n];
	*red = MPI_REQUEST_NULL;
	for (long spin = 0;; spin++) {
		int flag = 0;
		MPI_Status st;
		if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, sync_comm, &flag, &st) != MPI_SUCCESS) {
			abandon(n + reducing, q, "the wait-state replay's messages", "MPI failed while waiting for");
			free(q);
			return 0;
		}
		if (flag) {
			int len = 0;
			PMPI_Get_count(&st, MPI_BYTE, &len);
			char *grown = realloc(*in, *in_n + 8 + (size_t)len);
			if (grown == NULL) {
				abandon(n + reducing, q, "the wait-state replay's messages", "out of memory for");
				free(q);
				return 0;
			}
			*in = grown;
			uint32_t rec[2] = {(uint32_t)st.MPI_SOURCE, (uint32_t)len};
			memcpy(*in + *in_n, rec, sizeof rec);
			PMPI_Recv(*in + *in_n + 8, len, MPI_BYTE, st.MPI_SOURCE, tag, sync_comm, MPI_STATUS_IGNORE);
			*in_n += 8 + (size_t)len;
			spin = 0;
			continue;
		}
		int done = 0;
		if (!reducing) {
			if (PMPI_Testall(n, q, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
				abandon(n, q, "the wait-state replay's messages", "MPI failed while waiting for");
				free(q);
				return 0;
			}
			if (done) {
				if (PMPI_Iallreduce(&sent, any, 1, MPI_INT, MPI_MAX, sync_comm, red) != MPI_SUCCESS) {
					abandon(0, NULL, "the wait-state replay's rounds", "MPI failed in");
					free(q);
					return 0;
				}
				reducing = 1;
			}
		} else {
			if (PMPI_Test(red, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
				abandon(1, red, "the wait-state replay's rounds", "MPI failed while waiting for");
				free(q);
				return 0;
			}
			if (done) {
				free(q);
				return 1;
			}
		}
		if ((spin & 63) == 0 && mono_ns() > coll_deadline) {
			char why[64];
			snprintf(why, sizeof why, "waited %.0f s in vain for", (double)coll_timeout_ns / 1e9);
			if (reducing) {
				abandon(1, red, "the wait-state replay's messages", why);
			} else {
				abandon(n, q, "the wait-state replay's messages", why);
			}
			free(q);
			return 0;
		}
		replay_pause(spin, 2000, 100);
	}
}

/*
 * replay runs the rounds of the wait-state replay in-situ (cshim/replay.go,
 * analysis/waitstate/insitu.go): in each, Go gives this rank's messages
 * (records of a peer, a size and the bytes), replay_exchange sends them to
 * their peers only (the ranks the run talked to, and the neighbours in the
 * communicators' trees) and takes the ones for this rank, and what came in
 * goes to Go with the next round. The forward replay takes 2 ceil(log2 p)
 * rounds, the backward one a round to ship each wait to its late party;
 * the rest of it (the delay costs and the critical path) runs without
 * rounds (replay_async), then Go finishes in a last call (its input's
 * third word is 1). A rank whose Go side failed sends nothing, and still
 * takes part in each round, so that no other rank waits for it.
 */
/* replay_rounds counts the replay's calls into Go, for HMB_COLLECTIVE_TIMING. */
static int replay_rounds;

/*
 * replay_cost splits the replay's time by phase, for HMB_COLLECTIVE_TIMING
 * (ns): the forward rounds, the ship round, the backward replay without
 * rounds and Go's last call; of each, the time inside Go; and the waves of
 * the backward replay's end, and when in it the rank settled (its costs
 * all spread: what is left is the critical path's token and the waves).
 */
static struct {
	int64_t phase[4], go[4];
	int64_t gather, settled;
	int waves;
} replay_cost;

/*
 * REPLAY_IDLE_NS is how long a rank that still awaits costs idles before
 * it joins a wave of the backward replay's end all the same: the costs of
 * a rank that failed never come, and the waves end the replay without them.
 */
enum { REPLAY_IDLE_NS = 200 * 1000 * 1000 };

/* A message of the backward replay in flight, and its request. */
struct replay_flight {
	char *buf;
	MPI_Request q;
};

/*
 * replay_async runs the backward replay after the ship round without
 * rounds: each record that arrives goes to Go at once (round counts the
 * calls), what Go returns is sent at once, so a chain of waits (each
 * wait's cost, the critical path's token) moves at the speed of a
 * message, not of a round of all ranks. The end is found by waves of a
 * sum reduction of the messages sent and received, which a rank joins
 * when it has nothing left to do (all it received went to Go, all Go
 * gave was sent) and Go awaits no cost more (the status record that ends
 * its output; each rank knows from the ship round how many costs will
 * come to it), so the waves run once the costs are all spread (while the
 * critical path's token walks, and two at the end), not all along: when
 * two waves in a row find the same sums, and the
 * sends equal the receives, no message is in flight and no rank has
 * anything to do (Mattern's four counters). in holds what the ship round
 * brought. 0 when the step's deadline passed with nothing arriving, or
 * MPI failed (then the collective steps are given up).
 */
HMB_NOINST static int replay_async(int *round, char **in, size_t *in_n, int *failed)
{
	int p = hmbmpi_world_size, r = world_rank, tag = TAG_REPLAY + 2;
	struct replay_flight *fly = NULL;
	size_t nfly = 0, capfly = 0;
	int64_t count[2] = {0, 0}, snap[2], sum[2], prev[2] = {-1, -1};
	int waving = 0, waved = 0, call = 1, ok = 1, settled = 1;
	int64_t idle_since = mono_ns(), began = idle_since;
	MPI_Request wave = MPI_REQUEST_NULL;
	step_begins();
	for (long spin = 0;; spin++) {
		int busy = 0;
		if (call) {
			call = 0;
			busy = 1;
			(*round)++;
			uint32_t hdr[3] = {(uint32_t)*round, (uint32_t)p, 0};
			memcpy(*in, hdr, sizeof hdr);
			char *out = NULL;
			size_t on = 0;
			int64_t g0 = mono_ns();
			int64_t c0 = thread_ns();
			int bad = !*failed && hmb_pass_make(HMB_PASS_REPLAY, r, *in, *in_n, &out, &on) != 0;
			coll_meter.go_cpu += thread_ns() - c0;
			if (bad) {
				fprintf(stderr, "hmbtrace: rank %d: %s: the run's wait states, without this rank\n", r, hmb_last_error());
				*failed = 1;
				free(out);
				out = NULL;
				on = 0;
			}
			replay_cost.go[2] += mono_ns() - g0;
			replay_rounds = *round + 1;
			*in_n = 12;
			settled = 1; /* a failed rank awaits nothing */
			for (size_t off = 0; off + 8 <= on;) {
				uint32_t rec[2];
				memcpy(rec, out + off, sizeof rec);
				if (rec[0] == (uint32_t)p && rec[1] == 1 && on - off - 8 >= 1) {
					/* Go's status: whether it awaits costs still. */
					settled = out[off + 8] != 0;
					if (settled && replay_cost.settled == 0) {
						replay_cost.settled = mono_ns() - began;
					}
					off += 9;
					continue;
				}
				if (rec[0] >= (uint32_t)p || rec[1] > on - off - 8) {
					break; /* not Go's records: the rest is sent as nothing */
				}
				if (rec[1] > 0) {
					if (nfly == capfly) {
						size_t c = capfly ? 2 * capfly : 16;
						struct replay_flight *g = realloc(fly, c * sizeof *g);
						if (g == NULL) {
							ok = 0;
							break;
						}
						fly = g;
						capfly = c;
					}
					char *b = malloc(rec[1]);
					if (b == NULL) {
						ok = 0;
						break;
					}
					memcpy(b, out + off + 8, rec[1]);
					fly[nfly].buf = b;
					PMPI_Isend(b, (int)rec[1], MPI_BYTE, (int)rec[0], tag, sync_comm, &fly[nfly].q);
					nfly++;
					count[0]++;
				}
				off += 8 + rec[1];
			}
			free(out);
			if (!ok) {
				abandon(0, NULL, "the wait-state replay's messages", "out of memory for");
				break;
			}
		}
		for (;;) {
			int flag = 0;
			MPI_Status st;
			if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, sync_comm, &flag, &st) != MPI_SUCCESS) {
				ok = 0;
				break;
			}
			if (!flag) {
				break;
			}
			int len = 0;
			PMPI_Get_count(&st, MPI_BYTE, &len);
			char *grown = realloc(*in, *in_n + 8 + (size_t)len);
			if (grown == NULL) {
				ok = 0;
				break;
			}
			*in = grown;
			uint32_t rec[2] = {(uint32_t)st.MPI_SOURCE, (uint32_t)len};
			memcpy(*in + *in_n, rec, sizeof rec);
			PMPI_Recv(*in + *in_n + 8, len, MPI_BYTE, st.MPI_SOURCE, tag, sync_comm, MPI_STATUS_IGNORE);
			*in_n += 8 + (size_t)len;
			count[1]++;
			call = busy = 1;
		}
		if (!ok) {
			abandon(0, NULL, "the wait-state replay's messages", "MPI failed, or no memory, while taking");
			break;
		}
		/* The sends done: their buffers go. */
		size_t kept = 0;
		for (size_t i = 0; i < nfly; i++) {
			int done = 0;
			PMPI_Test(&fly[i].q, &done, MPI_STATUS_IGNORE);
			if (done) {
				free(fly[i].buf);
			} else {
				fly[kept++] = fly[i];
			}
		}
		nfly = kept;
		/* A rank joins a wave once it awaits no cost more (Go said so), so
		 * that the waves run at the end, not all along; one still waiting
		 * joins after a long idle spell, in case a cost never comes (its
		 * rank failed). */
		if (!waving && !call && (settled || mono_ns() - idle_since > REPLAY_IDLE_NS)) {
			snap[0] = count[0];
			snap[1] = count[1];
			if (PMPI_Iallreduce(snap, sum, 2, MPI_INT64_T, MPI_SUM, sync_comm, &wave) != MPI_SUCCESS) {
				abandon(0, NULL, "the wait-state replay's end", "MPI failed in");
				ok = 0;
				break;
			}
			waving = 1;
		} else if (waving) {
			int done = 0;
			if (PMPI_Test(&wave, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
				abandon(0, NULL, "the wait-state replay's end", "MPI failed in");
				ok = 0;
				break;
			}
			if (done) {
				/* The next wave begins at once; a wave is no work, so the
				 * pause goes on growing. */
				waving = 0;
				waved = 1;
				replay_cost.waves++;
				if (sum[0] == sum[1] && sum[0] == prev[0] && sum[1] == prev[1]) {
					break; /* over: every message sent was taken, and nothing moved since */
				}
				if (sum[0] != prev[0] || sum[1] != prev[1]) {
					step_begins(); /* some rank moved: the wait is bounded from here */
				}
				prev[0] = sum[0];
				prev[1] = sum[1];
			}
		}
		if (busy) {
			step_begins();
			idle_since = mono_ns();
			spin = 0;
			continue;
		}
		if (waved) {
			waved = 0;
			idle_since = mono_ns();
			continue;
		}
		if ((spin & 63) == 0 && mono_ns() > coll_deadline) {
			char why[64];
			snprintf(why, sizeof why, "waited %.0f s in vain for", (double)coll_timeout_ns / 1e9);
			abandon(waving, &wave, "the wait-state replay's messages", why);
			ok = 0;
			break;
		}
		/* A settled rank still takes the critical path's token, whose
		 * walk is a chain of messages too: it yields less, but sleeps no
		 * longer than one that awaits costs. */
		replay_pause(spin, settled ? 200 : 2000, 100);
	}
	/* Every message was taken (or the steps were given up): the sends end. */
	for (size_t i = 0; i < nfly; i++) {
		if (ok) {
			PMPI_Wait(&fly[i].q, MPI_STATUS_IGNORE);
		} else if (fly[i].q != MPI_REQUEST_NULL) {
			PMPI_Cancel(&fly[i].q);
			PMPI_Request_free(&fly[i].q);
		}
		free(fly[i].buf);
	}
	free(fly);
	return ok;
}

HMB_NOINST static void replay(void)
{
	if (sync_comm == MPI_COMM_NULL || coll_abandoned) {
		return;
	}
	int p = hmbmpi_world_size, r = world_rank, levels = 0;
	while ((1 << levels) < p) {
		levels++;
	}
	int rounds = 2 * levels, failed = 0, final = 0;
	char *in = malloc(12);
	size_t in_n = 12;
	if (in == NULL) {
		fprintf(stderr, "hmbtrace: rank %d: out of memory for the wait-state replay: the run's wait states, without this rank\n", r);
		return;
	}
	memset(&replay_cost, 0, sizeof replay_cost);
	for (int round = 0; in != NULL; round++) {
		/* The phase: forward rounds, the ship round, Go's last call. */
		int ph = final ? 3 : round < rounds ? 0 : 1;
		int64_t t0 = mono_ns();
		uint32_t hdr[3] = {(uint32_t)round, (uint32_t)p, (uint32_t)final};
		memcpy(in, hdr, sizeof hdr);
		char *out = NULL;
		size_t on = 0;
		int64_t c0 = thread_ns();
		int bad = !failed && hmb_pass_make(HMB_PASS_REPLAY, r, in, in_n, &out, &on) != 0;
		coll_meter.go_cpu += thread_ns() - c0;
		if (bad) {
			fprintf(stderr, "hmbtrace: rank %d: %s: the run's wait states, without this rank\n", r, hmb_last_error());
			failed = 1;
			free(out);
			out = NULL;
			on = 0;
		}
		int64_t t1 = mono_ns();
		replay_cost.go[ph] += t1 - t0;
		free(in);
		in = NULL;
		if (final) {
			replay_cost.phase[ph] += t1 - t0;
			free(out);
			break;
		}
		replay_rounds = round + 1;
		in = malloc(12);
		in_n = 12;
		int any = 0;
		step_begins();
		int ok = in != NULL && replay_exchange(round, out, on, &in, &in_n, &any);
		free(out);
		replay_cost.phase[ph] += mono_ns() - t0;
		if (!ok) {
			break;
		}
		if (round == rounds) {
			/* The ship round is in: the rest of the replay needs no rounds. */
			t0 = mono_ns();
			int ok = replay_async(&round, &in, &in_n, &failed);
			replay_cost.phase[2] += mono_ns() - t0;
			final = 1;
			in_n = 12;
			if (!ok) {
				break;
			}
		}
	}
	free(in);
}

/*
 * say_replay_timing prints, with HMB_COLLECTIVE_TIMING=1, where this
 * rank's wait-state replay spent its time (replay_cost): each phase's
 * wall-clock time, of it in Go, and the waves that found its end.
 */
HMB_NOINST static void say_replay_timing(void)
{
	const char *v = getenv("HMB_COLLECTIVE_TIMING");
	if (v == NULL || !(strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
			   strcasecmp(v, "on") == 0)) {
		return;
	}
	const int64_t *t = replay_cost.phase, *g = replay_cost.go;
	fprintf(stderr,
		"hmbtrace: rank %d: wait-state replay: forward %.6f s (Go %.6f s), ship %.6f s (Go %.6f s), "
		"backward %.6f s (Go %.6f s, %d waves, settled at %.6f s), last call %.6f s, gathering %.6f s\n",
		world_rank, (double)t[0] / 1e9, (double)g[0] / 1e9, (double)t[1] / 1e9, (double)g[1] / 1e9,
		(double)t[2] / 1e9, (double)g[2] / 1e9, replay_cost.waves, (double)replay_cost.settled / 1e9, (double)t[3] / 1e9,
		(double)replay_cost.gather / 1e9);
}

/* cpu_ns is the CPU time of the process so far (every thread, the Go
 * runtime's too), for say_timing and coll_cost. */
HMB_NOINST static int64_t cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) {
		return 0;
	}
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * coll_cost splits the collective end's time for HMB_COLLECTIVE_TIMING:
 * wall-clock and process CPU time (ns) of the results (the bundles' trips
 * up and down, and making and merging their parts) and of the wait-state
 * replay, which issue 32's replay accounts for on its own; and the trips
 * the results made through the tree (up or down).
 */
static struct {
	int64_t results, results_cpu, replay, replay_cpu;
	int trips;
} coll_cost;

/*
 * run_reduce reduces the run's results and unifies its definitions in
 * two bundles up the tree and one trip down (see run_bundle): first the
 * run's profile (its flat profiles, buffer statistics and throttled
 * regions, from the statistics as they stand), its exact communication
 * matrix, every rank's share of the time-dominant region, the phase
 * series and the definitions; rank 0 chooses the region and sends the
 * cut down; each rank cuts its segments; then the wait-state replay's
 * rounds; then the segments and the wait states go up together.
 */
HMB_NOINST static void run_reduce(void)
{
	int64_t t0 = mono_ns(), c0 = cpu_ns();
	struct bundle first = {0}, last = {0};
	bundle_add(&first, HMB_PASS_PROFILE, NULL, 0);
	bundle_add(&first, HMB_PASS_COMM, NULL, 0);
	bundle_add(&first, HMB_PASS_CHOICE, NULL, 0);
	bundle_add(&first, HMB_PASS_PHASES, NULL, 0);
	bundle_add(&first, PASS_DEFS, NULL, 0);
	bundle_add(&first, PASS_DROPS, NULL, 0);
	char *cut = NULL;
	size_t cn = 0;
	run_bundle(&first, &cut, &cn);
	pass_down(&cut, &cn);
	coll_cost.trips = 2;
	/* A rank that heard from rank 0 had its drops merged there: rank 0
	 * says the run's, and each rank's report at exit only what came after. */
	if (!coll_abandoned && drops_in_part && (world_rank != 0 || run_drops_known)) {
		if (world_rank == 0) {
			say_run_drops();
		}
		hmb_drops_said(drops_sent);
		active_unseen = 0;
	}
	/* Every rank has rank 0's answer: all cut segments, or none does.
	 * They are cut before the replay, so the events decoded for the choice
	 * and the segments are let go before it reads the trace. */
	if (cn > 0) {
		bundle_add(&last, HMB_PASS_SEGMENTS, cut, cn);
	}
	free(cut);
	int64_t t1 = mono_ns(), c1 = cpu_ns();
	/* HMB_WAITSTATES=off (measure's configuration checked the value at
	 * hmb_init; alike on every rank): no replay, no wait states. */
	const char *ws = getenv("HMB_WAITSTATES");
	int replayed = ws == NULL || strcmp(ws, "off") != 0;
	if (replayed) {
		replay();
	}
	int64_t t2 = mono_ns(), c2 = cpu_ns();
	if (replayed) {
		bundle_add(&last, HMB_PASS_WAITSTATES, NULL, 0);
	}
	if (last.k > 0) {
		run_bundle(&last, NULL, NULL);
		coll_cost.trips++;
	}
	int64_t t3 = mono_ns();
	replay_cost.gather = t3 - t2;
	say_replay_timing();
	hmb_pass_end();
	coll_cost.results = (t1 - t0) + (mono_ns() - t2);
	coll_cost.results_cpu = (c1 - c0) + (cpu_ns() - c2);
	coll_cost.replay = t2 - t1;
	coll_cost.replay_cpu = c2 - c1;
}

/*
 * results_end writes the run's results only (HMB_OUTPUT_EVENTS=none): rank
 * 0 creates the run archive with them and no slot, and says down the tree
 * that it did; then no rank writes a trace at exit. A rank that does not
 * hear it writes its own file.
 */
HMB_NOINST static void results_end(void)
{
	if (sync_comm == MPI_COMM_NULL || coll_abandoned) {
		return;
	}
	char *done = NULL;
	size_t n = 0;
	if (world_rank == 0) {
		int64_t none = 0;
		if (hmb_archive_create(0, 1, hmbmpi_world_size, NULL, NULL, 0, &none) != 0) {
			fprintf(stderr, "hmbtrace: rank 0: %s: every rank writes its own file\n", hmb_last_error());
		} else if ((done = malloc(1)) != NULL) {
			done[0] = 1;
			n = 1;
		}
	}
	pass_down(&done, &n);
	if (n == 1) {
		hmb_results_written(hmbmpi_world_size);
	}
	free(done);
}

/*
 * archive_end agrees on the run archive's slots: the ranks fall into groups
 * of aggregate consecutive ranks, one file each; every rank sends its
 * slot's capacity (its trace's size now, with a margin) to its group's
 * first rank, which creates the file and sends each rank its slot's
 * offset. The file is written at exit, each rank into its slot (measure's
 * archive.go). A rank that gets no slot (0: the file could not be made)
 * writes its own file. The leader's messages grow with its group, not
 * with the run.
 */
HMB_NOINST static void archive_end(int aggregate)
{
	if (sync_comm == MPI_COMM_NULL || coll_abandoned) {
		return;
	}
	step_begins();
	int p = hmbmpi_world_size, r = world_rank;
	int groups = (p + aggregate - 1) / aggregate, group = r / aggregate, leader = group * aggregate;
	int n = p - leader < aggregate ? p - leader : aggregate;
	int64_t cap = hmb_slot_capacity(p), off = -1;
	char what[96];
	if (r != leader) {
		snprintf(what, sizeof what, "its slot of the run archive from rank %d", leader);
		MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
		PMPI_Irecv(&off, 1, MPI_INT64_T, leader, TAG_SLOT, sync_comm, &q[0]);
		PMPI_Isend(&cap, 1, MPI_INT64_T, leader, TAG_CAPACITY, sync_comm, &q[1]);
		if (bounded_wait(2, q, what) && off > 0) {
			hmb_archive_slot(group, groups, p, off, cap);
		}
		return;
	}
	int64_t *caps = calloc((size_t)n, sizeof *caps), *offs = calloc((size_t)n, sizeof *offs);
	int64_t *got = calloc((size_t)n, sizeof *got);
	int32_t *ranks = calloc((size_t)n, sizeof *ranks);
	MPI_Request *q = calloc((size_t)n, sizeof *q);
	int ok = caps != NULL && offs != NULL && got != NULL && ranks != NULL && q != NULL;
	if (ok) {
		caps[0] = cap;
		for (int i = 1; i < n; i++) {
			PMPI_Irecv(&caps[i], 1, MPI_INT64_T, leader + i, TAG_CAPACITY, sync_comm, &q[i]);
		}
		snprintf(what, sizeof what, "the slot sizes of ranks %d to %d", leader + 1, leader + n - 1);
		ok = n == 1 || bounded_wait(n - 1, q + 1, what);
	}
	if (ok) {
		/* A rank that asks for nothing (its measurement is off) gets no slot. */
		int m = 0;
		for (int i = 0; i < n; i++) {
			if (caps[i] > 0) {
				ranks[m] = leader + i;
				got[m++] = caps[i];
			}
		}
		int64_t *mo = calloc((size_t)m + 1, sizeof *mo);
		if (m > 0 && (mo == NULL || hmb_archive_create(group, groups, p, ranks, got, m, mo) != 0)) {
			fprintf(stderr, "hmbtrace: rank %d: %s: ranks %d to %d write their own files\n", r,
				mo == NULL ? "out of memory" : hmb_last_error(), leader, leader + n - 1);
			m = 0;
		}
		for (int i = 0, j = 0; i < n; i++) {
			offs[i] = j < m && ranks[j] == leader + i ? mo[j++] : -1;
		}
		free(mo);
		for (int i = 1; i < n; i++) {
			PMPI_Isend(&offs[i], 1, MPI_INT64_T, leader + i, TAG_SLOT, sync_comm, &q[i]);
		}
		snprintf(what, sizeof what, "ranks %d to %d to take their slots", leader + 1, leader + n - 1);
		if ((n == 1 || bounded_wait(n - 1, q + 1, what)) && offs[0] > 0) {
			hmb_archive_slot(group, groups, p, offs[0], cap);
		}
	} else if (q != NULL) {
		/* The members that did send wait for an answer: no slot. */
		for (int i = 1; i < n; i++) {
			int64_t none = -1;
			MPI_Request s = MPI_REQUEST_NULL;
			PMPI_Isend(&none, 1, MPI_INT64_T, leader + i, TAG_SLOT, sync_comm, &s);
			PMPI_Request_free(&s);
		}
	}
	free(caps);
	free(offs);
	free(got);
	free(ranks);
	free(q);
}

/* The environment. */

/* wrapped_init is set when a wrapper of MPI_Init or MPI_Init_thread (C or
 * Fortran) initialised MPI. */
static int wrapped_init;

/*
 * An MPI library that comes before libhmbtrace-mpi on the link line takes
 * the program's MPI calls: the wrappers never run and the trace has no MPI
 * in it, although the link succeeded. Said at exit when MPI was initialised
 * and no wrapper did it. Once per job: by rank 0 as the launcher numbers
 * it (Open MPI, MPICH's Hydra, PMIx), or by each process if none does.
 * This library needs libmpi, so its destructor runs before libmpi's, and
 * MPI_Initialized may be called after MPI_Finalize.
 */
__attribute__((destructor)) HMB_NOINST static void check_wrapped(void)
{
	if (__atomic_load_n(&wrapped_init, __ATOMIC_RELAXED) || hmbmpi_off()) {
		return;
	}
	int init = 0;
	if (PMPI_Initialized(&init) != MPI_SUCCESS || !init) {
		return;
	}
	const char *rank = NULL;
	const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0] && rank == NULL; i++) {
		rank = getenv(vars[i]);
	}
	if (rank != NULL && strcmp(rank, "0") != 0) {
		return;
	}
	fprintf(stderr, "hmbtrace: MPI was initialised, but not through hmbtrace's MPI wrappers: the MPI library "
			"comes before libhmbtrace-mpi on the link line, so no MPI call is traced (link "
			"-lhmbtrace-mpi before it; hmbtrace-instrument does)\n");
}

/* init_sync_ns is how long MPI_Init's clock synchronisation took, for say_timing. */
static int64_t init_sync_ns;

/*
 * hmbmpi_after_init learns the rank, defines MPI_COMM_WORLD and
 * MPI_COMM_SELF before any other communicator, and syncs the clocks.
 */
HMB_NOINST void hmbmpi_after_init(void)
{
	__atomic_store_n(&wrapped_init, 1, __ATOMIC_RELAXED);
	int provided;
	pend_single = PMPI_Query_thread(&provided) == MPI_SUCCESS && provided < MPI_THREAD_MULTIPLE;
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &hmbmpi_world_size);
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, info_delete, &info_key, NULL);
	hmb_set_rank(world_rank);
	char name[32];
	snprintf(name, sizeof name, "rank %d", world_rank);
	hmb_thread_name(name);
	int32_t *all = malloc(((size_t)hmbmpi_world_size + 1) * sizeof *all);
	if (all != NULL) {
		for (int i = 0; i < hmbmpi_world_size; i++) {
			all[i] = i;
		}
		hmbmpi_world_id = hmb_comm_define("MPI_COMM_WORLD", 0, all, hmbmpi_world_size, NULL, 0);
		free(all);
	} else {
		hmb_count_dropped(HMB_DROP_MPI, 1);
	}
	int32_t me = world_rank;
	self_id = hmb_comm_define("MPI_COMM_SELF", 0, &me, 1, NULL, 0);
	PMPI_Comm_dup(MPI_COMM_WORLD, &sync_comm);
	/* The ranks that share this node's memory, against its cores. */
	MPI_Comm node = MPI_COMM_NULL;
	if (sync_comm != MPI_COMM_NULL &&
	    PMPI_Comm_split_type(sync_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
	    node != MPI_COMM_NULL) {
		int local = 0;
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		PMPI_Comm_size(node, &local);
		oversubscribed = cores > 0 && local > cores;
		node_clock(node, local);
		PMPI_Comm_free(&node);
	}
	int archive = 0, aggregate = 1;
	int64_t timeout = 0;
	/* Only the wait's bound matters here: the archive is made at MPI_Finalize. */
	if (hmb_run_end(0, &archive, &aggregate, &timeout) && timeout > 0) {
		coll_timeout_ns = timeout;
	}
	int64_t t0 = mono_ns();
	clock_sync();
	init_sync_ns = mono_ns() - t0;
}

/*
 * say_timing prints, with HMB_COLLECTIVE_TIMING=1, how long this rank's
 * steps of the collective end took (at: the monotonic times before the
 * clock sync, after it, after the run's results, after the archive's
 * slots): one line per rank on stderr, which `go run ./bench -sections
 * scale` reads. The results' time is the profile, matrix, analyses and
 * definitions going up the tree (coll_cost.trips trips up or down) without
 * the wait-state replay, which follows on its own with its calls into Go;
 * then the process's CPU time over them (cpu[0] before, cpu[1] after), which
 * shows what waiting costs where ranks outnumber cores, of it the
 * replay's, and MPI_Init's clock sync; then this thread's CPU time over
 * them (cpu[2], cpu[3]), of it in Go, and the waits' polls (coll_meter);
 * last, when the clocks were synchronised, the rank's arrival at
 * MPI_Finalize (arrival, in ticks) on rank 0's clock, in seconds since its
 * start as the files have it, so that the ranks' lines show the arrival
 * skew the collective end's first step absorbs.
 * The write itself comes later, at exit.
 */
HMB_NOINST static void say_timing(const int64_t at[4], const int64_t cpu[4], uint64_t arrival)
{
	const char *v = getenv("HMB_COLLECTIVE_TIMING");
	if (v == NULL || !(strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
			   strcasecmp(v, "on") == 0)) {
		return;
	}
	int rounds = 0;
	while ((1 << rounds) < hmbmpi_world_size) {
		rounds++;
	}
	char arrived[32] = "unknown";
	int64_t ns = 0;
	if (hmb_synced_ns(arrival, &ns)) {
		snprintf(arrived, sizeof arrived, "%.9f", (double)ns / 1e9);
	}
	fprintf(stderr,
		"hmbtrace: rank %d: collective end of %d ranks, %d rounds, %d trips: clock sync %.6f s, results %.6f s, "
		"wait-state replay %.6f s, archive slots %.6f s, replay calls %d, CPU %.6f s, of it the replay's %.6f s, "
		"results' %.6f s, MPI_Init's clock sync %.6f s, this thread's CPU %.6f s, of it in Go %.6f s, "
		"waits %ld yields %ld sleeps, arrival at MPI_Finalize %s s on the synchronised clock%s\n",
		world_rank, hmbmpi_world_size, rounds, coll_cost.trips, (double)(at[1] - at[0]) / 1e9,
		(double)coll_cost.results / 1e9, (double)coll_cost.replay / 1e9, (double)(at[3] - at[2]) / 1e9,
		replay_rounds, (double)(cpu[1] - cpu[0]) / 1e9, (double)coll_cost.replay_cpu / 1e9,
		(double)coll_cost.results_cpu / 1e9, (double)init_sync_ns / 1e9, (double)(cpu[3] - cpu[2]) / 1e9,
		(double)coll_meter.go_cpu / 1e9, coll_meter.yields, coll_meter.sleeps, arrived, coll_abandoned ? " (given up)" : "");
}

/*
 * hmbmpi_before_finalize is the collective end of the run, before
 * PMPI_Finalize: the clocks synchronised a second time (to correct drift),
 * then the run's results and definitions, and the run archive's slots
 * (HMB_OUTPUT_LAYOUT=archive, the default, for a run of more than one
 * rank).
 */
HMB_NOINST void hmbmpi_before_finalize(void)
{
	uint64_t arrival = hmb_clock();
	/* No request completes from here on: no application call follows. */
	active_unseen = pend_drop_unseen();
	int archive = 0, aggregate = 1;
	int64_t timeout = 0;
	if (hmb_run_end(1, &archive, &aggregate, &timeout) && timeout > 0) {
		coll_timeout_ns = timeout;
	}
	int64_t at[4], cpu[4];
	cpu[0] = cpu_ns();
	cpu[2] = thread_ns();
	at[0] = mono_ns();
	clock_sync();
	at[1] = at[2] = at[3] = mono_ns();
	/* A run of one rank has one file already: its own, as a process outside MPI. */
	if (archive && hmbmpi_world_size > 1) {
		run_reduce();
		at[2] = mono_ns();
		if (hmb_results_only()) {
			results_end();
		} else {
			archive_end(aggregate > 0 ? aggregate : 1);
		}
		at[3] = mono_ns();
	}
	cpu[1] = cpu_ns();
	cpu[3] = thread_ns();
	say_timing(at, cpu, arrival);
	if (sync_comm != MPI_COMM_NULL && !coll_abandoned) {
		PMPI_Comm_free(&sync_comm);
	}
}

/* The file is written at exit (hmb_init registered hmb_finalize with
 * atexit), as Score-P does: what the program does after MPI_Finalize, down
 * to main's return, is in the trace too. */
HMB_NOINST void hmbmpi_after_finalize(void)
{
	/* Said here, with its reason: the exit report only sums the drops.
	 * The collective end said them for the run (active_unseen 0 then);
	 * hmbmpi_before_finalize counted them. */
	uint64_t n = active_unseen;
	active_unseen = 0;
	if (n > 0) {
		fprintf(stderr,
			"hmbtrace: rank %d: %llu MPI requests were still active at MPI_Finalize: their completions "
			"are not in the trace (counted as dropped probes)\n",
			world_rank, (unsigned long long)n);
	}
}

/*
 * MPI_Abort ends every process of comm's job without returning, and without
 * running exit handlers: the trace is written first.
 */
HMB_NOINST void hmbmpi_abort(uint32_t region, MPI_Comm comm)
{
	(void)comm;
	hmb_enter(region);
	hmb_leave(region);
	pend_drop_unseen();
	hmb_exiting(); /* the calls around MPI_Abort stay open */
	if (hmb_finalize() != 0) {
		fprintf(stderr, "hmbtrace: MPI_Abort: the trace could not be written: %s\n", hmb_last_error());
	}
}

/* Fortran (OpenMPI's bindings). */

#if HMBMPI_FORTRAN
/* The sentinels of OpenMPI's Fortran bindings: common blocks of libmpi. */
extern MPI_Fint mpi_fortran_in_place_, mpi_fortran_bottom_, mpi_fortran_status_ignore_,
	mpi_fortran_statuses_ignore_;

HMB_NOINST const void *hmbmpi_fbuf(const void *p)
{
	if (p == &mpi_fortran_in_place_) {
		return MPI_IN_PLACE;
	}
	if (p == &mpi_fortran_bottom_) {
		return MPI_BOTTOM;
	}
	return p;
}

HMB_NOINST int hmbmpi_f_status_ignore(const MPI_Fint *st)
{
	return st == MPI_F_STATUS_IGNORE || st == &mpi_fortran_status_ignore_;
}

HMB_NOINST static int f_statuses_ignore(const MPI_Fint *st)
{
	return st == MPI_F_STATUSES_IGNORE || st == &mpi_fortran_statuses_ignore_;
}

HMB_NOINST int hmbmpi_reqs_take_f(struct hmbmpi_reqs *q, int count, const MPI_Fint reqs[], int with_statuses,
				  MPI_Fint *statuses)
{
	size_t n = count > 0 ? (size_t)count : 1;
	q->given = q->st = NULL;
	q->fst = q->fgiven = statuses;
	q->nrq = 0;
	q->rq = count <= 16 ? q->smallrq : malloc(n * sizeof *q->rq);
	q->before = count <= 16 ? q->small : malloc(n * sizeof *q->before);
	if (with_statuses && f_statuses_ignore(statuses)) {
		q->fst = malloc(n * (size_t)HMBMPI_F_STATUS_SIZE * sizeof *q->fst);
	}
	if (q->rq == NULL || q->before == NULL || (with_statuses && q->fst == NULL)) {
		return reqs_fail(q);
	}
	for (int i = 0; i < count; i++) {
		q->before[i] = MPI_Request_f2c(reqs[i]);
	}
	return 1;
}

HMB_NOINST void hmbmpi_completed_all_f(struct hmbmpi_reqs *q, int count, int rc)
{
	if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
		return;
	}
	for (int i = 0; i < count; i++) {
		MPI_Status st;
		MPI_Status_f2c(q->fst + (size_t)i * HMBMPI_F_STATUS_SIZE, &st);
		if (rc == MPI_SUCCESS || st.MPI_ERROR == MPI_SUCCESS) {
			completed(q, q->before[i], &st);
		}
	}
}

/* A Fortran index counts from 1. */
HMB_NOINST void hmbmpi_completed_some_f(struct hmbmpi_reqs *q, int n, const MPI_Fint indices[], int rc)
{
	if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || n == MPI_UNDEFINED) {
		return;
	}
	for (int k = 0; k < n; k++) {
		MPI_Status st;
		MPI_Status_f2c(q->fst + (size_t)k * HMBMPI_F_STATUS_SIZE, &st);
		if (rc == MPI_SUCCESS || st.MPI_ERROR == MPI_SUCCESS) {
			completed(q, q->before[indices[k] - 1], &st);
		}
	}
}
#endif
