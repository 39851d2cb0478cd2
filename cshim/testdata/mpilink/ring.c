/* Each rank passes a token to the next one, 10 times, after a broadcast. */
#include <mpi.h>
#include <stdio.h>

static void pass(int rank, int np, int *token)
{
	MPI_Sendrecv_replace(token, 1, MPI_INT, (rank + 1) % np, 7, (rank + np - 1) % np, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, np, token;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	token = rank;
	MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int i = 0; i < 10; i++)
		pass(rank, np, &token);
	printf("ring: rank %d of %d token %d\n", rank, np, token);
	MPI_Finalize();
	return 0;
}
