/*
 * deepmpi.c - MPI-like calls deep in a call tree: compute calls down to
 * depth 8 fill the buffer, and at depth 7 "MPI_Send" and "MPI_Recv"
 * (regions of the MPI paradigm) each record a message. Run with a small
 * HMB_BUFFER_SIZE, the depth policy must close compute depths and keep
 * every MPI enter, leave and message (issue 16). argv[1]: steps.
 * A hot accessor ("get") runs inside each step too, for the throttle; the
 * compute calls take microseconds, so they never are.
 */
#include <stdio.h>
#include <stdlib.h>

#include <hmbtrace.h>

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 500;
	uint32_t compute[8];
	for (int d = 0; d < 8; d++) {
		char name[32];
		snprintf(name, sizeof name, "compute %d", d + 1);
		compute[d] = hmb_region(name);
	}
	uint32_t send = hmb_region_paradigm("MPI_Send", HMB_PARADIGM_MPI);
	uint32_t recv = hmb_region_paradigm("MPI_Recv", HMB_PARADIGM_MPI);
	uint32_t get = hmb_region("get");
	if (send == 0 || recv == 0 || hmb_region_paradigm("bad", 7) != 0) {
		fprintf(stderr, "hmb_region_paradigm: %s\n", hmb_last_error());
		return 1;
	}
	volatile double x = 0;
	for (int s = 0; s < steps; s++) {
		for (int d = 0; d < 5; d++) { /* depths 1 to 5 */
			hmb_enter(compute[d]);
		}
		for (int k = 0; k < 20; k++) { /* depths 6 to 8 */
			hmb_enter(compute[5]);
			hmb_enter(compute[6]);
			hmb_enter(compute[7]);
			for (int g = 0; g < 50; g++) {
				hmb_enter(get);
				x += g;
				hmb_leave(get);
			}
			for (int w = 0; w < 2000; w++) { /* microseconds: never throttled */
				x += w;
			}
			hmb_leave(compute[7]);
			hmb_leave(compute[6]);
			hmb_leave(compute[5]);
		}
		hmb_enter(compute[5]); /* depth 6 */
		hmb_enter(send);       /* depth 7 */
		hmb_send(1, (uint32_t)s, 64);
		hmb_leave(send);
		hmb_enter(recv);
		hmb_recv(1, (uint32_t)s, 64);
		hmb_leave(recv);
		hmb_leave(compute[5]);
		for (int d = 4; d >= 0; d--) {
			hmb_leave(compute[d]);
		}
	}
	printf("steps %d\n", steps);
	return hmb_finalize() == 0 ? 0 : 1;
}
