/*
 * reduce.c -- a kernel's reductions: per-worker int64 values, each combined
 * by its op (sum, min, max), and histograms that are summed bin by bin, over
 * the workers of a rank and then over the ranks (comm.c), for the kernel's
 * finish hook.
 *
 * Ownership: worker i's values are its own (allocated on its thread, private
 * cache lines) until the main thread combines them after the workers were
 * joined. Histograms are the rank's, one copy each whatever the number of
 * workers, under one lock: a worker adds a shard's bins at once (once per
 * shard, so the lock is rarely contended), and each grows only as far as
 * the deepest bin added. The result belongs to the reduction.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "side.h"

typedef struct {
    int64_t *v;     /* [n] */
    int64_t **hist; /* [n_hists], NULL until touched (the result's only) */
    size_t *hlen;   /* [n_hists] */
} part_t;

struct ss_reduce_s {
    size_t n;
    ss_reduce_op_t *ops;
    int n_hists, n_workers;
    part_t *w;            /* [n_workers]: their values */
    part_t res;           /* the values' result; the histograms, from the first add */
    pthread_mutex_t lock; /* res's histograms while workers run */
};

void ss_reduce_identity(int64_t *v, const ss_reduce_op_t *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = ops[i] == SS_REDUCE_MIN ? INT64_MAX : ops[i] == SS_REDUCE_MAX ? INT64_MIN : 0;
}

void ss_reduce_combine(int64_t *acc, const int64_t *v, const ss_reduce_op_t *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ops[i] == SS_REDUCE_MIN)
            acc[i] = v[i] < acc[i] ? v[i] : acc[i];
        else if (ops[i] == SS_REDUCE_MAX)
            acc[i] = v[i] > acc[i] ? v[i] : acc[i];
        else
            acc[i] += v[i];
    }
}

static void part_free(part_t *p, int n_hists)
{
    for (int h = 0; p->hist && h < n_hists; h++)
        free(p->hist[h]);
    free(p->hist);
    free(p->hlen);
    free(p->v);
}

static int part_init(part_t *p, size_t n, int n_hists)
{
    p->v = ss_alloc_private((n ? n : 1) * sizeof(*p->v));
    p->hist = ss_alloc_private((size_t)(n_hists ? n_hists : 1) * sizeof(*p->hist));
    p->hlen = ss_alloc_private((size_t)(n_hists ? n_hists : 1) * sizeof(*p->hlen));
    return p->v && p->hist && p->hlen ? 0 : -1;
}

ss_reduce_t *ss_reduce_init(size_t n, const ss_reduce_op_t *ops, int n_hists, int n_workers)
{
    ss_reduce_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->n = n, r->n_hists = n_hists, r->n_workers = n_workers;
    r->ops = malloc((n ? n : 1) * sizeof(*r->ops));
    r->w = calloc((size_t)(n_workers ? n_workers : 1), sizeof(*r->w));
    pthread_mutex_init(&r->lock, NULL);
    if (!r->ops || !r->w || part_init(&r->res, n, n_hists) < 0) {
        ss_reduce_destroy(r);
        return NULL;
    }
    if (n)
        memcpy(r->ops, ops, n * sizeof(*ops));
    ss_reduce_identity(r->res.v, r->ops, n);
    return r;
}

void ss_reduce_destroy(ss_reduce_t *r)
{
    if (!r)
        return;
    for (int i = 0; r->w && i < r->n_workers; i++)
        part_free(&r->w[i], 0); /* values only */
    part_free(&r->res, r->n_hists);
    pthread_mutex_destroy(&r->lock);
    free(r->w);
    free(r->ops);
    free(r);
}

int ss_reduce_attach(ss_reduce_t *r, int id)
{
    if (part_init(&r->w[id], r->n, 0) < 0) {
        ss_error("out of memory for worker %d's reductions", id);
        return -1;
    }
    ss_reduce_identity(r->w[id].v, r->ops, r->n);
    return 0;
}

int64_t *ss_reduce_values(ss_reduce_t *r, int id)
{
    return r->w[id].v;
}

/* Grow *a from *len to want bins (zeroed); doubling, so a growing pile costs log steps. */
static int64_t *grow(int64_t **a, size_t *len, size_t want)
{
    if (want <= *len)
        return *a;
    size_t cap = *len ? *len : 64;
    while (cap < want)
        cap *= 2;
    int64_t *b = realloc(*a, cap * sizeof(*b));
    if (!b)
        return NULL;
    memset(b + *len, 0, (cap - *len) * sizeof(*b));
    *a = b, *len = cap;
    return b;
}

int ss_reduce_hist_add(ss_reduce_t *r, int h, const int64_t *bins, size_t n)
{
    pthread_mutex_lock(&r->lock);
    int64_t *a = grow(&r->res.hist[h], &r->res.hlen[h], n);
    for (size_t i = 0; a && i < n; i++)
        a[i] += bins[i];
    pthread_mutex_unlock(&r->lock);
    if (!a)
        ss_error("out of memory growing histogram %d to %zu bins", h, n);
    return a ? 0 : -1;
}

/* Several ranks: values by op (a sum, a min and a max over the ranks). 0 or -1. */
static int values_over_ranks(ss_reduce_t *r)
{
    int64_t *v = r->res.v;
    int64_t *t = malloc(3 * (r->n ? r->n : 1) * sizeof(*t));
    if (!t)
        return -1;
    int64_t *sum = t, *mn = t + r->n, *mx = t + 2 * r->n;
    for (size_t i = 0; i < r->n; i++) {
        sum[i] = r->ops[i] == SS_REDUCE_SUM ? v[i] : 0;
        mn[i] = r->ops[i] == SS_REDUCE_MIN ? v[i] : INT64_MAX;
        mx[i] = r->ops[i] == SS_REDUCE_MAX ? v[i] : INT64_MIN;
    }
    /* two's complement: an unsigned sum is the signed sum */
    int rc = ss_comm_sum_u64((uint64_t *)sum, r->n) < 0 || ss_comm_minmax_i64(mn, r->n, 0) < 0 ||
                     ss_comm_minmax_i64(mx, r->n, 1) < 0
                 ? -1
                 : 0;
    for (size_t i = 0; rc == 0 && i < r->n; i++)
        v[i] = r->ops[i] == SS_REDUCE_SUM ? sum[i] : r->ops[i] == SS_REDUCE_MIN ? mn[i] : mx[i];
    free(t);
    return rc;
}

/*
 * Several ranks: every histogram to the longest any rank has (a max of the
 * lengths), then one sum of them all laid end to end. 0 or -1.
 */
static int hists_over_ranks(ss_reduce_t *r)
{
    int nh = r->n_hists, rc = -1;
    if (nh == 0)
        return 0;
    int64_t *len = malloc((size_t)nh * sizeof(*len));
    uint64_t *all = NULL;
    size_t total = 0;
    if (!len)
        return -1;
    for (int h = 0; h < nh; h++)
        len[h] = (int64_t)r->res.hlen[h];
    if (ss_comm_minmax_i64(len, (size_t)nh, 1) < 0)
        goto out;
    for (int h = 0; h < nh; h++)
        total += (size_t)len[h];
    if (!(all = calloc(total ? total : 1, sizeof(*all))))
        goto out;
    for (int h = 0, at = 0; h < nh; at += (int)len[h], h++)
        if (r->res.hlen[h])
            memcpy(all + at, r->res.hist[h], r->res.hlen[h] * sizeof(*all));
    if (ss_comm_sum_u64(all, total) < 0)
        goto out;
    rc = 0;
    size_t at = 0;
    for (int h = 0; h < nh && rc == 0; at += (size_t)len[h], h++) {
        if (!len[h])
            continue;
        if (!grow(&r->res.hist[h], &r->res.hlen[h], (size_t)len[h]))
            rc = -1;
        else
            memcpy(r->res.hist[h], all + at, (size_t)len[h] * sizeof(*all));
    }
out:
    free(all);
    free(len);
    return rc;
}

int ss_reduce_finish(ss_reduce_t *r)
{
    for (int i = 0; i < r->n_workers; i++)
        if (r->w[i].v)
            ss_reduce_combine(r->res.v, r->w[i].v, r->ops, r->n);
    int rc = 0;
    /* every rank makes the same collective calls, failed or not, so none waits forever */
    if (ss_comm_max_int(rc < 0) != 0)
        rc = -1;
    if (rc == 0 && ss_comm_parallel() && (values_over_ranks(r) < 0 || hists_over_ranks(r) < 0))
        rc = -1;
    if (rc < 0)
        ss_error("rank %d: combining the kernel's totals over workers and ranks failed (out of "
                 "memory, or an MPI error); rerun",
                 ss_comm_rank());
    return rc;
}

const int64_t *ss_reduce_result(const ss_reduce_t *r)
{
    return r->res.v;
}

const int64_t *ss_reduce_result_hist(const ss_reduce_t *r, int h, size_t *len)
{
    *len = r->res.hlen[h];
    return r->res.hist[h];
}
