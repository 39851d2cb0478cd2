/*
 * sigign: run with HMB_SIGNALS=1 by a parent that ignores SIGINT (a
 * background job). The library must leave SIGINT ignored: the program
 * prints "ready", blocks reading stdin while the test sends SIGINT, and
 * then prints what read returned. It also prints whether the handler of
 * SIGTERM, which the library does handle, restarts interrupted calls.
 */
#include <errno.h>
#include <signal.h>
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
	struct sigaction term;
	sigaction(SIGTERM, NULL, &term);
	printf("sigterm handled %d restart %d\n", term.sa_handler != SIG_DFL && term.sa_handler != SIG_IGN,
	       (term.sa_flags & SA_RESTART) != 0);
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
