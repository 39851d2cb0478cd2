/*
 * mpi_critical: the probe work of libhmbtrace-mpi's blocking calls on a
 * ping-pong's critical path, without MPI. A rank's round trip is a receive
 * that waits, then a send; what lies on the critical path is its work from
 * the receive's return to the send's start, the rest overlaps the other
 * rank's. The PMPI calls are clock spins here, so that what is timed is the
 * probes alone, two ways in turn (blocks of 1000 half round trips):
 *
 *   two probes   hmb_recv_leave after the receive, hmb_enter_send before
 *                the send (the wrappers up to 5e847ce)
 *   whole        hmb_mpi_call after the receive, a clock read before the
 *                send (cshim/lib/mpicall.h); the receive's hmb_mpi_call
 *                only stages the call (cshim/lib/mpicall.c), and the
 *                send's, off the path, writes both
 *
 * Per way: the trimmed mean (10-90 %) of the time on the path and off it,
 * less the timer's own. Build (-DTWO_PROBES_ONLY against a library without
 * hmb_mpi_call), run, and count instructions (the callgrind figures are the
 * inclusive cost of on_path_* over the iterations; HMB_TIMER_SHIFT=10 keeps
 * the deltas as long as natively under valgrind's slower clock):
 *
 *   gcc -O2 -g -Icshim/lib -o mpi_critical cshim/bench/mpi_critical.c -Lbuild/lib -Wl,-rpath,$PWD/build/lib -lhmbtrace
 *   ./mpi_critical [half-round-trips]          default 100000
 *   HMB_TIMER_SHIFT=10 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind ./mpi_critical 20000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hmbtrace.h"
#ifndef TWO_PROBES_ONLY
#include "mpicall.h" /* not installed */
#endif

static inline uint64_t ticks(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

/* spin stands for a PMPI call of n ticks. */
static void spin(uint64_t n)
{
	uint64_t t = ticks();
	while (ticks() - t < n) {
	}
}

static uint32_t send_r, recv_r, world;

/* The two probes: the receive's leave with its message, the send's enter with its own. */
__attribute__((noinline)) static void on_path_two(void)
{
	hmb_recv_leave(recv_r, 1, 0, 8, world);
	hmb_enter_send(send_r, 1, 0, 8, world);
}

__attribute__((noinline)) static void off_path_two(void)
{
	hmb_recv_leave(send_r, -1, 0, 0, 0);
	hmb_enter_send(recv_r, -1, 0, 0, 0);
}

#ifndef TWO_PROBES_ONLY
/* clock_now reads the probes' clock as libhmbtrace-mpi's wrappers do, inline (hmbmpi_now). */
static int tsc;
static inline uint64_t clock_now(void)
{
	if (tsc) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return (uint64_t)hi << 32 | lo;
	}
	return hmb_clock();
}

static struct hmb_mpi_call recv_c, send_c;

__attribute__((noinline)) static void on_path_whole(void)
{
	recv_c.recv = (struct hmb_mpi_msg){.peer = 1, .tag = 0, .comm = world, .bytes = 8};
	hmb_mpi_call(&recv_c);
	send_c.t0 = clock_now();
}

__attribute__((noinline)) static void off_path_whole(void)
{
	send_c.send = (struct hmb_mpi_msg){.peer = 1, .tag = 0, .comm = world, .bytes = 8};
	hmb_mpi_call(&send_c);
	recv_c.t0 = clock_now();
}
#endif

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* trimmed is the mean of v[0..n) without its lowest and highest tenth (v is sorted). */
static double trimmed(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	double s = 0;
	long k = 0;
	for (long i = n / 10; i < n - n / 10; i++, k++) {
		s += (double)v[i];
	}
	return k > 0 ? s / (double)k : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n < 1000) {
		n = 1000;
	}
	const int32_t members[2] = {0, 1};
	world = hmb_comm_define("MPI_COMM_WORLD", 0, members, 2, NULL, 0);
	send_r = hmb_region_paradigm("MPI_Send", HMB_PARADIGM_MPI);
	recv_r = hmb_region_paradigm("MPI_Recv", HMB_PARADIGM_MPI);
	uint32_t main_r = hmb_region("main");
	hmb_enter(main_r);
#ifndef TWO_PROBES_ONLY
	tsc = hmb_clock_tsc();
#endif
	int ways = 2;
#ifdef TWO_PROBES_ONLY
	ways = 1;
#endif
	uint64_t *on[2], *off[2], *timer = malloc((size_t)(ways * n) * sizeof *timer);
	long k[2] = {0, 0}, z = 0;
	for (int w = 0; w < 2; w++) {
		on[w] = malloc((size_t)n * sizeof *on[w]);
		off[w] = malloc((size_t)n * sizeof *off[w]);
	}
	double w0 = now();
	uint64_t k0 = ticks();
	int way = 0;
	hmb_enter_send(recv_r, -1, 0, 0, 0); /* the first receive, the two probes' way */
	for (long i = 0; i < ways * n; i++) {
#ifndef TWO_PROBES_ONLY
		if (i > 0 && i % 1000 == 0) {
			/* Change ways where both stand in a receive. */
			if (way == 0) {
				recv_c = (struct hmb_mpi_call){.t0 = clock_now(), .region = recv_r, .send = {.peer = -1}, .recv = {.peer = -1}};
				send_c = (struct hmb_mpi_call){.region = send_r, .send = {.peer = -1}, .recv = {.peer = -1}};
				hmb_recv_leave(recv_r, -1, 0, 0, 0);
			} else {
				hmb_enter_send(recv_r, -1, 0, 0, 0);
			}
			way = 1 - way;
		}
#endif
		spin(1200); /* the receive waits */
		uint64_t a = ticks();
#ifndef TWO_PROBES_ONLY
		if (way == 1) {
			on_path_whole();
		} else
#endif
			on_path_two();
		uint64_t b = ticks();
		spin(300); /* the send */
		uint64_t c = ticks();
#ifndef TWO_PROBES_ONLY
		if (way == 1) {
			off_path_whole();
		} else
#endif
			off_path_two();
		uint64_t d = ticks();
		uint64_t e = ticks();
		on[way][k[way]] = b - a;
		off[way][k[way]++] = d - c;
		timer[z++] = e - d;
	}
#ifndef TWO_PROBES_ONLY
	if (way == 1) {
		hmb_mpi_call(&recv_c);
	} else
#endif
		hmb_recv_leave(recv_r, -1, 0, 0, 0);
	double ns = (now() - w0) / (double)(ticks() - k0);
	hmb_leave(main_r);
	double t = trimmed(timer, z);
	const char *names[2] = {"two probes", "whole"};
	for (int w = 0; w < ways; w++) {
		printf("mpi_critical %s: on the path %.1f ns, off it %.1f ns per half round trip (trimmed means of %ld, less "
		       "the timer's %.1f ns)\n",
		       names[w], (trimmed(on[w], k[w]) - t) * ns, (trimmed(off[w], k[w]) - t) * ns, k[w], t * ns);
	}
	return 0;
}
