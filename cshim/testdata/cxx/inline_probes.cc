// inline_probes: hmbtrace.h's inline hmb_enter and hmb_leave from C++
// (and, compiled as C, from C), at any optimisation level: a throttled
// region's visits are counted whichever way the probes are reached, the
// inline forms, the library's functions by address, or by name in
// parentheses. Run with HMB_THROTTLE_CALLS=100 and HMB_THROTTLE_TIME=1h;
// prints the enters it made.
#include <stdio.h>

#include <hmbtrace.h>

#define ROUNDS 300000

int main(void)
{
	uint32_t r = hmb_region("inline");
	void (*enter)(uint32_t) = hmb_enter; // the library's function
	unsigned long enters = 0;
	for (int i = 0; i < ROUNDS; i++) {
		hmb_enter(r);
		hmb_leave(r);
		enters++;
	}
	for (int i = 0; i < ROUNDS / 3; i++) {
		enter(r);
		(hmb_leave)(r);
		(hmb_enter)(r);
		hmb_leave(r);
		enters += 2;
	}
	printf("%lu\n", enters);
	return hmb_finalize() != 0;
}
