/*
 * ordered.c -- single-process ordered hand-off from workers to the writer.
 *
 * Invariants (all under ow->lock):
 *   - next is the index of the next shard to write; shards < next are written.
 *   - a shard idx may be processed only while idx < next + window (admit), so
 *     at most `window` finished buffers wait in slot[], each at idx % window,
 *     and no two waiting shards share a slot.
 *   - a buffer is owned by exactly one party: the free list, one worker, the
 *     slot array, or the writer while it writes.
 *   - at most max_live buffers exist (free, held or waiting), when capped;
 *     shard `next` may always have one more.
 *   - a buffer goes to the lowest shard waiting for one (waiters list).
 * NUMA: a buffer belongs to the worker group (NUMA node) that first filled
 * it, so its pages are on that node, and it is only handed out to that group
 * again: a shard's data stays on the node of the worker that made it.
 * Memory: every buffer's pages are faulted in once, so the number of buffers
 * is the run's page faults (docs/benchmarks.md#allocators); with the cap at
 * running workers + 1 (engine.c) a worker that is two shards ahead, or one of
 * more workers than cores, waits for the writer instead of touching a new buffer.
 * Memory budget: held is the sum of every live buffer's capacity (not its
 * length: capacity is what a buffer pins). A buffer grows through
 * ss_ordered_grow only within the budget; growth a kernel made on its own
 * (kputs past the end) is counted when the buffer is next settled, and a
 * buffer recycled while held passes the budget is freed instead of kept.
 * Deadlock freedom: shards are admitted in index order by the scheduler, and
 * shard `next` is always admissible and always gets a buffer, so whoever holds
 * it can finish it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../alloc/ss_alloc.h"
#include "ordered.h"

/* A buffer and the worker group whose node holds its pages. */
typedef struct {
    kstring_t ks; /* first: the kstring_t * handed out points here */
    int group;
    size_t charged; /* the capacity counted in held (under the lock) */
} group_buf_t;

struct ss_ordered_s {
    pthread_mutex_t lock;
    pthread_cond_t admit_cv; /* workers wait for the window to move */
    pthread_cond_t ready_cv; /* the writer waits for shard `next` (monotonic clock) */
    pthread_cond_t free_cv;  /* workers wait for a buffer under the cap */
    int n, window;
    int next;
    int stopped;
    kstring_t **slot;      /* [window] */
    kstring_t **free_list; /* recycled buffers, capacity kept */
    int n_free, m_free;
    int n_live, max_live; /* buffers in existence; the cap, 0 for none */
    int peak_live;
    size_t budget;             /* bytes of capacity all buffers may hold; 0: no limit */
    size_t held, peak_held;    /* sum of the buffers' charged capacities */
    struct waiter_s *waiters;  /* workers waiting in ss_ordered_buffer() */
    const unsigned char *kept; /* [n] shards already in the output (--resume), or NULL;
                                * set before the workers start, read-only after */
};

/*
 * A worker waiting for a buffer, on its own stack. The lowest shard goes first:
 * woken in any order, workers far ahead took the buffers while the shard the
 * writer needed next waited, and then made one more past the cap (0.3 s more
 * wall time on 8 workers over 2 cores).
 */
typedef struct waiter_s {
    int idx;
    struct waiter_s *next;
} waiter_t;

ss_ordered_t *ss_ordered_init(int n_shards, int window, int max_buffers)
{
    if (window < 1)
        window = 1;
    ss_ordered_t *ow = calloc(1, sizeof(*ow));
    if (!ow)
        return NULL;
    ow->n = n_shards;
    ow->window = window;
    ow->max_live = max_buffers > 0 ? max_buffers : 0;
    pthread_condattr_t ca;
    int ok = (ow->slot = calloc((size_t)window, sizeof(*ow->slot))) != NULL;
    ok = ok && pthread_mutex_init(&ow->lock, NULL) == 0;
    ok = ok && pthread_cond_init(&ow->admit_cv, NULL) == 0;
    ok = ok && pthread_cond_init(&ow->free_cv, NULL) == 0;
    ok = ok && pthread_condattr_init(&ca) == 0;
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&ow->ready_cv, &ca) == 0;
    if (!ok) {
        free(ow->slot);
        free(ow);
        return NULL; /* the primitives cannot fail on Linux but for ENOMEM */
    }
    pthread_condattr_destroy(&ca);
    return ow;
}

static void buf_free(kstring_t *b)
{
    if (b) {
        free(b->s);
        free(b);
    }
}

/* Count b's capacity as it is now; 1 when held then passes the budget. Lock held. */
static int settle_locked(ss_ordered_t *ow, kstring_t *b)
{
    group_buf_t *g = (group_buf_t *)b;
    ow->held = ow->held - g->charged + b->m;
    g->charged = b->m;
    if (ow->held > ow->peak_held)
        ow->peak_held = ow->held;
    return ow->budget && ow->held > ow->budget;
}

/* Free a live buffer and its charge. Lock held. */
static void drop_locked(ss_ordered_t *ow, kstring_t *b)
{
    ow->held -= ((group_buf_t *)b)->charged;
    buf_free(b);
    ow->n_live--;
}

void ss_ordered_destroy(ss_ordered_t *ow)
{
    if (!ow)
        return;
    for (int i = 0; i < ow->window; i++)
        buf_free(ow->slot[i]);
    for (int i = 0; i < ow->n_free; i++)
        buf_free(ow->free_list[i]);
    free(ow->free_list);
    free(ow->slot);
    pthread_mutex_destroy(&ow->lock);
    pthread_cond_destroy(&ow->admit_cv);
    pthread_cond_destroy(&ow->ready_cv);
    pthread_cond_destroy(&ow->free_cv);
    free(ow);
}

void ss_ordered_set_kept(ss_ordered_t *ow, const unsigned char *kept)
{
    ow->kept = kept;
}

int ss_ordered_kept(const ss_ordered_t *ow, int idx)
{
    return ow->kept && ow->kept[idx];
}

int ss_ordered_admit(ss_ordered_t *ow, int idx)
{
    pthread_mutex_lock(&ow->lock);
    while (!ow->stopped && idx >= ow->next + ow->window)
        pthread_cond_wait(&ow->admit_cv, &ow->lock);
    int r = ow->stopped ? -1 : 0;
    pthread_mutex_unlock(&ow->lock);
    return r;
}

/* Keep b for reuse unless it grew past SS_ORDERED_KEEP_MAX. Called with the lock held. */
static void recycle_locked(ss_ordered_t *ow, kstring_t *b)
{
    int over = settle_locked(ow, b);
    if (ow->max_live && ow->n_live > ow->max_live) {
        drop_locked(ow, b); /* shard `next` went over the cap: do not keep the extra one */
        pthread_cond_broadcast(&ow->free_cv); /* the lowest waiter must see it */
        return;
    }
    if (b->m > SS_ORDERED_KEEP_MAX || over) {
        free(b->s);
        b->s = NULL;
        b->m = 0;
        (void)settle_locked(ow, b);
    }
    b->l = 0;
    if (ow->n_free == ow->m_free) {
        int m = ow->m_free ? 2 * ow->m_free : 16;
        kstring_t **a = realloc(ow->free_list, (size_t)m * sizeof(*a));
        if (!a) {
            drop_locked(ow, b);                   /* cannot keep it; it will be allocated again */
            pthread_cond_broadcast(&ow->free_cv); /* the lowest waiter must see it */
            return;
        }
        ow->free_list = a;
        ow->m_free = m;
    }
    ow->free_list[ow->n_free++] = b;
    pthread_cond_broadcast(&ow->free_cv); /* waiters of any group may now trade one in */
}

/* Take a free buffer of `group` off the list, or NULL. Lock held. */
static group_buf_t *take_free_locked(ss_ordered_t *ow, int group)
{
    for (int i = ow->n_free - 1; i >= 0; i--) {
        group_buf_t *g = (group_buf_t *)ow->free_list[i];
        if (g->group == group) {
            ow->free_list[i] = ow->free_list[--ow->n_free];
            return g;
        }
    }
    return NULL;
}

/* Is idx the lowest shard waiting for a buffer? Lock held. */
static int first_waiter_locked(const ss_ordered_t *ow, int idx)
{
    for (const waiter_t *w = ow->waiters; w; w = w->next)
        if (w->idx < idx)
            return 0;
    return 1;
}

static void unlink_waiter_locked(ss_ordered_t *ow, const waiter_t *me)
{
    waiter_t **p = &ow->waiters;
    while (*p != me)
        p = &(*p)->next;
    *p = me->next;
}

/* A buffer for shard idx if it may have one now: 1 and *g (NULL: make one), or 0. Lock held. */
static int grant_locked(ss_ordered_t *ow, int group, int idx, group_buf_t **g)
{
    if (idx != ow->next && !first_waiter_locked(ow, idx))
        return 0;
    if ((*g = take_free_locked(ow, group)))
        return 1;
    if (!ow->max_live || ow->n_live < ow->max_live || idx == ow->next)
        return 1;
    if (ow->n_free > 0) {
        /* at the cap, only another node's buffers are free: trade one in */
        drop_locked(ow, ow->free_list[--ow->n_free]);
        return 1;
    }
    return 0;
}

kstring_t *ss_ordered_buffer(ss_ordered_t *ow, int group, int idx)
{
    group_buf_t *g = NULL;
    waiter_t me = {idx, NULL};
    int granted;
    pthread_mutex_lock(&ow->lock);
    if (!(granted = grant_locked(ow, group, idx, &g))) {
        me.next = ow->waiters;
        ow->waiters = &me;
        while (!(granted = grant_locked(ow, group, idx, &g)) && !ow->stopped)
            pthread_cond_wait(&ow->free_cv, &ow->lock);
        unlink_waiter_locked(ow, &me);
        pthread_cond_broadcast(&ow->free_cv); /* the next-lowest may now be served */
    }
    int make = granted && !g;
    if (make && ++ow->n_live > ow->peak_live)
        ow->peak_live = ow->n_live;
    pthread_mutex_unlock(&ow->lock);
    if (make) {
        /* its length is written per line by one worker: a private line (ss_alloc.h) */
        g = ss_alloc_private(sizeof(*g));
        if (!g) {
            pthread_mutex_lock(&ow->lock);
            ow->n_live--;
            pthread_cond_broadcast(&ow->free_cv); /* the lowest waiter must see it */
            pthread_mutex_unlock(&ow->lock);
            return NULL;
        }
        g->group = group;
        g->charged = 0;
    }
    if (g)
        g->ks.l = 0;
    return g ? &g->ks : NULL;
}

void ss_ordered_set_budget(ss_ordered_t *ow, size_t bytes)
{
    ow->budget = bytes;
}

size_t ss_ordered_budget(const ss_ordered_t *ow)
{
    return ow->budget;
}

size_t ss_ordered_share(const ss_ordered_t *ow)
{
    return ow->max_live > 0 ? ow->budget / (size_t)ow->max_live : ow->budget;
}

int ss_ordered_settle(ss_ordered_t *ow, kstring_t *b)
{
    pthread_mutex_lock(&ow->lock);
    int over = settle_locked(ow, b);
    pthread_mutex_unlock(&ow->lock);
    return over;
}

/* Room for b to grow to, within the budget: at most want. Lock held. */
static size_t room_locked(const ss_ordered_t *ow, const kstring_t *b, size_t want)
{
    size_t others = ow->held - ((const group_buf_t *)b)->charged;
    if (!ow->budget)
        return want;
    size_t room = ow->budget > others ? ow->budget - others : 0;
    return want < room ? want : room;
}

int ss_ordered_grow(ss_ordered_t *ow, kstring_t *b, size_t want, size_t least)
{
    if (b->m >= least)
        return 1;
    pthread_mutex_lock(&ow->lock);
    (void)settle_locked(ow, b);
    size_t to = room_locked(ow, b, want);
    if (to < least) {
        pthread_mutex_unlock(&ow->lock);
        return 0;
    }
    group_buf_t *g = (group_buf_t *)b;
    size_t old = b->m;
    ow->held = ow->held - g->charged + to; /* counted before the pages exist */
    g->charged = to;
    if (ow->held > ow->peak_held)
        ow->peak_held = ow->held;
    pthread_mutex_unlock(&ow->lock);
    /* nothing to keep: a fresh block instead of realloc copying the old one */
    char *s = b->l ? realloc(b->s, to) : malloc(to);
    if (s && !b->l)
        free(b->s);
    pthread_mutex_lock(&ow->lock);
    if (s) {
        b->s = s, b->m = to;
    } else {
        ow->held = ow->held - to + old;
        g->charged = old;
    }
    pthread_mutex_unlock(&ow->lock);
    return s ? 1 : -1;
}

size_t ss_ordered_peak_held(ss_ordered_t *ow)
{
    pthread_mutex_lock(&ow->lock);
    size_t n = ow->peak_held;
    pthread_mutex_unlock(&ow->lock);
    return n;
}

void ss_ordered_put(ss_ordered_t *ow, int idx, kstring_t *buf)
{
    pthread_mutex_lock(&ow->lock);
    kstring_t **s = &ow->slot[idx % ow->window];
    if (*s)
        recycle_locked(ow, *s); /* cannot happen while admit() is respected */
    *s = buf;
    if (idx == ow->next)
        pthread_cond_signal(&ow->ready_cv);
    pthread_mutex_unlock(&ow->lock);
}

void ss_ordered_release(ss_ordered_t *ow, kstring_t *buf)
{
    if (!buf)
        return;
    pthread_mutex_lock(&ow->lock);
    recycle_locked(ow, buf);
    pthread_mutex_unlock(&ow->lock);
}

void ss_ordered_stop(ss_ordered_t *ow)
{
    pthread_mutex_lock(&ow->lock);
    ow->stopped = 1;
    pthread_cond_broadcast(&ow->admit_cv);
    pthread_cond_broadcast(&ow->ready_cv);
    pthread_cond_broadcast(&ow->free_cv);
    pthread_mutex_unlock(&ow->lock);
}

int ss_ordered_stopped(ss_ordered_t *ow)
{
    pthread_mutex_lock(&ow->lock);
    int s = ow->stopped;
    pthread_mutex_unlock(&ow->lock);
    return s;
}

int ss_ordered_peak_buffers(ss_ordered_t *ow)
{
    pthread_mutex_lock(&ow->lock);
    int n = ow->peak_live;
    pthread_mutex_unlock(&ow->lock);
    return n;
}

int ss_ordered_waiting(ss_ordered_t *ow)
{
    pthread_mutex_lock(&ow->lock);
    int n = 0;
    for (const waiter_t *w = ow->waiters; w; w = w->next)
        n++;
    pthread_mutex_unlock(&ow->lock);
    return n;
}

int ss_ordered_written(ss_ordered_t *ow)
{
    pthread_mutex_lock(&ow->lock);
    int n = ow->next;
    pthread_mutex_unlock(&ow->lock);
    return n;
}

static struct timespec deadline_after(double s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ns = (long)((s - (double)(long)s) * 1e9);
    t.tv_sec += (time_t)s;
    t.tv_nsec += ns;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

int ss_ordered_run(ss_ordered_t *ow, ss_ordered_sink_f sink, ss_ordered_tick_f tick, void *ctx,
                   double tick_s)
{
    pthread_mutex_lock(&ow->lock);
    while (ow->next < ow->n) {
        int i = ow->next % ow->window;
        /* no worker runs a kept shard: the sink steps over its bytes (buf NULL) */
        int kept = ss_ordered_kept(ow, ow->next);
        while (!kept && !ow->stopped && !ow->slot[i]) {
            struct timespec t = deadline_after(tick_s > 0 ? tick_s : 1.0);
            if (pthread_cond_timedwait(&ow->ready_cv, &ow->lock, &t) == ETIMEDOUT && tick) {
                pthread_mutex_unlock(&ow->lock);
                tick(ctx);
                pthread_mutex_lock(&ow->lock);
            }
        }
        if (ow->stopped)
            break;
        kstring_t *b = kept ? NULL : ow->slot[i];
        ow->slot[i] = kept ? ow->slot[i] : NULL;
        int idx = ow->next;
        pthread_mutex_unlock(&ow->lock);
        int r = b ? sink(ctx, idx, b->s ? b->s : "", b->l) : sink(ctx, idx, NULL, 0);
        pthread_mutex_lock(&ow->lock);
        if (b)
            recycle_locked(ow, b);
        if (r < 0) {
            ow->stopped = 1;
            pthread_cond_broadcast(&ow->admit_cv);
            pthread_cond_broadcast(&ow->free_cv);
            break;
        }
        ow->next++;
        pthread_cond_broadcast(&ow->admit_cv);
        pthread_cond_broadcast(&ow->free_cv); /* a waiter may now hold shard `next` */
    }
    int r = ow->next == ow->n ? 0 : -1;
    pthread_mutex_unlock(&ow->lock);
    return r;
}
