/*
 * exited: 6 threads each record a call tree 16 deep (partly filling a bin
 * at every depth) and exit; then the main thread records deep trees into a
 * buffer far too small for them. The exited threads never probe again, so
 * their bins come back only because their exit sealed them: the reductions
 * must free what they need and keep the main thread's shallow depths.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <hmbtrace.h>

#define THREADS 6
#define DEPTH 16

static uint32_t regions[DEPTH];

static void tree(int d, int width)
{
	hmb_enter(regions[d]);
	if (d + 1 < DEPTH) {
		for (int i = 0; i < width; i++) {
			tree(d + 1, width);
		}
	}
	hmb_leave(regions[d]);
}

static void *worker(void *arg)
{
	(void)arg;
	tree(0, 1);
	return NULL;
}

int main(void)
{
	char name[32];
	for (int d = 0; d < DEPTH; d++) {
		snprintf(name, sizeof name, "depth %d", d + 1);
		regions[d] = hmb_region(name);
	}
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, worker, NULL);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
	}
	for (int i = 0; i < 2000; i++) {
		tree(0, 1);
	}
	return hmb_finalize() == 0 ? 0 : 1;
}
