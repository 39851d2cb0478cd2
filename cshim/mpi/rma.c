/*
 * rma.c - one-sided communication: what the generated wrappers of the
 * window, operation and synchronisation calls record, as OTF2's RMA
 * records mean it and as Score-P writes them (Knuepfer et al.).
 *
 * A window's id in the trace, the world ranks of its group and the
 * operations of its open epochs are kept in a window attribute, which MPI
 * frees with the window. An operation is recorded after a successful call
 * with a matching id: the operations to one target between two
 * synchronisations share one, as Score-P's do, so that an epoch of a
 * million puts to four targets keeps four entries; an R* operation has its
 * own, and its request completes it locally at MPI_Wait or MPI_Test. The
 * call that ends the epoch (fence, unlock, flush, complete) records the
 * local completion (RmaOpCompleteNonBlocking: an MPI operation returns
 * before it completes) and the remote one (RmaOpCompleteRemote); a local
 * flush records the local one only.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

struct rma_open {
	int target;          /* a rank of the window's group */
	uint64_t id;         /* the matching id */
	uint8_t explicit_op; /* an R* operation: its request completes it locally */
	uint8_t local_done;  /* a local flush completed it locally */
};

struct win_info {
	uint32_t id;
	int allocated; /* MPI_Win_allocate(_shared): its memory goes with it */
	int n;
	int *rank; /* window rank -> world rank */
	uint32_t access_group, exposure_group;
	size_t nops, cap;
	struct rma_open *ops;
};

static int win_key = MPI_KEYVAL_INVALID;
static pthread_mutex_t rma_mu = PTHREAD_MUTEX_INITIALIZER;

HMB_NOINST static int win_delete(MPI_Win win, int key, void *val, void *extra)
{
	(void)win, (void)key, (void)extra;
	struct win_info *w = val;
	free(w->rank);
	free(w->ops);
	free(w);
	return MPI_SUCCESS;
}

HMB_NOINST static struct win_info *win_of(MPI_Win win)
{
	void *val = NULL;
	int flag = 0;
	if (win == MPI_WIN_NULL || win_key == MPI_KEYVAL_INVALID ||
	    PMPI_Win_get_attr(win, win_key, &val, &flag) != MPI_SUCCESS || !flag) {
		return NULL;
	}
	return val;
}

/* world_of translates a rank of w's group into a world rank, -1 for all
 * (HMBMPI_ALL) or a rank out of range. */
HMB_NOINST static int world_of(const struct win_info *w, int rank)
{
	return rank >= 0 && rank < w->n ? w->rank[rank] : -1;
}

HMB_NOINST static uint64_t type_bytes(int count, MPI_Datatype type)
{
	int size = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL || !hmbmpi_type_size(type, &size)) {
		return 0;
	}
	return (uint64_t)count * (uint64_t)size;
}

HMB_NOINST void hmbmpi_win_created(int rc, MPI_Comm comm, MPI_Win win, int allocated)
{
	uint32_t id = 0;
	if (rc == MPI_SUCCESS && win != MPI_WIN_NULL) {
		pthread_mutex_lock(&rma_mu);
		if (win_key == MPI_KEYVAL_INVALID) {
			PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &win_key, NULL);
		}
		pthread_mutex_unlock(&rma_mu);
		struct win_info *w = calloc(1, sizeof *w);
		MPI_Group g;
		if (w != NULL && PMPI_Win_get_group(win, &g) == MPI_SUCCESS) {
			w->rank = hmbmpi_group_world(g, &w->n);
			PMPI_Group_free(&g);
		}
		if (w != NULL && w->rank != NULL && (w->id = hmb_win_define(hmbmpi_comm_id(comm))) != 0 &&
		    PMPI_Win_set_attr(win, win_key, w) == MPI_SUCCESS) {
			w->allocated = allocated;
			id = w->id;
			hmb_rma(HMB_RMA_WIN_CREATE, id, -1, 0, 0, 0, 0, 0, 0);
		} else {
			/* The window's records cannot name it: counted with the creation. */
			if (w != NULL) {
				free(w->rank);
				free(w);
			}
			hmb_count_dropped(HMB_DROP_MPI, 1);
		}
	}
	hmb_rma(HMB_RMA_COLLECTIVE_END, id, -1, 0, 0, 0,
		allocated ? HMB_RMA_COLL_CREATE_HANDLE_AND_ALLOCATE : HMB_RMA_COLL_CREATE_HANDLE, HMB_RMA_LEVEL_PROCESS, 0);
}

HMB_NOINST void hmbmpi_win_free_begin(struct hmbmpi_win_free *f, MPI_Win win)
{
	hmb_rma(HMB_RMA_COLLECTIVE_BEGIN, 0, -1, 0, 0, 0, 0, 0, 0);
	struct win_info *w = win_of(win);
	f->id = 0;
	f->op = HMB_RMA_COLL_DESTROY_HANDLE;
	if (w == NULL) {
		return;
	}
	f->id = w->id;
	if (w->allocated) {
		f->op = HMB_RMA_COLL_DESTROY_HANDLE_AND_DEALLOCATE;
	}
	pthread_mutex_lock(&rma_mu);
	/* Operations no synchronisation completed (the program freed the
	 * window inside an epoch): their completions cannot be recorded. */
	uint64_t open = w->nops;
	w->nops = 0;
	pthread_mutex_unlock(&rma_mu);
	hmb_count_dropped(HMB_DROP_MPI_ACTIVE, open);
	hmb_rma(HMB_RMA_WIN_DESTROY, f->id, -1, 0, 0, 0, 0, 0, 0);
}

HMB_NOINST void hmbmpi_win_free_end(const struct hmbmpi_win_free *f)
{
	hmb_rma(HMB_RMA_COLLECTIVE_END, f->id, -1, 0, 0, 0, f->op, HMB_RMA_LEVEL_PROCESS, 0);
}

HMB_NOINST void hmbmpi_win_name(MPI_Win win, const char *name)
{
	struct win_info *w = win_of(win);
	if (w != NULL && name != NULL) {
		hmb_win_name(w->id, name);
	}
}

HMB_NOINST void hmbmpi_rma_op(MPI_Win win, int target, unsigned kind, unsigned type, int scount, MPI_Datatype stype,
			      int rcount, MPI_Datatype rtype, MPI_Request req)
{
	if (target == MPI_PROC_NULL) {
		return;
	}
	struct win_info *w = win_of(win);
	if (w == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	uint64_t id = 0;
	pthread_mutex_lock(&rma_mu);
	if (req == MPI_REQUEST_NULL) {
		for (size_t i = 0; i < w->nops; i++) {
			struct rma_open *o = &w->ops[i];
			if (o->target == target && !o->explicit_op && !o->local_done) {
				id = o->id;
				break;
			}
		}
	}
	if (id == 0) {
		if (w->nops == w->cap) {
			size_t cap = w->cap ? 2 * w->cap : 8;
			struct rma_open *ops = realloc(w->ops, cap * sizeof *ops);
			if (ops == NULL) {
				pthread_mutex_unlock(&rma_mu);
				hmb_count_dropped(HMB_DROP_MPI, 1);
				return;
			}
			w->ops = ops;
			w->cap = cap;
		}
		id = hmbmpi_new_id();
		w->ops[w->nops++] = (struct rma_open){.target = target, .id = id, .explicit_op = req != MPI_REQUEST_NULL};
	}
	pthread_mutex_unlock(&rma_mu);
	if (req != MPI_REQUEST_NULL) {
		hmbmpi_rma_request(req, w->id, id);
	}
	uint64_t sent = type_bytes(scount, stype), received = type_bytes(rcount, rtype);
	hmb_rma(kind, w->id, world_of(w, target), sent, received, id, type, 0, 0);
}

/*
 * complete records the completion of w's operations to target (HMBMPI_ALL:
 * to every target): local, and with remote also remote, after which they
 * leave the epoch. An R* operation is completed locally by its request.
 */
HMB_NOINST static void complete(struct win_info *w, int target, int remote)
{
	pthread_mutex_lock(&rma_mu);
	size_t k = 0;
	for (size_t i = 0; i < w->nops; i++) {
		struct rma_open o = w->ops[i];
		if (target != HMBMPI_ALL && o.target != target) {
			w->ops[k++] = o;
			continue;
		}
		if (!o.explicit_op && !o.local_done) {
			hmb_rma(HMB_RMA_OP_COMPLETE_NON_BLOCKING, w->id, -1, 0, 0, o.id, 0, 0, 0);
		}
		if (remote) {
			hmb_rma(HMB_RMA_OP_COMPLETE_REMOTE, w->id, -1, 0, 0, o.id, 0, 0, 0);
		} else {
			o.local_done = 1;
			w->ops[k++] = o;
		}
	}
	w->nops = k;
	pthread_mutex_unlock(&rma_mu);
}

HMB_NOINST void hmbmpi_win_fence(int rc, MPI_Win win)
{
	struct win_info *w = win_of(win);
	if (w != NULL && rc == MPI_SUCCESS) {
		complete(w, HMBMPI_ALL, 1);
	}
	hmb_rma(HMB_RMA_COLLECTIVE_END, w != NULL ? w->id : 0, -1, 0, 0, 0, HMB_RMA_COLL_BARRIER,
		HMB_RMA_LEVEL_PROCESS | HMB_RMA_LEVEL_MEMORY, 0);
}

/* MPI_Win_lock returns before the lock is granted, if it likes: the lock is
 * requested, never recorded as acquired. Lock ids are 0, as Score-P's: a
 * lock is told apart by its window and target. */
HMB_NOINST void hmbmpi_win_lock(MPI_Win win, int rank, int lock_type)
{
	struct win_info *w = win_of(win);
	if (w == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	hmb_rma(HMB_RMA_REQUEST_LOCK, w->id, rank == HMBMPI_ALL ? -1 : world_of(w, rank), 0, 0, 0,
		lock_type == MPI_LOCK_EXCLUSIVE ? HMB_RMA_LOCK_EXCLUSIVE : HMB_RMA_LOCK_SHARED, 0, 0);
}

HMB_NOINST void hmbmpi_win_unlock(MPI_Win win, int rank)
{
	struct win_info *w = win_of(win);
	if (w == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	complete(w, rank, 1);
	hmb_rma(HMB_RMA_RELEASE_LOCK, w->id, rank == HMBMPI_ALL ? -1 : world_of(w, rank), 0, 0, 0, 0, 0, 0);
}

HMB_NOINST void hmbmpi_win_flush(MPI_Win win, int rank, int remote)
{
	struct win_info *w = win_of(win);
	if (w == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	complete(w, rank, remote);
	if (remote) {
		hmb_rma(HMB_RMA_SYNC, w->id, rank == HMBMPI_ALL ? -1 : world_of(w, rank), 0, 0, 0, HMB_RMA_SYNC_MEMORY, 0, 0);
	}
}

/* MPI_Win_sync synchronises the public and private copies of the
 * process's own part of the window. */
HMB_NOINST void hmbmpi_win_sync(MPI_Win win)
{
	struct win_info *w = win_of(win);
	if (w == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	hmb_rma(HMB_RMA_SYNC, w->id, hmbmpi_world_rank(), 0, 0, 0, HMB_RMA_SYNC_MEMORY, 0, 0);
}

/* hmbmpi_win_group records MPI_Win_post (exposure) or MPI_Win_start: the
 * start of an epoch with group, which its end names again. */
HMB_NOINST void hmbmpi_win_group(MPI_Win win, MPI_Group group, int exposure)
{
	struct win_info *w = win_of(win);
	int n = 0;
	int *members = NULL;
	if (w == NULL || (members = hmbmpi_group_world(group, &n)) == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	uint32_t g = hmb_rma_group_define((const int32_t *)members, n);
	free(members);
	if (exposure) {
		w->exposure_group = g;
	} else {
		w->access_group = g;
	}
	hmb_rma(HMB_RMA_GROUP_SYNC, w->id, -1, 0, 0, 0, 0, HMB_RMA_LEVEL_PROCESS, g);
}

/* hmbmpi_win_complete records the end of an access epoch (MPI_Win_complete)
 * or of an exposure epoch (MPI_Win_wait, MPI_Win_test that succeeded). */
HMB_NOINST void hmbmpi_win_complete(MPI_Win win, int exposure)
{
	struct win_info *w = win_of(win);
	if (w == NULL) {
		hmb_count_dropped(HMB_DROP_MPI, 1);
		return;
	}
	if (!exposure) {
		complete(w, HMBMPI_ALL, 1);
	}
	hmb_rma(HMB_RMA_GROUP_SYNC, w->id, -1, 0, 0, 0, 0, HMB_RMA_LEVEL_PROCESS | HMB_RMA_LEVEL_MEMORY,
		exposure ? w->exposure_group : w->access_group);
}
