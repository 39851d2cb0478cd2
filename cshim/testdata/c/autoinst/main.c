/*
 * autoinst: symbol resolution for -finstrument-functions. Static
 * functions, a function of a shared library (shared.c), a constructor that
 * runs before main, a C++ name, and a thread; built as a PIE, as a non-PIE executable
 * and against the static archive by the tests.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

int shared_square(int x);

static int early_calls;

static void __attribute__((noinline)) early_helper(void)
{
	early_calls++;
}

__attribute__((constructor)) static void early(void)
{
	early_helper();
}

/* A C++ name, as g++ would mangle hmb::demo::twice(int). */
int _ZN3hmb4demo5twiceEi(int x);
int __attribute__((noinline)) _ZN3hmb4demo5twiceEi(int x)
{
	return 2 * x;
}

static int __attribute__((noinline)) helper(int x)
{
	return shared_square(x) + _ZN3hmb4demo5twiceEi(1) - 1;
}

static int __attribute__((noinline)) compute(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		s += helper(i);
	}
	return s;
}

static void *thread_main(void *arg)
{
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	*(int *)arg = compute(5);
	return NULL;
}

int main(void)
{
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	int other = 0;
	pthread_t t;
	pthread_create(&t, NULL, thread_main, &other);
	int s = compute(10);
	pthread_join(t, NULL);
	printf("result %d %d %d\n", s, other, early_calls);
	return 0;
}
