/*
 * kernel.c - two nested calls for probe_bench's -finstrument-functions
 * variant: compiled once with -finstrument-functions (bench_outer) and once
 * without, with -DPLAIN (plain_outer), so that the calls' own cost can be
 * taken away.
 */
#ifdef PLAIN
#define OUTER plain_outer
#define INNER plain_inner
#else
#define OUTER bench_outer
#define INNER bench_inner
#endif

int OUTER(int x);

__attribute__((noipa)) static int INNER(int x)
{
	return x + 1;
}

__attribute__((noipa)) int OUTER(int x)
{
	return INNER(x) * 2;
}
