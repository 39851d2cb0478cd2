/*
 * rma: MPI one-sided communication on two windows: one created on
 * MPI_COMM_WORLD (named), one allocated on a communicator of the ranks of
 * the same parity, ranked backwards (its ranks differ from world ranks).
 * Epochs: a fence epoch with puts and a get, a passive-target lock epoch
 * with an accumulate and a fetch-and-op, a lock_all epoch with a
 * compare-and-swap, a flush and a get-accumulate, a lock_all epoch with an
 * MPI_Rput completed by MPI_Wait, and a post/start/complete/wait epoch
 * with a put. Each rank prints each operation, with its target as a world
 * rank computed here without the wrappers' help, in call order:
 *
 *   op <Put|Get|Atomic:TYPE> <window 0|1> <target> <bytes sent> <bytes received>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int wrank, wsize, crank, csize;
	MPI_Comm comm;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comm);
	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	int *world_of = malloc((size_t)csize * sizeof *world_of);
	MPI_Allgather(&wrank, 1, MPI_INT, world_of, 1, MPI_INT, comm);

	int base[64] = {0};
	MPI_Win win;
	MPI_Win_create(base, sizeof base, sizeof base[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_set_name(win, "fence window");
	int *mem;
	MPI_Win cwin;
	MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &mem, &cwin);
	for (int i = 0; i < 16; i++) {
		mem[i] = 0;
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* Fence epoch: two puts to the same target share a matching id. */
	int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8];
	int next = (wrank + 1) % wsize, far = (wrank + 2) % wsize;
	MPI_Win_fence(0, win);
	MPI_Put(out, 4, MPI_INT, next, wrank, 4, MPI_INT, win);
	printf("op Put 0 %d 16 0\n", next);
	MPI_Put(out, 2, MPI_INT, next, 8 + wrank, 2, MPI_INT, win);
	printf("op Put 0 %d 8 0\n", next);
	MPI_Get(in, 2, MPI_INT, far, 0, 2, MPI_INT, win);
	printf("op Get 0 %d 8 0\n", far);
	MPI_Put(out, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win); /* no target: no record */
	MPI_Win_fence(0, win);

	/* Passive target: the partner in comm. */
	int partner = (crank + 1) % csize, one = 1, old = 0;
	MPI_Win_lock(MPI_LOCK_SHARED, partner, 0, cwin);
	MPI_Accumulate(&one, 1, MPI_INT, partner, 0, 1, MPI_INT, MPI_SUM, cwin);
	printf("op Atomic:ACCUMULATE 1 %d 4 0\n", world_of[partner]);
	MPI_Fetch_and_op(&one, &old, MPI_INT, partner, 1, MPI_SUM, cwin);
	printf("op Atomic:FETCH_AND_ACCUMULATE 1 %d 4 4\n", world_of[partner]);
	MPI_Win_unlock(partner, cwin);

	int cmp = 0, res = 0, acc[2] = {1, 1}, got[2];
	MPI_Win_lock_all(0, cwin);
	MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT, partner, 2, cwin);
	printf("op Atomic:COMPARE_AND_SWAP 1 %d 4 4\n", world_of[partner]);
	MPI_Win_flush(partner, cwin);
	MPI_Get_accumulate(acc, 2, MPI_INT, got, 2, MPI_INT, partner, 4, 2, MPI_INT, MPI_SUM, cwin);
	printf("op Atomic:FETCH_AND_ACCUMULATE 1 %d 8 8\n", world_of[partner]);
	MPI_Win_flush_local_all(cwin);
	MPI_Win_unlock_all(cwin);

	/* A request-based put, completed locally by MPI_Wait. */
	MPI_Request req;
	MPI_Win_lock_all(0, win);
	MPI_Rput(out, 3, MPI_INT, far, 32 + wrank, 3, MPI_INT, win, &req);
	printf("op Put 0 %d 12 0\n", far);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Win_unlock_all(win);

	/* Post/start/complete/wait with the partner of the other parity. */
	MPI_Group wgroup, peer;
	int other = wrank ^ 1;
	MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
	MPI_Group_incl(wgroup, 1, &other, &peer);
	MPI_Win_post(peer, 0, win);
	MPI_Win_start(peer, 0, win);
	MPI_Put(out, 1, MPI_INT, other, 48 + wrank, 1, MPI_INT, win);
	printf("op Put 0 %d 4 0\n", other);
	MPI_Win_complete(win);
	MPI_Win_wait(win);
	MPI_Group_free(&peer);
	MPI_Group_free(&wgroup);

	MPI_Win_free(&cwin);
	MPI_Win_free(&win);
	MPI_Comm_free(&comm);
	free(world_of);
	MPI_Finalize();
	return 0;
}
