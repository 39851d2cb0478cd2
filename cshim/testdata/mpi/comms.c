/*
 * comms: MPI calls on a communicator other than MPI_COMM_WORLD, every
 * completion call the wrappers know, and an erroneous call. Each rank
 * prints the messages it sends and receives as world ranks, computed here
 * without the wrappers' help, for the test to compare with the trace:
 *
 *   send <to> <tag> <bytes>      recv <from> <tag> <bytes>
 *   root <region> <world rank>   rc <wrapped> <pmpi>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int wrank, wsize, crank, csize;
static int *world_of; /* comm rank -> world rank */
static MPI_Comm comm;

static void sent(int to, int tag, int bytes) { printf("send %d %d %d\n", world_of[to], tag, bytes); }
static void got(int from, int tag, int bytes) { printf("recv %d %d %d\n", world_of[from], tag, bytes); }

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	/* Two halves by parity, ranked backwards: comm ranks differ from world ranks. */
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comm);
	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	world_of = malloc((size_t)csize * sizeof *world_of);
	MPI_Allgather(&wrank, 1, MPI_INT, world_of, 1, MPI_INT, comm);

	int next = (crank + 1) % csize, prev = (crank + csize - 1) % csize;
	double out[8] = {0}, in[8];
	MPI_Status st;

	/* Sendrecv around the ring. */
	MPI_Sendrecv(out, 3, MPI_DOUBLE, next, 10, in, 8, MPI_DOUBLE, prev, 10, comm, &st);
	sent(next, 10, 24);
	got(prev, 10, 24);

	/* Blocking send and a receive from any source, any tag. */
	if (crank == 0) {
		MPI_Send(out, 2, MPI_DOUBLE, next, 11, comm);
		sent(next, 11, 16);
		MPI_Recv(in, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
		got(st.MPI_SOURCE, st.MPI_TAG, 8);
	} else if (crank == 1) {
		MPI_Recv(in, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
		got(prev, 11, 16);
		MPI_Ssend(out, 1, MPI_DOUBLE, 0, 12, comm);
		sent(0, 12, 8);
	}

	/* Irecv from any source completed by Waitany, Isend by Testall. */
	MPI_Request r[2];
	int idx, flag = 0;
	MPI_Irecv(in, 4, MPI_INT, MPI_ANY_SOURCE, 13, comm, &r[0]);
	MPI_Isend(out, 4, MPI_INT, next, 13, comm, &r[1]);
	sent(next, 13, 16);
	MPI_Waitany(2, r, &idx, &st);
	if (idx == 0) {
		got(st.MPI_SOURCE, 13, 16);
	}
	MPI_Waitany(2, r, &idx, &st);
	if (idx == 0) {
		got(st.MPI_SOURCE, 13, 16);
	}

	/* Irecv completed by Testall, then by Testsome/Waitsome, then by Test. */
	MPI_Irecv(in, 5, MPI_CHAR, prev, 14, comm, &r[0]);
	MPI_Isend(out, 5, MPI_CHAR, next, 14, comm, &r[1]);
	sent(next, 14, 5);
	do {
		MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
	} while (!flag);
	got(prev, 14, 5);

	int n = 0, done = 0, indices[2];
	MPI_Status sts[2];
	MPI_Irecv(in, 6, MPI_CHAR, prev, 15, comm, &r[0]);
	MPI_Isend(out, 6, MPI_CHAR, next, 15, comm, &r[1]);
	sent(next, 15, 6);
	while (done < 2) {
		MPI_Testsome(2, r, &n, indices, sts);
		if (n == MPI_UNDEFINED) {
			break;
		}
		done += n;
		if (done < 2) {
			MPI_Waitsome(2, r, &n, indices, sts);
			done += n;
		}
	}
	got(prev, 15, 6);

	MPI_Irecv(in, 7, MPI_CHAR, prev, 16, comm, &r[0]);
	MPI_Send(out, 7, MPI_CHAR, next, 16, comm);
	sent(next, 16, 7);
	do {
		MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
	} while (!flag);
	got(prev, 16, 7);

	/* Collectives with a root on the split communicator. */
	MPI_Bcast(out, 2, MPI_DOUBLE, csize - 1, comm);
	printf("root MPI_Bcast %d\n", world_of[csize - 1]);
	MPI_Reduce(out, in, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
	printf("root MPI_Reduce %d\n", world_of[0]);
	MPI_Barrier(comm);

	/*
	 * Receives no wrapper sees complete: one freed (MPI_Request_free), one
	 * only polled (MPI_Request_get_status) and pending at MPI_Finalize.
	 * Neither is in the trace; both are counted as dropped.
	 */
	if (csize > 1) {
		if (crank == 0) {
			/* untraced: no send in the trace to match */
			PMPI_Send(out, 3, MPI_CHAR, 1, 17, comm);
			PMPI_Send(out, 3, MPI_CHAR, 1, 18, comm);
		} else if (crank == 1) {
			MPI_Request q[2];
			MPI_Irecv(in, 3, MPI_CHAR, 0, 17, comm, &q[0]);
			MPI_Irecv(in + 3, 3, MPI_CHAR, 0, 18, comm, &q[1]);
			for (int i = 0; i < 2; i++) {
				do {
					MPI_Request_get_status(q[i], &flag, MPI_STATUS_IGNORE);
				} while (!flag);
			}
			MPI_Request_free(&q[0]);
			printf("unseen 2\n");
		}
	}

	/* An erroneous send returns what PMPI_Send returns. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int bad = MPI_Send(out, 1, MPI_INT, wsize + 7, 0, MPI_COMM_WORLD);
	int ref = PMPI_Send(out, 1, MPI_INT, wsize + 7, 0, MPI_COMM_WORLD);
	printf("rc %d %d\n", bad, ref);
	/* The program's own messages end here: a barrier keeps the output whole. */
	fflush(stdout);
	MPI_Comm_free(&comm);
	free(world_of);

	/*
	 * A communicator made after one was freed may get its handle: its ranks
	 * are its own (the split is ordered the other way round).
	 */
	MPI_Comm c2;
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c2);
	int r2, n2;
	MPI_Comm_rank(c2, &r2);
	MPI_Comm_size(c2, &n2);
	int *w2 = malloc((size_t)n2 * sizeof *w2);
	MPI_Allgather(&wrank, 1, MPI_INT, w2, 1, MPI_INT, c2);
	if (n2 > 1) {
		int nx = (r2 + 1) % n2, pv = (r2 + n2 - 1) % n2;
		MPI_Sendrecv(out, 4, MPI_CHAR, nx, 19, in, 4, MPI_CHAR, pv, 19, c2, MPI_STATUS_IGNORE);
		printf("send %d 19 4\nrecv %d 19 4\n", w2[nx], w2[pv]);
	}
	/*
	 * An inter-communicator between the even and the odd ranks: a peer is a
	 * rank of the remote group, whose rank i is world rank 2i + (other parity).
	 */
	if (wsize >= 2) {
		MPI_Comm ic;
		int other = 1 - wrank % 2, nremote = 0;
		MPI_Intercomm_create(c2, 0, MPI_COMM_WORLD, other, 20, &ic);
		MPI_Comm_remote_size(ic, &nremote);
		if (r2 < nremote) {
			MPI_Sendrecv(out, 5, MPI_CHAR, r2, 21, in, 5, MPI_CHAR, r2, 21, ic, MPI_STATUS_IGNORE);
			printf("send %d 21 5\nrecv %d 21 5\n", 2 * r2 + other, 2 * r2 + other);
		}
		MPI_Comm_free(&ic);
	}
	fflush(stdout);
	MPI_Comm_free(&c2);
	free(w2);
	MPI_Finalize();
	return 0;
}
