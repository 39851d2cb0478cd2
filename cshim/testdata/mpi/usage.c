/*
 * usage: rank 1 leaves a region it never entered, a usage error; the run
 * says it once, from rank 0, with the run's totals.
 */
#include <mpi.h>

#include <hmbtrace.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	uint32_t a = hmb_region("a");
	if (rank == 1) {
		hmb_leave(a);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
