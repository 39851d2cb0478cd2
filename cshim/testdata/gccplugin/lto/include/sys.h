/* A header the test includes through -isystem: its functions are a system
 * header's, which the GCC plugin leaves out, also in lto1 at the link. */
extern volatile int sink;

__attribute__((noinline)) static int sysfn(int x)
{
	sink = x;
	return x + 1;
}
