/*
 * misuse: every mistake a C program can make with the probes is counted,
 * none crashes. Prints what the API returned; the test reads the usage
 * errors from the trace.
 */
#include <stdio.h>
#include <string.h>

#include <hmbtrace.h>

int main(void)
{
	hmb_enter(5); /* before hmb_init, and a region nobody defined: UnknownRegion */
	hmb_leave(7); /* a leave with nothing open: LeaveNothingOpen */
	uint32_t a = hmb_region("a"), b = hmb_region("b");
	hmb_leave(a); /* LeaveNothingOpen */
	hmb_enter(a);
	hmb_enter(b);
	hmb_leave(a); /* b is left implicitly: LeftImplicitly */
	hmb_enter(a);
	hmb_leave(b); /* b is not open: LeaveNotOpen */
	hmb_leave(a);
	hmb_enter(0); /* UnknownRegion */
	uint32_t none = hmb_region(NULL);
	printf("region(NULL) %u error %s\n", none, hmb_last_error());
	hmb_enter(a); /* left open: OpenAtClose */
	printf("init %d\n", hmb_init());
	printf("finalize %d\n", hmb_finalize());
	hmb_enter(a); /* after finalize: dropped */
	hmb_send(1, 2, 3);
	hmb_leave(a);
	printf("finalize again %d\n", hmb_finalize());
	int rc = hmb_init();
	printf("init after finalize %d error %s\n", rc, hmb_last_error());
	printf("region after finalize %u\n", hmb_region("c"));
	printf("dropped %llu\n", (unsigned long long)hmb_dropped());
	return 0;
}
