/*
 * sched.c -- single-process scheduler: shard indexes from one atomic counter,
 * in order, each admitted through the ordered writer's window before it is
 * returned, so no worker runs more than `window` shards ahead of the output.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "sched.h"

typedef struct {
    ss_sched_t ops; /* first: the struct is used through a pointer to ops */
    atomic_int next;
    int n;
    ss_ordered_t *ow;
} local_sched_t;

static int local_next(ss_sched_t *s)
{
    local_sched_t *ls = (local_sched_t *)s;
    if (ss_ordered_stopped(ls->ow))
        return -1;
    int idx;
    do /* shards kept from an earlier run (--resume) are in the output already */
        idx = atomic_fetch_add(&ls->next, 1);
    while (idx < ls->n && ss_ordered_kept(ls->ow, idx));
    if (idx >= ls->n)
        return -1;
    return ss_ordered_admit(ls->ow, idx) < 0 ? -1 : idx;
}

static void local_destroy(ss_sched_t *s)
{
    free(s);
}

ss_sched_t *ss_sched_local_init(int n_shards, ss_ordered_t *ow)
{
    local_sched_t *ls = calloc(1, sizeof(*ls));
    if (!ls)
        return NULL;
    ls->ops.next = local_next;
    ls->ops.destroy = local_destroy;
    atomic_init(&ls->next, 0);
    ls->n = n_shards;
    ls->ow = ow;
    return &ls->ops;
}
