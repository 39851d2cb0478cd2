/*
 * waitstate: planted wait states with known answers, for the wait-state
 * analysis (analysis/waitstate). 4 ranks on one host run one scenario,
 * given as the first argument, for the number of iterations given as the
 * second:
 *
 *   ring       every rank computes, then sends to the next rank and
 *              receives from the previous one; rank 2 computes until 5 ms
 *              after rank 3 entered its receive: Late Sender on rank 3,
 *              5 ms an iteration, delayed by rank 2's compute
 *   ssend      rank 0 MPI_Ssends to rank 1, which computes until 5 ms
 *              after the send was entered: Late Receiver on rank 0, 5 ms
 *   allreduce  rank r computes until 2r ms after rank 0 entered
 *              MPI_Allreduce: Wait at N x N 6 + 4 + 2 = 12 ms an iteration
 *   barrier    the same with MPI_Barrier: Wait at Barrier 12 ms
 *   bcast      ranks 0, 2 and 3 enter MPI_Bcast at a common time, root 1
 *              5 ms later: Late Broadcast 3 x 5 = 15 ms
 *   reduce     root 0 enters MPI_Reduce, the others 5, 6 and 7 ms later:
 *              Early Reduce 5 ms (up to the first sender)
 *   critpath   no pacing: every rank computes 2 ms, rank 2 6 ms (three
 *              times as long), then MPI_Allreduce, iteration after
 *              iteration: the critical path runs through rank 2's compute
 *
 * The late rank learns when the others entered through memory the ranks
 * share (MPI_Win_allocate_shared), not through MPI calls, so that nothing
 * but the planted call waits, and the planted time does not depend on how
 * the scheduler shares the cores among the ranks and the rest of the
 * machine: 5 ms after the other's enter, not 5 ms after a start each rank
 * may reach late. Iterations start at common times 40 ms apart (region
 * "idle", a sleep), so that one iteration's delay does not carry into the
 * next; the planted delay is a busy loop on clock_gettime (region
 * "compute"). Each rank prints, per iteration, when it entered and left
 * the planted call, and in the ring when it entered its send, read from
 * CLOCK_MONOTONIC just before and after the calls:
 *
 *   call <iteration> <enter ns> <leave ns>
 *   send <iteration> <enter ns>
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hmbtrace.h>

#define MS 1000000LL
#define PERIOD (40 * MS)
#define MAXITER 64

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint32_t r_idle, r_compute;

/*
 * The shared slots: [0] the common start; [1 + it] the time the reference
 * rank of iteration it entered its call (0: not yet); [1 + MAXITER + it]
 * how many late ranks of iteration it are ready, spinning in compute: the
 * reference rank enters its call only then, so that a late rank that the
 * scheduler woke late does not add to the planted time.
 */
static int64_t *slots;

static void publish(int it, int64_t t) { __atomic_store_n(&slots[1 + it], t, __ATOMIC_RELEASE); }

/* ready waits until n late ranks of iteration it are ready. */
static void ready(int it, int n)
{
	hmb_enter(r_idle);
	while (__atomic_load_n(&slots[1 + MAXITER + it], __ATOMIC_ACQUIRE) < n) {
		sched_yield();
	}
	hmb_leave(r_idle);
}

/* idle sleeps to t. */
static void idle(int64_t t)
{
	hmb_enter(r_idle);
	struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
	}
	hmb_leave(r_idle);
}

/*
 * compute spins on the clock until after of iteration it's published
 * time, once published. It yields the core while the time is not
 * published and while its end is more than 100 us away, so that the
 * ranks that share the cores (four on two in CI) are on one when they
 * have something to do: the rank that publishes, the one whose end came.
 */
static void compute(int it, int64_t after)
{
	hmb_enter(r_compute);
	__atomic_add_fetch(&slots[1 + MAXITER + it], 1, __ATOMIC_ACQ_REL);
	int64_t ref;
	while ((ref = __atomic_load_n(&slots[1 + it], __ATOMIC_ACQUIRE)) == 0) {
		sched_yield();
	}
	int64_t t;
	while ((t = now()) < ref + after) {
		if (ref + after - t > 100000) {
			sched_yield();
		}
	}
	hmb_leave(r_compute);
}

/* spin computes for d ns of the clock, yielding the core while more than
 * 100 us remain, as compute does. */
static void spin(int64_t d)
{
	hmb_enter(r_compute);
	int64_t end = now() + d, t;
	while ((t = now()) < end) {
		if (end - t > 100000) {
			sched_yield();
		}
	}
	hmb_leave(r_compute);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm node;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	int nodesize;
	MPI_Comm_size(node, &nodesize);
	int iters = argc == 3 ? atoi(argv[2]) : 0;
	if (argc != 3 || size != 4 || nodesize != 4 || iters < 1 || iters > MAXITER) {
		if (rank == 0) {
			fprintf(stderr, "usage: mpirun -np 4 waitstate ring|ssend|allreduce|barrier|bcast|reduce|critpath ITERATIONS (1 to %d), "
					"all ranks on one host\n", MAXITER);
		}
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *scenario = argv[1];
	r_idle = hmb_region("idle");
	r_compute = hmb_region("compute");

	MPI_Win win;
	MPI_Aint bytes = rank == 0 ? (MPI_Aint)((2 * MAXITER + 1) * sizeof(int64_t)) : 0;
	int64_t *mine;
	MPI_Win_allocate_shared(bytes, sizeof(int64_t), MPI_INFO_NULL, node, &mine, &win);
	MPI_Aint got;
	int unit;
	MPI_Win_shared_query(win, 0, &got, &unit, &slots);
	if (rank == 0) {
		memset(slots, 0, (size_t)bytes);
		slots[0] = now() + 50 * MS;
	}
	MPI_Win_fence(0, win);
	int64_t t0 = __atomic_load_n(&slots[0], __ATOMIC_ACQUIRE);

	double x = rank, y;
	for (int it = 0; it < iters; it++) {
		int64_t enter = 0, leave = 0;
		if (strcmp(scenario, "critpath") != 0) {
			idle(t0 + it * PERIOD);
		}
		if (strcmp(scenario, "ring") == 0) {
			if (rank == 2) {
				compute(it, 5 * MS);
			}
			printf("send %d %lld\n", it, (long long)now());
			MPI_Send(&x, 1, MPI_DOUBLE, (rank + 1) % size, 1, MPI_COMM_WORLD);
			if (rank == 3) {
				ready(it, 1);
			}
			enter = now();
			if (rank == 3) {
				publish(it, enter);
			}
			MPI_Recv(&y, 1, MPI_DOUBLE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			leave = now();
		} else if (strcmp(scenario, "ssend") == 0) {
			if (rank == 0) {
				ready(it, 1);
				enter = now();
				publish(it, enter);
				MPI_Ssend(&x, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
				leave = now();
			} else if (rank == 1) {
				compute(it, 5 * MS);
				enter = now();
				MPI_Recv(&y, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				leave = now();
			}
		} else if (strcmp(scenario, "allreduce") == 0 || strcmp(scenario, "barrier") == 0) {
			if (rank > 0) {
				compute(it, 2 * rank * MS);
			} else {
				ready(it, 3);
			}
			enter = now();
			if (rank == 0) {
				publish(it, enter);
			}
			if (scenario[0] == 'a') {
				MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			} else {
				MPI_Barrier(MPI_COMM_WORLD);
			}
			leave = now();
		} else if (strcmp(scenario, "bcast") == 0) {
			if (rank == 0) {
				ready(it, 3);
				publish(it, now() + 1 * MS); /* the non-roots' common enter */
			}
			compute(it, rank == 1 ? 5 * MS : 0);
			enter = now();
			MPI_Bcast(&x, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
			leave = now();
		} else if (strcmp(scenario, "critpath") == 0) {
			/* Only here, the iterations follow each other at once. */
			if (it == 0) {
				idle(t0);
			}
			spin(rank == 2 ? 6 * MS : 2 * MS);
			enter = now();
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			leave = now();
		} else if (strcmp(scenario, "reduce") == 0) {
			if (rank > 0) {
				compute(it, (4 + rank) * MS);
			} else {
				ready(it, 3);
			}
			enter = now();
			if (rank == 0) {
				publish(it, enter);
			}
			MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			leave = now();
		} else {
			if (rank == 0) {
				fprintf(stderr, "waitstate: unknown scenario %s\n", scenario);
			}
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		if (enter != 0) {
			printf("call %d %lld %lld\n", it, (long long)enter, (long long)leave);
		}
	}
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return 0;
}
