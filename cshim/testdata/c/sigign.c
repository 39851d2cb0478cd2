/*
 * sigign: run with HMB_SIGNALS=1 by a parent that ignores SIGINT (a
 * background job). The library must leave SIGINT ignored: the program
 * prints "ready", blocks reading stdin while the test sends SIGINT, and
 * then prints what read returned.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hmbtrace.h>

int main(void)
{
	if (hmb_init() != 0) {
		fprintf(stderr, "sigign: %s\n", hmb_last_error());
		return 1;
	}
	uint32_t r = hmb_region("wait");
	hmb_enter(r);
	printf("ready\n");
	fflush(stdout);
	char buf[64];
	ssize_t n = read(0, buf, sizeof buf);
	printf("read %zd %s\n", n, n < 0 ? strerror(errno) : "ok");
	hmb_leave(r);
	return hmb_finalize() == 0 ? 0 : 1;
}
