/*
 * dlopen_late loads libhmbtrace.so (argv[1]) with dlopen into a process
 * that has a second thread already, so that the library cannot register
 * for membarriers as it loads (a process of one thread) and registers when
 * the measurement starts instead; then probes one region 1000 times
 * through dlsym'd functions.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;) {
		pause();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dlopen_late libhmbtrace.so\n");
		return 2;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, idle, NULL) != 0) {
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	int (*init)(void) = (int (*)(void))dlsym(h, "hmb_init");
	uint32_t (*region)(const char *) = (uint32_t (*)(const char *))dlsym(h, "hmb_region");
	void (*enter)(uint32_t) = (void (*)(uint32_t))dlsym(h, "hmb_enter");
	void (*leave)(uint32_t) = (void (*)(uint32_t))dlsym(h, "hmb_leave");
	int (*finalize)(void) = (int (*)(void))dlsym(h, "hmb_finalize");
	if (init == NULL || region == NULL || enter == NULL || leave == NULL || finalize == NULL) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 2;
	}
	if (init() != 0) {
		return 3;
	}
	uint32_t r = region("late");
	for (int i = 0; i < 1000; i++) {
		enter(r);
		leave(r);
	}
	return finalize() == 0 ? 0 : 4;
}
