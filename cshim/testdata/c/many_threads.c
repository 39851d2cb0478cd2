/*
 * many_threads: more threads than may call Go themselves (goproxy.c: 16,
 * or twice the CPUs) start at once; each names itself, defines a region of
 * its own and records calls of it and of a shared one, so that its
 * location, its region, its first bins and its name reach Go, most of
 * them through the proxy thread. Every thread's events must be in the
 * trace, under its name.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <hmbtrace.h>

#define CALLS 50

static pthread_barrier_t start;
static uint32_t shared;

static void *worker(void *arg)
{
	long i = (long)arg;
	char name[32];
	pthread_barrier_wait(&start);
	snprintf(name, sizeof name, "worker %ld", i);
	hmb_thread_name(name);
	snprintf(name, sizeof name, "own %ld", i);
	uint32_t own = hmb_region(name);
	for (int k = 0; k < CALLS; k++) {
		hmb_enter(shared);
		hmb_enter(own);
		hmb_leave(own);
		hmb_leave(shared);
	}
	return NULL;
}

int main(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long n = 2 * (cpus > 8 ? 2 * cpus : 16) + 8;
	shared = hmb_region("shared");
	pthread_t *t = malloc((size_t)n * sizeof *t);
	if (t == NULL || pthread_barrier_init(&start, NULL, (unsigned)n) != 0) {
		perror("many_threads");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
			perror("many_threads: pthread_create");
			return 1;
		}
	}
	for (long i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
	printf("threads %ld calls %d\n", n, CALLS);
	return hmb_finalize() != 0;
}
