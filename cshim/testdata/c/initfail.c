/*
 * initfail: run with a malformed HMB_* variable. With the argument
 * "explicit" the program calls hmb_init and reports its error; without, the
 * first probe starts the measurement and the library reports on stderr;
 * with "region" hmb_region comes first and starts it, and reports so too.
 * Either way probes are dropped and counted, and nothing crashes.
 */
#include <stdio.h>
#include <string.h>

#include <hmbtrace.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "explicit") == 0) {
		int rc = hmb_init();
		printf("init %d error %s\n", rc, hmb_last_error());
	}
	if (argc > 1 && strcmp(argv[1], "region") == 0) {
		printf("first region %u\n", hmb_region("first"));
	}
	hmb_enter(1);
	hmb_leave(1);
	printf("region %u\n", hmb_region("x"));
	printf("finalize %d\n", hmb_finalize());
	printf("dropped %llu\n", (unsigned long long)hmb_dropped());
	return 0;
}
