/*
 * signal_storm: a signal handler whose probes fill the thread's bins and
 * staging array, which the slow path hands over to Go, while a second
 * signal keeps arriving. Both handlers run on the alternate signal stack
 * (SA_ONSTACK, as hmbtrace.h asks). When the handler's slow path called
 * into Go there, a second signal arriving meanwhile overwrote its frames
 * and most runs died ("morestack on g0"), or hung on malloc's lock
 * (sigstack.c). The main thread probes now and then, replaying what the
 * handlers staged. Prints the probes made and hmb_dropped.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <hmbtrace.h>

enum { HANDLER_PAIRS = 64, HANDLED = 3000 };

static uint32_t r_main, r_work, r_handler;
static volatile sig_atomic_t handled, poked;
static pthread_t prober;
static atomic_int stop;

/* prober_signaller sends SIGUSR1 to the probing thread every 20 us. */
static void *prober_signaller(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 20000};
	while (!atomic_load(&stop)) {
		pthread_kill(prober, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* poker sends SIGUSR2 as often as it can: some arrive inside the first handler's call into Go. */
static void *poker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_kill(prober, SIGUSR2);
		sched_yield();
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	for (int i = 0; i < HANDLER_PAIRS; i++) {
		hmb_enter(r_handler);
		hmb_leave(r_handler);
	}
	handled++;
}

static void on_usr2(int sig)
{
	(void)sig;
	poked++;
}

int main(void)
{
	if (hmb_init() != 0) {
		fprintf(stderr, "signal_storm: %s\n", hmb_last_error());
		return 1;
	}
	r_main = hmb_region("main loop");
	r_work = hmb_region("work");
	r_handler = hmb_region("handler");
	/* The thread's first probe registers it: not in a handler (not async-signal-safe). */
	hmb_enter(r_main);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	prober = pthread_self();
	pthread_t t1, t2;
	pthread_create(&t1, NULL, prober_signaller, NULL);
	pthread_create(&t2, NULL, poker, NULL);
	/* The main thread runs C code, and probes now and then: its probes replay what the handlers staged. */
	uint64_t n = 1;
	for (unsigned long spin = 0; handled < HANDLED; spin++) {
		if (spin % 4096 == 0) {
			hmb_enter(r_work);
			hmb_leave(r_work);
			n += 2;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	hmb_leave(r_main);
	n++;
	uint64_t h = (uint64_t)handled * 2 * HANDLER_PAIRS;
	if (hmb_finalize() != 0) {
		fprintf(stderr, "signal_storm: %s\n", hmb_last_error());
		return 1;
	}
	printf("probes %llu handler %llu dropped %llu poked %d\n", (unsigned long long)n, (unsigned long long)h,
	       (unsigned long long)hmb_dropped(), (int)poked);
	return 0;
}
