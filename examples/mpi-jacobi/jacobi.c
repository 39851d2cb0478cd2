/*
 * mpi-jacobi: a Jacobi solver for the Laplace equation on a rows x cols
 * grid, split into horizontal strips, one per MPI rank. Each iteration
 * exchanges the strips' halo rows with the neighbours (MPI_Isend, MPI_Irecv,
 * MPI_Waitall), sweeps the strip, and sums the residual over all ranks
 * (MPI_Allreduce). The program has no tracing calls: built with
 * -finstrument-functions and linked with libhmbtrace-mpi, its functions and
 * its MPI calls are traced, one file per rank.
 *
 *   make                                   (PKG_CONFIG_PATH=<hmbtrace>/lib/pkgconfig)
 *   mpirun -np 4 ./mpi-jacobi [-r rows] [-c cols] [-i iterations] [-H rank] [-f factor]
 *   hmbtrace summary hmb-out
 *
 * Defaults: 2048 rows, 2048 columns, 200 iterations: with 4 ranks on two
 * cores, sweep takes more of the run than MPI_Init does. -H gives one rank
 * factor times (default 2) the rows of the others: the imbalance shows as
 * the other ranks waiting in MPI_Waitall and MPI_Allreduce, as that rank
 * being the slowest in sweep (hmbtrace summary), and as the location with
 * the slowest segments (hmbtrace variation, which segments by sweep).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rows = 2048, cols = 2048, iterations = 200, heavy = -1;
static double factor = 2.0;
static int rank, size;
static int first, count; /* this rank's strip: global rows [first, first+count) */
static double *grid[2];  /* count+2 rows: a halo row above and below */

#define AT(g, i, j) ((g)[(size_t)(i) * (size_t)cols + (size_t)(j)])

static void usage(void)
{
	if (rank == 0) {
		fprintf(stderr, "usage: mpi-jacobi [-r rows] [-c cols] [-i iterations] [-H rank] [-f factor]\n");
	}
	MPI_Finalize();
	exit(2);
}

static int positive(const char *flag, const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v <= 0 || v > 1 << 24) {
		if (rank == 0) {
			fprintf(stderr, "mpi-jacobi: %s %s: want a positive integer\n", flag, s);
		}
		usage();
	}
	return (int)v;
}

static void parse(int argc, char **argv)
{
	int c;
	char *end;
	while ((c = getopt(argc, argv, "r:c:i:H:f:")) != -1) {
		switch (c) {
		case 'r': rows = positive("-r", optarg); break;
		case 'c': cols = positive("-c", optarg); break;
		case 'i': iterations = positive("-i", optarg); break;
		case 'H': heavy = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || heavy < 0 || heavy >= size) {
				if (rank == 0) {
					fprintf(stderr, "mpi-jacobi: -H %s: want a rank from 0 to %d\n", optarg, size - 1);
				}
				usage();
			}
			break;
		case 'f': factor = strtod(optarg, &end);
			if (*end != '\0' || !(factor >= 1 && factor <= 100)) {
				if (rank == 0) {
					fprintf(stderr, "mpi-jacobi: -f %s: want a factor from 1 to 100\n", optarg);
				}
				usage();
			}
			break;
		default: usage();
		}
	}
	if (rows < size || cols < 3) {
		if (rank == 0) {
			fprintf(stderr, "mpi-jacobi: %d rows and %d columns: want at least one row per rank and 3 columns\n", rows, cols);
		}
		usage();
	}
}

/* split gives each rank rows in proportion to its weight: 1, or factor for the heavy rank. */
static void split(void)
{
	double total = size - (heavy >= 0) + (heavy >= 0 ? factor : 0);
	double at = 0;
	for (int r = 0; r <= rank; r++) {
		double w = r == heavy ? factor : 1;
		first = (int)(at / total * rows + 0.5);
		at += w;
		count = (int)(at / total * rows + 0.5) - first;
	}
	if (count < 1) {
		fprintf(stderr, "mpi-jacobi: rank %d got no rows: use more rows or a smaller factor\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static void init_grid(void)
{
	for (int k = 0; k < 2; k++) {
		grid[k] = calloc((size_t)(count + 2) * (size_t)cols, sizeof(double));
		if (grid[k] == NULL) {
			perror("mpi-jacobi: calloc");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		/*
		 * Touch every page now: the first sweeps would otherwise take the
		 * page faults of the whole grid and stand out as slow.
		 */
		size_t bytes = (size_t)(count + 2) * (size_t)cols * sizeof(double);
		for (size_t off = 0; off < bytes; off += 4096) {
			((volatile char *)grid[k])[off] = 0;
		}
		if (first == 0) { /* global row 0, local row 1: the hot top edge of the plate */
			for (int j = 0; j < cols; j++) {
				AT(grid[k], 1, j) = 1.0;
			}
		}
	}
}

/* exchange_halo swaps boundary rows with the ranks above and below. */
static void exchange_halo(double *g)
{
	MPI_Request req[4];
	int n = 0, up = rank - 1, down = rank + 1;
	if (up >= 0) {
		MPI_Irecv(&AT(g, 0, 0), cols, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[n++]);
		MPI_Isend(&AT(g, 1, 0), cols, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &req[n++]);
	}
	if (down < size) {
		MPI_Irecv(&AT(g, count + 1, 0), cols, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &req[n++]);
		MPI_Isend(&AT(g, count, 0), cols, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[n++]);
	}
	MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

/* sweep updates the strip's interior and returns the squared change. */
static double sweep(const double *old, double *new)
{
	double change = 0;
	int lo = first == 0 ? 2 : 1, hi = first + count == rows ? count - 1 : count;
	for (int i = lo; i <= hi; i++) {
		for (int j = 1; j < cols - 1; j++) {
			double v = 0.25 * (AT(old, i - 1, j) + AT(old, i + 1, j) + AT(old, i, j - 1) + AT(old, i, j + 1));
			double d = v - AT(old, i, j);
			AT(new, i, j) = v;
			change += d * d;
		}
	}
	return change;
}

static double residual(double local)
{
	double global = 0;
	MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return global;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	parse(argc, argv);
	split();
	init_grid();
	double res = 0;
	for (int it = 0; it < iterations; it++) {
		double *old = grid[it % 2], *new = grid[(it + 1) % 2];
		exchange_halo(old);
		res = residual(sweep(old, new));
	}
	int *counts = malloc((size_t)size * sizeof *counts);
	if (counts == NULL) {
		perror("mpi-jacobi: malloc");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("mpi-jacobi: ranks=%d rows=%d cols=%d iterations=%d residual=%.6e\n", size, rows, cols, iterations, res);
		printf("rows per rank:");
		for (int r = 0; r < size; r++) {
			printf(" %d", counts[r]);
		}
		printf("%s\n", heavy >= 0 ? " (imbalanced by -H)" : "");
	}
	free(counts);
	free(grid[0]);
	free(grid[1]);
	MPI_Finalize();
	return 0;
}
