/*
 * report_ranks.c -- what rank 0 needs from every rank for --report: one
 * fixed-size summary per rank (ss_comm_gather) and the records of the shards
 * each rank finished, a different number per rank (ss_comm_gatherv). With a
 * single rank both are copies. MPI itself stays in comm.c.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../comm/comm.h"
#include "report.h"

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

static void own_stats(const ss_report_t *r, ss_rank_stats_t *me)
{
    memset(me, 0, sizeof(*me));
    for (int i = 0; r->workers && i < r->n_workers; i++) {
        me->shards += r->workers[i].shards;
        me->reads += r->workers[i].reads;
        me->bases += r->workers[i].bases;
        me->busy_s += r->workers[i].busy_s;
        for (int c = 0; c < SS_KERNEL_COUNTERS; c++)
            me->counts[c] += r->workers[i].counts[c];
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        me->peak_rss_bytes = (int64_t)ru.ru_maxrss * 1024;
        me->user_s = tv_s(ru.ru_utime);
        me->sys_s = tv_s(ru.ru_stime);
    } else {
        me->peak_rss_bytes = -1;
    }
    me->wall_s = r->wall_s;
    me->threads = r->n_workers;
    me->bytes_out = r->bytes_written;
    if (gethostname(me->host, sizeof(me->host) - 1) != 0)
        strcpy(me->host, "?");
    const char *m = ss_error_message();
    if (strncmp(m, "seqshard: ", 10) == 0)
        m += 10;
    snprintf(me->error, sizeof(me->error), "%s", m);
}

/* This rank's finished shards, packed. NULL with *n 0 when none (or out of memory). */
static ss_shard_rec_t *own_done(const ss_report_t *r, int *n)
{
    *n = 0;
    ss_shard_rec_t *out = r->n_shards ? malloc((size_t)r->n_shards * sizeof(*out)) : NULL;
    for (int i = 0; out && r->recs && i < r->n_shards; i++)
        if (r->recs[i].done)
            out[(*n)++] = r->recs[i];
    return out;
}

static int by_index(const void *a, const void *b)
{
    const ss_shard_rec_t *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int ss_report_gather(ss_report_t *r)
{
    int n = ss_comm_size(), me = ss_comm_rank();
    ss_rank_stats_t mine;
    own_stats(r, &mine);
    /* every rank takes part in both gathers, so each allocates room for them */
    ss_rank_stats_t *all = calloc((size_t)n, sizeof(*all));
    int rc = all ? ss_comm_gather(&mine, sizeof(mine), all) : -1;
    int n_own;
    ss_shard_rec_t *own = own_done(r, &n_own);
    void *recs = NULL;
    size_t len = 0;
    if (ss_comm_gatherv(own, (size_t)n_own * sizeof(*own), &recs, &len) < 0)
        rc = -1;
    free(own);
    if (me != 0 || rc < 0) {
        free(all);
        free(recs);
        return rc;
    }
    /* each rank wrote its own pieces (rank 0 also header and tail): together, the file */
    r->bytes_written = 0;
    for (int i = 0; i < n; i++)
        r->bytes_written += all[i].bytes_out;
    r->ranks = all;
    r->n_ranks = n;
    r->done = recs;
    r->n_done = (int)(len / sizeof(ss_shard_rec_t));
    qsort(r->done, (size_t)r->n_done, sizeof(*r->done), by_index);
    return 0;
}

void ss_report_release(ss_report_t *r)
{
    free(r->ranks);
    free(r->done);
    r->ranks = NULL;
    r->done = NULL;
    r->n_ranks = r->n_done = 0;
}
