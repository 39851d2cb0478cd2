/* ltomain: built with -flto, so the GCC plugin instruments at the link.
 * user is a region, sysfn (a system header's) is not, leaf is called often
 * enough to be throttled, and hidden is no_instrument_function. */
#include <stdio.h>
#include <stdlib.h>
#include <sys.h>

volatile int sink;

__attribute__((noinline)) int leaf(int x)
{
	sink = x;
	return x & 3;
}

__attribute__((noinline)) int user(int x)
{
	sink = x;
	return sysfn(x);
}

__attribute__((noinline, no_instrument_function)) int hidden(int x)
{
	sink = x;
	return 2 * x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int leaves = argc > 2 ? atoi(argv[2]) : 1000;
	long s = 0;
	for (int i = 0; i < n; i++)
		s += user(i);
	for (int i = 0; i < leaves; i++)
		s += leaf(i);
	printf("ltomain: s=%ld h=%d\n", s, hidden(n));
	return 0;
}
