/*
 * skew: a program built against one version of hmbtrace.h, run with a
 * libhmbtrace.so of another layout of the throttled regions' cache
 * (skew_lib.c) must not start. Built with -DPROBES, its hmb_enter and
 * hmb_leave are hmbtrace.h's inline forms; built with
 * -finstrument-functions and libhmbtrace-hooks.a, work's hooks are the
 * program's own. Prints "started" once main runs.
 */
#include <stdio.h>

#include <hmbtrace.h>

__attribute__((noipa)) static int work(int x)
{
	return x + 1;
}

__attribute__((no_instrument_function)) int main(void)
{
	printf("started\n");
	fflush(stdout);
#ifdef PROBES
	uint32_t r = hmb_region("work");
	hmb_enter(r);
#endif
	int s = work(1);
#ifdef PROBES
	hmb_leave(r);
#endif
	printf("%d\n", s);
	return 0;
}
