/*
 * forked: a child of fork() inherits the library but not its Go runtime.
 * Its probes are dropped and counted, it writes no trace, and its
 * hmb_finalize says so; the parent's trace has the parent's events only. The child probes enough to fill its staging array.
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
		printf("child dropped %llu before finalize\n", (unsigned long long)hmb_dropped());
		int frc = hmb_finalize();
		printf("child finalize %d dropped %llu: %s\n", frc, (unsigned long long)hmb_dropped(), hmb_last_error());
		fflush(stdout);
		return 0;
	}
	int status = 0;
	waitpid(pid, &status, 0);
	hmb_leave(parent);
	printf("parent finalize %d child exit %d\n", hmb_finalize(), WEXITSTATUS(status));
	return 0;
}
