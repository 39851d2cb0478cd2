/*
 * forked: a child of fork() inherits the library but not its Go runtime.
 * Its probes do nothing and it writes no trace; the parent's trace has the
 * parent's events only. The child probes enough to fill its staging array.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hmbtrace.h>

int main(void)
{
	uint32_t parent = hmb_region("parent"), child = hmb_region("child");
	hmb_enter(parent);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 10000; i++) {
			hmb_enter(child);
			hmb_leave(child);
		}
		int rc = hmb_init();
		printf("child init %d %s\n", rc, hmb_last_error());
		printf("child finalize %d dropped %llu\n", hmb_finalize(), (unsigned long long)hmb_dropped());
		fflush(stdout);
		return 0;
	}
	int status = 0;
	waitpid(pid, &status, 0);
	hmb_leave(parent);
	printf("parent finalize %d child exit %d\n", hmb_finalize(), WEXITSTATUS(status));
	return 0;
}
