/* nulname_err: prints the library's last error for nulname.f90. */
#include <stdio.h>

#include <hmbtrace.h>

void print_last_error(void)
{
	const char *e = hmb_last_error();
	printf("error: %s\n", e[0] != 0 ? e : "none");
	fflush(stdout);
}
