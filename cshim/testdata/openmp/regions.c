/*
 * regions.c - two parallel constructs in turn, N times: in the first,
 * thread 1 works 2 ms longer than thread 0, which waits for it in the
 * implicit barrier at the region's end; in the second, thread 0 works 2 ms
 * and has no wait there. The forking thread's regions of one construct
 * must not be named after the other's, though they take turns in the
 * adapter's per-depth slot (cshim/openmp_cost_test.go).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int count = 0;
	for (int i = 0; i < n; i++) {
#pragma omp parallel reduction(+ : count) /* REGION A */
		{
			if (omp_get_thread_num() == 1) {
				usleep(2000);
			}
			count++;
		}
#pragma omp parallel reduction(+ : count) /* REGION B */
		{
			if (omp_get_thread_num() == 0) {
				usleep(2000);
			}
			count++;
		}
	}
	printf("counted %d\n", count);
	return 0;
}
