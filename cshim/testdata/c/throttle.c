/*
 * throttle: the visits of throttled regions, counted by the probes' caches
 * in C (shim.h), must all reach the profile. Run with HMB_THROTTLE_CALLS=10
 * and HMB_THROTTLE_TIME=1h; compiled with -finstrument-functions (only the
 * functions meant as regions have the hooks).
 *
 *   throttle exact   threads visit throttled regions by hmb_enter and
 *                    through the hooks, with regions and functions that
 *                    share their cache slot taking turns; one thread stays
 *                    under the threshold. Half of the threads exit before
 *                    hmb_finalize, the others after. Then probes after
 *                    hmb_finalize, which are dropped and counted.
 *   throttle race    threads enter a throttled region as fast as they can
 *                    while the main thread calls hmb_finalize, and after.
 *   throttle signal  a timer's signal handler enters a throttled region
 *                    that shares its cache slot with the main loop's, so
 *                    that it interrupts the main thread's probes as they
 *                    count, replace the slot's region, or replay in Go.
 *
 * Prints "thread <tid> <name> <enters>" per thread and region, then
 * "dropped <n>" (hmb_dropped, after every thread was joined).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <hmbtrace.h>

#define NOINST __attribute__((no_instrument_function))
#define THREADS 4
#define CALLS 10 /* HMB_THROTTLE_CALLS */

static uint32_t r_hot, r_twin;

/*
 * Regions through the hooks: hot_func alone in its slot of the function
 * cache, bits 4..13 of its address (main checks it); twin_a and twin_b
 * aligned alike, so that they share theirs. The twins have a section of
 * their own, so that their alignment does not move hot_func.
 */
__attribute__((noipa)) int hot_func(int x)
{
	return x + 1;
}

__attribute__((noipa, aligned(16384), section(".text.twins"))) int twin_a(int x)
{
	return x + 2;
}

__attribute__((noipa, aligned(16384), section(".text.twins"))) int twin_b(int x)
{
	return x + 3;
}

#define SLOT(f) (((uintptr_t)(f) >> 4) % 1024)

static volatile int sink;

struct job {
	int id;
	long tid;
	int rounds;
	_Atomic uint64_t hot;
	uint64_t twin, func, twins;
	atomic_int done;
	pthread_t t;
};

static atomic_int stop;

/* visit enters and leaves region r n times: the first CALLS throttle it. */
NOINST static void visit(uint32_t r, int n)
{
	for (int i = 0; i < n; i++) {
		hmb_enter(r);
		hmb_leave(r);
	}
}

NOINST static void *exact(void *arg)
{
	struct job *j = arg;
	j->tid = (long)syscall(SYS_gettid);
	if (j->id == THREADS - 1) {
		/* Under the threshold here, whatever the other threads did. */
		visit(r_hot, CALLS / 2);
		j->hot = CALLS / 2;
		goto out;
	}
	visit(r_hot, CALLS);
	visit(r_twin, CALLS);
	for (int i = 0; i < CALLS; i++) {
		sink = hot_func(i) + twin_a(i) + twin_b(i);
	}
	j->hot = j->twin = CALLS;
	j->func = j->twins = CALLS;
	for (int i = 0; i < j->rounds; i++) {
		/* hot and twin share a slot of the cache: each takes it from the other. */
		hmb_enter(r_hot);
		hmb_leave(r_hot);
		if (i % 3 == 0) {
			hmb_enter(r_twin);
			hmb_leave(r_twin);
			j->twin++;
		}
		sink = hot_func(i);
		if (i % 100 == 0) {
			sink = twin_a(i) + twin_b(i); /* one slot of the function cache: each replaces the other */
			j->twins++;
		}
	}
	j->hot += j->rounds;
	j->func += j->rounds;
out:
	atomic_store(&j->done, 1);
	if (j->id >= THREADS / 2) {
		while (!atomic_load(&stop)) { /* alive at hmb_finalize */
			usleep(1000);
		}
	}
	return NULL;
}

NOINST static void *race(void *arg)
{
	struct job *j = arg;
	j->tid = (long)syscall(SYS_gettid);
	visit(r_hot, CALLS);
	uint64_t n = CALLS;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		hmb_enter(r_hot); /* throttled: enters alone are fine, and each is one probe */
		n++;
		atomic_store_explicit(&j->hot, n, memory_order_relaxed);
	}
	return NULL;
}

static volatile sig_atomic_t handler_enters;

NOINST static void on_timer(int sig)
{
	(void)sig;
	hmb_enter(r_twin); /* throttled: an enter alone is one visit */
	handler_enters++;
}

/*
 * signal_main: the main loop takes hot and twin in turns (each replaces the
 * other in their slot) while a timer's handler enters twin, on this
 * thread. Prints what it made, as "thread" lines, and hmb_dropped.
 */
NOINST static int signal_main(void)
{
	long tid = (long)syscall(SYS_gettid);
	visit(r_hot, CALLS);
	visit(r_twin, CALLS);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_timer;
	/*
	 * On a stack of its own: the signal may come while the library's Go
	 * code runs on this thread (a replay), on a goroutine's small stack.
	 */
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	static char altstack[64 * 1024];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	if (sigaltstack(&ss, NULL) != 0) {
		perror("throttle: sigaltstack");
		return 1;
	}
	timer_t timer;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN + 2;
	sev._sigev_un._tid = (pid_t)tid;
	if (sigaction(SIGRTMIN + 2, &sa, NULL) != 0 || timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
		perror("throttle: timer");
		return 1;
	}
	struct itimerspec every = {{0, 10000}, {0, 10000}}; /* every 10 µs */
	timer_settime(timer, 0, &every, NULL);
	uint64_t hot = CALLS, twin = CALLS;
	for (int i = 0; i < 3000000; i++) {
		hmb_enter(r_hot);
		hmb_leave(r_hot);
		hot++;
		if (i % 3 == 0) {
			hmb_enter(r_twin);
			hmb_leave(r_twin);
			twin++;
		}
	}
	struct itimerspec off = {{0, 0}, {0, 0}};
	timer_settime(timer, 0, &off, NULL);
	timer_delete(timer);
	if (hmb_finalize() != 0) {
		fprintf(stderr, "throttle: %s\n", hmb_last_error());
		return 1;
	}
	printf("thread %ld hot %llu\n", tid, (unsigned long long)hot);
	printf("thread %ld twin %llu\n", tid, (unsigned long long)(twin + handler_enters));
	printf("handler %d\n", (int)handler_enters);
	printf("dropped %llu\n", (unsigned long long)hmb_dropped());
	return 0;
}

NOINST static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

NOINST static void report(struct job *j)
{
	printf("thread %ld hot %llu\n", j->tid, (unsigned long long)j->hot);
	printf("thread %ld twin %llu\n", j->tid, (unsigned long long)j->twin);
	printf("thread %ld hot_func %llu\n", j->tid, (unsigned long long)j->func);
	printf("thread %ld twin_a %llu\n", j->tid, (unsigned long long)j->twins);
	printf("thread %ld twin_b %llu\n", j->tid, (unsigned long long)j->twins);
}

NOINST int main(int argc, char **argv)
{
	int is_race = argc > 1 && strcmp(argv[1], "race") == 0;
	if (SLOT(twin_a) != SLOT(twin_b) || SLOT(hot_func) == SLOT(twin_a)) {
		fprintf(stderr, "throttle: slots of hot_func %lu, twin_a %lu, twin_b %lu: the test needs the twins alone in one\n",
			(unsigned long)SLOT(hot_func), (unsigned long)SLOT(twin_a), (unsigned long)SLOT(twin_b));
		return 1;
	}
	if (hmb_init() != 0) {
		fprintf(stderr, "throttle: %s\n", hmb_last_error());
		return 1;
	}
	r_hot = hmb_region("hot");
	/* A region in hot's slot of the cache of regions: ids are dense, the slot id % 1024. */
	for (int i = 0; i < 5000 && (r_twin == 0 || r_twin % 1024 != r_hot % 1024); i++) {
		char name[32];
		snprintf(name, sizeof name, "pad %d", i);
		r_twin = hmb_region(name);
	}
	if (r_twin % 1024 != r_hot % 1024) {
		fprintf(stderr, "throttle: no region shares hot's slot (%u, %u)\n", r_hot, r_twin);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "signal") == 0) {
		return signal_main();
	}
	struct job jobs[THREADS];
	memset(jobs, 0, sizeof jobs);
	for (int i = 0; i < THREADS; i++) {
		jobs[i].id = i;
		jobs[i].rounds = 30000 + 1000 * i;
		pthread_create(&jobs[i].t, NULL, is_race ? race : exact, &jobs[i]);
	}
	/* The main thread throttles hot too, and probes it after hmb_finalize. */
	struct job self = {.tid = (long)syscall(SYS_gettid), .hot = CALLS + 500};
	visit(r_hot, CALLS + 500);
	if (is_race) {
		for (int all = 0; !all;) {
			sleep_ms(1);
			all = 1;
			for (int i = 0; i < THREADS; i++) {
				all = all && atomic_load(&jobs[i].hot) > 100000;
			}
		}
	} else {
		/* Half of the threads exit before hmb_finalize. */
		for (int i = 0; i < THREADS / 2; i++) {
			pthread_join(jobs[i].t, NULL);
		}
		/* The others finish their probes, and exit after it. */
		for (int i = THREADS / 2; i < THREADS; i++) {
			while (!atomic_load(&jobs[i].done)) {
				sleep_ms(1);
			}
		}
	}
	if (hmb_finalize() != 0) {
		fprintf(stderr, "throttle: %s\n", hmb_last_error());
		return 1;
	}
	if (is_race) {
		sleep_ms(20); /* probes after hmb_finalize */
	} else {
		/* Probes after hmb_finalize: dropped and counted, throttled or not. */
		for (int i = 0; i < 7; i++) {
			hmb_enter(r_hot);
			hmb_leave(r_hot);
		}
	}
	atomic_store(&stop, 1);
	for (int i = is_race ? 0 : THREADS / 2; i < THREADS; i++) {
		pthread_join(jobs[i].t, NULL);
	}
	for (int i = 0; i < THREADS; i++) {
		report(&jobs[i]);
	}
	report(&self);
	printf("dropped %llu\n", (unsigned long long)hmb_dropped());
	return 0;
}
