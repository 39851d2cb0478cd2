/*
 * regions.c - defines n distinct regions (argv[1]) and enters and leaves
 * each once inside an outer region, then writes the trace and prints
 * "regions <n> ns <time of the loop> hwm_kb <VmHWM after hmb_finalize>
 * before_finalize_kb <VmHWM before it>".
 * The memory a region costs must not grow with the regions before it
 * (issue 17: 10^4 regions took 1.6 GB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hmbtrace.h>

static long hwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f != NULL && fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "VmHWM:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	return kb;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	uint32_t outer = hmb_region("outer");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	hmb_enter(outer);
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "r%ld", i);
		uint32_t r = hmb_region(name);
		if (r == 0) {
			fprintf(stderr, "hmb_region(%s): %s\n", name, hmb_last_error());
			return 1;
		}
		hmb_enter(r);
		hmb_leave(r);
	}
	hmb_leave(outer);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long before = hwm_kb();
	if (hmb_finalize() != 0) {
		fprintf(stderr, "hmb_finalize: %s\n", hmb_last_error());
		return 1;
	}
	long long ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	printf("regions %ld ns %lld hwm_kb %ld before_finalize_kb %ld\n", n, ns, hwm_kb(), before);
	return 0;
}
