/*
 * gothread_signal sends SIGUSR1, whose handler probes, to every thread of
 * the process but the main one: the threads of the library's Go runtime,
 * since the program makes none. Their probes must be dropped and counted
 * (gothreads.c), not crash the process; then the main thread probes in the
 * handler too, which is recorded. It prints the signals handled on other
 * threads and hmb_dropped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <hmbtrace.h>

static uint32_t in_signal;
static _Atomic int handled;

static void on_usr1(int sig)
{
	(void)sig;
	hmb_enter(in_signal);
	hmb_leave(in_signal);
	atomic_fetch_add(&handled, 1);
}

int main(void)
{
	uint32_t work = hmb_region("work");
	in_signal = hmb_region("in signal");
	hmb_enter(work);
	struct sigaction sa = {0};
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
	int sent = 0;
	DIR *d = opendir("/proc/self/task");
	if (d == NULL) {
		return 2;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0 && tid != self && syscall(SYS_tgkill, pid, tid, SIGUSR1) == 0) {
			sent++;
		}
	}
	closedir(d);
	/* Wait up to 2 s for the handlers: a thread asleep in a futex wakes for them. */
	for (int i = 0; i < 2000 && atomic_load(&handled) < sent; i++) {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	int others = atomic_load(&handled);
	raise(SIGUSR1); /* on this thread: recorded */
	hmb_leave(work);
	printf("sent %d handled %d dropped %llu\n", sent, others, (unsigned long long)hmb_dropped());
	return hmb_finalize() == 0 || hmb_dropped() > 0 ? 0 : 3;
}
