/*
 * paths.c - one thread's probes through every path of the C probes: run
 * with HMB_C_PROBE=direct and =staged, the two traces must tell the same
 * story. It exercises region ids past 63 (no inline token), depths past the
 * inline range and past what a small buffer keeps, runs of events within
 * one timer tick (sequence numbers), long gaps (multi-byte deltas), a
 * filtered region, the phase region, messages and collectives between
 * events, a leave of an enclosing region and one with nothing open and a
 * collective's completion naming a region never defined (usage errors), and -finstrument-functions hooks (addresses named at finalize).
 * And the records of MPI: communicators, messages on them (new peers that
 * grow the communication matrix, known ones counted in C), non-blocking
 * sends and receives, a cancelled request, a collective with received
 * bytes, a non-blocking collective.
 *
 *   paths [rounds]    default 200
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hmbtrace.h"

#define NREGIONS 100

static uint32_t regions[NREGIONS];

__attribute__((noinline)) static void recurse(int depth, int max)
{
	hmb_enter(regions[depth % NREGIONS]);
	if (depth < max) {
		recurse(depth + 1, max);
	}
	hmb_leave(regions[depth % NREGIONS]);
}

/* hooked is compiled with -finstrument-functions (see the test). */
void hooked(int n);

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	char name[32];
	for (int i = 0; i < NREGIONS; i++) {
		snprintf(name, sizeof name, "r%02d", i);
		regions[i] = hmb_region(name);
	}
	uint32_t skipped = hmb_region("skipped"); /* excluded by the test's filter file */
	uint32_t step = hmb_region("step");
	uint32_t nap = hmb_region("nap");
	uint32_t allreduce = hmb_region("allreduce");
	uint32_t iallreduce = hmb_region("iallreduce");
	uint32_t wait = hmb_region("wait");
	int32_t world_members[8], odd[4];
	for (int i = 0; i < 8; i++) {
		world_members[i] = i;
	}
	for (int i = 0; i < 4; i++) {
		odd[i] = 2 * i + 1;
	}
	int32_t self_member = 0;
	uint32_t world = hmb_comm_define("MPI_COMM_WORLD", 0, world_members, 8, NULL, 0);
	uint32_t self = hmb_comm_define("MPI_COMM_SELF", 0, &self_member, 1, NULL, 0);
	uint32_t split = hmb_comm_define(NULL, world, odd, 4, NULL, 0);
	uint32_t inter = hmb_comm_define("", split, &self_member, 1, odd, 4);
	if (world != 1 || self != 2 || split != 3 || inter != 4 || hmb_comm_define("bad", 9, odd, 4, NULL, 0) != 0 ||
	    strstr(hmb_last_error(), "parent 9 is not defined") == NULL) {
		fprintf(stderr, "paths: communicators %u %u %u %u, or a bad parent accepted (%s)\n", world, self, split, inter,
			hmb_last_error());
		return 1;
	}
	uint64_t request = 0;
	hmb_phase(step);
	for (int k = 0; k < rounds; k++) {
		hmb_enter(step);
		/* Deep: past a small buffer's kept depths. */
		recurse(0, 30 + k % 20);
		/* Tight: many events within one tick. */
		for (int i = 0; i < 50; i++) {
			hmb_enter(regions[70 + i % 30]);
			hmb_enter(skipped);
			hmb_leave(skipped);
			hmb_leave(regions[70 + i % 30]);
		}
		if (k % 50 == 0) {
			/* A long gap inside a region. */
			hmb_enter(nap);
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
			hmb_leave(nap);
		}
		hmb_send(1, (uint32_t)k, 64);
		hooked(k);
		hmb_recv(1, (uint32_t)k, 64);
		/* A collective with a root (or none), one with a message inside. */
		hmb_enter_collective(allreduce, k % 3 - 1, 8u * (uint64_t)k);
		if (k % 7 == 0) {
			hmb_send(0, 1, 8);
		}
		hmb_leave(allreduce);
		/* Messages on communicators, to peers old and new. */
		hmb_send_comm(k % 13, (uint32_t)k, (uint64_t)k, k % 2 ? world : split);
		hmb_recv_comm(3, 9, 100, split);
		uint64_t sreq = ++request, rreq = ++request;
		hmb_isend(k % 5, 2, 4096, world, sreq);
		hmb_irecv_request(rreq);
		hmb_enter(wait);
		hmb_isend_complete(sreq);
		hmb_irecv(k % 7, 2, 512, world, rreq);
		hmb_leave(wait);
		if (k % 11 == 0) {
			hmb_irecv_request(++request);
			hmb_request_cancelled(request);
		}
		hmb_enter_collective_comm(allreduce, -1, 16, 16 * 8, world);
		hmb_leave(allreduce);
		uint64_t creq = ++request;
		hmb_enter(iallreduce);
		hmb_collective_request(creq);
		hmb_leave(iallreduce);
		hmb_enter(wait);
		hmb_collective_complete(iallreduce, k % 4 - 1, 8, 64, split, creq);
		hmb_leave(wait);
		if (k % 40 == 0) {
			hmb_collective_complete(1u << 30, -1, 8, 8, world, ++request); /* no such region */
			/* Left implicitly by the leave of step. */
			hmb_enter(regions[1]);
			hmb_enter(regions[2]);
		}
		hmb_leave(step);
	}
	hmb_leave(step); /* nothing open */
	return hmb_finalize() == 0 ? 0 : 1;
}
