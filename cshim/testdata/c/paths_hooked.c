/* paths_hooked.c - the part of paths.c compiled with -finstrument-functions. */
static volatile int sink;

__attribute__((noinline)) static int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int middle(int x)
{
	return leaf(x) + leaf(x + 1);
}

void hooked(int n)
{
	for (int i = 0; i < 5; i++) {
		sink = middle(n + i);
	}
}
