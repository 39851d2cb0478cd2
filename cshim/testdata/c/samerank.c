/*
 * samerank DIR N: records one region, then announces itself with a file in
 * DIR and waits until N processes have, so that N of it run at the same
 * time; the trace is written at exit. Without MPI, its rank is HMB_RANK's
 * or the launcher's.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <hmbtrace.h>

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		return -1;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.') {
			n++;
		}
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: samerank DIR N\n");
		return 2;
	}
	uint32_t r = hmb_region("work");
	hmb_enter(r);
	hmb_leave(r);
	char path[4096];
	snprintf(path, sizeof path, "%s/%ld", argv[1], (long)getpid());
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return 2;
	}
	fclose(f);
	int want = atoi(argv[2]);
	for (int waited = 0; entries(argv[1]) < want; waited++) {
		if (waited > 60000) {
			fprintf(stderr, "samerank: the other processes did not start\n");
			return 2;
		}
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}
