/*
 * count_preload.c -- libsscount.so, an LD_PRELOAD library that counts allocator calls.
 *
 *   LD_PRELOAD=build/libsscount.so seqshard pileup --report r.json ...
 *
 * Each wrapper counts the call in the calling thread's slot and forwards it to the next
 * definition (dlsym RTLD_NEXT): glibc's, or tcmalloc's/jemalloc's when the program links
 * or preloads one after us. The program reads the counts through dlsym (alloc/count.c),
 * so it never depends on this library being there.
 *
 * Built only as its own shared library (SS_COUNT_PRELOAD_BUILD, set by CMake for the
 * sscount target); compiled anywhere else, e.g. by the sscore glob, it is empty, so it can
 * never replace malloc in a program by accident.
 *
 * Bootstrap: dlsym itself may call malloc/calloc (glibc allocates its dlerror state), and
 * that call arrives here before the next malloc is known. The thread that is resolving is
 * served from a static buffer that is never freed or reused; other threads wait for it.
 * Thread-local state uses the initial-exec TLS model, so touching it never allocates.
 */
#if defined(SS_COUNT_PRELOAD_BUILD)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ss_count.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS_IE __attribute__((tls_model("initial-exec")))

/* ---- counters ---- */

/*
 * One slot per thread, on its own cache line, claimed once and never given back, so a
 * thread's counts outlive it. Threads beyond SLOTS share the last slot; the atomic adds
 * keep the totals right, only that thread's own figures come from my_counts.
 */
#define SLOTS 4096
typedef struct {
    _Atomic uint64_t n[SS_COUNT_KINDS];
} __attribute__((aligned(64))) slot_t;

static slot_t slots[SLOTS + 1];
static atomic_int slots_used;
static __thread slot_t *my_slot TLS_IE;
static __thread uint64_t my_counts[SS_COUNT_KINDS] TLS_IE;

static inline void count(int kind)
{
    slot_t *s = my_slot;
    if (s == NULL) {
        int i = atomic_fetch_add_explicit(&slots_used, 1, memory_order_relaxed);
        s = &slots[i < SLOTS ? i : SLOTS];
        my_slot = s;
    }
    atomic_fetch_add_explicit(&s->n[kind], 1, memory_order_relaxed);
    my_counts[kind]++;
}

EXPORT int ss_count_abi(void)
{
    return SS_COUNT_ABI;
}

EXPORT void ss_count_get_kinds(uint64_t out[SS_COUNT_KINDS], int this_thread)
{
    for (int k = 0; k < SS_COUNT_KINDS; k++)
        out[k] = 0;
    if (this_thread) {
        for (int k = 0; k < SS_COUNT_KINDS; k++)
            out[k] = my_counts[k];
        return;
    }
    int used = atomic_load_explicit(&slots_used, memory_order_relaxed);
    int last = used < SLOTS ? used : SLOTS; /* inclusive: the shared slot too */
    for (int i = 0; i <= last && i <= SLOTS; i++)
        for (int k = 0; k < SS_COUNT_KINDS; k++)
            out[k] += atomic_load_explicit(&slots[i].n[k], memory_order_relaxed);
}

/* ---- the next allocator ---- */

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
} next;

enum { UNRESOLVED = 0, RESOLVING, RESOLVED };
static atomic_int state;
static __thread int resolving_here TLS_IE;

static void die(const char *msg)
{
    ssize_t rc = write(STDERR_FILENO, msg, strlen(msg));
    (void)rc;
    _exit(127);
}

static void *lookup(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
    int expected = UNRESOLVED;
    if (!atomic_compare_exchange_strong(&state, &expected, RESOLVING)) {
        while (atomic_load(&state) != RESOLVED)
            sched_yield(); /* another thread is resolving; it does not need us */
        return;
    }
    resolving_here = 1;
    next.malloc = (void *(*)(size_t))lookup("malloc");
    next.calloc = (void *(*)(size_t, size_t))lookup("calloc");
    next.realloc = (void *(*)(void *, size_t))lookup("realloc");
    next.free = (void (*)(void *))lookup("free");
    next.posix_memalign = (int (*)(void **, size_t, size_t))lookup("posix_memalign");
    next.aligned_alloc = (void *(*)(size_t, size_t))lookup("aligned_alloc");
    next.memalign = (void *(*)(size_t, size_t))lookup("memalign");
    next.valloc = (void *(*)(size_t))lookup("valloc");
    next.pvalloc = (void *(*)(size_t))lookup("pvalloc");
    resolving_here = 0;
    if (!next.malloc || !next.calloc || !next.realloc || !next.free || !next.posix_memalign)
        die("seqshard: " SS_COUNT_LIB_NAME ": no malloc/calloc/realloc/free after it; "
            "load it with LD_PRELOAD, not dlopen\n");
    atomic_store(&state, RESOLVED);
}

/* ---- bootstrap buffer for allocations made by dlsym while resolving ---- */

#define BOOT_SIZE (64 * 1024)
#define BOOT_HDR  16 /* keeps 16-byte alignment; holds the block's size */
static _Alignas(16) unsigned char boot[BOOT_SIZE];
static atomic_size_t boot_used;

static void *boot_alloc(size_t size)
{
    if (size > BOOT_SIZE)
        return NULL;
    size_t need = BOOT_HDR + ((size + 15) & ~(size_t)15);
    size_t off = atomic_fetch_add(&boot_used, need);
    if (off + need > BOOT_SIZE) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(boot + off, &size, sizeof(size)); /* never reused, so still zero: calloc-ready */
    return boot + off + BOOT_HDR;
}

static int in_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + BOOT_SIZE;
}

static size_t boot_size(const void *p)
{
    size_t size;
    memcpy(&size, (const unsigned char *)p - BOOT_HDR, sizeof(size));
    return size;
}

/* 1 when the call must be served from the boot buffer (this thread is inside dlsym). */
static inline int need_boot(void)
{
    if (atomic_load_explicit(&state, memory_order_acquire) == RESOLVED)
        return 0;
    if (resolving_here)
        return 1;
    resolve();
    return 0;
}

/* ---- the wrappers ---- */

EXPORT void *malloc(size_t size)
{
    if (need_boot())
        return boot_alloc(size);
    count(SS_COUNT_MALLOC);
    return next.malloc(size);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (need_boot()) {
        if (size != 0 && n > SIZE_MAX / size) {
            errno = ENOMEM;
            return NULL;
        }
        return boot_alloc(n * size);
    }
    count(SS_COUNT_CALLOC);
    return next.calloc(n, size);
}

/* Move a boot block into the real allocator (or grow it within the boot buffer). */
static void *realloc_boot(void *p, size_t size, int boot_only)
{
    void *q = boot_only ? boot_alloc(size) : next.malloc(size);
    if (q != NULL && p != NULL) {
        size_t old = boot_size(p);
        memcpy(q, p, old < size ? old : size);
    }
    return q;
}

EXPORT void *realloc(void *p, size_t size)
{
    if (need_boot())
        return realloc_boot(p, size, 1);
    count(SS_COUNT_REALLOC);
    if (p != NULL && in_boot(p))
        return realloc_boot(p, size, 0);
    return next.realloc(p, size);
}

/*
 * Not forwarded: glibc's reallocarray calls realloc through the PLT, that is us again,
 * and the call would count twice. The overflow check is all it adds.
 */
EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

EXPORT void free(void *p)
{
    if (p == NULL || in_boot(p))
        return; /* boot blocks live as long as the process */
    if (need_boot())
        return; /* inside dlsym, freeing what it got elsewhere: leak it rather than recurse */
    count(SS_COUNT_FREE);
    next.free(p);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (need_boot())
        return ENOMEM;
    count(SS_COUNT_ALIGNED);
    return next.posix_memalign(out, align, size);
}

/* The optional aligned forms: fall back to posix_memalign where the next library lacks one. */
static void *aligned_via_posix(size_t align, size_t size)
{
    void *p = NULL;
    int rc = next.posix_memalign(&p, align, size);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
    return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (need_boot())
        return NULL;
    count(SS_COUNT_ALIGNED);
    return next.aligned_alloc ? next.aligned_alloc(align, size) : aligned_via_posix(align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
    if (need_boot())
        return NULL;
    count(SS_COUNT_ALIGNED);
    return next.memalign ? next.memalign(align, size) : aligned_via_posix(align, size);
}

EXPORT void *valloc(size_t size)
{
    if (need_boot())
        return NULL;
    count(SS_COUNT_ALIGNED);
    return next.valloc ? next.valloc(size) : aligned_via_posix((size_t)sysconf(_SC_PAGESIZE), size);
}

EXPORT void *pvalloc(size_t size)
{
    if (need_boot())
        return NULL;
    count(SS_COUNT_ALIGNED);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return next.pvalloc ? next.pvalloc(size)
                        : aligned_via_posix(page, (size + page - 1) / page * page);
}

#else
/* Compiled into sscore by the glob: nothing here (ISO C wants one declaration). */
typedef int ss_count_preload_not_built_t;
#endif
