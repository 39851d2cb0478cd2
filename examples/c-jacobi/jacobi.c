/*
 * c-jacobi: Jacobi iterations for the 2-D Laplace equation on a square
 * grid, one pthread per band of rows, annotated with hmbtrace regions.
 *
 *   make                                   (PKG_CONFIG_PATH=<hmbtrace>/lib/pkgconfig)
 *   ./c-jacobi [n [threads [iterations]]]   defaults: 256 4 200
 *   hmbtrace summary hmb-out/c-jacobi.0.hmb
 *
 * The top edge is held at 1, the others at 0. Each iteration every worker
 * sweeps its rows from the old grid into the new one, the workers meet at a
 * barrier, and every tenth iteration they sum the squared change (the
 * residual) under a mutex. c-autoinst is the same program without
 * annotations, traced by -finstrument-functions.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmbtrace.h>

static int n = 256, nthreads = 4, iterations = 200;
static double *grid[2];
static pthread_barrier_t barrier;
static pthread_mutex_t sum_mu = PTHREAD_MUTEX_INITIALIZER;
static double residual_sum;
static double last_residual;

static uint32_t r_main, r_init, r_worker, r_sweep, r_barrier, r_residual;

#define AT(g, i, j) ((g)[(size_t)(i) * (size_t)n + (size_t)(j)])

static void init_grid(void)
{
	hmb_enter(r_init);
	for (int k = 0; k < 2; k++) {
		grid[k] = calloc((size_t)n * (size_t)n, sizeof(double));
		if (grid[k] == NULL) {
			perror("c-jacobi: calloc");
			exit(1);
		}
		for (int j = 0; j < n; j++) {
			AT(grid[k], 0, j) = 1.0;
		}
	}
	hmb_leave(r_init);
}

/* sweep updates rows [lo, hi) of the interior and returns the squared change. */
static double sweep(const double *old, double *new, int lo, int hi)
{
	hmb_enter(r_sweep);
	double change = 0;
	for (int i = lo; i < hi; i++) {
		for (int j = 1; j < n - 1; j++) {
			double v = 0.25 * (AT(old, i - 1, j) + AT(old, i + 1, j) + AT(old, i, j - 1) + AT(old, i, j + 1));
			double d = v - AT(old, i, j);
			change += d * d;
			AT(new, i, j) = v;
		}
	}
	hmb_leave(r_sweep);
	return change;
}

static void wait_all(void)
{
	hmb_enter(r_barrier);
	pthread_barrier_wait(&barrier);
	hmb_leave(r_barrier);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[32];
	snprintf(name, sizeof name, "worker %d", id);
	hmb_thread_name(name);
	hmb_enter(r_worker);
	int rows = n - 2, lo = 1 + id * rows / nthreads, hi = 1 + (id + 1) * rows / nthreads;
	for (int it = 0; it < iterations; it++) {
		double change = sweep(grid[it % 2], grid[(it + 1) % 2], lo, hi);
		if (it % 10 == 9) {
			hmb_enter(r_residual);
			pthread_mutex_lock(&sum_mu);
			residual_sum += change;
			pthread_mutex_unlock(&sum_mu);
			hmb_leave(r_residual);
			wait_all();
			if (id == 0) {
				last_residual = sqrt(residual_sum);
				residual_sum = 0;
			}
		}
		wait_all();
	}
	hmb_leave(r_worker);
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
		fprintf(stderr, "usage: c-jacobi [n>=3 [1<=threads<=n-2 [iterations>=1]]]\n");
		return 2;
	}
	if (hmb_init() != 0) {
		fprintf(stderr, "c-jacobi: %s\n", hmb_last_error());
		return 1;
	}
	r_main = hmb_region_ex("main", __FILE__, __LINE__);
	r_init = hmb_region_ex("init_grid", __FILE__, __LINE__);
	r_worker = hmb_region_ex("worker", __FILE__, __LINE__);
	r_sweep = hmb_region_ex("sweep", __FILE__, __LINE__);
	r_barrier = hmb_region_ex("barrier", __FILE__, __LINE__);
	r_residual = hmb_region_ex("residual", __FILE__, __LINE__);
	hmb_thread_name("main");

	hmb_enter(r_main);
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
	hmb_leave(r_main);

	printf("c-jacobi: n=%d threads=%d iterations=%d residual=%.6e checksum=%.6f\n", n, nthreads, iterations,
	       last_residual, checksum);
	if (hmb_finalize() != 0) {
		fprintf(stderr, "c-jacobi: %s\n", hmb_last_error());
		return 1;
	}
	return 0;
}
