/*
 * signal_in_go defines regions (each a call into Go) in a loop while an
 * interval timer fires every 10 us, whose handler probes: handlers then
 * interrupt the calls into Go, and their probes must not call into Go again
 * (shim.h, hmb_in_go). Before, the process aborted: "exitsyscall: syscall
 * frame is no longer valid".
 */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

#include <hmbtrace.h>

static uint32_t in_signal;

static void on_alarm(int sig)
{
	(void)sig;
	hmb_enter(in_signal);
	hmb_leave(in_signal);
}

int main(void)
{
	in_signal = hmb_region("in signal");
	hmb_enter(in_signal); /* the main thread has its location before any handler runs */
	hmb_leave(in_signal);
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	/* SA_ONSTACK, as hmbtrace.h and Go require of a handler that may
	 * interrupt Go code: without it the handler's frame lands on the
	 * goroutine's stack below its end, and the runtime crashed now and
	 * then (a SIGSEGV in asyncPreempt's xRegSave). */
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 10}, {0, 10}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &every, NULL);
	unsigned long sum = 0;
	for (int i = 0; i < 200000; i++) {
		char name[32];
		snprintf(name, sizeof name, "r%d", i % 100);
		sum += hmb_region(name);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("done %lu\n", sum);
	return 0;
}
