// keepregs: functions whose arguments, and results, sit in the registers a
// call may clobber while the GCC plugin's miss path runs: six integer
// arguments, eight double ones, and with AVX four vectors of 256 bits
// (their upper halves too). Compiled with the plugin, the miss path is an
// asm call that GCC sees clobbering no register; run with HMB_THROTTLE=0
// every call misses, so a register the library's stubs did not keep shows
// as a result that differs from the plain build's. It prints one line a
// call.
//
//   keepregs [CALLS]
#include <stdio.h>
#include <stdlib.h>

#define OUT __attribute__((noipa))

OUT long ints(long a, long b, long c, long d, long e, long f)
{
	return a * 3 + b * 5 + c * 7 + d * 11 + e * 13 + f * 17;
}

OUT double doubles(double a, double b, double c, double d, double e, double f, double g, double h)
{
	return a * 3 + b * 5 + c * 7 + d * 11 + e * 13 + f * 17 + g * 19 + h * 23;
}

#if defined(__AVX__)
typedef double v4 __attribute__((vector_size(32)));

OUT v4 vectors(v4 a, v4 b, v4 c, v4 d)
{
	return a * 3 + b * 5 + c * 7 + d * 11;
}
#endif

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	for (int i = 1; i <= n; i++) {
		long l = ints(i, i + 1, i + 2, i + 3, i + 4, i + 5);
		double x = doubles(i / 2.0, i / 3.0, i / 4.0, i / 5.0, i / 6.0, i / 7.0, i / 8.0, i / 9.0);
		printf("%d ints %ld doubles %.17g", i, l, x);
#if defined(__AVX__)
		v4 a = {i, i + 0.5, i + 0.25, i + 0.125}, v = vectors(a, a * 2, a * 3, a * 4);
		printf(" vectors %.17g %.17g %.17g %.17g", v[0], v[1], v[2], v[3]);
#endif
		printf("\n");
	}
	return 0;
}
