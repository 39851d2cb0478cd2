/*
 * openmp_constructs.c - N empty parallel regions, barriers or tasks, for
 * counting what the OpenMP adapter adds in instructions, which a shared
 * machine's load does not change (the guide's OpenMP cost table):
 *
 *     gcc -O2 -g -fopenmp -o c_plain openmp_constructs.c
 *     gcc -O2 -g -fopenmp -o c_traced openmp_constructs.c $(pkg-config --libs hmbtrace-omp)
 *     for n in 1000 3000; do
 *       GODEBUG=asyncpreemptoff=1 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=0 \
 *         valgrind --tool=callgrind --callgrind-out-file=cg.$n ./c_traced WHAT $n
 *     done
 *
 * With clang, -gdwarf-4 (valgrind 3.19 cannot read clang 14's DWARF 5), and
 * KMP_BLOCKTIME=0 makes libomp's part vary less between runs; linked with
 * openmp_nulltool.c instead of the library, it counts libomp's own cost with
 * a tool attached:
 *
 *     clang -O2 -gdwarf-4 -fopenmp -o c_null openmp_constructs.c openmp_nulltool.c
 *
 * WHAT: 0 parallel regions, 1 barriers, 2 tasks (created in a single
 * construct). Per construct: the difference of the two runs' counts
 * (callgrind_annotate, per function) over 2000. GODEBUG=asyncpreemptoff=1
 * keeps Go's preemption signals, which callgrind does not survive, away.
 * A warm-up of each construct comes first, so that sites, locations and
 * levels exist in both runs.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s 0|1|2 N (parallel regions, barriers, tasks)\n", argv[0]);
		return 2;
	}
	int what = atoi(argv[1]);
	int n = atoi(argv[2]);
	volatile int sink = 0;
#pragma omp parallel
	{
#pragma omp barrier
#pragma omp single
		{
#pragma omp task
			sink++;
		}
	}
	if (what == 0) {
		for (int i = 0; i < n; i++) {
#pragma omp parallel
			{
				if (omp_get_thread_num() < 0) { /* keeps the region from being optimised away */
					abort();
				}
			}
		}
	} else if (what == 1) {
#pragma omp parallel
		for (int i = 0; i < n; i++) {
#pragma omp barrier
		}
	} else {
#pragma omp parallel
#pragma omp single
		for (int i = 0; i < n; i++) {
#pragma omp task
			sink++;
		}
	}
	printf("%d\n", sink);
	return 0;
}
