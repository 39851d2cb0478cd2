/*
 * sigstack.c - telling a signal handler's calls into Go, and keeping them
 * safe.
 *
 * A handler's probe used to call into Go when its slow path had a full bin
 * or staging array to hand over. hmbtrace.h asks handlers to run on the
 * alternate signal stack (SA_ONSTACK), as Go requires of any handler that
 * may interrupt Go code, and Go gives a C thread that calls it a stack of
 * its own there. Such a call is unsafe twice over:
 *
 *   - The kernel starts a handler at the top of that stack unless the
 *     interrupted code already runs on it, and Go code does not (it runs
 *     on the goroutine's stack). A second signal arriving while Go code
 *     ran for the first handler wrote its frame over the first handler's
 *     frames, among them cgocallback's saved copy of the system stack
 *     pointer, which it restores on return: the thread's next switch to its
 *     system stack landed on a goroutine's stack and the process died
 *     ("morestack on g0", a few runs in a hundred of a handler probing
 *     every 10 us; most runs of testdata/c/signal_storm.c).
 *   - Go, called on a stack outside the bounds it knows for the thread,
 *     reads the thread's bounds with pthread_getattr_np, which allocates
 *     (and reads /proc/self/maps on the main thread): from a handler that
 *     interrupted malloc, the process hung on malloc's lock.
 *
 * So a probe's slow path makes no call into Go on that stack: the record
 * waits in the staging array for the thread's next probe outside a
 * handler, or is dropped and counted (runtime.c, hmb_slow_owned). Any other
 * call into Go made there (hmb_finalize from exit() in a handler, or an
 * hmb_region there) runs with the thread's asynchronous signals blocked,
 * delivered when it returns, below its frames (HMB_GO, shim.h); faults
 * (SIGSEGV, SIGBUS, ...) stay unblocked, since a blocked fault kills the
 * process outright.
 *
 * Telling that stack apart costs a system call (sigaltstack), so
 * hmb_on_signal_stack (shim.h) asks only when the stack pointer is not in
 * the thread's own stack, whose bounds its registration reads. A thread
 * whose alternate signal stack lies inside its own stack (an array in
 * main), and any thread not registered, asks every time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "shim.h"

/* hmb_stack_bounds: see shim.h. */
HMB_NOINST void hmb_stack_bounds(struct hmb_thread *th)
{
	th->stack_lo = 0;
	th->stack_size = 0; /* unknown: HMB_GO asks the kernel each time */
	pthread_attr_t a;
	if (pthread_getattr_np(pthread_self(), &a) != 0) {
		return;
	}
	void *addr;
	size_t size;
	int ok = pthread_attr_getstack(&a, &addr, &size) == 0;
	pthread_attr_destroy(&a);
	if (!ok) {
		return;
	}
	uintptr_t lo = (uintptr_t)addr, hi = lo + size;
	stack_t ss;
	if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE)) {
		uintptr_t alo = (uintptr_t)ss.ss_sp, ahi = alo + ss.ss_size;
		if (alo < hi && lo < ahi) {
			return; /* the stack pointer would not tell the two apart */
		}
	}
	th->stack_lo = lo;
	th->stack_size = size;
}

/* hmb_signal_stack_ask: see shim.h. */
HMB_NOINST int hmb_signal_stack_ask(void)
{
	if (hmb_go_thread) {
		return 0;
	}
	stack_t ss;
	return sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

/* hmb_go_block_signals: see shim.h. */
HMB_NOINST int hmb_go_block_signals(sigset_t *old)
{
	sigset_t async;
	sigfillset(&async);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		sigdelset(&async, faults[i]);
	}
	return pthread_sigmask(SIG_BLOCK, &async, old) == 0;
}
