/*
 * goproxy.c - calls into Go made for C threads that have no Go runtime
 * thread (M) of their own.
 *
 * Why: a C thread's first call into Go takes an "extra M" from the Go
 * runtime's list (runtime.needm). The list holds one spare; the thread that
 * takes it makes the next one only once it runs Go code, which needs a P
 * (GOMAXPROCS of them). Meanwhile every other newcomer waits in
 * runtime.lockextra, in a loop of usleep(1) and sched_yield. An OpenMP team
 * of 1,024 threads whose workers each make their location at their first
 * probe spent seconds there, mostly system time (130,000 nanosleeps and
 * 200,000 sched_yields in strace -c for one first parallel region),
 * against tens of milliseconds plain. Since Go 1.21 the M stays bound to
 * its C thread until the thread exits, so the cost is once per thread, but
 * it is paid by all threads at once when a team starts.
 *
 * What this does: the first HMB_GO_OWN_MIN threads (or twice the CPUs, if
 * more) call Go themselves, as before. Later threads hand their calls to
 * proxy threads (one per CPU, up to HMB_GO_PROXIES), which have their Ms
 * and make the calls in the order they came while each caller sleeps on a
 * semaphore: no M is ever made for the callers. What
 * the calls do does not depend on the thread they run on (the location is
 * named by index; the C probes read no counters, runtime.go), and the caller
 * is blocked meanwhile, so its location still has a single writer.
 * A thread of the proxied kind makes no call at all to register: its
 * location waits for its first replay (runtime.c, hmb_locate), so a team
 * that starts makes none of these calls in its first region.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

#include "shim.h"

/* The threads that call Go themselves, at least; twice the CPUs if more. */
#define HMB_GO_OWN_MIN 16

/* A call made by the proxy: fn(arg), then done posted. */
struct hmb_go_req {
	void (*fn)(void *);
	void *arg;
	sem_t done;
	struct hmb_go_req *next;
};

static pthread_mutex_t proxy_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t proxy_cv = PTHREAD_COND_INITIALIZER;
static struct hmb_go_req *proxy_head, *proxy_tail;
static int proxy_state; /* 0: not started, 1: running, -1: could not start (under proxy_mu) */
static _Atomic unsigned go_own;   /* live threads that call Go themselves */
static _Atomic unsigned go_own_max;

/*
 * proxy_loop makes the calls in the order they came, one at a time, for as
 * long as the process runs. A caller waits for its call, so each thread's
 * calls stay in its order whichever proxy makes them.
 */
static void *proxy_loop(void *unused)
{
	(void)unused;
	hmb_go_thread = 1; /* the library's: it runs no program code, and blocks every signal (proxy_start) */
	for (;;) {
		pthread_mutex_lock(&proxy_mu);
		while (proxy_head == NULL) {
			pthread_cond_wait(&proxy_cv, &proxy_mu);
		}
		struct hmb_go_req *r = proxy_head;
		proxy_head = r->next;
		if (proxy_head == NULL) {
			proxy_tail = NULL;
		}
		pthread_mutex_unlock(&proxy_mu);
		r->fn(r->arg);
		sem_post(&r->done);
	}
	return NULL;
}

/*
 * proxy_start starts the proxy threads once (proxy_mu held): as many as
 * the CPUs, up to HMB_GO_PROXIES, so that a team's calls are made on every
 * CPU (each is an M of its own, no more); 0 if none started.
 */
#define HMB_GO_PROXIES 4
static int proxy_start(void)
{
	if (proxy_state == 0) {
		pthread_attr_t a;
		proxy_state = -1;
		if (pthread_attr_init(&a) == 0) {
			pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
			/* They block every signal, so that the program's handlers run on its own threads. */
			sigset_t all, old;
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			long cpus = sysconf(_SC_NPROCESSORS_ONLN);
			for (long i = 0; i < (cpus < 1 ? 1 : cpus < HMB_GO_PROXIES ? cpus : HMB_GO_PROXIES); i++) {
				pthread_t t;
				if (pthread_create(&t, &a, proxy_loop, NULL) == 0) {
					proxy_state = 1;
				}
			}
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			pthread_attr_destroy(&a);
		}
	}
	return proxy_state == 1;
}

/* proxy_call has the proxy make fn(arg) and waits for it; 0 if there is no proxy. */
static int proxy_call(void (*fn)(void *), void *arg)
{
	struct hmb_go_req r = {.fn = fn, .arg = arg};
	if (sem_init(&r.done, 0, 0) != 0) {
		return 0;
	}
	pthread_mutex_lock(&proxy_mu);
	if (!proxy_start()) {
		pthread_mutex_unlock(&proxy_mu);
		sem_destroy(&r.done);
		return 0;
	}
	if (proxy_tail != NULL) {
		proxy_tail->next = &r;
	} else {
		proxy_head = &r;
	}
	proxy_tail = &r;
	pthread_cond_signal(&proxy_cv);
	pthread_mutex_unlock(&proxy_mu);
	/* As in a call of its own: its signal handlers' probes must not call Go (HMB_GO). */
	hmb_in_go++;
	while (sem_wait(&r.done) != 0 && errno == EINTR) {
	}
	hmb_in_go--;
	sem_destroy(&r.done);
	return 1;
}

/* hmb_go_own: see shim.h. */
HMB_NOINST int hmb_go_own(struct hmb_thread *th)
{
	if (th->go_way == HMB_GO_UNDECIDED) {
		unsigned max = atomic_load_explicit(&go_own_max, memory_order_relaxed);
		if (max == 0) {
			long cpus = sysconf(_SC_NPROCESSORS_ONLN);
			max = cpus > HMB_GO_OWN_MIN / 2 ? (unsigned)(2 * cpus) : HMB_GO_OWN_MIN;
			atomic_store_explicit(&go_own_max, max, memory_order_relaxed);
		}
		if (atomic_fetch_add(&go_own, 1) < max) {
			th->go_way = HMB_GO_OWN;
		} else {
			atomic_fetch_sub(&go_own, 1);
			th->go_way = HMB_GO_PROXIED;
		}
	}
	return th->go_way == HMB_GO_OWN;
}

/* hmb_go_via: see shim.h. */
HMB_NOINST void hmb_go_via(void (*fn)(void *), void *arg)
{
	/* A thread that never probed (hmb_self NULL) and Go's own threads call Go themselves. */
	struct hmb_thread *me = hmb_self;
	if (me == NULL || hmb_go_thread || hmb_go_own(me) || !proxy_call(fn, arg)) {
		fn(arg); /* (no proxy: the thread's own M, slowly) */
	}
}

/* hmb_go_gone: see shim.h. */
HMB_NOINST void hmb_go_gone(struct hmb_thread *th)
{
	if (th->go_way == HMB_GO_OWN) {
		atomic_fetch_sub(&go_own, 1);
	}
	th->go_way = HMB_GO_UNDECIDED;
}

/* hmb_go_forked: see shim.h. */
HMB_NOINST void hmb_go_forked(void)
{
	pthread_mutex_init(&proxy_mu, NULL);
	pthread_cond_init(&proxy_cv, NULL);
	proxy_head = proxy_tail = NULL;
	proxy_state = 0;
	atomic_store(&go_own, 0);
}
