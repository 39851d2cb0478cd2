/*
 * gothreads.c - telling the Go runtime's threads from the program's.
 *
 * A process-directed signal (SIGALRM of an interval timer, SIGCHLD, ...)
 * may be delivered to any thread that does not block it, also to a thread
 * the library's Go runtime made. A handler that probes (an instrumented
 * function, an explicit hmb_enter) then ran the probe's slow path there,
 * which calls into Go for the thread's location: from a signal handler on
 * a Go thread that is not in a cgo call, a call Go cannot take, and the
 * process died (SIGSEGV in runtime.cgocallback, found with a 10 us
 * ITIMER_REAL under MPI). Those threads never run the program's code, so
 * their probes are dropped, and counted, before anything else is done.
 *
 * The Go runtime (runtime/cgo, linked into this library) makes its threads
 * with pthread_create. This hidden definition takes those calls, and only
 * those: it binds inside the shared library, and the program's own
 * pthread_create calls go to libc. The new thread marks itself, then runs
 * Go's start. Only in libhmbtrace.so (HMB_SHARED_LIBRARY, set by the
 * Makefile): linked statically from libhmbtrace.a, the definition would
 * take the program's calls too, so there the Go threads are not told apart.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "shim.h"

__thread int hmb_go_thread __attribute__((tls_model("initial-exec")));
__thread int hmb_in_go __attribute__((tls_model("initial-exec")));

#ifdef HMB_SHARED_LIBRARY

struct hmb_go_start {
	void *(*fn)(void *);
	void *arg;
};

HMB_NOINST static void *hmb_go_thread_start(void *p)
{
	struct hmb_go_start s = *(struct hmb_go_start *)p;
	free(p);
	hmb_go_thread = 1;
	return s.fn(s.arg);
}

HMB_NOINST HMB_HIDDEN int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	static create_fn *libc_create; /* Go makes threads from several threads at once */
	create_fn *real = __atomic_load_n(&libc_create, __ATOMIC_ACQUIRE);
	if (real == NULL) {
		/* libc's: this one is hidden. (RTLD_NEXT would miss it when the
		   library is a dependency of a preloaded one, behind libc.) */
		real = (create_fn *)dlsym(RTLD_DEFAULT, "pthread_create");
		if (real == NULL) {
			return EAGAIN;
		}
		__atomic_store_n(&libc_create, real, __ATOMIC_RELEASE);
	}
	struct hmb_go_start *s = malloc(sizeof *s);
	if (s == NULL) {
		return EAGAIN;
	}
	s->fn = fn;
	s->arg = arg;
	int rc = real(t, attr, hmb_go_thread_start, s);
	if (rc != 0) {
		free(s);
	}
	return rc;
}
#endif /* HMB_SHARED_LIBRARY */
