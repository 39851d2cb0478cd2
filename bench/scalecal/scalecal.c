/*
 * scalecal: the price of the collective end's messages, without hmbtrace.
 *
 * The collective end of an MPI run (cshim/mpi/hmbtrace_mpi.c,
 * hmbmpi_before_finalize) takes the run's results through a binomial tree
 * on a duplicate of MPI_COMM_WORLD: a bundle up to rank 0, the cut down
 * from it, a bundle up again (TRIPS trips of ceil(log2 p) rounds; each edge
 * a size, then the bytes), then the archive's slots: every rank of a group
 * sends its leader one number and gets one back. Issue 35 bounds the end
 * by the rank files' write plus O(log p) rounds of small messages; this
 * program measures what those rounds cost on this machine at this rank
 * count, in plain MPI, so that bound has a price. It does no work between
 * the messages: what the collective end spends beyond it is its own work
 * (making and merging the parts) and its waiting.
 *
 * Each repetition starts from a barrier and runs the skeleton twice, once
 * per wait: "mpi" waits in MPI_Waitall (Open MPI's own, which with
 * mpi_yield_when_idle yields between polls), "idle" waits as the
 * collective end does where ranks outnumber cores (test, yield WAIT_YIELDS
 * times, then sleep from 8 us doubling up to 250 us; wait_mode_for in
 * hmbtrace_mpi.c), and as MPI_Waitall does otherwise.
 *
 * Usage: mpirun -np P scalecal [reps [bytes [group]]]
 * (defaults 5 repetitions, 1024 bytes a part, groups of 1024 ranks).
 * Rank 0 prints, per wait, the medians over the repetitions of: rank 0's
 * time for the trips (the root: its last trip ends when the tree's does),
 * the slowest rank's, the slots' at rank 0 (group 0's leader), and the
 * thread CPU time the trips and slots took, summed over ranks and the
 * most of one rank. bench/scalecal.go reads these lines; its test checks that
 * the rounds and trips equal the collective end's.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The collective end's trips, in order: run_reduce's first bundle up, the
 * cut down (pass_down), the segments and wait states up. */
enum dir { UP, DOWN };
static const enum dir trips[] = {UP, DOWN, UP};
#define TRIPS ((int)(sizeof trips / sizeof trips[0]))

enum { TAG_SIZE = 1, TAG_DATA, TAG_CAPACITY, TAG_SLOT };
enum wait { WAIT_MPI, WAIT_IDLE, WAITS };
static const char *const wait_names[WAITS] = {"mpi", "idle"};

#define WAIT_YIELDS 16
#define WAIT_SLEEP_MIN_NS 8000
#define WAIT_SLEEP_MAX_NS 250000

static MPI_Comm comm;
static int p, r, oversubscribed;

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	fprintf(stderr, "scalecal: rank %d: %s\n", r, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* wait_for completes n requests the way w says. */
static void wait_for(int n, MPI_Request *q, enum wait w)
{
	if (w == WAIT_MPI || !oversubscribed) {
		if (MPI_Waitall(n, q, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
			fail("MPI_Waitall failed");
		}
		return;
	}
	long sleep_ns = WAIT_SLEEP_MIN_NS;
	for (long spin = 0;; spin++) {
		int done = 0;
		if (MPI_Testall(n, q, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
			fail("MPI_Testall failed");
		}
		if (done) {
			return;
		}
		if (spin < WAIT_YIELDS) {
			sched_yield();
			continue;
		}
		struct timespec ts = {0, sleep_ns};
		nanosleep(&ts, NULL);
		sleep_ns = sleep_ns * 2 < WAIT_SLEEP_MAX_NS ? sleep_ns * 2 : WAIT_SLEEP_MAX_NS;
	}
}

/* send_part and recv_part move a part as the collective end does: its size,
 * then its bytes. */
static void send_part(int to, char *b, uint64_t *n, enum wait w)
{
	MPI_Request q[2];
	MPI_Isend(n, 1, MPI_UINT64_T, to, TAG_SIZE, comm, &q[0]);
	MPI_Isend(b, (int)*n, MPI_BYTE, to, TAG_DATA, comm, &q[1]);
	wait_for(2, q, w);
}

static void recv_part(int from, char *b, size_t cap, enum wait w)
{
	uint64_t n = 0;
	MPI_Request q;
	MPI_Irecv(&n, 1, MPI_UINT64_T, from, TAG_SIZE, comm, &q);
	wait_for(1, &q, w);
	if (n > cap) {
		fail("a part larger than the program sends");
	}
	MPI_Irecv(b, (int)n, MPI_BYTE, from, TAG_DATA, comm, &q);
	wait_for(1, &q, w);
}

/* up takes a part to rank 0: a child sends and is done, a parent receives
 * from each of its children first (run_bundle). */
static void up(char *b, char *in, uint64_t n, enum wait w)
{
	for (int step = 1; step < p; step <<= 1) {
		if (r % (2 * step) == step) {
			send_part(r - step, b, &n, w);
			return;
		}
		if (r % (2 * step) == 0 && r + step < p) {
			recv_part(r + step, in, n, w);
		}
	}
}

/* down takes rank 0's part to every rank (pass_down). */
static void down(char *b, uint64_t n, enum wait w)
{
	int top = 1;
	while (top < p) {
		top <<= 1;
	}
	for (int step = top >> 1; step >= 1; step >>= 1) {
		if (r % (2 * step) == 0 && r + step < p) {
			send_part(r + step, b, &n, w);
		} else if (r % (2 * step) == step) {
			recv_part(r - step, b, n, w);
		}
	}
}

/* slots: each member of a group sends its leader a capacity and gets an
 * offset back (archive_end). */
static void slots(int group, int64_t *caps, enum wait w, MPI_Request *q)
{
	int leader = r / group * group, n = p - leader < group ? p - leader : group;
	int64_t cap = 4096 + r, off = 0;
	caps[0] = cap;
	if (r != leader) {
		MPI_Irecv(&off, 1, MPI_INT64_T, leader, TAG_SLOT, comm, &q[0]);
		MPI_Isend(&cap, 1, MPI_INT64_T, leader, TAG_CAPACITY, comm, &q[1]);
		wait_for(2, q, w);
		return;
	}
	for (int i = 1; i < n; i++) {
		MPI_Irecv(&caps[i], 1, MPI_INT64_T, leader + i, TAG_CAPACITY, comm, &q[i - 1]);
	}
	wait_for(n - 1, q, w);
	for (int i = 1; i < n; i++) {
		caps[i] += caps[i - 1];
		MPI_Isend(&caps[i - 1], 1, MPI_INT64_T, leader + i, TAG_SLOT, comm, &q[i - 1]);
	}
	wait_for(n - 1, q, w);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The figures of one repetition and wait, per rank. */
enum { F_TRIPS, F_SLOTS, F_CPU, FIGURES };

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	long bytes = argc > 2 ? atol(argv[2]) : 1024;
	int group = argc > 3 ? atoi(argv[3]) : 1024;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (argc > 4 || reps < 1 || bytes < 1 || bytes > (1 << 24) || group < 1) {
		if (r == 0) {
			fprintf(stderr, "usage: scalecal [reps (1 or more) [bytes a part (1 to 16 MiB) [ranks per group (1 or more)]]]\n");
		}
		MPI_Finalize();
		return 2;
	}
	/* A private duplicate, as the collective end's sync_comm. */
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm node;
	MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	int local = 0;
	MPI_Comm_size(node, &local);
	MPI_Comm_free(&node);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	oversubscribed = cores > 0 && local > cores;
	int rounds = 0;
	while ((1 << rounds) < p) {
		rounds++;
	}

	char *b = malloc((size_t)bytes), *in = malloc((size_t)bytes);
	int64_t *caps = calloc((size_t)group, sizeof *caps);
	MPI_Request *q = malloc((size_t)(group + 1) * sizeof *q);
	double *mine = malloc((size_t)reps * WAITS * FIGURES * sizeof *mine);
	double *all = r == 0 ? malloc((size_t)p * reps * WAITS * FIGURES * sizeof *all) : NULL;
	if (b == NULL || in == NULL || caps == NULL || q == NULL || mine == NULL || (r == 0 && all == NULL)) {
		fail("out of memory");
	}
	memset(b, r & 0xff, (size_t)bytes);
	for (int i = 0; i < reps; i++) {
		for (int w = 0; w < WAITS; w++) {
			MPI_Barrier(comm);
			double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
			for (int k = 0; k < TRIPS; k++) {
				if (trips[k] == UP) {
					up(b, in, (uint64_t)bytes, (enum wait)w);
				} else {
					down(b, (uint64_t)bytes, (enum wait)w);
				}
			}
			double t1 = now(CLOCK_MONOTONIC);
			slots(group, caps, (enum wait)w, q);
			double t2 = now(CLOCK_MONOTONIC), c2 = now(CLOCK_THREAD_CPUTIME_ID);
			double *f = mine + ((size_t)i * WAITS + w) * FIGURES;
			f[F_TRIPS] = t1 - t0, f[F_SLOTS] = t2 - t1, f[F_CPU] = c2 - c0;
		}
	}
	MPI_Gather(mine, reps * WAITS * FIGURES, MPI_DOUBLE, all, reps * WAITS * FIGURES, MPI_DOUBLE, 0, comm);
	if (r == 0) {
		printf("scalecal: ranks %d, rounds %d, trips %d, bytes %ld, group %d, reps %d, oversubscribed %d\n", p, rounds,
		       TRIPS, bytes, group, reps, oversubscribed);
		double *root = malloc((size_t)reps * sizeof *root), *slowest = malloc((size_t)reps * sizeof *slowest);
		double *slot = malloc((size_t)reps * sizeof *slot), *sum = malloc((size_t)reps * sizeof *sum);
		double *most = malloc((size_t)reps * sizeof *most);
		if (root == NULL || slowest == NULL || slot == NULL || sum == NULL || most == NULL) {
			fail("out of memory");
		}
		for (int w = 0; w < WAITS; w++) {
			for (int i = 0; i < reps; i++) {
				size_t at = ((size_t)i * WAITS + w) * FIGURES;
				root[i] = all[at + F_TRIPS];
				slot[i] = all[at + F_SLOTS];
				slowest[i] = sum[i] = most[i] = 0;
				for (int k = 0; k < p; k++) {
					const double *f = all + (size_t)k * reps * WAITS * FIGURES + at;
					slowest[i] = f[F_TRIPS] > slowest[i] ? f[F_TRIPS] : slowest[i];
					sum[i] += f[F_CPU];
					most[i] = f[F_CPU] > most[i] ? f[F_CPU] : most[i];
				}
			}
			printf("scalecal: wait %s: trips %.6f s, slowest rank's trips %.6f s, slots %.6f s, CPU sum %.6f s, CPU max %.6f s\n",
			       wait_names[w], median(root, reps), median(slowest, reps), median(slot, reps), median(sum, reps),
			       median(most, reps));
		}
		free(root), free(slowest), free(slot), free(sum), free(most);
	}
	free(b), free(in), free(caps), free(q), free(mine), free(all);
	MPI_Comm_free(&comm);
	MPI_Finalize();
	return 0;
}
