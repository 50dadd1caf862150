/*
 * ss_alloc.c -- which allocator serves malloc in this process, its figures, and tuning.
 *
 * The build links one allocator (SEQSHARD_ALLOCATOR), but LD_PRELOAD can put another in
 * front of it, so nothing here trusts the build option: the allocator in effect is the
 * library that the process's `malloc` symbol resolves to. Its extension functions
 * (gperftools' MallocExtension_*, jemalloc's mallctl, ASan's __sanitizer_*) are looked up
 * with dlsym, so every build links whatever allocator it was given, or none.
 */
#define _GNU_SOURCE
#include "ss_alloc.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

typedef enum { ALLOC_GLIBC = 0, ALLOC_TCMALLOC, ALLOC_JEMALLOC } alloc_kind_t;

/*
 * Prototypes as declared in gperftools/malloc_extension_c.h and gperftools/tcmalloc.h
 * (2.10), and in jemalloc.h (5.x); we call them through pointers.
 */
typedef int (*tc_get_fn)(const char *property, size_t *value);
typedef int (*tc_set_fn)(const char *property, size_t value);
typedef const char *(*tc_version_fn)(int *major, int *minor, const char **patch);
typedef int (*je_mallctl_fn)(const char *name, void *oldp, size_t *oldlenp, void *newp,
                             size_t newlen);
typedef size_t (*san_size_fn)(void);

/* Filled once by detect(); read-only afterwards, so any thread may read it. */
static struct {
    alloc_kind_t kind;
    int asan; /* glibc kind, but ASan's allocator sits in front of it */
    tc_get_fn tc_get;
    tc_set_fn tc_set;
    tc_version_fn tc_version;
    je_mallctl_fn mallctl;
    san_size_fn san_heap, san_allocated, san_free;
    char version[64];
} A;

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

/* Which loaded object defines the malloc that calls in this process reach. */
static const char *malloc_provider(void)
{
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info;
    if (m == NULL || dladdr(m, &info) == 0 || info.dli_fname == NULL)
        return "";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static void detect(void)
{
    const char *lib = malloc_provider();
    tc_get_fn tc_get = (tc_get_fn)dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    je_mallctl_fn je = (je_mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");

    /*
     * Decide by the library that defines malloc: with jemalloc preloaded into the tcmalloc
     * build both extension APIs are loaded, but only one of them serves malloc. When malloc
     * comes from the executable itself (a static allocator), its API tells.
     */
    if (strstr(lib, "tcmalloc") != NULL && tc_get != NULL)
        A.kind = ALLOC_TCMALLOC;
    else if (strstr(lib, "jemalloc") != NULL && je != NULL)
        A.kind = ALLOC_JEMALLOC;
    else if (strstr(lib, "libc.so") != NULL || strstr(lib, "asan") != NULL)
        A.kind = ALLOC_GLIBC;
    else if (tc_get != NULL)
        A.kind = ALLOC_TCMALLOC;
    else if (je != NULL)
        A.kind = ALLOC_JEMALLOC;
    else
        A.kind = ALLOC_GLIBC;

    switch (A.kind) {
    case ALLOC_TCMALLOC:
        A.tc_get = tc_get;
        A.tc_set = (tc_set_fn)dlsym(RTLD_DEFAULT, "MallocExtension_SetNumericProperty");
        A.tc_version = (tc_version_fn)dlsym(RTLD_DEFAULT, "tc_version");
        if (A.tc_version != NULL) {
            int major = 0, minor = 0;
            const char *patch = NULL;
            const char *v = A.tc_version(&major, &minor, &patch);
            snprintf(A.version, sizeof A.version, "%s", v ? v : "");
        }
        break;
    case ALLOC_JEMALLOC: {
        A.mallctl = je;
        const char *v = NULL;
        size_t len = sizeof v;
        if (A.mallctl("version", &v, &len, NULL, 0) == 0 && v != NULL)
            snprintf(A.version, sizeof A.version, "%s", v);
        break;
    }
    case ALLOC_GLIBC:
        /* ASan's allocator replaces glibc's malloc; its own counters are the honest ones. */
        A.san_heap = (san_size_fn)dlsym(RTLD_DEFAULT, "__sanitizer_get_heap_size");
        A.san_allocated =
            (san_size_fn)dlsym(RTLD_DEFAULT, "__sanitizer_get_current_allocated_bytes");
        A.san_free = (san_size_fn)dlsym(RTLD_DEFAULT, "__sanitizer_get_free_bytes");
        A.asan = strstr(lib, "asan") != NULL && A.san_heap && A.san_allocated && A.san_free;
        snprintf(A.version, sizeof A.version, "%s%s", gnu_get_libc_version(),
                 A.asan ? " (AddressSanitizer)" : "");
        break;
    }
}

static void ensure_detected(void)
{
    /* pthread_once cannot fail with a valid once object and a valid function. */
    (void)pthread_once(&detect_once, detect);
}

const char *ss_alloc_name(void)
{
    ensure_detected();
    switch (A.kind) {
    case ALLOC_TCMALLOC:
        return "tcmalloc";
    case ALLOC_JEMALLOC:
        return "jemalloc";
    case ALLOC_GLIBC:
        break;
    }
    return "glibc";
}

static size_t tc_prop(const char *name)
{
    size_t v = 0;
    if (A.tc_get == NULL || !A.tc_get(name, &v))
        return 0;
    return v;
}

static size_t je_size(const char *name)
{
    size_t v = 0, len = sizeof v;
    if (A.mallctl(name, &v, &len, NULL, 0) != 0)
        return 0;
    return v;
}

void ss_alloc_info(ss_alloc_info_t *info)
{
    ensure_detected();
    memset(info, 0, sizeof *info);
    info->name = ss_alloc_name();
    info->version = A.version;

    switch (A.kind) {
    case ALLOC_TCMALLOC:
        info->heap_bytes = tc_prop("generic.heap_size");
        info->allocated_bytes = tc_prop("generic.current_allocated_bytes");
        info->free_bytes = tc_prop("tcmalloc.pageheap_free_bytes");
        info->thread_cache_bytes = tc_prop("tcmalloc.current_total_thread_cache_bytes");
        break;
    case ALLOC_JEMALLOC: {
        /* jemalloc's stats are a snapshot taken when the epoch advances. */
        uint64_t epoch = 1;
        size_t len = sizeof epoch;
        (void)A.mallctl("epoch", &epoch, &len, &epoch, sizeof epoch);
        info->allocated_bytes = je_size("stats.allocated");
        info->heap_bytes = je_size("stats.resident");
        if (info->heap_bytes > info->allocated_bytes)
            info->free_bytes = info->heap_bytes - info->allocated_bytes;
        break;
    }
    case ALLOC_GLIBC:
        if (A.asan) {
            info->heap_bytes = A.san_heap();
            info->allocated_bytes = A.san_allocated();
            info->free_bytes = A.san_free();
        } else {
            /* mallinfo2 walks every arena under its lock: fine for a report, not a loop. */
            struct mallinfo2 mi = mallinfo2();
            info->heap_bytes = mi.arena + mi.hblkhd;
            info->allocated_bytes = mi.uordblks + mi.hblkhd;
            info->free_bytes = mi.fordblks;
        }
        break;
    }
}

/* 1 if any environment variable in names (NULL-terminated) is set. */
static int any_env_set(const char *const *names)
{
    for (; *names != NULL; names++)
        if (getenv(*names) != NULL)
            return 1;
    return 0;
}

static void tune_tcmalloc(int n_workers)
{
    if (getenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES") != NULL || A.tc_set == NULL)
        return;
    /*
     * gperftools shares one 32 MiB budget among all thread caches. With many workers each
     * cache shrinks to a sliver of that, smaller than the record and decode buffers a
     * worker recycles per shard, and frees spill to the central free lists, whose locks
     * then serialise the workers. 16 MiB per worker keeps a worker's hot size classes in
     * its own cache; the total still grows with the thread count only (bounded memory),
     * and never drops below tcmalloc's default.
     */
    size_t n = n_workers > 0 ? (size_t)n_workers : 1;
    size_t want = n * 16 * MIB;
    if (want < 32 * MIB)
        want = 32 * MIB;
    (void)A.tc_set("tcmalloc.max_total_thread_cache_bytes", want);
}

static void tune_glibc(void)
{
    static const char *const user_knobs[] = {"MALLOC_TOP_PAD_",        "MALLOC_MMAP_MAX_",
                                             "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
                                             "GLIBC_TUNABLES",         NULL};
    if (A.asan || any_env_set(user_knobs))
        return;
    /*
     * htslib's threaded decode allocates and frees multi-MiB blocks per BGZF/CRAM block.
     * With glibc's defaults those are mmapped, or trimmed back to the OS on free, and then
     * faulted in again on the next block: the give-back/re-fault cycle shows up as system
     * time and page faults. Larger fixed thresholds (which also switch off glibc's dynamic
     * adjustment) keep that memory in the heap; M_TOP_PAD grows the heap in bigger steps.
     * mallopt returns 0 only for an unknown parameter or a bad value; none here is, so a
     * failure changes nothing worth stopping for.
     */
    (void)mallopt(M_MMAP_THRESHOLD, (int)(64 * MIB));
    (void)mallopt(M_TRIM_THRESHOLD, (int)(256 * MIB));
    (void)mallopt(M_TOP_PAD, (int)(64 * MIB));
}

void ss_alloc_tune(int n_workers)
{
    ensure_detected();
    switch (A.kind) {
    case ALLOC_TCMALLOC:
        tune_tcmalloc(n_workers);
        break;
    case ALLOC_GLIBC:
        tune_glibc();
        break;
    case ALLOC_JEMALLOC:
        /* jemalloc's per-thread arenas and decay already avoid both problems. */
        break;
    }
}
