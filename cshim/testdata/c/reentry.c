/*
 * reentry: a signal handler that probes, interrupting the probes of the
 * thread it runs on (a helper thread signals the main thread, which probes,
 * over and over). The probes are not async-signal-safe (hmbtrace.h), but
 * such a program must not corrupt the trace: a handler's probe is staged
 * when it interrupts the direct path, and dropped and counted when it
 * interrupts the slow path. Prints the probes made and hmb_dropped.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <hmbtrace.h>

static uint32_t r_loop, r_work, r_handler;
static volatile sig_atomic_t handled;

static pthread_t prober;
static atomic_int stop;

/* signaller sends SIGUSR1 to the probing thread until it is told to stop. */
static void *signaller(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 20000};
	while (!atomic_load(&stop)) {
		pthread_kill(prober, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	hmb_enter(r_handler);
	hmb_send(1, 9, 8);
	hmb_leave(r_handler);
	handled++;
}

int main(void)
{
	if (hmb_init() != 0) {
		fprintf(stderr, "reentry: %s\n", hmb_last_error());
		return 1;
	}
	r_loop = hmb_region("loop");
	r_work = hmb_region("work");
	r_handler = hmb_region("handler");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART | SA_ONSTACK; /* as hmbtrace.h requires */
	sigaction(SIGUSR1, &sa, NULL);
	prober = pthread_self();
	/* The thread's first probe registers it: not in a handler (not async-signal-safe). */
	hmb_enter(r_loop);
	hmb_leave(r_loop);
	uint64_t n = 2;
	pthread_t helper;
	pthread_create(&helper, NULL, signaller, NULL);
	for (int i = 0; handled < 2000; i++) {
		hmb_enter(r_loop);
		for (int k = 0; k < 100; k++) {
			hmb_enter(r_work);
			if (k == 50) {
				hmb_recv(0, 7, 16);
				n++;
			}
			hmb_leave(r_work);
		}
		hmb_leave(r_loop);
		n += 202;
	}
	atomic_store(&stop, 1);
	pthread_join(helper, NULL);
	uint64_t h = (uint64_t)handled * 3;
	if (hmb_finalize() != 0) {
		fprintf(stderr, "reentry: %s\n", hmb_last_error());
		return 1;
	}
	printf("probes %llu handler %llu dropped %llu\n", (unsigned long long)n, (unsigned long long)h,
	       (unsigned long long)hmb_dropped());
	return 0;
}
