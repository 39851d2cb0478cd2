/*
 * hammer: 8 threads probe as fast as they can while the main thread calls
 * hmb_finalize, and go on probing after it. Every probe must be in the
 * trace or counted by hmb_dropped. Prints each thread's id and probe count,
 * then the total and the dropped count.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <hmbtrace.h>

#define THREADS 8

static uint32_t r_outer, r_inner;
static atomic_int stop;
static atomic_int running;
static atomic_uint_fast64_t done[THREADS];
static long tids[THREADS];

static void *hammer(void *arg)
{
	int id = (int)(intptr_t)arg;
	tids[id] = (long)syscall(SYS_gettid);
	uint64_t n = 0;
	atomic_fetch_add(&running, 1);
	for (uint64_t i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		hmb_enter(r_outer);
		hmb_enter(r_inner);
		if (i % 1000 == 0) {
			hmb_send(id, 1, 64); /* a two-record probe now and then */
			n++;
		}
		hmb_leave(r_inner);
		hmb_leave(r_outer);
		n += 4;
		atomic_store_explicit(&done[id], n, memory_order_relaxed);
	}
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(void)
{
	if (hmb_init() != 0) {
		fprintf(stderr, "hammer: %s\n", hmb_last_error());
		return 1;
	}
	r_outer = hmb_region("outer");
	r_inner = hmb_region("inner");
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, hammer, (void *)(intptr_t)i);
	}
	/* Finalize while every thread is well into its loop. */
	for (;;) {
		int all = atomic_load(&running) == THREADS;
		for (int i = 0; all && i < THREADS; i++) {
			all = atomic_load(&done[i]) > 20000;
		}
		if (all) {
			break;
		}
		sleep_ms(1);
	}
	if (hmb_finalize() != 0) {
		fprintf(stderr, "hammer: %s\n", hmb_last_error());
		return 1;
	}
	sleep_ms(20); /* probes after finalize */
	atomic_store(&stop, 1);
	uint64_t total = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		uint64_t n = atomic_load(&done[i]);
		printf("thread %ld %llu\n", tids[i], (unsigned long long)n);
		total += n;
	}
	printf("total %llu\n", (unsigned long long)total);
	printf("dropped %llu\n", (unsigned long long)hmb_dropped());
	return 0;
}
