/*
 * test_ordered.c -- the ordered hand-off: shards finished in random order by
 * several threads come out in shard order, workers never run more than the
 * window ahead of the writer, buffers are recycled, and a stop ends the run
 * without hanging.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "../framework/run/sched.h"
#include "ss_testutil.h"

#define N_SHARDS  3000
#define WINDOW    8
#define N_THREADS 4

typedef struct {
    ss_sched_t *sched;
    ss_ordered_t *ow;
    atomic_int window_violations;
    atomic_int max_ahead;
    atomic_int buffers_made;
    atomic_int bad_buffers;
    int peak_buffers;
    int fail_at; /* stop the run at this shard, or -1 */
    unsigned seed;
} ctx_t;

typedef struct {
    ctx_t *c;
    unsigned seed;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    ctx_t *c = w->c;
    int idx;
    while ((idx = ss_sched_next(c->sched)) >= 0) {
        int ahead = idx - ss_ordered_written(c->ow);
        if (ahead >= WINDOW)
            atomic_fetch_add(&c->window_violations, 1);
        int m = atomic_load(&c->max_ahead);
        while (ahead > m && !atomic_compare_exchange_weak(&c->max_ahead, &m, ahead))
            ;
        if (idx == c->fail_at) {
            ss_ordered_stop(c->ow);
            break;
        }
        kstring_t *b = ss_ordered_buffer(c->ow, 0, idx);
        if (!b && ss_ordered_stopped(c->ow))
            break;             /* waited for a buffer under the cap, and the run stopped */
        if (!b || b->l != 0) { /* CUnit is not thread-safe: count here, assert in main */
            atomic_fetch_add(&c->bad_buffers, 1);
            ss_ordered_stop(c->ow);
            break;
        }
        if (b->m == 0)
            atomic_fetch_add(&c->buffers_made, 1);
        /* random work, so shards finish out of order */
        struct timespec t = {0, (long)(rand_r(&w->seed) % 200) * 1000};
        nanosleep(&t, NULL);
        ksprintf(b, "shard %d\n", idx);
        ss_ordered_put(c->ow, idx, b);
    }
    return NULL;
}

typedef struct {
    int next;
    int bad;
} sink_state_t;

static int sink(void *ctx, int idx, const char *buf, size_t len)
{
    sink_state_t *s = ctx;
    char want[32];
    int l = snprintf(want, sizeof(want), "shard %d\n", s->next);
    if (idx != s->next || len != (size_t)l || memcmp(buf, want, len) != 0) {
        if (!s->bad)
            fprintf(stderr, "\nsink got shard %d (\"%.*s\"), expected %d\n", idx, (int)len, buf,
                    s->next);
        s->bad++;
    }
    s->next++;
    return 0;
}

/* cap: at most this many buffers (0: no cap). */
static int run(int fail_at, int cap, int *written, ctx_t *c)
{
    memset(c, 0, sizeof(*c));
    c->fail_at = fail_at;
    c->ow = ss_ordered_init(N_SHARDS, WINDOW, cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->ow);
    c->sched = ss_sched_local_init(N_SHARDS, c->ow);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->sched);
    pthread_t th[N_THREADS];
    worker_t w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker_t){c, 1234u + (unsigned)i};
        SS_EQ_FATAL(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    sink_state_t s = {0, 0};
    int r = ss_ordered_run(c->ow, sink, NULL, &s, 0.05);
    if (r < 0)
        ss_ordered_stop(c->ow);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    SS_EQ(s.bad, 0);
    SS_EQ(atomic_load(&c->bad_buffers), 0);
    *written = s.next;
    c->peak_buffers = ss_ordered_peak_buffers(c->ow);
    ss_sched_destroy(c->sched);
    ss_ordered_destroy(c->ow);
    return r;
}

static void test_in_order(void)
{
    ctx_t c;
    int written;
    SS_EQ(run(-1, 0, &written, &c), 0);
    SS_EQ(written, N_SHARDS);
    SS_EQ(atomic_load(&c.window_violations), 0);
    SS_LE(atomic_load(&c.max_ahead), WINDOW - 1);
    /* buffers are recycled: at most one per window slot plus one per worker */
    SS_LE(atomic_load(&c.buffers_made), WINDOW + N_THREADS);
}

static void test_stop(void)
{
    ctx_t c;
    int written;
    SS_EQ(run(500, 0, &written, &c), -1);
    SS_LE(written, 500); /* nothing past the failed shard is written */
}

/*
 * Capped at one buffer per worker plus one, the run still ends, in order, and never
 * holds more than the cap plus the one shard `next` may take beyond it.
 */
static void test_capped_buffers(void)
{
    ctx_t c;
    int written;
    SS_EQ(run(-1, N_THREADS + 1, &written, &c), 0);
    SS_EQ(written, N_SHARDS);
    SS_LE(c.peak_buffers, N_THREADS + 2);
    SS_EQ(run(-1, 1, &written, &c), 0); /* a cap below the workers: only `next` runs ahead */
    SS_EQ(written, N_SHARDS);
    SS_LE(c.peak_buffers, 2);
    SS_EQ(run(500, N_THREADS + 1, &written, &c), -1); /* a stop wakes workers waiting for one */
    SS_LE(written, 500);
}

typedef struct {
    ss_ordered_t *ow;
    int idx;
    kstring_t *got;
    atomic_int served_at; /* 1 + how many waiters were served before this one */
    atomic_int *served;
} waiter_arg_t;

static void *wait_for_buffer(void *arg)
{
    waiter_arg_t *a = arg;
    a->got = ss_ordered_buffer(a->ow, 0, a->idx);
    atomic_store(&a->served_at, 1 + atomic_fetch_add(a->served, 1));
    return NULL;
}

static void wait_until_waiting(ss_ordered_t *ow, int n)
{
    struct timespec t = {0, 1000000};
    for (int i = 0; i < 10000 && ss_ordered_waiting(ow) < n; i++)
        nanosleep(&t, NULL);
    SS_EQ_FATAL(ss_ordered_waiting(ow), n);
}

/*
 * At the cap, a returned buffer goes to the lowest waiting shard, whatever the
 * order the workers started waiting in: the writer needs the low shards first.
 */
static void test_lowest_waiter_first(void)
{
    ss_ordered_t *ow = ss_ordered_init(10, 10, 1);
    atomic_int served = 0;
    kstring_t *head = ss_ordered_buffer(ow, 0, 0); /* the one buffer, held by shard 0 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(head);
    waiter_arg_t far = {ow, 7, NULL, 0, &served}, near = {ow, 3, NULL, 0, &served};
    pthread_t t_far, t_near;
    SS_EQ_FATAL(pthread_create(&t_far, NULL, wait_for_buffer, &far), 0);
    wait_until_waiting(ow, 1);
    SS_EQ_FATAL(pthread_create(&t_near, NULL, wait_for_buffer, &near), 0);
    wait_until_waiting(ow, 2);
    ss_ordered_release(ow, head);
    struct timespec t = {0, 1000000};
    for (int i = 0; i < 10000 && atomic_load(&served) == 0; i++)
        nanosleep(&t, NULL);
    int near_at = atomic_load(&near.served_at), far_at = atomic_load(&far.served_at);
    SS_EQ(near_at, 1);
    SS_EQ(far_at, 0); /* shard 7 still waits ... */
    SS_EQ(ss_ordered_waiting(ow), 1);
    /* ... until the buffer comes back (whoever got it first, both end) */
    waiter_arg_t *first = near_at == 1 ? &near : &far;
    waiter_arg_t *second = first == &near ? &far : &near;
    CU_ASSERT_PTR_EQUAL(first->got, head); /* recycled, not a second buffer */
    ss_ordered_release(ow, first->got);
    pthread_join(t_near, NULL);
    pthread_join(t_far, NULL);
    SS_EQ(atomic_load(&second->served_at), 2);
    SS_EQ(ss_ordered_peak_buffers(ow), 1);
    ss_ordered_release(ow, second->got);
    ss_ordered_destroy(ow);
}

static int failing_sink(void *ctx, int idx, const char *buf, size_t len)
{
    (void)buf, (void)len;
    return idx == *(int *)ctx ? -1 : 0;
}

/* The writer's failure (disk full) stops the workers too. */
static void test_sink_failure(void)
{
    ss_ordered_t *ow = ss_ordered_init(100, 4, 0);
    ss_sched_t *sc = ss_sched_local_init(100, ow);
    ctx_t c;
    memset(&c, 0, sizeof(c));
    c.ow = ow;
    c.sched = sc;
    c.fail_at = -1;
    pthread_t th[2];
    worker_t w[2] = {{&c, 1}, {&c, 2}};
    for (int i = 0; i < 2; i++)
        SS_EQ_FATAL(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    int at = 10;
    SS_EQ(ss_ordered_run(ow, failing_sink, NULL, &at, 0.05), -1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    SS_EQ(ss_ordered_written(ow), 10);
    ss_sched_destroy(sc);
    ss_ordered_destroy(ow);
}

static void test_big_buffers_not_kept(void)
{
    ss_ordered_t *ow = ss_ordered_init(2, 2, 0);
    kstring_t *b = ss_ordered_buffer(ow, 0, 0);
    CU_ASSERT_FATAL(ks_resize(b, SS_ORDERED_KEEP_MAX + 1) == 0);
    ss_ordered_release(ow, b);
    kstring_t *again = ss_ordered_buffer(ow, 0, 0);
    CU_ASSERT_PTR_EQUAL(again, b); /* the struct is reused ... */
    SS_EQ(again->m, 0);            /* ... but its oversized memory was freed */
    ss_ordered_release(ow, again);
    ss_ordered_destroy(ow);
}

/* A buffer filled by one NUMA group's worker is never handed to another group. */
static void test_buffers_stay_in_group(void)
{
    ss_ordered_t *ow = ss_ordered_init(4, 4, 0);
    kstring_t *g1 = ss_ordered_buffer(ow, 1, 0);
    ss_ordered_release(ow, g1);
    kstring_t *g0 = ss_ordered_buffer(ow, 0, 0);
    CU_ASSERT_PTR_NOT_EQUAL(g0, g1); /* group 0 gets its own */
    kstring_t *g1_again = ss_ordered_buffer(ow, 1, 0);
    CU_ASSERT_PTR_EQUAL(g1_again, g1); /* group 1 gets its buffer back */
    ss_ordered_release(ow, g0);
    ss_ordered_release(ow, g1_again);
    ss_ordered_destroy(ow);
}

/*
 * The budget counts capacity: growth is granted only within it (partly, down to the
 * least asked), growth a buffer made by itself is counted when settled, and a buffer
 * recycled while the buffers hold more than the budget is freed.
 */
static void test_budget(void)
{
    const size_t MB = (size_t)1 << 20;
    ss_ordered_t *ow = ss_ordered_init(4, 4, 0);
    ss_ordered_set_budget(ow, 10 * MB);
    SS_EQ(ss_ordered_budget(ow), 10 * MB);
    kstring_t *a = ss_ordered_buffer(ow, 0, 0), *b = ss_ordered_buffer(ow, 0, 1);
    SS_EQ(ss_ordered_grow(ow, a, 6 * MB, 1 * MB), 1);
    SS_EQ(a->m, 6 * MB);
    SS_EQ(ss_ordered_grow(ow, b, 6 * MB, 5 * MB), 0); /* 4 MB left: less than the least */
    SS_EQ(ss_ordered_grow(ow, b, 6 * MB, 2 * MB), 1); /* granted what is left */
    SS_EQ(b->m, 4 * MB);
    SS_EQ(ss_ordered_peak_held(ow), 10 * MB);
    kputs("x", a);
    CU_ASSERT_FATAL(ks_resize(a, 7 * MB) == 0); /* growth the budget did not grant */
    SS_EQ(ss_ordered_settle(ow, a), 1);         /* ... counted: over the budget */
    CU_ASSERT(ss_ordered_peak_held(ow) > 10 * MB);
    ss_ordered_release(ow, a); /* over: its memory is freed, not kept */
    kstring_t *again = ss_ordered_buffer(ow, 0, 2);
    CU_ASSERT_PTR_EQUAL(again, a);
    SS_EQ(again->m, 0);
    SS_EQ(ss_ordered_grow(ow, again, 6 * MB, 6 * MB), 1); /* its 6+ MB came back to the budget */
    ss_ordered_release(ow, again);
    ss_ordered_release(ow, b);
    ss_ordered_destroy(ow);
}

static void test_empty_run(void)
{
    ss_ordered_t *ow = ss_ordered_init(0, 8, 0);
    sink_state_t s = {0, 0};
    SS_EQ(ss_ordered_run(ow, sink, NULL, &s, 0.05), 0);
    SS_EQ(s.next, 0);
    ss_ordered_destroy(ow);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("ordered", NULL, NULL);
    if (!s || !CU_add_test(s, "in_order", test_in_order) || !CU_add_test(s, "stop", test_stop) ||
        !CU_add_test(s, "sink_failure", test_sink_failure) ||
        !CU_add_test(s, "capped_buffers", test_capped_buffers) ||
        !CU_add_test(s, "lowest_waiter_first", test_lowest_waiter_first) ||
        !CU_add_test(s, "big_buffers_not_kept", test_big_buffers_not_kept) ||
        !CU_add_test(s, "buffers_stay_in_group", test_buffers_stay_in_group) ||
        !CU_add_test(s, "budget", test_budget) || !CU_add_test(s, "empty_run", test_empty_run))
        return 1;
    return ss_test_run();
}
