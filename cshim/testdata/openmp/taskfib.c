/*
 * taskfib.c - explicit tasks for the adapter's tests: a recursive
 * Fibonacci whose every call below the top is a task that waits for its two
 * children (taskwait), many tasks created by one thread in a single
 * construct and run by the team at its barrier, and tasks in a taskgroup.
 * Each task body enters a region of its own ("leaf", "work"), which the
 * trace must show nested in the task. It prints what it computed, how
 * many tasks it created, and how many task records took the direct path.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "hmbtrace.h"

static uint32_t leaf, work;
static long created;

__attribute__((noinline)) static double spin(long n)
{
	volatile double x = 0;
	for (long i = 0; i < n; i++) {
		x += (double)i * 1e-9;
	}
	return x;
}

static long fib(int n)
{
	if (n < 2) {
		hmb_enter(leaf);
		spin(200);
		hmb_leave(leaf);
		return n;
	}
	long a, b;
#pragma omp atomic
	created += 2;
#pragma omp task shared(a)
	a = fib(n - 1);
#pragma omp task shared(b)
	b = fib(n - 2);
#pragma omp taskwait
	return a + b;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 12;
	int many = argc > 2 ? atoi(argv[2]) : 200;
	leaf = hmb_region("leaf");
	work = hmb_region("work");
	long f = 0, ran = 0, grouped = 0;
#pragma omp parallel
	{
#pragma omp single
		f = fib(n);
#pragma omp single
		for (int i = 0; i < many; i++) {
#pragma omp atomic
			created++;
#pragma omp task shared(ran)
			{
				hmb_enter(work);
				spin(20000);
				hmb_leave(work);
#pragma omp atomic
				ran++;
			}
		}
#pragma omp master
#pragma omp taskgroup
		for (int i = 0; i < 20; i++) {
#pragma omp atomic
			created++;
#pragma omp task shared(grouped)
			{
				hmb_enter(work);
				spin(20000);
				hmb_leave(work);
#pragma omp atomic
				grouped++;
			}
		}
	}
	printf("fib %ld many %ld group %ld tasks %ld\n", f, ran, grouped, created);
	/* The task records the team's threads wrote in place (libgomp and libomp reuse them). */
	unsigned long long direct = 0;
#pragma omp parallel reduction(+ : direct)
	direct += hmb_task_direct_records();
	printf("direct task records %llu\n", direct);
	return 0;
}
