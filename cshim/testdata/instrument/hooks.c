/* hooks: functions compiled with -finstrument-functions and nothing else,
 * to check that a link traces them, wherever the library is on its line. */
#include <stdio.h>

__attribute__((noinline)) static int work(int x)
{
	return x * x + 1;
}

int main(void)
{
	int s = 0;
	for (int i = 0; i < 100; i++)
		s += work(i);
	printf("hooks: %d\n", s);
	return 0;
}
