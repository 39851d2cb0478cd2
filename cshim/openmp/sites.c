/*
 * sites.c - the regions of OpenMP constructs, named by where they are in
 * the source, and the OpenMP names of threads.
 *
 * A construct is known by the return address of its runtime call (GCC)
 * or the code address OMPT hands over (LLVM): both point into the code of
 * the construct. hmb_code_at turns that into the enclosing function and
 * the source line, which costs a call into the library's Go runtime; the
 * table below keeps the answer, so each construct pays it once. Lookups
 * take no lock: an entry is filled under the mutex and published by its
 * ready flag.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hmbtrace.h"
#include "omp.h"

#define SITES 8192 /* a power of two; constructs beyond it share one region per kind */

struct site {
	const void *at, *fn;
	int kind;
	uint32_t region;
	atomic_int ready;
};

static struct site sites[SITES];
static int nsites;
static pthread_mutex_t sites_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t overflow[K_NKINDS];

static const char *const kind_names[K_NKINDS] = {
	[K_PARALLEL] = "!$omp parallel",
	[K_IMPLICIT_TASK] = "!$omp implicit task",
	[K_IMPLICIT_BARRIER] = "!$omp implicit barrier",
	[K_BARRIER] = "!$omp barrier",
	[K_FOR] = "!$omp for",
	[K_SECTIONS] = "!$omp sections",
	[K_SINGLE] = "!$omp single",
	[K_CRITICAL] = "!$omp critical",
	[K_ACQUIRE] = "!$omp critical wait",
	[K_ATOMIC] = "!$omp atomic",
	[K_ORDERED] = "!$omp ordered",
	[K_TASK_CREATE] = "!$omp create task",
	[K_TASK] = "!$omp task",
	[K_TASKWAIT] = "!$omp taskwait",
	[K_TASKGROUP] = "!$omp taskgroup",
	[K_TASKLOOP] = "!$omp taskloop",
	[K_TASKYIELD] = "!$omp taskyield",
	[K_LOCK] = "omp_set_lock",
	[K_NEST_LOCK] = "omp_set_nest_lock",
	[K_WORKSHARE] = "!$omp workshare",
	[K_MASKED] = "!$omp masked",
	[K_SCOPE] = "!$omp scope",
	[K_REDUCTION] = "!$omp reduction",
	[K_DISTRIBUTE] = "!$omp distribute",
};

HMB_OMP_NOINST static size_t site_hash(int kind, const void *at, const void *fn)
{
	uint64_t h = (uint64_t)(uintptr_t)at * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)(uintptr_t)fn * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)kind << 7;
	return (size_t)(h >> 40) & (SITES - 1);
}

HMB_OMP_NOINST static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s != NULL ? s + 1 : path;
}

/*
 * outlined_body reports whether func names a body Clang outlined from a
 * construct (".omp_outlined.", ".omp_outlined..1", "__omp_outlined__2"): a
 * name that says nothing of where the construct is.
 */
HMB_OMP_NOINST static int outlined_body(const char *func)
{
	return strncmp(func, ".omp_outlined.", 14) == 0 || strncmp(func, "__omp_outlined__", 16) == 0;
}

HMB_OMP_NOINST static int own_code(const void *at);

/*
 * code is what hmb_code_at says of an address: the function's name, the
 * source file and line, in buffers sized to them. hmb_code_at cuts a name
 * to its buffer without a word, and C++ names of templates run to
 * kilobytes, ending in what tells one construct's outlined body from the
 * next of the same function ("[clone ._omp_fn.3]"): cut, they would merge
 * into one region. A construct pays this once.
 */
struct code {
	char *name, *file; /* NULL unless have */
	int line, have;
};

/* Names longer are taken cut: no compiler makes one. */
#define CODE_MAX ((size_t)1 << 20)

HMB_OMP_NOINST static void code_free(struct code *c)
{
	free(c->name);
	free(c->file);
	*c = (struct code){0};
}

/* code_at fills c for addr; c->have is hmb_code_at's result. */
HMB_OMP_NOINST static void code_at(struct code *c, const void *addr)
{
	*c = (struct code){0};
	for (size_t nsize = 512, fsize = 1024;; nsize *= 2, fsize *= 2) {
		c->name = malloc(nsize);
		c->file = malloc(fsize);
		if (c->name == NULL || c->file == NULL) {
			code_free(c); /* out of memory: the construct is named by its kind */
			return;
		}
		c->have = hmb_code_at(addr, c->name, nsize, c->file, fsize, &c->line);
		if (!c->have) {
			code_free(c);
			return;
		}
		/* A name that fills its buffer may have been cut: ask again with twice the room. */
		if ((strlen(c->name) + 1 < nsize && strlen(c->file) + 1 < fsize) || nsize * 2 > CODE_MAX) {
			return;
		}
		code_free(c);
	}
}

/*
 * define_region defines the OpenMP region called by the formatted name,
 * of whatever length, at file and line (NULL and 0 for none).
 */
HMB_OMP_NOINST __attribute__((format(printf, 3, 4))) static uint32_t define_region(const char *file, int line,
										    const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	char *name = NULL;
	int n = vasprintf(&name, format, ap);
	va_end(ap);
	uint32_t r;
	if (n < 0) {
		/* Out of memory: a name cut to the stack's buffer. */
		char cut[512];
		va_start(ap, format);
		vsnprintf(cut, sizeof cut, format, ap);
		va_end(ap);
		r = hmb_region_paradigm_ex(cut, file, line, HMB_PARADIGM_OPENMP);
	} else {
		r = hmb_region_paradigm_ex(name, file, line, HMB_PARADIGM_OPENMP);
		free(name);
	}
	return r;
}

/* site_define names and defines the region (sites_mu held). */
HMB_OMP_NOINST static uint32_t site_define(int kind, const void *at, const void *fn)
{
	struct code c = {0}, o = {0};
	if (at != NULL) {
		/* A return address is the instruction after the call: one back is the call. */
		code_at(&c, (const char *)at - 1);
		/*
		 * A construct in Clang's outlined body, without a line to tell it
		 * by: named after the function that holds the parallel region (the
		 * next enclosing one while that is an outlined body too: a nested
		 * region). An outlined body belongs to one construct, so the name
		 * is the same from wherever it runs, and caching by at stays right.
		 */
		const void *host;
		for (int up = 0; c.have && c.line <= 0 && outlined_body(c.name) && (host = hmb_omp_parallel_at(up)) != NULL;
		     up++) {
			struct code h;
			if (own_code(host)) {
				break;
			}
			code_at(&h, (const char *)host - 1);
			if (!h.have || h.name[0] == 0) {
				code_free(&h);
				break;
			}
			/* The host's name; the construct still has no line. */
			free(c.name);
			c.name = h.name;
			h.name = NULL;
			code_free(&h);
		}
	}
	if (fn != NULL) {
		code_at(&o, fn);
	}
	const char *k = kind_names[kind];
	uint32_t r;
	if (fn != NULL) {
		/* A parallel region and its implicit tasks: the outlined function, and the line of the construct. */
		const char *f = c.line > 0 ? c.file : o.file;
		int l = c.line > 0 ? c.line : o.line;
		if (l > 0 && o.have) {
			r = define_region(f, l, "%s %s @%s:%d", k, o.name, base(f), l);
		} else if (l > 0) {
			r = define_region(f, l, "%s @%s:%d", k, base(f), l);
		} else if (o.have) {
			r = define_region(NULL, 0, "%s %s", k, o.name);
		} else {
			r = define_region(NULL, 0, "%s", k);
		}
	} else if (c.line > 0) {
		r = define_region(c.file, c.line, "%s @%s:%d", k, base(c.file), c.line);
	} else if (c.have) {
		/*
		 * No line: the function alone would merge the constructs it holds
		 * (two parallel regions in main, two loops in one outlined body),
		 * so the call site's offset in its object tells them apart, the
		 * same in every rank's trace.
		 */
		Dl_info in;
		if (at != NULL && dladdr((const char *)at - 1, &in) != 0 && in.dli_fbase != NULL) {
			const char *obj = in.dli_fname != NULL && in.dli_fname[0] != 0 ? base(in.dli_fname) : "exe";
			r = define_region(NULL, 0, "%s %s @%s+0x%lx", k, c.name, obj,
					  (unsigned long)((uintptr_t)at - 1 - (uintptr_t)in.dli_fbase));
		} else {
			r = define_region(NULL, 0, "%s %s", k, c.name);
		}
	} else {
		r = define_region(NULL, 0, "%s", k);
	}
	code_free(&c);
	code_free(&o);
	return r;
}

HMB_OMP_TLS void (*hmb_omp_running)(void *);

/* The code of this library: [own_lo, own_hi) covers its executable segments. */
static uintptr_t own_lo, own_hi;
static pthread_once_t own_once = PTHREAD_ONCE_INIT;

HMB_OMP_NOINST static int own_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	uintptr_t me = (uintptr_t)&hmb_omp_site, lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t a = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
			lo = a < lo ? a : lo;
			hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
		}
	}
	if (me >= lo && me < hi) {
		own_lo = lo;
		own_hi = hi;
		return 1;
	}
	return 0;
}

static atomic_int own_found;

HMB_OMP_NOINST static void own_find(void)
{
	dl_iterate_phdr(own_segment, NULL);
	atomic_store_explicit(&own_found, 1, memory_order_release);
}

/* own_code reports whether at is in this library: after the first call, two compares and no call. */
HMB_OMP_NOINST static int own_code(const void *at)
{
	if (__builtin_expect(!atomic_load_explicit(&own_found, memory_order_acquire), 0)) {
		pthread_once(&own_once, own_find);
	}
	return (uintptr_t)at >= own_lo && (uintptr_t)at < own_hi;
}

/* A thread's most recent constructs: direct-mapped, so neither locks nor atomics. */
#define NEAR 16
struct near {
	const void *at, *fn;
	int kind;
	uint32_t region; /* 0: empty */
};
static HMB_OMP_TLS struct near near[NEAR];

/* site_find is hmb_omp_site past its fast path: every case. */
HMB_OMP_NOINST __attribute__((noinline)) static uint32_t site_find(int kind, const void *at, const void *fn)
{
	/*
	 * A return address in this library: the outlined function the adapter
	 * called ended with a tail call (GCC's jmp GOMP_barrier or jmp
	 * GOMP_parallel for a barrier or a nested parallel region as its last
	 * statement). The construct is in that function, hmb_omp_running:
	 * the call's return address would name the adapter's source.
	 */
	if (at != NULL && own_code(at)) {
		at = NULL;
		if (fn == NULL) {
			fn = (const void *)hmb_omp_running;
		}
	}
	/* The thread's own cache first: a construct in a loop finds its region in a few instructions. */
	struct near *c = &near[((uintptr_t)at >> 3 ^ (uintptr_t)fn >> 4 ^ (uintptr_t)kind) % NEAR];
	if (__builtin_expect(c->at == at && c->fn == fn && c->kind == kind && c->region != 0, 1)) {
		return c->region;
	}
	size_t i = site_hash(kind, at, fn);
	for (size_t n = 0; n < SITES; n++, i = (i + 1) & (SITES - 1)) {
		struct site *s = &sites[i];
		if (!atomic_load_explicit(&s->ready, memory_order_acquire)) {
			break;
		}
		if (s->at == at && s->fn == fn && s->kind == kind) {
			*c = (struct near){at, fn, kind, s->region};
			return s->region;
		}
	}
	pthread_mutex_lock(&sites_mu);
	i = site_hash(kind, at, fn);
	uint32_t r = 0;
	for (size_t n = 0; n < SITES; n++, i = (i + 1) & (SITES - 1)) {
		struct site *s = &sites[i];
		if (!atomic_load_explicit(&s->ready, memory_order_relaxed)) {
			/* Keep a slot free: lookups stop at the first empty one. */
			if (nsites >= SITES * 3 / 4) {
				if (overflow[kind] == 0) {
					overflow[kind] = hmb_region_paradigm(kind_names[kind], HMB_PARADIGM_OPENMP);
				}
				r = overflow[kind];
				break;
			}
			/* 0 too: the measurement is off, or its start failed for good. */
			r = site_define(kind, at, fn);
			s->at = at;
			s->fn = fn;
			s->kind = kind;
			s->region = r;
			nsites++;
			atomic_store_explicit(&s->ready, 1, memory_order_release);
			break;
		}
		if (s->at == at && s->fn == fn && s->kind == kind) {
			r = s->region;
			break;
		}
	}
	pthread_mutex_unlock(&sites_mu);
	return r;
}

/*
 * hmb_omp_site's fast path: a construct the thread's cache has, at an
 * address outside this library, once its code is known. No stack frame:
 * everything else is a call in tail position.
 */
HMB_OMP_NOINST uint32_t hmb_omp_site(int kind, const void *at, const void *fn)
{
	if (__builtin_expect(!atomic_load_explicit(&own_found, memory_order_acquire), 0) ||
	    ((uintptr_t)at >= own_lo && (uintptr_t)at < own_hi)) {
		return site_find(kind, at, fn);
	}
	const struct near *c = &near[((uintptr_t)at >> 3 ^ (uintptr_t)fn >> 4 ^ (uintptr_t)kind) % NEAR];
	if (__builtin_expect(c->at == at && c->fn == fn && c->kind == kind && c->region != 0, 1)) {
		return c->region;
	}
	return site_find(kind, at, fn);
}

/* The name last given to this thread: its nesting level and ancestors' thread numbers. */
#define NAME_LEVELS 16
static HMB_OMP_TLS int named_level;
static HMB_OMP_TLS int named[NAME_LEVELS];
HMB_OMP_TLS int hmb_omp_named_outer;

/*
 * put_int writes v in decimal at p (at most 11 bytes, no NUL) and returns
 * the length: snprintf's frame is deep enough that a new thread's first
 * call of it faults in a page of its stack.
 */
HMB_OMP_NOINST static size_t put_int(char *p, int v)
{
	char d[12];
	size_t n = 0, k = 0;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
	do {
		d[k++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0) {
		p[n++] = '-';
	}
	while (k > 0) {
		p[n++] = d[--k];
	}
	return n;
}

HMB_OMP_NOINST void hmb_omp_name(int level, const int *ancestors)
{
	if (level < 1) {
		return;
	}
	/*
	 * Thread 0 of a nested team is the thread that forked it, which
	 * keeps its name; only a team's other threads are new.
	 */
	if (level > 1 && ancestors[level - 1] == 0) {
		return;
	}
	if (level > NAME_LEVELS) {
		level = NAME_LEVELS;
	}
	int same = level == named_level;
	for (int i = 0; same && i < level; i++) {
		same = named[i] == ancestors[i];
	}
	if (same) {
		hmb_omp_named_outer = level == 1 ? ancestors[0] + 1 : 0;
		return; /* the place it had: every region's common case */
	}
	char name[16 + NAME_LEVELS * 12] = "thread ";
	size_t n = strlen(name);
	for (int i = 0; i < level; i++) {
		if (i > 0) {
			name[n++] = ':';
		}
		n += put_int(name + n, ancestors[i]);
	}
	name[n] = 0;
	hmb_thread_name(name);
	hmb_thread_team(level, ancestors);
	named_level = level;
	memcpy(named, ancestors, (size_t)level * sizeof named[0]);
	hmb_omp_named_outer = level == 1 ? ancestors[0] + 1 : 0;
}

/* env_says_off reports whether variable name is set to one of the false values measure accepts. */
HMB_OMP_NOINST static int env_says_off(const char *name)
{
	const char *v = getenv(name);
	if (v == NULL) {
		return 0;
	}
	return strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0;
}

/*
 * hmb_omp_env_off reports whether the adapter stays out: HMB_OPENMP=0, or
 * HMB_ENABLE=0, where nothing is recorded and an OMPT tool attached for
 * nothing would still cost libomp its callbacks (a parallel region took
 * 1.41x plain's time so, against 1.04x for MPI's wrappers).
 */
HMB_OMP_NOINST int hmb_omp_env_off(void)
{
	return env_says_off("HMB_OPENMP") || env_says_off("HMB_ENABLE");
}
