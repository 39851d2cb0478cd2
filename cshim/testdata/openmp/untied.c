/*
 * untied.c - untied tasks for the adapter's tests: each enters a region of
 * its own ("part"), creates a child, yields and waits for it with the
 * region open. libomp runs an untied task in parts that return to its
 * scheduler at these points and may resume it on another thread; libgomp
 * runs it as a tied task. It prints how many tasks it created and how many
 * ended on another thread than they began on.
 */
#include <omp.h>
#include <stdio.h>

#include "hmbtrace.h"

static volatile double sink;

static void spin(long n)
{
	double x = 0;
	for (long i = 0; i < n; i++) {
		x += (double)i * 1e-9;
	}
	sink = x;
}

int main(void)
{
	uint32_t part = hmb_region("part");
	int moved = 0, created = 0;
#pragma omp parallel
#pragma omp single
	for (int i = 0; i < 40; i++) {
		created += 2;
#pragma omp task untied shared(moved)
		{
			int t0 = omp_get_thread_num();
			hmb_enter(part);
			spin(100000);
#pragma omp task
			spin(300000);
#pragma omp taskyield
#pragma omp taskwait
			spin(100000);
			hmb_leave(part);
			if (omp_get_thread_num() != t0) {
#pragma omp atomic
				moved++;
			}
		}
	}
	printf("tasks %d moved %d\n", created, moved);
	return 0;
}
