/*
 * test_count.c -- the allocation-counting shim (libsscount.so) and its reader (count.c).
 *
 * The shim only counts when it is preloaded, so the test re-executes itself once with
 * LD_PRELOAD set to SS_COUNT_LIB (ctest sets it), or to libsscount.so found next to or one
 * folder above this executable. Without a shim the counting cases are skipped with a note,
 * unless SS_COUNT_LIB was set: then a shim that does not load is a failure. The
 * formatting cases run either way. Not under AddressSanitizer, which must come first in
 * the preload list and counts nothing of ours.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/ss_count.h"
#include "ss_testutil.h"

/* Called through volatile pointers so the compiler cannot pair up and drop the calls. */
static void *(*volatile v_malloc)(size_t) = malloc;
static void *(*volatile v_calloc)(size_t, size_t) = calloc;
static void *(*volatile v_realloc)(void *, size_t) = realloc;
static void *(*volatile v_reallocarray)(void *, size_t, size_t) = reallocarray;
static int (*volatile v_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile v_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile v_memalign)(size_t, size_t) = memalign;
static void (*volatile v_free)(void *) = free;

static int shim_expected; /* SS_COUNT_LIB was given: the shim must be there */

static int have_shim(void)
{
    if (ss_count_active())
        return 1;
    printf("\n    (skipped: %s not preloaded%s) ", SS_COUNT_LIB_NAME,
           shim_expected ? "" : "; set SS_COUNT_LIB to its path");
    CU_ASSERT(!shim_expected);
    return 0;
}

/* Re-run this program with the shim preloaded, when one can be found. */
static void preload_shim(char **argv)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)argv;
    return;
#else
    const char *lib = getenv("SS_COUNT_LIB");
    static char guess[PATH_MAX];
    shim_expected = lib != NULL && *lib != '\0';
    if (ss_count_active() || getenv("SS_COUNT_TEST_REEXEC") != NULL)
        return;
    if (!shim_expected) {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            return;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash == NULL)
            return;
        *slash = '\0';
        /* The library sits in the build folder; tests may sit one level down. */
        if (snprintf(guess, sizeof(guess), "%.4000s/%s", self, SS_COUNT_LIB_NAME) < 0 ||
            (access(guess, R_OK) != 0 &&
             snprintf(guess, sizeof(guess), "%.4000s/../%s", self, SS_COUNT_LIB_NAME) < 0) ||
            access(guess, R_OK) != 0)
            return;
        lib = guess;
    }
    const char *old = getenv("LD_PRELOAD");
    char preload[2 * PATH_MAX];
    snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    if (setenv("LD_PRELOAD", preload, 1) != 0 || setenv("SS_COUNT_TEST_REEXEC", "1", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    fprintf(stderr, "test_count: cannot re-run with LD_PRELOAD=%s; counting cases fail\n", preload);
#endif
}

typedef struct {
    uint64_t kinds[SS_COUNT_KINDS];
    ss_count_t thread;
    int ok;
} exact_run_t;

/* A known sequence of calls; the calling thread's counts must move by exactly that. */
static void *exact_sequence(void *arg)
{
    exact_run_t *r = arg;
    uint64_t a[SS_COUNT_KINDS], b[SS_COUNT_KINDS];
    ss_count_t ta, tb;
    void *p[16] = {NULL};
    r->ok = ss_count_kinds(a, 1) == 0 && ss_count_thread(&ta) == 0;

    for (int i = 0; i < 6; i++)
        p[i] = v_malloc(24 + (size_t)i * 100); /* 6 malloc */
    for (int i = 6; i < 9; i++)
        p[i] = v_calloc(10, 8); /* 3 calloc */
    for (int i = 0; i < 4; i++)
        p[0] = v_realloc(p[0], 4096 << i);            /* 4 realloc */
    p[9] = v_reallocarray(NULL, 16, 32);              /* 1 realloc */
    r->ok &= v_posix_memalign(&p[10], 64, 1000) == 0; /* 3 aligned */
    p[11] = v_aligned_alloc(64, 128);
    p[12] = v_memalign(4096, 100);
    for (int i = 0; i < 13; i++)
        v_free(p[i]); /* 13 free */
    v_free(NULL);     /* not counted */
    v_free(NULL);

    r->ok &= ss_count_kinds(b, 1) == 0 && ss_count_thread(&tb) == 0;
    for (int k = 0; k < SS_COUNT_KINDS; k++)
        r->kinds[k] = b[k] - a[k];
    r->thread.allocs = tb.allocs - ta.allocs;
    r->thread.frees = tb.frees - ta.frees;
    return NULL;
}

static void check_exact(const exact_run_t *r)
{
    CU_ASSERT(r->ok);
    SS_CMP_U(r->kinds[SS_COUNT_MALLOC], ==, 6);
    SS_CMP_U(r->kinds[SS_COUNT_CALLOC], ==, 3);
    SS_CMP_U(r->kinds[SS_COUNT_REALLOC], ==, 5);
    SS_CMP_U(r->kinds[SS_COUNT_ALIGNED], ==, 3);
    SS_CMP_U(r->kinds[SS_COUNT_FREE], ==, 13);
    SS_CMP_U(r->thread.allocs, ==, 17);
    SS_CMP_U(r->thread.frees, ==, 13);
}

static void test_exact_in_main_thread(void)
{
    if (!have_shim())
        return;
    exact_run_t r;
    exact_sequence(&r);
    check_exact(&r);
}

static void test_exact_in_new_thread(void)
{
    if (!have_shim())
        return;
    exact_run_t r;
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, exact_sequence, &r) == 0);
    CU_ASSERT_FATAL(pthread_join(th, NULL) == 0);
    check_exact(&r);
}

#define N_THREADS    4
#define N_PER_THREAD 10000

static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < N_PER_THREAD; i++)
        v_free(v_malloc(64));
    return NULL;
}

/* Totals add up every thread's calls, also after the threads have exited. */
static void test_totals_across_threads(void)
{
    if (!have_shim())
        return;
    ss_count_t before, after;
    pthread_t th[N_THREADS];
    CU_ASSERT_FATAL(ss_count_total(&before) == 0);
    for (int i = 0; i < N_THREADS; i++)
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, churn, NULL) == 0);
    for (int i = 0; i < N_THREADS; i++)
        CU_ASSERT_FATAL(pthread_join(th[i], NULL) == 0);
    CU_ASSERT_FATAL(ss_count_total(&after) == 0);
    /* Thread start-up and exit may allocate a little (TLS, stacks): allow some slack. */
    uint64_t want = (uint64_t)N_THREADS * N_PER_THREAD;
    SS_CMP_U(after.allocs - before.allocs, >=, want);
    SS_CMP_U(after.allocs - before.allocs, <=, want + 100);
    SS_CMP_U(after.frees - before.frees, >=, want);
    SS_CMP_U(after.frees - before.frees, <=, want + 100);
}

/* Other programs run under the shim too (children inherit LD_PRELOAD): none breaks. */
static void test_children_run_under_shim(void)
{
    if (!have_shim())
        return;
    CU_ASSERT(system("ls -l / >/dev/null") == 0);
    CU_ASSERT(system("sort -R /etc/services | sort >/dev/null") == 0);
    if (system("command -v python3 >/dev/null") == 0)
        CU_ASSERT(
            system("python3 -c 'import threading, json\n"
                   "def f():\n"
                   "    for i in range(2000): json.dumps({str(j): [j] * 10 for j in range(50)})\n"
                   "t = [threading.Thread(target=f) for _ in range(4)]\n"
                   "[x.start() for x in t]; [x.join() for x in t]'") == 0);
}

static void test_not_measured_without_shim(void)
{
    if (ss_count_active()) {
        printf("\n    (shim loaded: the no-shim case is covered by runs without it) ");
        return;
    }
    ss_count_t c = {1, 1};
    uint64_t k[SS_COUNT_KINDS] = {1, 1, 1, 1, 1};
    CU_ASSERT(ss_count_total(&c) == -1);
    SS_CMP_U(c.allocs, ==, 0);
    SS_CMP_U(c.frees, ==, 0);
    CU_ASSERT(ss_count_thread(&c) == -1);
    CU_ASSERT(ss_count_kinds(k, 0) == -1);
    SS_CMP_U(k[SS_COUNT_FREE], ==, 0);
}

static void test_per_read_and_json(void)
{
    ss_count_t before = {1000, 900}, after = {1250, 1190};
    char buf[256];
    CU_ASSERT(ss_count_per_read(&before, &after, 1000) == 0.25);
    CU_ASSERT(ss_count_per_read(&before, &after, 0) < 0);
    ss_count_json(buf, sizeof(buf), &before, &after, 1000);
    SS_STR_EQ(buf, "\"alloc_counting\": \"libsscount\", \"malloc_calls\": 250, "
                   "\"free_calls\": 290, \"allocs_per_read\": 0.25");
    ss_count_json(buf, sizeof(buf), &before, &after, 0);
    SS_STR_EQ(buf, "\"alloc_counting\": \"libsscount\", \"malloc_calls\": 250, "
                   "\"free_calls\": 290, \"allocs_per_read\": null");
    int n = ss_count_json(buf, sizeof(buf), NULL, NULL, 1000);
    SS_STR_EQ(buf, "\"alloc_counting\": \"not measured\", \"malloc_calls\": null, "
                   "\"free_calls\": null, \"allocs_per_read\": null");
    SS_CMP_U((unsigned long long)n, ==, strlen(buf));
}

int main(int argc, char **argv)
{
    (void)argc;
    preload_shim(argv);
    if (ss_count_active())
        printf("test_count: counting with %s (LD_PRELOAD=%s)\n", SS_COUNT_LIB_NAME,
               getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "?");
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "test_count: %s\n", CU_get_error_msg());
        return 1;
    }
    CU_pSuite s = CU_add_suite("count", NULL, NULL);
    if (s == NULL || !CU_add_test(s, "exact_in_main_thread", test_exact_in_main_thread) ||
        !CU_add_test(s, "exact_in_new_thread", test_exact_in_new_thread) ||
        !CU_add_test(s, "totals_across_threads", test_totals_across_threads) ||
        !CU_add_test(s, "children_run_under_shim", test_children_run_under_shim) ||
        !CU_add_test(s, "not_measured_without_shim", test_not_measured_without_shim) ||
        !CU_add_test(s, "per_read_and_json", test_per_read_and_json)) {
        fprintf(stderr, "test_count: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 1;
    }
    return ss_test_run();
}
