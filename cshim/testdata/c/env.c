/*
 * env: the library reads the HMB_* variables of the C environment at
 * hmb_init, also those the program set or removed after it started.
 *   env set NAME      setenv("HMB_NAME", NAME)
 *   env unset         unsetenv("HMB_NAME")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmbtrace.h>

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "set") == 0) {
		setenv("HMB_NAME", argv[2], 1);
	} else if (argc > 1 && strcmp(argv[1], "unset") == 0) {
		unsetenv("HMB_NAME");
	}
	if (hmb_init() != 0) {
		fprintf(stderr, "env: %s\n", hmb_last_error());
		return 1;
	}
	uint32_t r = hmb_region("env");
	hmb_enter(r);
	hmb_leave(r);
	return hmb_finalize() == 0 ? 0 : 1;
}
