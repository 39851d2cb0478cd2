/*
 * exit_inside: exit called two regions deep, as Fortran's STOP or EXIT in
 * a subroutine does. The trace written at exit leaves both regions then,
 * and counts no usage error: exiting there is no mistake.
 */
#include <stdlib.h>

#include <hmbtrace.h>

static void stop_run(uint32_t r)
{
	hmb_enter(r);
	exit(0);
}

int main(void)
{
	uint32_t work = hmb_region("work"), stop = hmb_region("stop_run");
	hmb_enter(work);
	stop_run(stop);
}
