// tabled.cc: an MPI program whose library (table.cc) computes a table in a
// static constructor, before main and MPI_Init.
#include <mpi.h>

#include <cstdio>

double table_sum();

__attribute__((noinline)) double step(int rank)
{
	double s = 0;
	for (int i = 0; i < 200000 * (rank + 1); i++)
		s += i * 1e-9;
	return s;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double s = table_sum();
	for (int i = 0; i < 10; i++) {
		double x = step(rank), y;
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		s += y;
	}
	MPI_Finalize();
	std::printf("%g\n", s);
	return 0;
}
