/*
 * c-autoinst: the c-jacobi solver with no annotations at all, traced by the
 * compiler: built with -finstrument-functions and linked with libhmbtrace,
 * every function of the program becomes a region, named by its symbol.
 *
 *   make                                   (PKG_CONFIG_PATH=<hmbtrace>/lib/pkgconfig)
 *   ./c-autoinst [n [threads [iterations]]] defaults: 256 4 200
 *   hmbtrace summary hmb-out/c-autoinst.0.hmb
 *
 * The library's own functions are not instrumented; it writes the trace at
 * exit. Set HMB_FILTER_FILE to a Score-P filter file to leave out functions
 * by name (the filter sees the symbol names).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

static int n = 256, nthreads = 4, iterations = 200;
static double *grid[2];
static pthread_barrier_t barrier;
static pthread_mutex_t sum_mu = PTHREAD_MUTEX_INITIALIZER;
static double residual_sum;
static double last_residual;

#define AT(g, i, j) ((g)[(size_t)(i) * (size_t)n + (size_t)(j)])

static void init_grid(void)
{
	for (int k = 0; k < 2; k++) {
		grid[k] = calloc((size_t)n * (size_t)n, sizeof(double));
		if (grid[k] == NULL) {
			perror("c-autoinst: calloc");
			exit(1);
		}
		for (int j = 0; j < n; j++) {
			AT(grid[k], 0, j) = 1.0;
		}
	}
}

/* sweep updates rows [lo, hi) of the interior and returns the squared change. */
static double sweep(const double *old, double *new, int lo, int hi)
{
	double change = 0;
	for (int i = lo; i < hi; i++) {
		for (int j = 1; j < n - 1; j++) {
			double v = 0.25 * (AT(old, i - 1, j) + AT(old, i + 1, j) + AT(old, i, j - 1) + AT(old, i, j + 1));
			double d = v - AT(old, i, j);
			change += d * d;
			AT(new, i, j) = v;
		}
	}
	return change;
}

static void wait_all(void)
{
	pthread_barrier_wait(&barrier);
}

static void add_residual(double change)
{
	pthread_mutex_lock(&sum_mu);
	residual_sum += change;
	pthread_mutex_unlock(&sum_mu);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	int rows = n - 2, lo = 1 + id * rows / nthreads, hi = 1 + (id + 1) * rows / nthreads;
	for (int it = 0; it < iterations; it++) {
		double change = sweep(grid[it % 2], grid[(it + 1) % 2], lo, hi);
		if (it % 10 == 9) {
			add_residual(change);
			wait_all();
			if (id == 0) {
				last_residual = sqrt(residual_sum);
				residual_sum = 0;
			}
		}
		wait_all();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		n = atoi(argv[1]);
	}
	if (argc > 2) {
		nthreads = atoi(argv[2]);
	}
	if (argc > 3) {
		iterations = atoi(argv[3]);
	}
	if (n < 3 || nthreads < 1 || nthreads > n - 2 || iterations < 1) {
		fprintf(stderr, "usage: c-autoinst [n>=3 [1<=threads<=n-2 [iterations>=1]]]\n");
		return 2;
	}
	init_grid();
	pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
	pthread_t *threads = malloc((size_t)nthreads * sizeof *threads);
	for (int t = 0; t < nthreads; t++) {
		pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
	}
	for (int t = 0; t < nthreads; t++) {
		pthread_join(threads[t], NULL);
	}
	double checksum = 0;
	for (size_t k = 0; k < (size_t)n * (size_t)n; k++) {
		checksum += grid[iterations % 2][k];
	}

	printf("c-autoinst: n=%d threads=%d iterations=%d residual=%.6e checksum=%.6f\n", n, nthreads, iterations,
	       last_residual, checksum);
	return 0;
}
