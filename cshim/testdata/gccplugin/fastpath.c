// fastpath: the GCC plugin's inline fast path of throttled functions,
// alone, for callgrind. Small accessors kept out of line (noipa), as
// LULESH's Domain has them, are called from a kernel's loops. With the
// argument "throttled" the program fills a cache of throttled functions
// itself (hmbtrace.h's layout) and points the thread's
// hmbtrace_throttle_v1 at it, so that every call of the accessors and the
// kernel is a hit: what is counted is the code the plugin emitted, not the
// library's throttling, which decides when it likes (under valgrind, late).
// main is not instrumented, so the library never sees the thread.
// It prints the result, the same with and without tracing, and each
// function's calls as the cache counted them ("visits NAME N").
//
//   fastpath ELEMENTS STEPS [throttled]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmbtrace.h"

#define OUT __attribute__((noipa))

struct domain {
	double *x, *fx;
	int *nodelist;
	int n;
};

OUT double *x(struct domain *d, int i) { return &d->x[i]; }
OUT double *fx(struct domain *d, int i) { return &d->fx[i]; }
OUT int *nodelist(struct domain *d, int i) { return &d->nodelist[8 * i]; }

OUT double kernel(struct domain *d)
{
	double s = 0;
	for (int i = 0; i < d->n; i++) {
		const int *nl = nodelist(d, i);
		double f = 0;
		for (int k = 0; k < 8; k++)
			f += *x(d, nl[k]);
		*fx(d, i) = f / 8;
		s += *fx(d, i);
	}
	return s;
}

static struct hmbtrace_throttle_v1 cache;

// entry is fn's entry in the cache, slot (address >> 4) % entries, as the
// library and the plugin index it.
static __attribute__((no_instrument_function)) uint64_t *entry(void *fn)
{
	uint64_t a = (uintptr_t)fn;
	return &cache.func[(a >> 4) % HMB_THROTTLE_ENTRIES].addr;
}

static __attribute__((no_instrument_function)) void throttle(void *fn)
{
	uint64_t *e = entry(fn);
	if (e[0] != 0) {
		fprintf(stderr, "two functions in one slot\n");
		exit(2);
	}
	e[0] = (uintptr_t)fn;
}

__attribute__((no_instrument_function)) int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: fastpath ELEMENTS STEPS [throttled]\n");
		return 2;
	}
	int n = atoi(argv[1]), steps = atoi(argv[2]);
	int throttled = argc > 3 && strcmp(argv[3], "throttled") == 0;
	if (throttled) {
		throttle((void *)x);
		throttle((void *)fx);
		throttle((void *)nodelist);
		throttle((void *)kernel);
		hmbtrace_throttle_v1 = &cache;
	}
	struct domain d = {calloc(n, sizeof(double)), calloc(n, sizeof(double)), calloc(8 * (size_t)n, sizeof(int)), n};
	for (int i = 0; i < n; i++) {
		d.x[i] = i % 7;
		for (int k = 0; k < 8; k++)
			d.nodelist[8 * i + k] = (i + k) % n;
	}
	double s = 0;
	for (int t = 0; t < steps; t++)
		s += kernel(&d);
	printf("result %.6g\n", s);
	if (throttled) {
		hmbtrace_throttle_v1 = NULL;
		printf("visits x %lu\n", (unsigned long)entry((void *)x)[1]);
		printf("visits fx %lu\n", (unsigned long)entry((void *)fx)[1]);
		printf("visits nodelist %lu\n", (unsigned long)entry((void *)nodelist)[1]);
		printf("visits kernel %lu\n", (unsigned long)entry((void *)kernel)[1]);
	}
	return 0;
}
