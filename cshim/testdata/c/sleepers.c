/*
 * sleepers: threads that hold current bins at many depths fall asleep in a
 * barrier while the main thread needs bins. A reduction closes the
 * sleepers' deepest levels; their current bins there must come back at
 * once (the buffer reclaims them: the sleepers are not in a probe), not
 * after a wait, and the main thread's records must all be kept. Before,
 * the C probes' bins were never reclaimed: each take waited 200 ms for the
 * sleepers, then closed the main thread's own level or dropped its record.
 * Prints the main thread's probes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmbtrace.h>

enum { SLEEPERS = 3, DEPTH = 6 };

static pthread_barrier_t parked, wake;
static uint32_t r_level[DEPTH], r_main;

static void *sleeper(void *arg)
{
	(void)arg;
	for (int d = 0; d < DEPTH; d++) {
		hmb_enter(r_level[d]); /* a current bin at each depth */
	}
	pthread_barrier_wait(&parked);
	pthread_barrier_wait(&wake); /* asleep, outside any probe, while main records */
	for (int d = DEPTH - 1; d >= 0; d--) {
		hmb_leave(r_level[d]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 3000;
	for (int d = 0; d < DEPTH; d++) {
		char name[16];
		snprintf(name, sizeof name, "level %d", d);
		r_level[d] = hmb_region(name);
	}
	r_main = hmb_region("main work");
	pthread_barrier_init(&parked, NULL, SLEEPERS + 1);
	pthread_barrier_init(&wake, NULL, SLEEPERS + 1);
	pthread_t t[SLEEPERS];
	for (int i = 0; i < SLEEPERS; i++) {
		pthread_create(&t[i], NULL, sleeper, NULL);
	}
	pthread_barrier_wait(&parked);
	for (int i = 0; i < pairs; i++) {
		hmb_enter(r_main);
		hmb_leave(r_main);
	}
	pthread_barrier_wait(&wake);
	for (int i = 0; i < SLEEPERS; i++) {
		pthread_join(t[i], NULL);
	}
	printf("main probes %d\n", 2 * pairs);
	return 0;
}
