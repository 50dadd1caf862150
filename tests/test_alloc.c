/*
 * test_alloc.c -- the allocator in effect is the one the build chose, its figures move
 * when we allocate, and ss_alloc_tune changes the allocator only when the user did not.
 *
 * Order matters: glibc's mallopt cannot be undone, so the "user set an env var" case runs
 * before the case that lets tune act. CUnit runs tests in the order they are added.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/ss_alloc.h"
#include "ss_testutil.h"

#ifndef SS_EXPECTED_ALLOCATOR
#error "build with -DSS_EXPECTED_ALLOCATOR=\"tcmalloc|glibc|jemalloc\" (CMake sets it)"
#endif

#define MIB ((size_t)1 << 20)

static int running_under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#else
    return 0;
#endif
}

typedef int (*tc_get_fn)(const char *property, size_t *value);

/* tcmalloc's max total thread cache, or 0 when tcmalloc is not the allocator. */
static size_t tc_max_thread_cache(void)
{
    tc_get_fn get = (tc_get_fn)dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    size_t v = 0;
    if (get == NULL || !get("tcmalloc.max_total_thread_cache_bytes", &v))
        return 0;
    return v;
}

/* Whether a fresh block of `size` bytes is mmapped by glibc (hblkhd grows by it). */
static int glibc_mmaps(size_t size)
{
    struct mallinfo2 before = mallinfo2();
    char *p = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memset(p, 1, 4096);
    struct mallinfo2 after = mallinfo2();
    free(p);
    return after.hblkhd >= before.hblkhd + size;
}

static void *name_from_thread(void *arg)
{
    *(const char **)arg = ss_alloc_name();
    return NULL;
}

/* First calls race on the one-time detection; every thread must see the same answer. */
static void test_name_same_in_threads(void)
{
    pthread_t th[4];
    const char *names[4] = {NULL};
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, name_from_thread, &names[i]), 0);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 4; i++)
        SS_STR_EQ(names[i], ss_alloc_name());
}

static void test_name_matches_build(void)
{
    SS_STR_EQ(ss_alloc_name(), SS_EXPECTED_ALLOCATOR);
    ss_alloc_info_t info;
    ss_alloc_info(&info);
    SS_STR_EQ(info.name, SS_EXPECTED_ALLOCATOR);
    CU_ASSERT_PTR_NOT_NULL(info.version);
    if (info.version != NULL)
        SS_CMP_U(strlen(info.version), >, (size_t)0);
}

static void test_figures_after_allocating(void)
{
    enum { N = 16 };
    const size_t block = 256 * 1024;
    ss_alloc_info_t before, after;
    ss_alloc_info(&before);

    char *blocks[N];
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(block);
        CU_ASSERT_PTR_NOT_NULL_FATAL(blocks[i]);
        memset(blocks[i], i, block);
    }
    ss_alloc_info(&after);

    SS_CMP_U(after.heap_bytes, >, (size_t)0);
    SS_CMP_U(after.allocated_bytes, >=, (size_t)N * block);
    SS_CMP_U(after.heap_bytes, >=, after.allocated_bytes / 2);
    /* 4 MiB was allocated; allow some slack for the allocator's own bookkeeping. */
    SS_CMP_U(after.allocated_bytes, >=, before.allocated_bytes + 3 * MIB);

    for (int i = 0; i < N; i++)
        free(blocks[i]);

    if (strcmp(ss_alloc_name(), "tcmalloc") == 0) {
        /* Small frees land in this thread's cache. */
        void *small[256];
        for (int i = 0; i < 256; i++)
            small[i] = malloc(64);
        for (int i = 0; i < 256; i++)
            free(small[i]);
        ss_alloc_info(&after);
        SS_CMP_U(after.thread_cache_bytes, >, (size_t)0);
    }
}

static void test_tune_respects_user_env(void)
{
    const char *name = ss_alloc_name();
    if (strcmp(name, "tcmalloc") == 0) {
        const char *var = "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES";
        char *user = getenv(var) ? strdup(getenv(var)) : NULL;
        size_t before = tc_max_thread_cache();
        SS_CMP_U(before, >, (size_t)0);
        CU_ASSERT_EQUAL_FATAL(setenv(var, "33554432", 1), 0);
        ss_alloc_tune(64);
        SS_CMP_U(tc_max_thread_cache(), ==, before);
        /* Braces: CUnit's assertion macros are blocks, which break a bare if/else. */
        if (user != NULL) {
            CU_ASSERT_EQUAL(setenv(var, user, 1), 0);
        } else {
            CU_ASSERT_EQUAL(unsetenv(var), 0);
        }
        free(user);
    } else if (strcmp(name, "glibc") == 0 && !running_under_asan()) {
        CU_ASSERT_EQUAL_FATAL(setenv("MALLOC_TOP_PAD_", "131072", 1), 0);
        ss_alloc_tune(4);
        /* Untuned glibc mmaps anything above 32 MiB, whatever its dynamic threshold did. */
        CU_ASSERT(glibc_mmaps(40 * MIB));
        CU_ASSERT_EQUAL(unsetenv("MALLOC_TOP_PAD_"), 0);
    } else {
        ss_alloc_tune(4); /* jemalloc, or ASan: nothing to tune, nothing must break */
    }
}

static void test_tune_applies_without_env(void)
{
    const char *name = ss_alloc_name();
    if (strcmp(name, "tcmalloc") == 0) {
        if (getenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES") != NULL)
            return; /* set for the whole test run by the user: tune rightly leaves it */
        ss_alloc_tune(4);
        SS_CMP_U(tc_max_thread_cache(), ==, 4 * 16 * MIB);
        ss_alloc_tune(1);
        SS_CMP_U(tc_max_thread_cache(), ==, 32 * MIB);
        ss_alloc_tune(0);
        SS_CMP_U(tc_max_thread_cache(), ==, 32 * MIB);
    } else if (strcmp(name, "glibc") == 0 && !running_under_asan()) {
        const char *knobs[] = {"MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_",
                               "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"};
        for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
            if (getenv(knobs[i]) != NULL)
                return; /* the user's settings win; nothing to observe */
        ss_alloc_tune(2);
        /* With the 64 MiB mmap threshold, 40 MiB now comes from the heap. */
        CU_ASSERT(!glibc_mmaps(40 * MIB));
    } else {
        ss_alloc_tune(2);
    }
    /* Still usable after tuning. */
    void *p = malloc(1000);
    CU_ASSERT_PTR_NOT_NULL(p);
    free(p);
}

/* Private blocks: aligned, zeroed, and no two share an SS_PRIVATE_ALIGN-byte block. */
static void test_private_blocks_share_no_line(void)
{
    enum { N = 64 };
    static const size_t sizes[] = {0, 1, 8, 24, 80, 128, 129, 1000};
    const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
    unsigned char *p[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        len[i] = sizes[i % ns];
        p[i] = ss_alloc_private(len[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
        CU_ASSERT_EQUAL((uintptr_t)p[i] % SS_PRIVATE_ALIGN, 0);
        for (size_t k = 0; k < len[i]; k++)
            if (p[i][k] != 0) {
                CU_FAIL("private block not zeroed");
                break;
            }
        memset(p[i], 0xa5, len[i]);
    }
    for (int i = 0; i < N; i++) {
        uintptr_t a_end = (uintptr_t)p[i] + (len[i] ? len[i] : 1);
        for (int j = 0; j < N; j++) {
            uintptr_t b_line = (uintptr_t)p[j] / SS_PRIVATE_ALIGN;
            uintptr_t a_last = (a_end - 1) / SS_PRIVATE_ALIGN;
            if (i != j && b_line >= (uintptr_t)p[i] / SS_PRIVATE_ALIGN && b_line <= a_last)
                CU_FAIL("two private blocks share a cache-line block");
        }
    }
    for (int i = 0; i < N; i++)
        free(p[i]);
    CU_ASSERT_PTR_NULL(ss_alloc_private(SIZE_MAX - 8)); /* rounding would wrap */
}

/* A private kstring starts empty with its capacity, and still grows and frees as a kstring. */
static void test_private_kstring_grows(void)
{
    kstring_t ks = {0, 0, NULL};
    CU_ASSERT_EQUAL(kputs("dropped", &ks), 7);
    CU_ASSERT_EQUAL_FATAL(ss_ks_private(&ks, 16), 0);
    CU_ASSERT_EQUAL(ks.l, 0);
    CU_ASSERT_EQUAL(ks.m, 16);
    CU_ASSERT_EQUAL((uintptr_t)ks.s % SS_PRIVATE_ALIGN, 0);
    for (int i = 0; i < 100; i++)
        CU_ASSERT_FATAL(kputs("0123456789", &ks) >= 0);
    CU_ASSERT_EQUAL(ks.l, 1000);
    CU_ASSERT_EQUAL(memcmp(ks.s + 990, "0123456789", 10), 0);
    free(ks.s);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "test_alloc: %s\n", CU_get_error_msg());
        return 1;
    }
    CU_pSuite s = CU_add_suite("alloc", NULL, NULL);
    if (s == NULL || !CU_add_test(s, "name_same_in_threads", test_name_same_in_threads) ||
        !CU_add_test(s, "name_matches_build", test_name_matches_build) ||
        !CU_add_test(s, "figures_after_allocating", test_figures_after_allocating) ||
        !CU_add_test(s, "tune_respects_user_env", test_tune_respects_user_env) ||
        !CU_add_test(s, "tune_applies_without_env", test_tune_applies_without_env) ||
        !CU_add_test(s, "private_blocks_share_no_line", test_private_blocks_share_no_line) ||
        !CU_add_test(s, "private_kstring_grows", test_private_kstring_grows)) {
        fprintf(stderr, "test_alloc: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 1;
    }
    return ss_test_run();
}
