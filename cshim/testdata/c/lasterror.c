/*
 * lasterror: hmb_last_error says the last usage error while the program
 * goes on, and the library's own failures in their order with them.
 */
#include <stdio.h>

#include <hmbtrace.h>

int main(void)
{
	uint32_t a = hmb_region("a"), b = hmb_region("b");
	printf("before [%s]\n", hmb_last_error());
	hmb_enter(a);
	hmb_enter(b);
	hmb_leave(a); /* b is left implicitly */
	printf("implicit [%s]\n", hmb_last_error());
	hmb_region(NULL);
	printf("region [%s]\n", hmb_last_error());
	hmb_leave(b); /* nothing open */
	printf("nothing open [%s]\n", hmb_last_error());
	hmb_enter(a);
	hmb_leave(a);
	printf("fine [%s]\n", hmb_last_error());
	return 0;
}
