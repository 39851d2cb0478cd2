/*
 * requests: persistent requests, v collectives, non-blocking collectives,
 * matched probes and synchronous/ready sends on a communicator from
 * MPI_Comm_split, then MPI_Abort on one rank with abort given. Each rank
 * prints what it sends and receives as world ranks, computed here without
 * the wrappers' help, the roots of its rooted collectives, and the bytes of
 * its send and receive buffers in each collective, in call order:
 *
 *   send <to> <tag> <bytes>      recv <from> <tag> <bytes>
 *   root <region> <world rank>   coll <region> <bytes sent> <bytes received>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int wrank, wsize, crank, csize;
	MPI_Comm comm;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	/* Two halves by parity, ranked backwards: comm ranks differ from world ranks. */
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comm);
	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	int *world_of = malloc((size_t)csize * sizeof *world_of);
	MPI_Allgather(&wrank, 1, MPI_INT, world_of, 1, MPI_INT, comm);
	printf("coll MPI_Allgather 4 %d\n", 4 * csize);
	int next = (crank + 1) % csize, prev = (crank + csize - 1) % csize;

	/* Persistent requests: each start is a message. */
	double out[64] = {0}, in[64];
	MPI_Request pr[2];
	MPI_Recv_init(in, 4, MPI_DOUBLE, prev, 30, comm, &pr[0]);
	MPI_Send_init(out, 4, MPI_DOUBLE, next, 30, comm, &pr[1]);
	for (int round = 0; round < 3; round++) {
		MPI_Startall(2, pr);
		MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
		printf("send %d 30 32\nrecv %d 30 32\n", world_of[next], world_of[prev]);
	}
	MPI_Start(&pr[0]);
	MPI_Start(&pr[1]);
	MPI_Wait(&pr[1], MPI_STATUS_IGNORE);
	MPI_Wait(&pr[0], MPI_STATUS_IGNORE);
	printf("send %d 30 32\nrecv %d 30 32\n", world_of[next], world_of[prev]);
	MPI_Request_free(&pr[0]);
	MPI_Request_free(&pr[1]);

	/* A synchronous non-blocking send and a matched probe. */
	MPI_Request r;
	MPI_Issend(out, 3, MPI_INT, next, 31, comm, &r);
	MPI_Message msg;
	MPI_Status st;
	MPI_Mprobe(MPI_ANY_SOURCE, 31, comm, &msg, &st);
	MPI_Mrecv(in, 3, MPI_INT, &msg, &st);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	printf("send %d 31 12\nrecv %d 31 12\n", world_of[next], world_of[prev]);

	/* v collectives with a root that is not comm rank 0. */
	int root = csize - 1;
	int counts[64], displs[64], mine[64]; /* mine: what each peer sends this rank */
	for (int i = 0; i < csize; i++) {
		counts[i] = i + 1;
		displs[i] = i * 8;
		mine[i] = crank + 1;
	}
	int all = csize * (csize + 1) / 2 * 8; /* the bytes of counts[] */
	MPI_Gatherv(out, crank + 1, MPI_DOUBLE, in, counts, displs, MPI_DOUBLE, root, comm);
	printf("root MPI_Gatherv %d\n", world_of[root]);
	printf("coll MPI_Gatherv %d %d\n", (crank + 1) * 8, crank == root ? all : 0);
	MPI_Scatterv(out, counts, displs, MPI_DOUBLE, in, crank + 1, MPI_DOUBLE, root, comm);
	printf("root MPI_Scatterv %d\n", world_of[root]);
	printf("coll MPI_Scatterv %d %d\n", crank == root ? all : 0, (crank + 1) * 8);
	MPI_Allgatherv(out, crank + 1, MPI_DOUBLE, in, counts, displs, MPI_DOUBLE, comm);
	printf("coll MPI_Allgatherv %d %d\n", (crank + 1) * 8, all);
	MPI_Alltoallv(out, counts, displs, MPI_DOUBLE, in, mine, displs, MPI_DOUBLE, comm);
	printf("coll MPI_Alltoallv %d %d\n", all, csize * (crank + 1) * 8);
	MPI_Reduce_scatter_block(out, in, 2, MPI_DOUBLE, MPI_SUM, comm);
	printf("coll MPI_Reduce_scatter_block %d 16\n", 16 * csize);
	MPI_Exscan(out, in, 2, MPI_DOUBLE, MPI_SUM, comm);
	printf("coll MPI_Exscan 16 16\n");

	/* Non-blocking collectives, completed by Wait and by a Test loop. */
	double sum = crank, total = 0;
	MPI_Iallreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	printf("coll MPI_Iallreduce 8 8\n");
	int flag = 0;
	MPI_Ibcast(out, 5, MPI_DOUBLE, root, comm, &r);
	while (!flag) {
		MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
	}
	printf("coll MPI_Ibcast %d %d\n", crank == root ? 40 : 0, crank == root ? 0 : 40);
	MPI_Ibarrier(comm, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	printf("coll MPI_Ibarrier 0 0\n");
	fflush(stdout);

	MPI_Comm_free(&comm);
	free(world_of);
	if (argc > 1 && strcmp(argv[1], "abort") == 0) {
		/* Rank 0 aborts while the others wait for a message that never comes. */
		if (wrank == 0) {
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		MPI_Recv(in, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	return 0;
}
