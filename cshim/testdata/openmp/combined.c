/*
 * combined.c - the combined constructs (parallel for with a dynamic
 * schedule, parallel sections), an ordered loop, and the entry points of
 * GCC before 4.9 (GOMP_parallel_start/end), which old objects still call,
 * for the adapter's tests. It prints what it computed.
 */
#include <omp.h>
#include <stdio.h>

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
void GOMP_parallel_end(void);

static int old_calls;

/* old_body is a parallel region's body as GCC before 4.9 outlined it. */
static void old_body(void *data)
{
	int *n = data;
#pragma omp atomic
	*n += 1;
}

int main(void)
{
	long sum = 0, ordered_sum = 0;
	int sections = 0;
	for (int r = 0; r < 2; r++) {
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : sum)
		for (int i = 0; i < 1000; i++) {
			sum += i;
		}
#pragma omp parallel sections reduction(+ : sections)
		{
#pragma omp section
			sections += 1;
#pragma omp section
			sections += 1;
		}
#pragma omp parallel for ordered schedule(static, 1) reduction(+ : ordered_sum)
		for (int i = 0; i < 10; i++) {
#pragma omp ordered
			ordered_sum += i;
		}
		/* The old ABI: the master runs the body itself between start and end. */
		GOMP_parallel_start(old_body, &old_calls, 2);
		old_body(&old_calls);
		GOMP_parallel_end();
	}
	printf("sum %ld sections %d ordered %ld old %d\n", sum, sections, ordered_sum, old_calls);
	return 0;
}
