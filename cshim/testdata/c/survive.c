/*
 * survive: run with HMB_SURVIVE=1 and killed. Three threads record call
 * trees with messages into a small buffer, so that reductions happen, until
 * the process dies: of a SIGKILL from the test (mode "kill"), of a
 * segfault ("segv"), of abort() ("abort") or of the OOM killer ("oom",
 * under a memory limit), or exits normally ("exit"), its threads still
 * recording. Prints "ready" once every thread recorded a while.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hmbtrace.h>

static uint32_t regions[4];
static atomic_int started;

static void tree(int d, unsigned *seed)
{
	uint32_t r = regions[d % 4];
	hmb_enter(r);
	if (d > 1) {
		tree(d - 1, seed);
		tree(d - 2, seed);
	} else {
		hmb_send(0, (uint32_t)d, 8);
	}
	hmb_leave(r);
}

static void *record(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	for (long i = 0;; i++) {
		tree(2 + (int)(rand_r(&seed) % 8), &seed);
		if (i == 200) {
			atomic_fetch_add(&started, 1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "kill";
	if (hmb_init() != 0) {
		fprintf(stderr, "survive: %s\n", hmb_last_error());
		return 1;
	}
	regions[0] = hmb_region("a");
	regions[1] = hmb_region("b");
	regions[2] = hmb_region("c");
	regions[3] = hmb_region("d");
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		pthread_create(&t[i], NULL, record, (void *)(uintptr_t)(i + 1));
	}
	while (atomic_load(&started) < 3) {
		usleep(1000);
	}
	printf("ready\n");
	fflush(stdout);
	usleep(20000);
	if (strcmp(mode, "segv") == 0) {
		volatile int *p = NULL;
		*p = 1;
	} else if (strcmp(mode, "exit") == 0) {
		exit(0);
	} else if (strcmp(mode, "abort") == 0) {
		abort();
	} else if (strcmp(mode, "oom") == 0) {
		for (;;) {
			char *b = malloc(64 << 20);
			if (b != NULL) {
				memset(b, 1, 64 << 20);
			}
		}
	}
	for (;;) {
		pause();
	}
}
