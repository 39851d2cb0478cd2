/*
 * omp.c - an OpenMP program for the adapter's tests: a parallel loop whose
 * iterations cost more on higher thread numbers (load imbalance), a
 * critical section, a reduction, tasks with dependencies, a lock, a
 * dynamic loop, sections, single and a nested parallel region. It prints
 * what it computed, so the test knows the program ran right.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

/* spin does n units of work. Out of line, so that instrumenting after
   inlining (hmbtrace's GCC plugin, Clang's -after-inlining) keeps it a
   region too. */
__attribute__((noinline)) static double spin(long n)
{
	double x = 0;
	for (long i = 0; i < n; i++) {
		x += (double)i * 1e-9;
	}
	return x;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	long unit = argc > 2 ? atol(argv[2]) : 200000;
	long counted = 0;
	double sum = 0;
	int tasks = 0;
	omp_lock_t lock;
	omp_init_lock(&lock);
	for (int r = 0; r < rounds; r++) {
#pragma omp parallel
		{
			int me = omp_get_thread_num();
			int n = omp_get_num_threads();
			/* Imbalance: thread t works (t+1) units per iteration, and
			   sleeps t ms: a loaded machine slows spinning threads
			   unevenly but cannot shorten a sleep, so the lighter
			   thread arrives first at the barrier however busy the
			   cores are. */
#pragma omp for schedule(static)
			for (int i = 0; i < 4 * n; i++) {
				sink = spin(unit * (me + 1));
				struct timespec ts = {0, 1000000L * me};
				nanosleep(&ts, NULL);
			}
#pragma omp critical
			counted++;
#pragma omp for schedule(dynamic, 1) reduction(+ : sum)
			for (int i = 1; i <= 100; i++) {
				sum += i;
			}
			omp_set_lock(&lock);
			counted++;
			omp_unset_lock(&lock);
#pragma omp sections
			{
#pragma omp section
				sink = spin(unit);
#pragma omp section
				sink = spin(unit);
			}
#pragma omp single
			{
				int a = 0, b = 0;
#pragma omp task depend(out : a) shared(a)
				a = 1;
#pragma omp task depend(in : a) depend(out : b) shared(a, b)
				b = a + 1;
#pragma omp task depend(in : b) shared(b, tasks)
				{
#pragma omp atomic
					tasks += b;
				}
#pragma omp taskwait
			}
#pragma omp barrier
#pragma omp parallel num_threads(2)
			{
				sink = spin(unit / 4);
			}
		}
	}
	omp_destroy_lock(&lock);
	printf("counted %ld sum %.0f tasks %d\n", counted, sum, tasks);
	return 0;
}
