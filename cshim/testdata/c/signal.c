/*
 * signal: run with HMB_SIGNALS=1 and stopped by SIGINT or SIGTERM. Three
 * threads probe until the signal; the trace must hold all three, staged
 * records included. Prints "tid <n>" for each thread, then "ready".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hmbtrace.h>

static uint32_t r_loop, r_step;
static atomic_int started;

/* spin probes until the signal, slowly enough that most records are still staged. */
static void *spin(void *arg)
{
	if (arg != NULL) {
		printf("tid %ld\n", (long)syscall(SYS_gettid));
		fflush(stdout);
	}
	hmb_enter(r_loop);
	atomic_fetch_add(&started, 1);
	for (;;) {
		hmb_enter(r_step);
		usleep(100);
		hmb_leave(r_step);
	}
	return NULL;
}

int main(void)
{
	if (hmb_init() != 0) {
		fprintf(stderr, "signal: %s\n", hmb_last_error());
		return 1;
	}
	r_loop = hmb_region("loop");
	r_step = hmb_region("step");
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_t t[2];
	for (int i = 0; i < 2; i++) {
		pthread_create(&t[i], NULL, spin, "print");
	}
	while (atomic_load(&started) < 2) {
		usleep(1000);
	}
	printf("ready\n");
	fflush(stdout);
	spin(NULL);
	return 0;
}
