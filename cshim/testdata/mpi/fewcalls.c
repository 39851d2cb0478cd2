/*
 * fewcalls.c - a rank that makes few calls between MPI_Init and
 * MPI_Finalize: built through hmbtrace-instrument, main's enter comes
 * before MPI_Init, and the thread's records stay in its staging array
 * (its first window) up to the collective end, whose results must hold
 * the rank all the same.
 * Usage: mpirun -np N fewcalls
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
