/*
 * immediate: a halo exchange of small messages, which MPI may send at
 * once. Open MPI then gives every such MPI_Isend the same predefined,
 * already complete request, so one handle stands for several requests at
 * a time. Each round, every rank posts its receives from its neighbours,
 * then its sends into the first slots of an array of 26 requests whose
 * other slots are MPI_REQUEST_NULL, and completes them with one of the
 * Wait and Test calls, in turn. Each rank prints what it sends and
 * receives, and how many of its send handles were shared:
 *
 *   send <to> <tag> <bytes>   recv <from> <tag> <bytes>   shared <n>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 26
#define NEIGHBOURS 5
#define ROUNDS 6

/* Counts of doubles, large and small: a face, edges, a corner. */
static const int counts[NEIGHBOURS] = {81, 9, 9, 9, 1};

/* complete waits for the n requests of r in the way of round. */
static void complete(int round, MPI_Request r[SLOTS], int n)
{
	MPI_Status st[SLOTS];
	int done = 0, flag = 0, index, indices[SLOTS];
	switch (round % ROUNDS) {
	case 0:
		MPI_Waitall(SLOTS, r, st);
		break;
	case 1:
		MPI_Waitall(SLOTS, r, MPI_STATUSES_IGNORE);
		break;
	case 2:
		/* Backwards: the shared handle's requests taken out of order. */
		for (int i = n - 1; i >= 0; i--) {
			MPI_Wait(&r[i], MPI_STATUS_IGNORE);
		}
		break;
	case 3:
		for (; done < n; done++) {
			MPI_Waitany(SLOTS, r, &index, MPI_STATUS_IGNORE);
		}
		break;
	case 4:
		while (!flag) {
			MPI_Testall(SLOTS, r, &flag, st);
		}
		break;
	case 5:
		while (done < n) {
			int got;
			MPI_Testsome(SLOTS, r, &got, indices, MPI_STATUSES_IGNORE);
			done += got;
		}
		break;
	}
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double *in = calloc(NEIGHBOURS * 81, sizeof *in), *out = calloc(NEIGHBOURS * 81, sizeof *out);
	long shared = 0;
	for (int round = 0; round < 2 * ROUNDS; round++) {
		MPI_Request recvs[SLOTS], sends[SLOTS];
		for (int i = 0; i < SLOTS; i++) {
			recvs[i] = sends[i] = MPI_REQUEST_NULL;
		}
		/* Neighbour i is i+1 ranks away: receive from below, send above. */
		for (int i = 0; i < NEIGHBOURS; i++) {
			int from = ((rank - 1 - i) % size + size) % size;
			MPI_Irecv(in + 81 * i, counts[i], MPI_DOUBLE, from, 100 + i, MPI_COMM_WORLD, &recvs[i]);
			printf("recv %d %d %d\n", from, 100 + i, 8 * counts[i]);
		}
		for (int i = 0; i < NEIGHBOURS; i++) {
			int to = (rank + 1 + i) % size;
			MPI_Isend(out + 81 * i, counts[i], MPI_DOUBLE, to, 100 + i, MPI_COMM_WORLD, &sends[i]);
			printf("send %d %d %d\n", to, 100 + i, 8 * counts[i]);
			for (int j = 0; j < i; j++) {
				if (sends[j] == sends[i]) {
					shared++;
					break;
				}
			}
		}
		complete(round, sends, NEIGHBOURS);
		complete(round + 1, recvs, NEIGHBOURS);
	}
	printf("shared %ld\n", shared);
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
