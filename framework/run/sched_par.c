/*
 * sched_par.c -- scheduler for a rank among several: shards come from the
 * counter shared by all ranks (comm.c). Workers never call MPI, so the main
 * thread takes a shard from the counter each time a worker asks for one
 * (ss_sched_par_pump) and hands it over through a one-slot mailbox per
 * request; a rank therefore never holds shards no worker is ready for, and
 * ranks that finish early take more.
 *
 * The same condition variable wakes the main thread for the merge: a
 * worker's request follows its store put, and ss_sched_par_kick covers the
 * rest (a worker leaving), so between events the main thread sleeps here
 * instead of polling.
 *
 * Locking: everything below is under `lock`. `want` counts workers waiting;
 * `ready` holds shard indexes taken for them; `done` is set when the counter
 * is exhausted or the run stopped; `kicked` records an event since the main
 * thread last woke, so no wake-up is lost.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../../base/ss_base.h"
#include "../comm/comm.h"
#include "sched.h"

typedef struct {
    ss_sched_t ops; /* first: used through a pointer to ops */
    pthread_mutex_t lock;
    pthread_cond_t to_workers, to_main;
    int *ready;
    int n_ready, cap;
    int want;
    int done;
    int kicked;
    int hold;                  /* take no new shard: this rank's unwritten output is at its cap */
    const unsigned char *kept; /* [n_shards] already in the output (--resume), or NULL;
                                * main thread only */
} par_sched_t;

static int par_next(ss_sched_t *s)
{
    par_sched_t *ps = (par_sched_t *)s;
    int idx = -1;
    pthread_mutex_lock(&ps->lock);
    ps->want++;
    ps->kicked = 1;
    pthread_cond_signal(&ps->to_main);
    while (!ps->done && ps->n_ready == 0)
        pthread_cond_wait(&ps->to_workers, &ps->lock);
    if (ps->n_ready > 0)
        idx = ps->ready[--ps->n_ready];
    ps->want--;
    pthread_mutex_unlock(&ps->lock);
    return idx;
}

static void par_destroy(ss_sched_t *s)
{
    par_sched_t *ps = (par_sched_t *)s;
    pthread_mutex_destroy(&ps->lock);
    pthread_cond_destroy(&ps->to_workers);
    pthread_cond_destroy(&ps->to_main);
    free(ps->ready);
    free(ps);
}

ss_sched_t *ss_sched_par_init(int n_workers)
{
    par_sched_t *ps = calloc(1, sizeof(*ps));
    if (!ps || !(ps->ready = calloc((size_t)n_workers + 1, sizeof(int)))) {
        free(ps);
        return NULL;
    }
    ps->cap = n_workers + 1;
    pthread_mutex_init(&ps->lock, NULL);
    pthread_cond_init(&ps->to_workers, NULL);
    pthread_cond_init(&ps->to_main, NULL);
    ps->ops.next = par_next;
    ps->ops.destroy = par_destroy;
    return &ps->ops;
}

int ss_sched_par_pump(ss_sched_t *s, double wait_s)
{
    par_sched_t *ps = (par_sched_t *)s;
    pthread_mutex_lock(&ps->lock);
    int unserved = !ps->done && !ps->hold && ps->want > ps->n_ready;
    /* Only a call that may sleep consumes the kick: one made between two write
     * chunks (wait_s <= 0) must leave it for the main loop, which has yet to
     * publish the piece put just before the request it serves here. */
    if (wait_s > 0) {
        if (!ps->kicked && !unserved) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            long ns = t.tv_nsec + (long)(wait_s * 1e9);
            t.tv_sec += ns / 1000000000L;
            t.tv_nsec = ns % 1000000000L;
            pthread_cond_timedwait(&ps->to_main, &ps->lock, &t);
        }
        ps->kicked = 0;
    }
    while (!ps->done && !ps->hold && ps->want > ps->n_ready && ps->n_ready < ps->cap) {
        pthread_mutex_unlock(&ps->lock);
        /* a local failure stops this rank's workers and, through the flag, every rank */
        int idx = ss_error_raised() ? -1 : ss_comm_counter_next();
        while (idx >= 0 && ps->kept && ps->kept[idx])
            idx = ss_comm_counter_next(); /* kept from an earlier run: in the file already */
        pthread_mutex_lock(&ps->lock);
        if (idx < 0)
            ps->done = 1;
        else
            ps->ready[ps->n_ready++] = idx;
    }
    if (ps->done || ps->n_ready)
        pthread_cond_broadcast(&ps->to_workers);
    int done = ps->done;
    pthread_mutex_unlock(&ps->lock);
    return done;
}

void ss_sched_par_set_kept(ss_sched_t *s, const unsigned char *kept)
{
    ((par_sched_t *)s)->kept = kept;
}

void ss_sched_par_kick(ss_sched_t *s)
{
    par_sched_t *ps = (par_sched_t *)s;
    pthread_mutex_lock(&ps->lock);
    ps->kicked = 1;
    pthread_cond_signal(&ps->to_main);
    pthread_mutex_unlock(&ps->lock);
}

void ss_sched_par_stop(ss_sched_t *s, int discard)
{
    par_sched_t *ps = (par_sched_t *)s;
    pthread_mutex_lock(&ps->lock);
    ps->done = 1;
    if (discard)
        ps->n_ready = 0; /* the run failed: shards taken but not started are dropped */
    pthread_cond_broadcast(&ps->to_workers);
    pthread_mutex_unlock(&ps->lock);
}

void ss_sched_par_hold(ss_sched_t *s, int hold)
{
    par_sched_t *ps = (par_sched_t *)s;
    pthread_mutex_lock(&ps->lock);
    ps->hold = hold;
    pthread_mutex_unlock(&ps->lock);
}
