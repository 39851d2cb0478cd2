/*
 * probe_bench.c - the cost per event of hmbtrace's C probes, side by side
 * with libotf2's event writer (what Score-P records into), both stamped by
 * the same clock, RDTSC.
 *
 *   make -C cshim bench-c        (Debian: libotf2-trace-dev, gcc)
 *   probe_bench [rounds [iterations]]   defaults: 9 200000
 *
 * Each round times every variant over the same call pattern, two nested
 * regions (4 events per iteration), in an order that rotates from round to
 * round, because the machine is shared and noisy; a variant's figure is its
 * median over the rounds, with the spread, in the thread's CPU time (the
 * time it waited for a CPU is not the probes'). The first round warms up and is
 * not counted.
 *
 *   hmbtrace     hmb_enter/hmb_leave: the direct path (direct.h), which
 *                writes each event into the thread's location in place; its
 *                rare hand-overs to Go (a full bin) run inside the timed loop
 *                and so are included. Under HMB_C_PROBE=staged: the staging
 *                append and the replay in Go every 4096 records
 *   otf2         OTF2_EvtWriter_Enter/Leave with an rdtsc() timestamp, into
 *                OTF2's in-memory chunks (128 MiB per writer by default; the
 *                run stays below, so no flush to disk is timed)
 *   cyg          functions compiled with -finstrument-functions (kernel.c),
 *                minus the same functions compiled without it
 *   rdtsc        four clock reads: the share of the clock in every variant
 *   staging      the staging append alone (what messages take, and every
 *                probe under HMB_C_PROBE=staged between replays)
 *
 *   probe_bench throttled [rounds [iterations]]   (make bench-c runs both)
 *                hmb_enter/hmb_leave of two regions throttled at run time
 *                (HMB_THROTTLE_CALLS=1, HMB_THROTTLE_TIME=1h): hmbtrace.h's
 *                inline forms, which make no call, and the library's
 *                functions called as Fortran calls them; against the same
 *                loop of empty calls, local and into a shared object of
 *                their own (empty_call.c), called as hmb_enter is (with
 *                GCC through the GOT, else the PLT): the floor of any
 *                probe that calls libhmbtrace.so. Also the two functions
 *                of kernel.c, throttled, minus the same calls without
 *                hooks: the program's own hooks (libhmbtrace-hooks.a), or
 *                in probe_bench_sohooks, linked with -lhmbtrace alone, the
 *                library's.
 *
 *   probe_bench pairs [pairs [iterations]]   defaults: 192 5000
 *                hmbtrace against otf2 in alternated slices of `iterations`
 *                iterations (half a millisecond) on one CPU, each after
 *                1000 untimed ones, the order within a pair alternating:
 *                the median of the ratio within a pair, which survives the
 *                machine's changes of speed that a comparison of medians
 *                taken at different moments does not (bench/probeslice.go
 *                compares the Go and the C probe so).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "hmbtrace.h"
#include "shim.h" /* the probes' fast path, for the staging variant */

#define EVENTS_PER_ITERATION 4

/* Whose hooks kernel.c's instrumented functions call. */
#ifdef LIBRARY_HOOKS
#define HOOKS "libhmbtrace.so's"
#else
#define HOOKS "the program's own"
#endif

/* Rounds, and iterations per round and variant: argv[1] and argv[2]. */
static int rounds = 9, iterations = 200000;

/* kernel.c, compiled twice: with and without -finstrument-functions. */
int bench_outer(int x);
int plain_outer(int x);

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * thread_cpu_ns returns the calling thread's CPU time. Each variant is timed
 * with it, as bench/probe.go times the Go probes: on a shared machine the
 * wall time of a run counts the time the thread waited for a CPU.
 */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* timed runs variant f and returns its thread CPU time per event, ns. */
static double timed(uint64_t (*f)(void))
{
	uint64_t c0 = thread_cpu_ns();
	f();
	return (double)(thread_cpu_ns() - c0) / ((double)iterations * EVENTS_PER_ITERATION);
}

static volatile int sink;

/*
 * The staging variant runs the probes' fast path of shim.h against a
 * staging array of the same size that wraps around instead of being
 * replayed: what a probe costs its thread between replays. These
 * definitions are the bench's own; the library's are hidden.
 */
__thread struct hmb_thread *hmb_self;
int hmb_use_tsc = 1;
static struct hmb_thread ring;
static hmb_record ring_buf[4096];

void hmb_slow(uint64_t word, uint64_t ext_time, uint64_t ext_word, int n)
{
	(void)ext_time;
	(void)ext_word;
	(void)n;
	if (hmb_self == NULL) {
		hmb_self = &ring;
	}
	atomic_store(&ring.end, ring_buf + 4096);
	atomic_store(&ring.cur, ring_buf);
	hmb_stage(word);
}

__attribute__((noinline)) static void stage_enter(uint32_t r)
{
	hmb_stage((uint64_t)HMB_KIND_ENTER << HMB_KIND_SHIFT | r);
}

__attribute__((noinline)) static void stage_leave(uint32_t r)
{
	hmb_stage((uint64_t)HMB_KIND_LEAVE << HMB_KIND_SHIFT | r);
}

/* The variants: each runs `iterations` iterations and returns the ticks. */

static uint32_t hmb_outer, hmb_inner;

static uint64_t run_hmbtrace(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		hmb_enter(hmb_outer);
		hmb_enter(hmb_inner);
		hmb_leave(hmb_inner);
		hmb_leave(hmb_outer);
	}
	return rdtsc() - t0;
}

/* The library's hmb_enter and hmb_leave, called: what Fortran and HMB_NO_INLINE_PROBES take. */
static uint64_t run_hmbtrace_call(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		(hmb_enter)(hmb_outer);
		(hmb_enter)(hmb_inner);
		(hmb_leave)(hmb_inner);
		(hmb_leave)(hmb_outer);
	}
	return rdtsc() - t0;
}

static uint64_t run_staging(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		stage_enter(1);
		stage_enter(2);
		stage_leave(2);
		stage_leave(1);
	}
	return rdtsc() - t0;
}

static OTF2_EvtWriter *otf2_writer;
static int otf2_flushes;

static uint64_t run_otf2(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		OTF2_EvtWriter_Enter(otf2_writer, NULL, rdtsc(), 0);
		OTF2_EvtWriter_Enter(otf2_writer, NULL, rdtsc(), 1);
		OTF2_EvtWriter_Leave(otf2_writer, NULL, rdtsc(), 1);
		OTF2_EvtWriter_Leave(otf2_writer, NULL, rdtsc(), 0);
	}
	return rdtsc() - t0;
}

static uint64_t run_cyg(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		sink = bench_outer(i);
	}
	return rdtsc() - t0;
}

static uint64_t run_plain_calls(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		sink = plain_outer(i);
	}
	return rdtsc() - t0;
}

static uint64_t run_rdtsc(void)
{
	uint64_t t0 = rdtsc();
	uint64_t acc = 0;
	for (int i = 0; i < iterations; i++) {
		acc += rdtsc();
		acc += rdtsc();
		acc += rdtsc();
		acc += rdtsc();
	}
	sink = (int)acc;
	return rdtsc() - t0;
}

/* OTF2 plumbing: flush callbacks stamped with rdtsc, serial collectives. */

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller, bool final)
{
	(void)user;
	(void)loc;
	(void)caller;
	if (type == OTF2_FILETYPE_EVENTS && !final) {
		otf2_flushes++;
	}
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
	(void)user;
	(void)type;
	(void)loc;
	return rdtsc();
}

static void check(OTF2_ErrorCode err, const char *what)
{
	if (err != OTF2_SUCCESS) {
		fprintf(stderr, "probe_bench: %s: %s\n", what, OTF2_Error_GetName(err));
		exit(1);
	}
}

static OTF2_Archive *otf2_open(const char *dir)
{
	OTF2_Archive *a = OTF2_Archive_Open(dir, "bench", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
					    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (a == NULL) {
		fprintf(stderr, "probe_bench: OTF2_Archive_Open %s failed\n", dir);
		exit(1);
	}
	static const OTF2_FlushCallbacks flush = {pre_flush, post_flush};
	check(OTF2_Archive_SetFlushCallbacks(a, &flush, NULL), "OTF2_Archive_SetFlushCallbacks");
	check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "OTF2_Archive_SetSerialCollectiveCallbacks");
	check(OTF2_Archive_OpenEvtFiles(a), "OTF2_Archive_OpenEvtFiles");
	otf2_writer = OTF2_Archive_GetEvtWriter(a, 0);
	if (otf2_writer == NULL) {
		fprintf(stderr, "probe_bench: OTF2_Archive_GetEvtWriter failed\n");
		exit(1);
	}
	return a;
}

/*
 * otf2_close writes the definitions Vampir needs, so that the archive is a
 * complete trace, and returns the number of events written.
 */
static uint64_t otf2_close(OTF2_Archive *a, uint64_t ticks_per_second, uint64_t t_start, uint64_t t_end)
{
	uint64_t events = 0;
	check(OTF2_EvtWriter_GetNumberOfEvents(otf2_writer, &events), "OTF2_EvtWriter_GetNumberOfEvents");
	check(OTF2_Archive_CloseEvtWriter(a, otf2_writer), "OTF2_Archive_CloseEvtWriter");
	check(OTF2_Archive_CloseEvtFiles(a), "OTF2_Archive_CloseEvtFiles");
	OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(a);
	check(OTF2_GlobalDefWriter_WriteClockProperties(g, ticks_per_second, t_start, t_end - t_start, OTF2_UNDEFINED_TIMESTAMP),
	      "WriteClockProperties");
	const char *names[] = {"", "outer", "inner", "bench", "node", "thread 0"};
	for (uint32_t i = 0; i < 6; i++) {
		check(OTF2_GlobalDefWriter_WriteString(g, i, names[i]), "WriteString");
	}
	for (uint32_t r = 0; r < 2; r++) {
		check(OTF2_GlobalDefWriter_WriteRegion(g, r, 1 + r, 1 + r, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
						       OTF2_REGION_FLAG_NONE, 0, 0, 0),
		      "WriteRegion");
	}
	check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 3, 4, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "WriteSystemTreeNode");
	check(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 3, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
						      OTF2_UNDEFINED_LOCATION_GROUP),
	      "WriteLocationGroup");
	check(OTF2_GlobalDefWriter_WriteLocation(g, 0, 5, OTF2_LOCATION_TYPE_CPU_THREAD, events, 0), "WriteLocation");
	check(OTF2_Archive_Close(a), "OTF2_Archive_Close");
	return events;
}

/* Statistics over rounds. */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { V_HMB, V_OTF2, V_CYG, V_PLAIN, V_RDTSC, V_STAGING, NVARIANTS };

/* An empty call in place of a probe, for the throttled variant's reference. */
__attribute__((noinline)) static void no_probe(uint32_t r)
{
	__asm__ __volatile__("" : : "r"(r) : "memory");
}

/* empty_call.c, in a shared object of its own, called as hmb_enter is (hmbtrace.h). */
void bench_empty_call(uint32_t r) HMB_PROBE_CALL;

static uint64_t run_library_call(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		bench_empty_call(hmb_outer);
		bench_empty_call(hmb_inner);
		bench_empty_call(hmb_inner);
		bench_empty_call(hmb_outer);
	}
	return rdtsc() - t0;
}

static uint64_t run_no_probe(void)
{
	uint64_t t0 = rdtsc();
	for (int i = 0; i < iterations; i++) {
		no_probe(hmb_outer);
		no_probe(hmb_inner);
		no_probe(hmb_inner);
		no_probe(hmb_outer);
	}
	return rdtsc() - t0;
}

/* throttled_main times probes of throttled regions against empty calls. */
static int throttled_main(void)
{
	if (hmb_init() != 0) {
		fprintf(stderr, "probe_bench: hmb_init: %s\n", hmb_last_error());
		return 1;
	}
	hmb_outer = hmb_region("throttled outer");
	hmb_inner = hmb_region("throttled inner");
	/* The first calls throttle both (HMB_THROTTLE_CALLS=1, HMB_THROTTLE_TIME=1h); the functions' too. */
	hmb_enter(hmb_outer);
	hmb_enter(hmb_inner);
	hmb_leave(hmb_inner);
	hmb_leave(hmb_outer);
	sink = bench_outer(0);
	enum { T_PROBE, T_CALL, T_EMPTY, T_LIBRARY, T_CYG, T_PLAIN, NT };
	static uint64_t (*const run[NT])(void) = {run_hmbtrace,     run_hmbtrace_call, run_no_probe,
						  run_library_call, run_cyg,           run_plain_calls};
	double *ns[NT];
	for (int v = 0; v < NT; v++) {
		ns[v] = malloc((size_t)rounds * sizeof *ns[v]);
		if (ns[v] == NULL) {
			perror("probe_bench: malloc");
			return 1;
		}
	}
	for (int round = 0; round <= rounds; round++) {
		for (int k = 0; k < NT; k++) {
			int v = (k + round) % NT; /* rotated, as in the main mode */
			double x = timed(run[v]);
			if (round > 0) {
				ns[v][round - 1] = x;
			}
		}
	}
	double med[NT];
	for (int v = 0; v < NT; v++) {
		med[v] = median(ns[v], rounds);
		free(ns[v]);
	}
	printf("throttled regions, per event, median of %d rounds of %d events, thread CPU time:\n", rounds,
	       iterations * EVENTS_PER_ITERATION);
	printf("  %-14s %7.2f ns  (hmb_enter/hmb_leave inline from hmbtrace.h: no call)\n", "throttled", med[T_PROBE]);
	printf("  %-14s %7.2f ns  (the library's hmb_enter/hmb_leave called, as from Fortran)\n", "throttled call",
	       med[T_CALL]);
	printf("  %-14s %7.2f ns  (a local function)\n", "empty call", med[T_EMPTY]);
	printf("  %-14s %7.2f ns  (into a shared object, as hmb_enter is called)\n", "library call", med[T_LIBRARY]);
	printf("  %-14s %7.2f ns  (the called probe beyond a library call)\n", "beyond library",
	       med[T_CALL] - med[T_LIBRARY]);
	printf("  %-14s %7.2f ns  (-finstrument-functions hooks of throttled functions, %s: cyg minus plain calls)\n",
	       "throttled cyg", med[T_CYG] - med[T_PLAIN], HOOKS);
	if (hmb_finalize() != 0) {
		fprintf(stderr, "probe_bench: hmb_finalize: %s\n", hmb_last_error());
		return 1;
	}
	return 0;
}

/* Iterations run untimed before each slice of the pairs mode, as bench/cslice/probe_slices.c's. */
#define WARM_ITERATIONS 1000

/* slice runs WARM_ITERATIONS of f untimed, then n timed, and returns the thread CPU time per event. */
static double slice(uint64_t (*f)(void), int n)
{
	iterations = WARM_ITERATIONS;
	f();
	iterations = n;
	return timed(f);
}

/*
 * pairs_main times hmbtrace and otf2 in npairs alternated pairs of slices
 * of n iterations on the CPU it starts on, and prints each side's median
 * and the ratio's median and quartiles (bench/cprobe.go reads them).
 */
static int pairs_main(int npairs, int n)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("probe_bench: sched_setaffinity");
		return 1;
	}
	double *h = malloc((size_t)npairs * sizeof *h), *o = malloc((size_t)npairs * sizeof *o),
	       *q = malloc((size_t)npairs * sizeof *q);
	if (h == NULL || o == NULL || q == NULL) {
		perror("probe_bench: malloc");
		return 1;
	}
	if (hmb_init() != 0) {
		fprintf(stderr, "probe_bench: hmb_init: %s\n", hmb_last_error());
		return 1;
	}
	hmb_outer = hmb_region("outer");
	hmb_inner = hmb_region("inner");
	char dir[] = "/tmp/hmbtrace-bench-otf2-XXXXXX";
	if (mkdtemp(dir) == NULL) {
		perror("probe_bench: mkdtemp");
		return 1;
	}
	char archive[sizeof dir + 16];
	snprintf(archive, sizeof archive, "%s/trace", dir);
	OTF2_Archive *a = otf2_open(archive);
	uint64_t ns0 = monotonic_ns(), tsc0 = rdtsc();
	for (int i = 0; i < npairs; i++) {
		if (i % 2 == 0) {
			h[i] = slice(run_hmbtrace, n);
			o[i] = slice(run_otf2, n);
		} else {
			o[i] = slice(run_otf2, n);
			h[i] = slice(run_hmbtrace, n);
		}
		q[i] = h[i] / o[i];
	}
	uint64_t ns1 = monotonic_ns(), tsc1 = rdtsc();
	otf2_close(a, (uint64_t)((double)(tsc1 - tsc0) / (double)(ns1 - ns0) * 1e9), tsc0, tsc1);
	double hm = median(h, npairs), om = median(o, npairs);
	qsort(q, (size_t)npairs, sizeof *q, cmp_double);
	printf("alternated pairs of slices of %d events on CPU %d, thread CPU time, ns/event:\n", 4 * n, sched_getcpu());
	printf("  %-12s %7.2f ns  (median; slices %.2f..%.2f)\n", "hmbtrace", hm, h[0], h[npairs - 1]);
	printf("  %-12s %7.2f ns  (median; slices %.2f..%.2f)\n", "otf2", om, o[0], o[npairs - 1]);
	printf("hmbtrace/otf2 within a pair: %.3f median of %d pairs (quartiles %.3f..%.3f, min..max %.3f..%.3f)\n",
	       q[npairs / 2], npairs, q[npairs / 4], q[3 * npairs / 4], q[0], q[npairs - 1]);
	printf("otf2 flushes to disk during the pairs %d\n", otf2_flushes);
	free(h);
	free(o);
	free(q);
	if (hmb_finalize() != 0) {
		fprintf(stderr, "probe_bench: hmb_finalize: %s\n", hmb_last_error());
		return 1;
	}
	char cmd[sizeof dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "probe_bench: could not remove %s\n", dir);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "pairs") == 0) {
		int npairs = argc > 2 ? atoi(argv[2]) : 192, n = argc > 3 ? atoi(argv[3]) : 5000;
		if (npairs < 1 || n < 1) {
			fprintf(stderr, "usage: probe_bench pairs [pairs>=1 [iterations>=1]]\n");
			return 2;
		}
		return pairs_main(npairs, n);
	}
	int throttled = argc > 1 && strcmp(argv[1], "throttled") == 0;
	if (throttled) {
		argc--;
		argv++;
	}
	static const char *const names[NVARIANTS] = {"hmbtrace", "otf2", "cyg", "plain calls", "rdtsc", "staging"};
	static uint64_t (*const run[NVARIANTS])(void) = {run_hmbtrace, run_otf2,  run_cyg,
							 run_plain_calls, run_rdtsc, run_staging};
	if (argc > 1) {
		rounds = atoi(argv[1]);
	}
	if (argc > 2) {
		iterations = atoi(argv[2]);
	}
	if (rounds < 1 || iterations < 1) {
		fprintf(stderr, "usage: probe_bench [throttled] [rounds>=1 [iterations>=1]]\n");
		return 2;
	}
	if (throttled) {
		return throttled_main();
	}
	double *ticks[NVARIANTS]; /* ns per event, by variant and round */
	for (int v = 0; v < NVARIANTS; v++) {
		ticks[v] = malloc((size_t)rounds * sizeof *ticks[v]);
		if (ticks[v] == NULL) {
			perror("probe_bench: malloc");
			return 1;
		}
	}

	if (hmb_init() != 0) {
		fprintf(stderr, "probe_bench: hmb_init: %s\n", hmb_last_error());
		return 1;
	}
	hmb_outer = hmb_region("outer");
	hmb_inner = hmb_region("inner");
	char dir[] = "/tmp/hmbtrace-bench-otf2-XXXXXX";
	if (mkdtemp(dir) == NULL) {
		perror("probe_bench: mkdtemp");
		return 1;
	}
	char archive[sizeof dir + 16];
	snprintf(archive, sizeof archive, "%s/trace", dir);
	OTF2_Archive *a = otf2_open(archive);

	/* Round 0 warms up: caches, first touches of the buffers, the lazy binding of symbols. */
	uint64_t ns0 = monotonic_ns(), tsc0 = rdtsc();
	for (int round = 0; round <= rounds; round++) {
		for (int k = 0; k < NVARIANTS; k++) {
			int v = (k + round) % NVARIANTS;
			double ns = timed(run[v]);
			if (round > 0) {
				ticks[v][round - 1] = ns;
			}
		}
	}
	uint64_t ns1 = monotonic_ns(), tsc1 = rdtsc();
	double ghz = (double)(tsc1 - tsc0) / (double)(ns1 - ns0);
	uint64_t otf2_events = otf2_close(a, (uint64_t)(ghz * 1e9), tsc0, tsc1);

	double med[NVARIANTS], lo[NVARIANTS], hi[NVARIANTS];
	for (int v = 0; v < NVARIANTS; v++) {
		med[v] = median(ticks[v], rounds); /* sorts */
		lo[v] = ticks[v][0];
		hi[v] = ticks[v][rounds - 1];
	}
	printf("per event, median of %d rounds of %d events (min..max), thread CPU time, TSC at %.3f GHz:\n", rounds,
	       iterations * EVENTS_PER_ITERATION, ghz);
	for (int v = 0; v < NVARIANTS; v++) {
		printf("  %-12s %7.2f ns  (%.2f..%.2f)\n", names[v], med[v], lo[v], hi[v]);
	}
	printf("  %-12s %7.2f ns  (cyg minus plain calls: the hooks)\n", "cyg probes", med[V_CYG] - med[V_PLAIN]);
	printf("  %-12s %7.2f ns  (hmbtrace minus rdtsc: the work beyond the clock read)\n", "beyond clock",
	       med[V_HMB] - med[V_RDTSC]);
	printf("hmbtrace/otf2 per event: %.2f\n", med[V_HMB] / med[V_OTF2]);
	printf("otf2 events %llu, flushes to disk during the rounds %d\n", (unsigned long long)otf2_events, otf2_flushes);

	if (hmb_finalize() != 0) {
		fprintf(stderr, "probe_bench: hmb_finalize: %s\n", hmb_last_error());
		return 1;
	}
	char cmd[sizeof dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "probe_bench: could not remove %s\n", dir);
	}
	return 0;
}
