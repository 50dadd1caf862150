/*
 * sched.h -- which shard a worker takes next.
 *
 * The single-process scheduler (sched.c) hands out shard indexes in order
 * from one atomic counter, and holds a worker back while its shard is too
 * far ahead of the writer (ss_ordered_admit), which bounds buffered output.
 * The multi-rank scheduler (sched_par.c) fills the same struct.
 *
 * Private to framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_SCHED_H
#define SS_SCHED_H

#include "../out/ordered.h"

typedef struct ss_sched_s ss_sched_t;
struct ss_sched_s {
    /* Next shard index for the calling worker, or -1 when none is left or the run stopped. */
    int (*next)(ss_sched_t *s);
    void (*destroy)(ss_sched_t *s);
};

/* Shards 0..n_shards-1 in order, admitted through ow's window. NULL on allocation failure. */
ss_sched_t *ss_sched_local_init(int n_shards, ss_ordered_t *ow);

/*
 * Multi-rank: shards come from the counter all ranks share (comm.c). Workers
 * block in next() until the main thread, in ss_sched_par_pump(), takes a
 * shard for them. pump sleeps up to wait_s unless a worker asked or a kick
 * came since it last slept, then serves every waiting worker; it returns 1
 * once no shard is left (or the run stopped), and still sleeps then, so the
 * main thread can wait on it for the merge. With wait_s <= 0 it only serves,
 * and leaves the kick for the next call that may sleep.
 * Main thread only.
 */
ss_sched_t *ss_sched_par_init(int n_workers);
int ss_sched_par_pump(ss_sched_t *s, double wait_s);
/*
 * Back-pressure: while hold is set, pump takes no new shard (shards already
 * taken still run). Main thread. No deadlock: a held rank's unwritten pieces
 * wait only for shards with smaller indexes, which were all taken before
 * them and are not held back.
 */
void ss_sched_par_hold(ss_sched_t *s, int hold);
/* Shards kept from an earlier run (--resume; [n_shards], NULL: none): never handed out. Main
 * thread, before the workers start. */
void ss_sched_par_set_kept(ss_sched_t *s, const unsigned char *kept);
/* Wake the main thread's pump (a worker is leaving, say). Any thread. */
void ss_sched_par_kick(ss_sched_t *s);
/* No more shards; discard: also drop those taken but not yet started (failure). */
void ss_sched_par_stop(ss_sched_t *s, int discard);

static inline int ss_sched_next(ss_sched_t *s)
{
    return s->next(s);
}

static inline void ss_sched_destroy(ss_sched_t *s)
{
    if (s)
        s->destroy(s);
}

#endif
