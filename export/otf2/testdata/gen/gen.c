/*
 * gen.c writes the golden OTF2 archives of the Go writer's tests with
 * libotf2 (Debian: libotf2-trace-dev). Usage: gen SCENARIO OUTDIR.
 *
 * The Go writer emits global definitions in a fixed order (clock, strings,
 * system tree nodes, location groups, locations, regions, groups,
 * communicators, metric members, metric classes) with strings numbered in
 * order of first use. This program records definitions the same way and
 * writes them through libotf2 in that order, so that the archives can be
 * compared byte for byte. Each scenario here has a twin in
 * ../../golden_scenarios_test.go making the same calls on the Go API.
 */
#include <otf2/otf2.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNDEF32 0xFFFFFFFFu

static void die(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void check(OTF2_ErrorCode e, const char* what)
{
    if (e != OTF2_SUCCESS) die("%s: %s", what, OTF2_Error_GetDescription(e));
}

static void* xrealloc(void* p, size_t n)
{
    p = realloc(p, n);
    if (!p) die("out of memory");
    return p;
}

/* The deterministic pseudo-random sequence shared with the Go tests. */
static uint64_t lcg = 1;
static uint64_t rnd(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg >> 33;
}

/* ---- strings, numbered in order of first use ---- */
static char**    strs;
static uint32_t  nstrs, capstrs;
static uint32_t* htab; /* open addressing, index+1, 0 = empty */
static uint32_t  hcap;

static uint64_t hash(const char* s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static uint32_t str(const char* s)
{
    if (2 * (nstrs + 1) > hcap) {
        uint32_t ncap = hcap ? 2 * hcap : 1024;
        free(htab);
        htab = calloc(ncap, sizeof *htab);
        if (!htab) die("out of memory");
        hcap = ncap;
        for (uint32_t i = 0; i < nstrs; i++) {
            uint64_t j = hash(strs[i]) & (hcap - 1);
            while (htab[j]) j = (j + 1) & (hcap - 1);
            htab[j] = i + 1;
        }
    }
    uint64_t j = hash(s) & (hcap - 1);
    while (htab[j]) {
        if (strcmp(strs[htab[j] - 1], s) == 0) return htab[j] - 1;
        j = (j + 1) & (hcap - 1);
    }
    if (nstrs == capstrs) {
        capstrs = capstrs ? 2 * capstrs : 1024;
        strs = xrealloc(strs, capstrs * sizeof *strs);
    }
    strs[nstrs] = strdup(s);
    htab[j] = nstrs + 1;
    return nstrs++;
}

/* ---- definitions, recorded in call order per kind ---- */
struct stn { uint32_t name, cls, parent; };
struct lg { uint32_t name, parent; };
struct loc { uint32_t name, group; OTF2_EvtWriter* w; uint64_t events;
             int noffsets; uint64_t ot[8]; int64_t oo[8]; double os[8]; };
struct region { uint32_t name, canon, desc, file, begin, end;
                OTF2_RegionRole role; OTF2_Paradigm par; OTF2_RegionFlag flags; };
struct group { uint32_t name; OTF2_GroupType type; OTF2_Paradigm par;
               OTF2_GroupFlag flags; uint32_t n; uint64_t* members; };
struct comm { uint32_t name, group, parent; int inter; uint32_t group_b; };
struct member { uint32_t name, desc, unit; OTF2_MetricType type; OTF2_MetricMode mode;
                OTF2_Type vtype; OTF2_Base base; int64_t exp; };
struct class { uint8_t n; OTF2_MetricMemberRef m[255]; OTF2_MetricOccurrence occ; OTF2_RecorderKind rec; };

#define VEC(T, name) static T* name; static uint32_t n_##name, cap_##name;
VEC(struct stn, stns)
VEC(struct lg, lgs)
VEC(struct loc, locs)
VEC(struct region, regions)
VEC(struct group, groups)
VEC(struct comm, comms)
VEC(struct member, members)
VEC(struct class, classes)
#define PUSH(name, ...)                                                      \
    do {                                                                     \
        if (n_##name == cap_##name) {                                        \
            cap_##name = cap_##name ? 2 * cap_##name : 16;                   \
            name = xrealloc(name, cap_##name * sizeof *name);                \
        }                                                                    \
        name[n_##name] = (__typeof__(*name)){ __VA_ARGS__ };                 \
        n_##name++;                                                          \
    } while (0)

static OTF2_Archive* ar;
static int have_clock;
static uint64_t clock_tps, clock_off, clock_len;

static uint32_t stn(const char* name, const char* cls, uint32_t parent)
{
    uint32_t n = str(name), c = str(cls);
    PUSH(stns, n, c, parent);
    return n_stns - 1;
}

static uint32_t lg(const char* name, uint32_t parent)
{
    uint32_t n = str(name);
    PUSH(lgs, n, parent);
    return n_lgs - 1;
}

static OTF2_EvtWriter* loc(const char* name, uint32_t group)
{
    uint32_t n = str(name);
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, n_locs);
    if (!w) die("GetEvtWriter %u", n_locs);
    PUSH(locs, .name = n, .group = group, .w = w);
    return w;
}

static uint32_t region(const char* name, const char* canon, const char* desc, const char* file,
                       uint32_t begin, uint32_t end, OTF2_RegionRole role, OTF2_Paradigm par,
                       OTF2_RegionFlag flags)
{
    uint32_t n = str(name);
    uint32_t c = str(canon[0] ? canon : name);
    uint32_t d = str(desc);
    uint32_t f = str(file);
    PUSH(regions, n, c, d, f, begin, end, role, par, flags);
    return n_regions - 1;
}

static uint32_t group(const char* name, OTF2_GroupType type, OTF2_Paradigm par, OTF2_GroupFlag flags,
                      uint32_t n, const uint64_t* members)
{
    uint32_t s = str(name);
    uint64_t* m = malloc((n ? n : 1) * sizeof *m);
    if (!m) die("out of memory");
    memcpy(m, members, n * sizeof *m);
    PUSH(groups, s, type, par, flags, n, m);
    return n_groups - 1;
}

static uint32_t comm(const char* name, uint32_t g, uint32_t parent)
{
    uint32_t s = str(name);
    PUSH(comms, s, g, parent, 0, 0);
    return n_comms - 1;
}

/* An inter-communicator: it shares the references of the communicators. */
static uint32_t inter_comm(const char* name, uint32_t a, uint32_t b, uint32_t common)
{
    uint32_t s = str(name);
    PUSH(comms, .name = s, .group = a, .parent = common, .inter = 1, .group_b = b);
    return n_comms - 1;
}

/* MPI_COMM_SELF as the Go writer's MPICommSelf defines it. */
static uint32_t mpi_comm_self(const char* name)
{
    uint32_t g = group("", OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, NULL);
    return comm(name, g, UNDEF32);
}

/* MPI_COMM_WORLD as the Go writer's MPICommWorld defines it. */
static uint32_t mpi_comm_world(const char* name, uint32_t n, const uint64_t* locations)
{
    uint64_t* ranks = malloc((n ? n : 1) * sizeof *ranks);
    if (!ranks) die("out of memory");
    for (uint32_t i = 0; i < n; i++) ranks[i] = i;
    group("", OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, locations);
    uint32_t g = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, ranks);
    free(ranks);
    return comm(name, g, UNDEF32);
}

static uint32_t member(const char* name, const char* desc, const char* unit, OTF2_MetricType type,
                       OTF2_MetricMode mode, OTF2_Type vtype, OTF2_Base base, int64_t exp)
{
    uint32_t n = str(name), d = str(desc), u = str(unit);
    PUSH(members, n, d, u, type, mode, vtype, base, exp);
    return n_members - 1;
}

static uint32_t metric_class(uint8_t n, const uint32_t* m, OTF2_MetricOccurrence occ, OTF2_RecorderKind rec)
{
    struct class c = { .n = n, .occ = occ, .rec = rec };
    for (int i = 0; i < n; i++) c.m[i] = m[i];
    PUSH(classes, .n = n);
    classes[n_classes - 1] = c;
    return n_classes - 1;
}

static void clock_properties(uint64_t tps, uint64_t off, uint64_t len)
{
    have_clock = 1;
    clock_tps = tps;
    clock_off = off;
    clock_len = len;
}

static void clock_offset(uint32_t l, uint64_t t, int64_t off, double sd)
{
    struct loc* p = &locs[l];
    if (p->noffsets == 8) die("too many clock offsets");
    p->ot[p->noffsets] = t;
    p->oo[p->noffsets] = off;
    p->os[p->noffsets] = sd;
    p->noffsets++;
}

/* ---- archive ---- */
static OTF2_FlushType pre_flush(void* u, OTF2_FileType ft, OTF2_LocationRef l, void* c, bool final)
{
    (void)u; (void)ft; (void)l; (void)c; (void)final;
    return OTF2_FLUSH;
}
static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = NULL };

static void open_archive(const char* dir, uint64_t evt_chunk, uint64_t def_chunk,
                         const char* creator, const char* machine, const char* desc)
{
    ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, evt_chunk, def_chunk,
                           OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar) die("cannot open archive in %s", dir);
    check(OTF2_Archive_SetFlushCallbacks(ar, &flush_callbacks, NULL), "SetFlushCallbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(ar), "SetSerialCollectiveCallbacks");
    check(OTF2_Archive_SetCreator(ar, creator), "SetCreator");
    check(OTF2_Archive_SetMachineName(ar, machine), "SetMachineName");
    check(OTF2_Archive_SetDescription(ar, desc), "SetDescription");
    check(OTF2_Archive_OpenEvtFiles(ar), "OpenEvtFiles");
}

static void close_archive(void)
{
    for (uint32_t i = 0; i < n_locs; i++) {
        check(OTF2_EvtWriter_GetNumberOfEvents(locs[i].w, &locs[i].events), "GetNumberOfEvents");
        check(OTF2_Archive_CloseEvtWriter(ar, locs[i].w), "CloseEvtWriter");
    }
    check(OTF2_Archive_CloseEvtFiles(ar), "CloseEvtFiles");

    check(OTF2_Archive_OpenDefFiles(ar), "OpenDefFiles");
    for (uint32_t i = 0; i < n_locs; i++) {
        OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(ar, i);
        if (!d) die("GetDefWriter %u", i);
        for (int k = 0; k < locs[i].noffsets; k++)
            check(OTF2_DefWriter_WriteClockOffset(d, locs[i].ot[k], locs[i].oo[k], locs[i].os[k]), "ClockOffset");
        check(OTF2_Archive_CloseDefWriter(ar, d), "CloseDefWriter");
    }
    check(OTF2_Archive_CloseDefFiles(ar), "CloseDefFiles");

    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
    if (!g) die("GetGlobalDefWriter");
    if (!have_clock) die("no clock properties");
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, clock_tps, clock_off, clock_len, OTF2_UNDEFINED_TIMESTAMP), "ClockProperties");
    for (uint32_t i = 0; i < nstrs; i++) check(OTF2_GlobalDefWriter_WriteString(g, i, strs[i]), "String");
    for (uint32_t i = 0; i < n_stns; i++)
        check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, i, stns[i].name, stns[i].cls, stns[i].parent), "SystemTreeNode");
    for (uint32_t i = 0; i < n_lgs; i++)
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, i, lgs[i].name, OTF2_LOCATION_GROUP_TYPE_PROCESS, lgs[i].parent, OTF2_UNDEFINED_LOCATION_GROUP), "LocationGroup");
    for (uint32_t i = 0; i < n_locs; i++)
        check(OTF2_GlobalDefWriter_WriteLocation(g, i, locs[i].name, OTF2_LOCATION_TYPE_CPU_THREAD, locs[i].events, locs[i].group), "Location");
    for (uint32_t i = 0; i < n_regions; i++) {
        struct region* r = &regions[i];
        check(OTF2_GlobalDefWriter_WriteRegion(g, i, r->name, r->canon, r->desc, r->role, r->par, r->flags, r->file, r->begin, r->end), "Region");
    }
    for (uint32_t i = 0; i < n_groups; i++) {
        struct group* p = &groups[i];
        check(OTF2_GlobalDefWriter_WriteGroup(g, i, p->name, p->type, p->par, p->flags, p->n, p->members), "Group");
    }
    for (uint32_t i = 0; i < n_comms; i++) {
        struct comm* c = &comms[i];
        if (c->inter)
            check(OTF2_GlobalDefWriter_WriteInterComm(g, i, c->name, c->group, c->group_b, c->parent, OTF2_COMM_FLAG_NONE), "InterComm");
        else
            check(OTF2_GlobalDefWriter_WriteComm(g, i, c->name, c->group, c->parent, OTF2_COMM_FLAG_NONE), "Comm");
    }
    for (uint32_t i = 0; i < n_members; i++) {
        struct member* m = &members[i];
        check(OTF2_GlobalDefWriter_WriteMetricMember(g, i, m->name, m->desc, m->type, m->mode, m->vtype, m->base, m->exp, m->unit), "MetricMember");
    }
    for (uint32_t i = 0; i < n_classes; i++)
        check(OTF2_GlobalDefWriter_WriteMetricClass(g, i, classes[i].n, classes[i].m, classes[i].occ, classes[i].rec), "MetricClass");
    check(OTF2_Archive_Close(ar), "Archive_Close");
}

#define ENTER(w, t, r) check(OTF2_EvtWriter_Enter(w, NULL, t, r), "Enter")
#define LEAVE(w, t, r) check(OTF2_EvtWriter_Leave(w, NULL, t, r), "Leave")

static const char* creator = "hmbtrace otf2 golden";

/* single: one location, 12 events, two of them at the same time. */
static void single(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "testhost", "one location, 12 events");
    uint32_t node = stn("localhost", "machine", UNDEF32);
    uint32_t proc = lg("Process 0", node);
    OTF2_EvtWriter* w = loc("Master thread", proc);
    uint32_t rmain = region("main", "", "", "main.c", 10, 60, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rinit = region("init", "", "", "main.c", 12, 20, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rcomp = region("compute", "_Z7computev", "the solver", "compute.c", 5, 40, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rkern = region("kernel", "", "", "compute.c", 42, 50, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER, 0);
    uint32_t rfin = region("finalize", "", "", "main.c", 22, 30, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint64_t t = 1000000001706ULL;
    ENTER(w, t, rmain);
    ENTER(w, t += 701, rinit);
    LEAVE(w, t += 350, rinit);
    ENTER(w, t += 12, rcomp);
    ENTER(w, t += 40, rkern);
    LEAVE(w, t += 900, rkern);
    ENTER(w, t, rkern);
    LEAVE(w, t += 870, rkern);
    LEAVE(w, t += 5, rcomp);
    ENTER(w, t += 3, rfin);
    LEAVE(w, t += 250, rfin);
    LEAVE(w, t += 1, rmain);
    clock_properties(1000000000, 1000000000000ULL, t - 1000000000000ULL + 1);
    close_archive();
}

/* locations: two processes on two nodes, three threads writing in turn and
 * one without events; times start at 0 (libotf2 repeats the TIMESTAMP of
 * every event at time 0); clock offsets in local definitions. */
static void locations(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "", "");
    uint32_t root = stn("cluster", "machine", UNDEF32);
    uint32_t n0 = stn("node0", "node", root);
    uint32_t n1 = stn("node1", "node", root);
    uint32_t p0 = lg("Process 0", n0);
    uint32_t p1 = lg("Process 1", n1);
    OTF2_EvtWriter* w[3];
    w[0] = loc("Master thread", p0);
    w[1] = loc("Pthread 1", p0);
    w[2] = loc("Master thread", p1);
    loc("Idle thread", p1);
    uint32_t rmain = region("main", "", "", "main.c", 1, 99, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rpar = region("!$omp parallel @main.c:20", "", "", "main.c", 20, 30, OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP, 0);
    uint32_t rloop = region("loop", "", "", "main.c", 21, 29, OTF2_REGION_ROLE_LOOP, OTF2_PARADIGM_USER, OTF2_REGION_FLAG_DYNAMIC);
    uint32_t rcreate = region("pthread_create", "", "", "", 0, 0, OTF2_REGION_ROLE_THREAD_CREATE, OTF2_PARADIGM_PTHREAD, 0);
    uint64_t t[3] = { 0, 0, 0 };
    lcg = 7;
    for (int l = 0; l < 3; l++) ENTER(w[l], 0, rmain);
    ENTER(w[0], 0, rcreate);
    LEAVE(w[0], 0, rcreate);
    for (int i = 0; i < 20; i++) {
        for (int l = 0; l < 3; l++) {
            ENTER(w[l], t[l] += rnd() % 4, rpar);
            ENTER(w[l], t[l] += rnd() % 4, rloop);
            LEAVE(w[l], t[l] += rnd() % 4, rloop);
            LEAVE(w[l], t[l] += rnd() % 4, rpar);
        }
    }
    uint64_t end = 0;
    for (int l = 0; l < 3; l++) {
        LEAVE(w[l], t[l] += 1, rmain);
        if (t[l] > end) end = t[l];
    }
    clock_offset(0, 0, 0, 0.0);
    clock_offset(2, 0, -12345, 1.5);
    clock_offset(2, 5000, 300, 0.25);
    clock_properties(1000000000, 0, end + 1);
    close_archive();
}

/* metrics: synchronous and asynchronous metric classes of all three value
 * types, and a 30-member class whose records need the long length form. */
static void metrics(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "testhost", "metrics");
    uint32_t node = stn("localhost", "machine", UNDEF32);
    uint32_t proc = lg("Process 0", node);
    OTF2_EvtWriter* w = loc("Master thread", proc);
    uint32_t rmain = region("main", "", "", "", 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rwork = region("work", "", "", "", 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t cyc = member("PAPI_TOT_CYC", "Total cycles", "#", OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0);
    uint32_t ins = member("PAPI_TOT_INS", "Instructions completed", "#", OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0);
    uint32_t temp = member("temperature", "", "C", OTF2_METRIC_TYPE_USER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE, OTF2_BASE_DECIMAL, -3);
    uint32_t bal = member("balance", "signed", "B", OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_RELATIVE_POINT, OTF2_TYPE_INT64, OTF2_BASE_BINARY, 20);
    uint32_t m2[2] = { cyc, ins };
    uint32_t c0 = metric_class(2, m2, OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU);
    m2[0] = temp;
    m2[1] = bal;
    uint32_t c1 = metric_class(2, m2, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
    uint32_t m30[30];
    char name[32];
    for (int i = 0; i < 30; i++) {
        snprintf(name, sizeof name, "counter_%d", i);
        m30[i] = member(name, "", "#", OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0);
    }
    uint32_t c2 = metric_class(30, m30, OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU);

    OTF2_Type t2u[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_Type t2a[2] = { OTF2_TYPE_DOUBLE, OTF2_TYPE_INT64 };
    OTF2_Type t30[30];
    for (int i = 0; i < 30; i++) t30[i] = OTF2_TYPE_UINT64;
    OTF2_MetricValue v[30];
    uint64_t t = 5000, cycles = 1000, instr = 700;
    lcg = 3;
    v[0].unsigned_int = cycles;
    v[1].unsigned_int = instr;
    check(OTF2_EvtWriter_Metric(w, NULL, t, c0, 2, t2u, v), "Metric");
    ENTER(w, t, rmain);
    for (int i = 0; i < 10; i++) {
        t += 1 + rnd() % 100;
        cycles += rnd() % 100000;
        instr += rnd() % 100000;
        v[0].unsigned_int = cycles;
        v[1].unsigned_int = instr;
        check(OTF2_EvtWriter_Metric(w, NULL, t, c0, 2, t2u, v), "Metric");
        ENTER(w, t, rwork);
        if (i % 3 == 0) {
            v[0].floating_point = 21.5 + 0.25 * i;
            v[1].signed_int = (int64_t)(rnd() % 2000) - 1000;
            check(OTF2_EvtWriter_Metric(w, NULL, t + 1, c1, 2, t2a, v), "Metric");
        }
        if (i % 4 == 1) {
            for (int k = 0; k < 30; k++) {
                switch (k % 3) {
                case 0: v[k].unsigned_int = 0; break;
                case 1: v[k].unsigned_int = UINT64_MAX; break;
                default: v[k].unsigned_int = rnd() << (k % 31); break;
                }
            }
            check(OTF2_EvtWriter_Metric(w, NULL, t + 1, c2, 30, t30, v), "Metric");
        }
        t += 2 + rnd() % 1000;
        cycles += rnd() % 100000;
        instr += rnd() % 100000;
        v[0].unsigned_int = cycles;
        v[1].unsigned_int = instr;
        check(OTF2_EvtWriter_Metric(w, NULL, t, c0, 2, t2u, v), "Metric");
        LEAVE(w, t, rwork);
    }
    LEAVE(w, t + 10, rmain);
    clock_properties(1000000000, 5000, t + 10 - 5000 + 1);
    close_archive();
}

/* mpi: three ranks sending in a ring on MPI_COMM_WORLD and on a derived
 * communicator of the even ranks. */
static void mpi(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "cluster", "MPI ring");
    uint32_t root = stn("cluster", "machine", UNDEF32);
    uint32_t node = stn("node0", "node", root);
    OTF2_EvtWriter* w[3];
    uint64_t ranks[3];
    char name[32];
    for (int r = 0; r < 3; r++) {
        snprintf(name, sizeof name, "MPI Rank %d", r);
        uint32_t p = lg(name, node);
        w[r] = loc("Master thread", p);
        ranks[r] = r;
    }
    uint32_t rmain = region("main", "", "", "ring.c", 1, 50, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rsend = region("MPI_Send", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t rrecv = region("MPI_Recv", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t rbar = region("MPI_Barrier", "", "", "", 0, 0, OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_MPI, 0);
    uint32_t world = mpi_comm_world("MPI_COMM_WORLD", 3, ranks);
    uint64_t even_members[2] = { 0, 2 };
    uint32_t geven = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, even_members);
    uint32_t even = comm("even ranks", geven, world);
    uint64_t base = 1000;
    for (int r = 0; r < 3; r++) {
        uint64_t t = base + 10 * r;
        ENTER(w[r], t, rmain);
        ENTER(w[r], t += 5, rsend);
        check(OTF2_EvtWriter_MpiSend(w[r], NULL, t += 1, (r + 1) % 3, world, 42 + r, 1024 * (r + 1)), "MpiSend");
        LEAVE(w[r], t += 2, rsend);
        ENTER(w[r], t += 1, rrecv);
        check(OTF2_EvtWriter_MpiRecv(w[r], NULL, t += 100, (r + 2) % 3, world, 42 + (r + 2) % 3, 1024 * ((r + 2) % 3 + 1)), "MpiRecv");
        LEAVE(w[r], t += 1, rrecv);
        if (r == 0) {
            ENTER(w[r], t += 1, rsend);
            check(OTF2_EvtWriter_MpiSend(w[r], NULL, t += 1, 1, even, 7, 8), "MpiSend");
            LEAVE(w[r], t += 1, rsend);
        }
        if (r == 2) {
            ENTER(w[r], t += 1, rrecv);
            check(OTF2_EvtWriter_MpiRecv(w[r], NULL, t += 50, 0, even, 7, 8), "MpiRecv");
            LEAVE(w[r], t += 1, rrecv);
        }
        ENTER(w[r], 1400, rbar);
        LEAVE(w[r], 1500 + r, rbar);
        LEAVE(w[r], 1510 + r, rmain);
    }
    clock_offset(1, 1000, 25, 0.5);
    clock_offset(2, 1000, -40, 0.5);
    clock_properties(1000000, 1000, 513);
    close_archive();
}

/* mpinb: four ranks with MPI_COMM_WORLD, MPI_COMM_SELF and a derived
 * communicator per half, non-blocking sends and receives, a cancelled request, blocking and
 * non-blocking collectives (scenarioMPINonBlocking in scenarios_test.go). */
static void mpinb(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "cluster", "MPI requests and collectives");
    uint32_t root = stn("cluster", "machine", UNDEF32);
    uint32_t node = stn("node0", "node", root);
    OTF2_EvtWriter* w[4];
    uint64_t ranks[4];
    char name[32];
    for (int r = 0; r < 4; r++) {
        snprintf(name, sizeof name, "MPI Rank %d", r);
        uint32_t p = lg(name, node);
        w[r] = loc("Master thread", p);
        ranks[r] = r;
    }
    uint32_t rmain = region("main", "", "", "nb.c", 1, 80, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t risend = region("MPI_Isend", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t rirecv = region("MPI_Irecv", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t rwait = region("MPI_Waitall", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t rallred = region("MPI_Allreduce", "", "", "", 0, 0, OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI, 0);
    uint32_t rbcast = region("MPI_Bcast", "", "", "", 0, 0, OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_PARADIGM_MPI, 0);
    uint32_t riallred = region("MPI_Iallreduce", "", "", "", 0, 0, OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI, 0);
    uint32_t rwait1 = region("MPI_Wait", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t world = mpi_comm_world("MPI_COMM_WORLD", 4, ranks);
    mpi_comm_self("MPI_COMM_SELF");
    uint64_t low_members[2] = { 0, 1 }, high_members[2] = { 2, 3 };
    uint32_t glow = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, low_members);
    uint32_t ghigh = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, high_members);
    uint32_t low = comm("", glow, world);
    uint32_t high = comm("", ghigh, world);
    uint32_t comms_of[4] = { low, low, high, high };
    for (uint32_t r = 0; r < 4; r++) {
        uint64_t t = 1000 + 10 * r;
        uint32_t peer = (r ^ 1) & 1;
        ENTER(w[r], t, rmain);
        ENTER(w[r], t += 5, rirecv);
        check(OTF2_EvtWriter_MpiIrecvRequest(w[r], NULL, t += 1, 100 + r), "MpiIrecvRequest");
        LEAVE(w[r], t += 1, rirecv);
        ENTER(w[r], t += 1, risend);
        check(OTF2_EvtWriter_MpiIsend(w[r], NULL, t += 1, peer, comms_of[r], 5, 64, 200 + r), "MpiIsend");
        LEAVE(w[r], t += 1, risend);
        ENTER(w[r], t += 1, rwait);
        check(OTF2_EvtWriter_MpiIsendComplete(w[r], NULL, t += 20, 200 + r), "MpiIsendComplete");
        check(OTF2_EvtWriter_MpiIrecv(w[r], NULL, t += 1, peer, comms_of[r], 5, 64, 100 + r), "MpiIrecv");
        LEAVE(w[r], t += 1, rwait);
        if (r == 3) {
            check(OTF2_EvtWriter_MpiIrecvRequest(w[r], NULL, t += 1, 300), "MpiIrecvRequest");
            check(OTF2_EvtWriter_MpiRequestTest(w[r], NULL, t += 1, 300), "MpiRequestTest");
            check(OTF2_EvtWriter_MpiRequestCancelled(w[r], NULL, t += 1, 300), "MpiRequestCancelled");
        }
        ENTER(w[r], 1300, rallred);
        check(OTF2_EvtWriter_MpiCollectiveBegin(w[r], NULL, 1300), "MpiCollectiveBegin");
        check(OTF2_EvtWriter_MpiCollectiveEnd(w[r], NULL, 1350 + r, OTF2_COLLECTIVE_OP_ALLREDUCE, world, OTF2_UNDEFINED_UINT32, 8, 8), "MpiCollectiveEnd");
        LEAVE(w[r], 1351 + r, rallred);
        ENTER(w[r], 1400, rbcast);
        check(OTF2_EvtWriter_MpiCollectiveBegin(w[r], NULL, 1400), "MpiCollectiveBegin");
        uint64_t sent = r == 2 ? 4096 : 0, recv = r == 2 ? 0 : 4096;
        check(OTF2_EvtWriter_MpiCollectiveEnd(w[r], NULL, 1450, OTF2_COLLECTIVE_OP_BCAST, world, 2, sent, recv), "MpiCollectiveEnd");
        LEAVE(w[r], 1451, rbcast);
        ENTER(w[r], 1500, riallred);
        check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w[r], NULL, 1501, 400 + r), "NonBlockingCollectiveRequest");
        LEAVE(w[r], 1502, riallred);
        ENTER(w[r], 1600, rwait1);
        check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w[r], NULL, 1650, OTF2_COLLECTIVE_OP_ALLREDUCE, comms_of[r], OTF2_UNDEFINED_UINT32, 16, 16, 400 + r), "NonBlockingCollectiveComplete");
        LEAVE(w[r], 1651, rwait1);
        LEAVE(w[r], 1700 + r, rmain);
    }
    clock_properties(1000000, 1000, 704);
    close_archive();
}

/* intercomm: an inter-communicator between ranks {0, 1} and {2, 3}; rank 0
 * of one group sends to rank 1 of the other (scenarioInterComm). */
static void intercomm(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "", "");
    uint32_t node = stn("node0", "node", UNDEF32);
    OTF2_EvtWriter* w[4];
    uint64_t ranks[4];
    char name[32];
    for (int r = 0; r < 4; r++) {
        snprintf(name, sizeof name, "MPI Rank %d", r);
        w[r] = loc("Master thread", lg(name, node));
        ranks[r] = r;
    }
    uint32_t rsend = region("MPI_Send", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t rrecv = region("MPI_Recv", "", "", "", 0, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, 0);
    uint32_t world = mpi_comm_world("MPI_COMM_WORLD", 4, ranks);
    uint64_t low_members[2] = { 0, 1 }, high_members[2] = { 2, 3 };
    uint32_t glow = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, low_members);
    uint32_t ghigh = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, high_members);
    uint32_t inter = inter_comm("halves", glow, ghigh, world);
    ENTER(w[0], 10, rsend);
    check(OTF2_EvtWriter_MpiSend(w[0], NULL, 11, 1, inter, 9, 1 << 20), "MpiSend");
    LEAVE(w[0], 12, rsend);
    ENTER(w[3], 10, rrecv);
    check(OTF2_EvtWriter_MpiRecv(w[3], NULL, 20, 0, inter, 9, 1 << 20), "MpiRecv");
    LEAVE(w[3], 21, rrecv);
    clock_properties(1000000000, 10, 12);
    close_archive();
}

/* multichunk: 300,000 events on two locations written in turn, with 256 KiB
 * event chunks, region references above 255 and periodic metrics. */
static void multichunk(const char* dir)
{
    open_archive(dir, 256 * 1024, 4 << 20, creator, "", "multi-chunk");
    uint32_t node = stn("localhost", "machine", UNDEF32);
    uint32_t proc = lg("Process 0", node);
    OTF2_EvtWriter* w[2];
    w[0] = loc("Master thread", proc);
    w[1] = loc("Worker thread", proc);
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "f%d", i);
        region(name, "", "", "", 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    }
    uint32_t m2[2];
    m2[0] = member("PAPI_TOT_CYC", "", "#", OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0);
    m2[1] = member("PAPI_L2_DCM", "", "#", OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0);
    uint32_t c = metric_class(2, m2, OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU);
    OTF2_Type t2u[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_MetricValue v[2];
    uint64_t t[2] = { 1000000, 1000000 }, cnt[2] = { 0, 0 };
    uint32_t stack[2][16];
    int depth[2] = { 0, 0 };
    lcg = 11;
    for (int i = 0; i < 150000; i++) {
        for (int l = 0; l < 2; l++) {
            t[l] += rnd() % 6;
            if (i % 100 == 99) {
                cnt[l] += rnd();
                v[0].unsigned_int = cnt[l];
                v[1].unsigned_int = cnt[l] / 3;
                check(OTF2_EvtWriter_Metric(w[l], NULL, t[l], c, 2, t2u, v), "Metric");
            } else if (depth[l] == 0 || (depth[l] < 16 && rnd() % 2 == 0)) {
                uint32_t r = rnd() % 300;
                stack[l][depth[l]++] = r;
                ENTER(w[l], t[l], r);
            } else {
                LEAVE(w[l], t[l], stack[l][--depth[l]]);
            }
        }
    }
    for (int l = 0; l < 2; l++)
        while (depth[l] > 0) LEAVE(w[l], ++t[l], stack[l][--depth[l]]);
    uint64_t end = t[0] > t[1] ? t[0] : t[1];
    clock_properties(1000000000, 1000000, end - 1000000 + 1);
    close_archive();
}

/* manydefs: definitions over several 256 KiB definition chunks, a string
 * and a group long enough for the FF + uint64 record length. */
static void manydefs(const char* dir)
{
    open_archive(dir, 256 * 1024, 256 * 1024, creator, "", "");
    uint32_t node = stn("localhost", "machine", UNDEF32);
    uint32_t proc = lg("Process 0", node);
    OTF2_EvtWriter* w = loc("Master thread", proc);
    char name[128], file[32];
    lcg = 5;
    for (int i = 0; i < 20000; i++) {
        int pad = rnd() % 40;
        snprintf(name, sizeof name, "region_%d_%.*s", i, pad, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        snprintf(file, sizeof file, "file%d.c", i % 97);
        region(name, "", "", file, i, i + rnd() % 100, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    }
    char longname[301];
    memset(longname, 'L', 300);
    longname[300] = 0;
    uint32_t rlong = region(longname, "", "", "", 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    /* String payloads of 254 and 255 bytes (3-byte reference): the length
     * form switches on the exact payload size. */
    longname[250] = 0;
    region(longname, "", "", "", 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    memset(longname, 'M', 300);
    longname[251] = 0;
    region(longname, "", "", "", 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint64_t mem[100];
    for (int i = 0; i < 100; i++) mem[i] = 20000 - i;
    group("big region group", OTF2_GROUP_TYPE_REGIONS, OTF2_PARADIGM_UNKNOWN, OTF2_GROUP_FLAG_NONE, 100, mem);
    group("small", OTF2_GROUP_TYPE_REGIONS, OTF2_PARADIGM_UNKNOWN, OTF2_GROUP_FLAG_NONE, 3, mem);
    for (int i = 0; i < 26; i++) mem[i] = i;
    group("26 small members", OTF2_GROUP_TYPE_REGIONS, OTF2_PARADIGM_UNKNOWN, OTF2_GROUP_FLAG_NONE, 26, mem);
    ENTER(w, 10, 0);
    ENTER(w, 11, rlong);
    LEAVE(w, 12, rlong);
    LEAVE(w, 13, 0);
    clock_properties(1000, 10, 4);
    close_archive();
}

/* attic: every region role x paradigm x flags and group type x paradigm x
 * flags, to pin down the attic regionType / groupTypePre12 bytes. */
static void attic(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "", "");
    uint32_t node = stn("localhost", "machine", UNDEF32);
    uint32_t proc = lg("Process 0", node);
    loc("Master thread", proc);
    for (int role = 0; role <= 38; role++)
        for (int par = 0; par <= 24; par++)
            for (int fl = 0; fl < 4; fl++)
                region("r", "", "", "", 0, 0, role, par, fl);
    uint64_t m[1] = { 0 };
    for (int type = 0; type <= 6; type++)
        for (int par = 0; par <= 24; par++)
            for (int fl = 0; fl < 2; fl++)
                if ((type != OTF2_GROUP_TYPE_COMM_LOCATIONS && type != OTF2_GROUP_TYPE_COMM_SELF) || fl == 0) /* one per paradigm */
                    group("g", type, par, fl, 1, m);
    clock_properties(1, 0, 0);
    close_archive();
}

/* threads: an OpenMP process of two threads, a parallel region forked by
 * thread 0 with ThreadFork/Join around it and ThreadTeamBegin/End around
 * both threads' implicit tasks, on a thread-team communicator
 * (scenarioThreads in scenarios_test.go). */
static void threads(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "", "OpenMP team");
    uint32_t node = stn("node0", "node", UNDEF32);
    uint32_t p = lg("Rank 0", node);
    OTF2_EvtWriter* w[2] = { loc("thread 0", p), loc("thread 1", p) };
    uint32_t rmain = region("main", "", "", "omp.c", 1, 40, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0);
    uint32_t rpar = region("!$omp parallel @omp.c:10", "", "", "omp.c", 10, 0, OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP, 0);
    uint32_t rtask = region("!$omp implicit task", "", "", "", 0, 0, OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_OPENMP, 0);
    uint64_t locs[2] = { 0, 1 };
    group("", OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, 2, locs);
    uint32_t gteam = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, 2, locs);
    uint32_t team = comm("Rank 0 team thread 0, thread 1", gteam, UNDEF32);
    ENTER(w[0], 100, rmain);
    check(OTF2_EvtWriter_ThreadFork(w[0], NULL, 110, OTF2_PARADIGM_OPENMP, 2), "ThreadFork");
    ENTER(w[0], 110, rpar);
    for (int k = 0; k < 2; k++) {
        check(OTF2_EvtWriter_ThreadTeamBegin(w[k], NULL, 111 + k, team), "ThreadTeamBegin");
        ENTER(w[k], 111 + k, rtask);
        LEAVE(w[k], 190 - k, rtask);
        check(OTF2_EvtWriter_ThreadTeamEnd(w[k], NULL, 190 - k, team), "ThreadTeamEnd");
    }
    LEAVE(w[0], 195, rpar);
    check(OTF2_EvtWriter_ThreadJoin(w[0], NULL, 195, OTF2_PARADIGM_OPENMP), "ThreadJoin");
    LEAVE(w[0], 200, rmain);
    clock_properties(1000000000, 100, 101);
    close_archive();
}

/* tasks: threads with explicit tasks: thread 0 creates two, thread 1 runs
 * the first, thread 0 the second inside its taskwait, each switching back
 * to its implicit task (generation 0) after the completion (scenarioTasks
 * in scenarios_test.go). */
static void tasks(const char* dir)
{
    open_archive(dir, 1 << 20, 4 << 20, creator, "", "OpenMP tasks");
    uint32_t node = stn("node0", "node", UNDEF32);
    uint32_t p = lg("Rank 0", node);
    OTF2_EvtWriter* w[2] = { loc("thread 0", p), loc("thread 1", p) };
    uint32_t rpar = region("!$omp parallel @t.c:10", "", "", "t.c", 10, 0, OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP, 0);
    uint32_t rimpl = region("!$omp implicit task", "", "", "", 0, 0, OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_OPENMP, 0);
    uint32_t rcreate = region("!$omp create task @t.c:12", "", "", "t.c", 12, 0, OTF2_REGION_ROLE_TASK_CREATE, OTF2_PARADIGM_OPENMP, 0);
    uint32_t rtask = region("!$omp task @t.c:12", "", "", "t.c", 12, 0, OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_OPENMP, 0);
    uint32_t rwait = region("!$omp taskwait @t.c:14", "", "", "t.c", 14, 0, OTF2_REGION_ROLE_TASK_WAIT, OTF2_PARADIGM_OPENMP, 0);
    uint64_t locs[2] = { 0, 1 };
    group("", OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, 2, locs);
    uint32_t gteam = group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, 2, locs);
    uint32_t team = comm("Rank 0 team thread 0, thread 1", gteam, UNDEF32);
    check(OTF2_EvtWriter_ThreadFork(w[0], NULL, 100, OTF2_PARADIGM_OPENMP, 2), "ThreadFork");
    ENTER(w[0], 100, rpar);
    for (int k = 0; k < 2; k++) {
        check(OTF2_EvtWriter_ThreadTeamBegin(w[k], NULL, 101 + k, team), "ThreadTeamBegin");
        ENTER(w[k], 101 + k, rimpl);
    }
    ENTER(w[0], 110, rcreate);
    check(OTF2_EvtWriter_ThreadTaskCreate(w[0], NULL, 111, team, 0, 1), "ThreadTaskCreate");
    check(OTF2_EvtWriter_ThreadTaskCreate(w[0], NULL, 112, team, 0, 2), "ThreadTaskCreate");
    LEAVE(w[0], 113, rcreate);
    check(OTF2_EvtWriter_ThreadTaskSwitch(w[1], NULL, 114, team, 0, 1), "ThreadTaskSwitch");
    ENTER(w[1], 114, rtask);
    ENTER(w[0], 115, rwait);
    check(OTF2_EvtWriter_ThreadTaskSwitch(w[0], NULL, 116, team, 0, 2), "ThreadTaskSwitch");
    ENTER(w[0], 116, rtask);
    LEAVE(w[0], 150, rtask);
    check(OTF2_EvtWriter_ThreadTaskComplete(w[0], NULL, 150, team, 0, 2), "ThreadTaskComplete");
    check(OTF2_EvtWriter_ThreadTaskSwitch(w[0], NULL, 151, team, 0, 0), "ThreadTaskSwitch");
    LEAVE(w[1], 160, rtask);
    check(OTF2_EvtWriter_ThreadTaskComplete(w[1], NULL, 160, team, 0, 1), "ThreadTaskComplete");
    check(OTF2_EvtWriter_ThreadTaskSwitch(w[1], NULL, 161, team, 1, 0), "ThreadTaskSwitch");
    LEAVE(w[0], 162, rwait);
    for (int k = 0; k < 2; k++) {
        LEAVE(w[k], 190 - k, rimpl);
        check(OTF2_EvtWriter_ThreadTeamEnd(w[k], NULL, 190 - k, team), "ThreadTeamEnd");
    }
    LEAVE(w[0], 195, rpar);
    check(OTF2_EvtWriter_ThreadJoin(w[0], NULL, 195, OTF2_PARADIGM_OPENMP), "ThreadJoin");
    clock_properties(1000000000, 100, 96);
    close_archive();
}

int main(int argc, char** argv)
{
    if (argc != 3) die("usage: gen SCENARIO OUTDIR");
    static const struct { const char* name; void (*fn)(const char*); } scenarios[] = {
        { "single", single }, { "locations", locations }, { "metrics", metrics }, { "mpi", mpi },
        { "mpinb", mpinb }, { "intercomm", intercomm },
        { "multichunk", multichunk }, { "manydefs", manydefs }, { "attic", attic },
        { "threads", threads }, { "tasks", tasks },
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].fn(argv[2]);
            return 0;
        }
    }
    die("unknown scenario %s", argv[1]);
}
