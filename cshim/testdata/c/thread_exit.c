/*
 * thread_exit: threads that record and exit long before hmb_finalize keep
 * their events (their staged records are replayed at thread exit). One
 * names itself. Prints "thread <tid> <probes>" for each.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <hmbtrace.h>

#define THREADS 3
#define PAIRS 5000 /* more than one staging array */

static uint32_t r_work, r_step;
static long tids[THREADS];

static void *work(void *arg)
{
	int id = (int)(intptr_t)arg;
	tids[id] = (long)syscall(SYS_gettid);
	if (id == 0) {
		hmb_thread_name("named early");
	}
	hmb_enter(r_work);
	for (int i = 0; i < PAIRS; i++) {
		hmb_enter(r_step);
		hmb_leave(r_step);
	}
	hmb_leave(r_work);
	return NULL;
}

int main(void)
{
	r_work = hmb_region("work");
	r_step = hmb_region("step");
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, work, (void *)(intptr_t)i);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		printf("thread %ld %d\n", tids[i], 2 * PAIRS + 2);
	}
	usleep(10000);
	if (hmb_finalize() != 0) {
		fprintf(stderr, "thread_exit: %s\n", hmb_last_error());
		return 1;
	}
	return 0;
}
