/*
 * census.c -- a kernel's census before its run: one number per shard, counted
 * by the kernel's census hook over every shard (threads, and ranks taking
 * shards in turn), summed over ranks, then turned into each shard's `before`:
 * the sum over the shards ahead of it in plan order. A kernel whose output at
 * a shard depends on how much of something came before it (bcftools mpileup's
 * random draws) reads it there, and the bytes do not depend on where the
 * shards ran.
 *
 * In a run of one rank the census is taken as the run goes instead (the end
 * of this file): the shards report their counts as they finish, and a shard
 * that needs the count of shards still running counts them itself.
 *
 * Private to framework/run/.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../plan/plan.h"
#include "../step/steps.h"
#include "engine.h"
#include "run.h"

typedef struct {
    engine_t *e;
    uint64_t *counts; /* [n_shards], each written by the worker that counted it */
    kstring_t *bytes; /* gathering: [n_shards], likewise */
    atomic_int next;
    atomic_int failed;
} census_t;

typedef struct {
    census_t *c;
    int id;
    pthread_t thread;
} census_worker_t;

/*
 * Count one shard with a census worker's reader, steps and state: into
 * *count, or with bytes into *bytes. 0, or -1 after ss_error().
 */
static int census_shard(engine_t *e, ss_reader_t *rd, ss_chain_t *chain, void *ws, int idx,
                        uint64_t *count, kstring_t *bytes)
{
    const ss_shard_t *sh = &e->shards[idx];
    ss_reader_set_shard(rd, idx);
    if (ss_reader_begin(rd) < 0)
        return -1;
    ss_chain_shard(chain, sh);
    int r = bytes ? e->k->gather(ws, sh, bytes) : e->k->census(ws, sh, count);
    ss_reader_end(rd);
    if (r < 0 && !ss_error_raised())
        ss_error("%s: reading shard %d before the run failed", e->k->name, idx);
    return r < 0 ? -1 : 0;
}

/* A census worker's own reader, steps and kernel state. */
struct census_state_s {
    ss_reader_t *rd;
    ss_chain_t *chain;
    void *ws;
};

static void state_close(engine_t *e, census_state_t *cs)
{
    if (!cs)
        return;
    if (e->k->worker_destroy)
        e->k->worker_destroy(cs->ws);
    ss_chain_close(cs->chain);
    ss_reader_destroy(cs->rd);
    free(cs);
}

/* A census worker's state, as worker id's. NULL after ss_error(). */
static census_state_t *state_open(engine_t *e, int id)
{
    census_state_t *cs = calloc(1, sizeof(*cs));
    int ok = cs && (cs->rd = ss_reader_init(ss_job_inputs(e->job))) != NULL;
    if (!ok)
        ss_error("out of memory starting census worker %d", id);
    if (ok) {
        cs->chain =
            ss_chain_open(e->job, cs->rd, ss_job_step_reach(e->job).halo, e->n_kernel_counters);
        ok = cs->chain || !ss_error_raised();
    }
    if (ok && e->k->worker_init)
        ok = e->k->worker_init(&cs->ws, e->kopts, e->run, e->job, cs->rd, id) == 0;
    if (!ok) {
        state_close(e, cs);
        return NULL;
    }
    return cs;
}

static void *census_main(void *arg)
{
    census_worker_t *cw = arg;
    census_t *c = cw->c;
    engine_t *e = c->e;
    census_state_t *cs = state_open(e, cw->id);
    int rank = ss_comm_rank(), size = ss_comm_size(), ok = cs != NULL;
    int idx;
    while (ok && !atomic_load(&c->failed) && (idx = atomic_fetch_add(&c->next, 1)) < e->n_shards)
        if (idx % size == rank && census_shard(e, cs->rd, cs->chain, cs->ws, idx, &c->counts[idx],
                                               c->bytes ? &c->bytes[idx] : NULL) < 0)
            ok = 0;
    if (!ok)
        atomic_store(&c->failed, 1);
    state_close(e, cs);
    return NULL;
}

/* This rank's counts, with n_workers threads. 0, or -1 after ss_error(). */
static int count_local(census_t *c, int n_workers)
{
    census_worker_t *w = calloc((size_t)n_workers, sizeof(*w));
    if (!w) {
        ss_error("out of memory starting the census");
        return -1;
    }
    int started = 0;
    for (int i = 0; i < n_workers; i++) {
        w[i] = (census_worker_t){.c = c, .id = i};
        if (pthread_create(&w[i].thread, NULL, census_main, &w[i]) != 0)
            break;
        started++;
    }
    if (started == 0)
        census_main(&w[0]); /* no thread to be had: count here */
    for (int i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);
    free(w);
    return atomic_load(&c->failed) ? -1 : 0;
}

int ss_census_run(engine_t *e, ss_shard_t *shards, int n, int n_workers)
{
    census_t c = {.e = e, .counts = calloc((size_t)(n > 0 ? n : 1), sizeof(uint64_t))};
    atomic_init(&c.next, 0);
    atomic_init(&c.failed, 0);
    int failed = !c.counts;
    if (!c.counts)
        ss_error("out of memory for the census of %d shards", n);
    if (!failed && n > 0)
        failed = count_local(&c, n_workers > 0 ? n_workers : 1) < 0;
    /* every rank reaches both collectives, whatever happened here */
    if (ss_comm_max_int(failed) != 0) {
        free(c.counts);
        return -1;
    }
    if (ss_comm_sum_u64(c.counts, (size_t)n) < 0) {
        ss_error("cannot add up the census over the ranks (an MPI failure)");
        free(c.counts);
        return -1;
    }
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        shards[i].before = sum;
        sum += c.counts[i];
    }
    free(c.counts);
    return 0;
}

/* ---- gather: bytes per shard, joined in plan order on every rank ---- */

/* This rank's shards' bytes as (index, length, bytes) pieces. 0, or -1 out of memory. */
static int pack_local(const census_t *c, int n, kstring_t *out)
{
    for (int i = 0; i < n; i++) {
        if (!c->bytes[i].l)
            continue;
        uint32_t idx = (uint32_t)i;
        uint64_t len = c->bytes[i].l;
        if (kputsn((const char *)&idx, sizeof(idx), out) < 0 ||
            kputsn((const char *)&len, sizeof(len), out) < 0 ||
            kputsn(c->bytes[i].s, c->bytes[i].l, out) < 0)
            return -1;
    }
    return 0;
}

/*
 * Rank 0: the pieces every rank sent (each shard's from the one rank that
 * read it), joined in shard order into *out. 0, or -1 after ss_error().
 */
static int join_pieces(const char *all, size_t len, int n, kstring_t *out)
{
    const char **at = calloc((size_t)(n > 0 ? n : 1), sizeof(*at));
    uint64_t *lens = calloc((size_t)(n > 0 ? n : 1), sizeof(*lens));
    int rc = at && lens ? 0 : -1;
    for (size_t p = 0; rc == 0 && p < len;) {
        uint32_t idx;
        uint64_t l;
        memcpy(&idx, all + p, sizeof(idx));
        memcpy(&l, all + p + sizeof(idx), sizeof(l));
        p += sizeof(idx) + sizeof(l);
        if (idx >= (uint32_t)n || l > len - p)
            rc = -1;
        else
            at[idx] = all + p, lens[idx] = l, p += l;
    }
    for (int i = 0; rc == 0 && i < n; i++)
        if (at[i] && kputsn(at[i], lens[i], out) < 0)
            rc = -1;
    free(at), free(lens);
    if (rc < 0)
        ss_error("cannot join the shards' decisions before the run (out of memory)");
    return rc;
}

/* Every rank: the joined bytes. 0 on every rank, or -1 on every rank. */
static int share(census_t *c, int n, kstring_t *joined)
{
    kstring_t mine = KS_INITIALIZE;
    void *all = NULL;
    size_t all_len = 0;
    int failed = pack_local(c, n, &mine) < 0;
    if (failed)
        ss_error("out of memory packing the shards' decisions");
    if (ss_comm_max_int(failed) != 0 || ss_comm_gatherv(mine.s, mine.l, &all, &all_len) < 0) {
        ks_free(&mine), free(all);
        return -1;
    }
    ks_free(&mine);
    failed = ss_comm_rank() == 0 && join_pieces(all, all_len, n, joined) < 0;
    free(all);
    void *buf = joined->s;
    size_t len = failed ? SIZE_MAX : joined->l;
    if (ss_comm_bcast_bytes(&buf, &len) < 0 || len == SIZE_MAX) {
        if (!ss_error_raised())
            ss_error("cannot share the shards' decisions over the ranks (an MPI failure)");
        return -1;
    }
    if (ss_comm_rank() != 0) /* the others received a copy */
        joined->s = buf, joined->l = joined->m = len;
    return 0;
}

int ss_gather_run(engine_t *e, int n, int n_workers)
{
    census_t c = {.e = e, .bytes = calloc((size_t)(n > 0 ? n : 1), sizeof(kstring_t))};
    atomic_init(&c.next, 0);
    atomic_init(&c.failed, 0);
    int failed = !c.bytes;
    if (!c.bytes)
        ss_error("out of memory gathering the decisions of %d shards", n);
    if (!failed && n > 0)
        failed = count_local(&c, n_workers > 0 ? n_workers : 1) < 0;
    kstring_t joined = KS_INITIALIZE;
    if (ss_comm_max_int(failed) != 0 || share(&c, n, &joined) < 0)
        failed = 1;
    for (int i = 0; c.bytes && i < n; i++)
        ks_free(&c.bytes[i]);
    free(c.bytes);
    if (!failed)
        failed = e->k->gathered(e->run, joined.s ? joined.s : "", joined.l) < 0;
    ks_free(&joined);
    return ss_comm_max_int(failed) ? -1 : 0;
}

/* ---- the census in a run of one rank: counted as the shards finish ---- */

struct ss_census_lazy_s {
    pthread_mutex_t lock;
    int n;
    uint64_t *counts;     /* [n]: shard i's count, once known[i] */
    unsigned char *known; /* [n] */
    uint64_t *before;     /* [n]: set for shards 0..upto */
    int upto;             /* shards 0..upto-1 are all known */
    uint64_t sum;         /* the counts of shards 0..upto-1 */
};

ss_census_lazy_t *ss_census_lazy_init(int n)
{
    ss_census_lazy_t *l = calloc(1, sizeof(*l));
    size_t m = (size_t)(n > 0 ? n : 1);
    if (!l || !(l->counts = calloc(m, sizeof(uint64_t))) || !(l->known = calloc(m, 1)) ||
        !(l->before = calloc(m, sizeof(uint64_t))) || pthread_mutex_init(&l->lock, NULL) != 0) {
        if (l)
            free(l->counts), free(l->known), free(l->before);
        free(l);
        ss_error("out of memory for the census of %d shards", n);
        return NULL;
    }
    l->n = n;
    return l;
}

void ss_census_lazy_destroy(ss_census_lazy_t *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->lock);
    free(l->counts), free(l->known), free(l->before);
    free(l);
}

uint64_t ss_census_lazy_before(ss_census_lazy_t *l, int idx)
{
    pthread_mutex_lock(&l->lock);
    uint64_t b = idx <= l->upto ? l->before[idx] : SS_BEFORE_UNKNOWN;
    pthread_mutex_unlock(&l->lock);
    return b;
}

/* Shard idx counted (by its pass, or by a census): 0, or -1 when two counts disagree. */
static int lazy_report_locked(ss_census_lazy_t *l, int idx, uint64_t count)
{
    if (l->known[idx] && l->counts[idx] != count)
        return -1;
    l->counts[idx] = count;
    l->known[idx] = 1;
    for (; l->upto < l->n && l->known[l->upto]; l->upto++) {
        l->before[l->upto] = l->sum;
        l->sum += l->counts[l->upto];
    }
    if (l->upto < l->n)
        l->before[l->upto] = l->sum;
    return 0;
}

int ss_census_lazy_report(ss_census_lazy_t *l, int idx, uint64_t count)
{
    pthread_mutex_lock(&l->lock);
    uint64_t had = l->counts[idx];
    int r = lazy_report_locked(l, idx, count);
    pthread_mutex_unlock(&l->lock);
    if (r < 0)
        ss_error("internal error: shard %d counted %" PRIu64 " by its census and %" PRIu64
                 " by its pass; please report it (--shard-size or -@ 1 avoid it)",
                 idx, had, count);
    return r;
}

/* The first shard before idx with no count yet, or -1. */
static int first_unknown(ss_census_lazy_t *l, int idx)
{
    pthread_mutex_lock(&l->lock);
    int j = l->upto;
    while (j < idx && l->known[j])
        j++;
    pthread_mutex_unlock(&l->lock);
    return j < idx ? j : -1;
}

int ss_census_lazy_fill(engine_t *e, ss_census_lazy_t *l, int idx, census_state_t **cs, int id)
{
    for (int j; (j = first_unknown(l, idx)) >= 0;) {
        if (!*cs && !(*cs = state_open(e, id)))
            return -1;
        uint64_t count = 0;
        if (census_shard(e, (*cs)->rd, (*cs)->chain, (*cs)->ws, j, &count, NULL) < 0 ||
            ss_census_lazy_report(l, j, count) < 0)
            return -1;
    }
    return 0;
}

void ss_census_state_close(engine_t *e, census_state_t *cs)
{
    state_close(e, cs);
}
