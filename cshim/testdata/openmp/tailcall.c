/*
 * tailcall: parallel regions whose last statement is a barrier or a
 * nested parallel region. GCC ends their outlined functions with a tail
 * call (jmp GOMP_barrier, jmp GOMP_parallel), so the call's return address
 * is in the caller of the outlined function: libgomp, or the adapter's
 * wrapper of the region's body.
 *
 *   tailcall [rounds]   prints "sum <s>"
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

static double a[N];

/* work keeps the compiler from folding the loops away. */
__attribute__((noinline)) static void work(int i)
{
	a[i] += i;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2;
	for (int r = 0; r < rounds; r++) {
#pragma omp parallel
		{
			work(omp_get_thread_num());
#pragma omp barrier
		}
#pragma omp parallel
		{
#pragma omp for schedule(static)
			for (int i = 0; i < N; i++) {
				work(i);
			}
#pragma omp parallel num_threads(1)
			work(omp_get_ancestor_thread_num(1));
		}
	}
	double sum = 0;
	for (int i = 0; i < N; i++) {
		sum += a[i];
	}
	printf("sum %.0f\n", sum);
	return 0;
}
