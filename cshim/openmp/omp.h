/*
 * omp.h - the OpenMP adapter's own declarations (not installed).
 *
 * The adapter records OpenMP through hmbtrace's public C API: the GCC
 * half (gomp.c) by interposing libgomp's entry points, the LLVM half
 * (ompt.c) as an OMPT tool. Both name a construct's region by where it is
 * in the source (sites.c) and give each OpenMP thread its location name.
 */
#ifndef HMB_OMP_H
#define HMB_OMP_H

#include <stdint.h>

#define HMB_OMP_NOINST __attribute__((no_instrument_function))
#define HMB_OMP_HIDDEN __attribute__((visibility("hidden")))
/*
 * Thread-local state in the static TLS block, as libhmbtrace's own: no
 * __tls_get_addr call on each access. The library is linked or preloaded,
 * so it is loaded with the program, where that block has room.
 */
#define HMB_OMP_TLS __thread __attribute__((tls_model("initial-exec")))

/* What a region stands for; part of the key of the site cache. */
enum hmb_omp_kind {
	K_PARALLEL = 1,
	K_IMPLICIT_TASK,
	K_IMPLICIT_BARRIER,
	K_BARRIER,
	K_FOR,
	K_SECTIONS,
	K_SINGLE,
	K_CRITICAL,
	K_ACQUIRE,
	K_ATOMIC,
	K_ORDERED,
	K_TASK_CREATE,
	K_TASK,
	K_TASKWAIT,
	K_TASKGROUP,
	K_TASKLOOP,
	K_TASKYIELD,
	K_LOCK,
	K_NEST_LOCK,
	K_WORKSHARE,
	K_MASKED,
	K_SCOPE,
	K_REDUCTION,
	K_DISTRIBUTE,
	K_NKINDS
};

/*
 * hmb_omp_site returns the region of a construct of kind at the code
 * address at (a call's return address, or the outlined function fn of a
 * parallel region and its implicit task): "<kind> <function> @<file>:<line>"
 * or shorter where the debug information has less. Cached: one call into
 * the library's runtime per construct. 0 when the measurement is off.
 */
uint32_t hmb_omp_site(int kind, const void *at, const void *fn) HMB_OMP_NOINST HMB_OMP_HIDDEN;

/*
 * The outlined function (a parallel region's body, a task) the adapter is
 * running on this thread: the construct of a call whose return address is
 * in the adapter, reached by a tail call from that function.
 */
extern HMB_OMP_TLS void (*hmb_omp_running)(void *) HMB_OMP_HIDDEN;

/*
 * hmb_omp_parallel_at returns the return address of the call that started
 * a parallel region the calling thread runs an implicit task of: the
 * innermost for up = 0, the one enclosing that for 1, and so on; NULL
 * past the outermost or when unknown (outside parallel regions, or
 * libgomp, whose outlined functions carry their host's name). sites.c
 * names a construct in Clang's outlined body (.omp_outlined.) after the
 * function that holds the parallel region.
 */
const void *hmb_omp_parallel_at(int up) HMB_OMP_NOINST HMB_OMP_HIDDEN;

/* hmb_omp_name gives the calling thread's location its OpenMP name when it changed. */
void hmb_omp_name(int level, const int *ancestors) HMB_OMP_NOINST HMB_OMP_HIDDEN;

/* The number + 1 of the thread in an outermost team that the thread is named after, else 0 (sites.c). */
extern HMB_OMP_TLS int hmb_omp_named_outer HMB_OMP_HIDDEN;

/*
 * hmb_omp_name_at is hmb_omp_name with its most common case inline: a
 * thread of an outermost team that has its name already, at every region.
 */
HMB_OMP_NOINST static inline void hmb_omp_name_at(int level, const int *ancestors)
{
	if (level == 1 && hmb_omp_named_outer == ancestors[0] + 1) {
		return;
	}
	hmb_omp_name(level, ancestors);
}

/* hmb_omp_getenv_off reports whether HMB_OPENMP turns the adapter off ("0", "off", "false", "no"). */
int hmb_omp_env_off(void) HMB_OMP_NOINST HMB_OMP_HIDDEN;

/* Set once the OMPT tool initialised: the GOMP wrappers then pass through. */
extern int hmb_ompt_active HMB_OMP_HIDDEN;

#endif
