/* shared.c - a function of a shared library, for autoinst. */
int shared_square(int x);

int shared_square(int x)
{
	return x * x;
}
