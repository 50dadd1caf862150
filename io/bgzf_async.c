/*
 * bgzf_async.c -- a BGZF pack's full blocks compressed on htslib's thread pool.
 *
 * Why: a worker that compresses its own blocks leaves the other cores idle
 * whenever it is the only one still running (one deep shard, the last shard
 * of a run), while samtools hands every block to its pool. The blocks are cut
 * exactly where the pack cut them before and land in the order sent, so the
 * bytes are the same; only who runs deflate changes.
 *
 * A job owns one block's input and room for its output; landed jobs are kept
 * for reuse, so a long shard allocates nothing per block. At most
 * max_in_flight jobs are out at once: the pool's queue then never fills, so
 * sending never waits on a result only the sender could collect.
 */
#include <stdlib.h>

#include <htslib/bgzf.h>
#include <htslib/thread_pool.h>

#include "bgzf_async.h"

struct ss_zjob_s {
    uint8_t *in;
    size_t in_len, out_len;
    int level, failed;
    uint8_t out[BGZF_MAX_BLOCK_SIZE];
};

/* Jobs out per pack, per pool thread: enough to keep the threads fed. */
#define JOBS_PER_THREAD 2

static void *compress_job(void *arg)
{
    ss_zjob_t *j = arg;
    j->out_len = sizeof(j->out);
    j->failed = bgzf_compress(j->out, &j->out_len, j->in, j->in_len, j->level) < 0;
    return j;
}

static void job_free(ss_zjob_t *j)
{
    if (j)
        free(j->in);
    free(j);
}

int ss_bgzf_pack_async(ss_bgzf_pack_t *z, struct hts_tpool *pool, const atomic_int *busy,
                       int busy_max)
{
    int n = hts_tpool_size(pool) * JOBS_PER_THREAD;
    z->spare = calloc((size_t)n, sizeof(*z->spare));
    z->q = z->spare ? hts_tpool_process_init(pool, n, 0) : NULL;
    if (!z->q) {
        free(z->spare);
        z->spare = NULL;
        return -1;
    }
    z->pool = pool;
    z->max_in_flight = n;
    z->busy = busy, z->busy_max = busy_max;
    return 0;
}

/* One landed (or dropped) block's job back to the spares. */
static void keep_spare(ss_bgzf_pack_t *z, ss_zjob_t *j)
{
    z->in_flight--;
    z->raw_in_flight -= j->in_len;
    if (z->n_spare < z->max_in_flight)
        z->spare[z->n_spare++] = j;
    else
        job_free(j);
}

/* The next result, waiting for it with wait set; NULL when none (yet). */
static ss_zjob_t *next_done(ss_bgzf_pack_t *z, int wait)
{
    if (z->in_flight == 0)
        return NULL;
    hts_tpool_result *r = wait ? hts_tpool_next_result_wait(z->q) : hts_tpool_next_result(z->q);
    if (!r)
        return NULL;
    ss_zjob_t *j = hts_tpool_result_data(r);
    hts_tpool_delete_result(r, 0);
    return j;
}

int ss_bgzf_pack_land(ss_bgzf_pack_t *z, kstring_t *out, int all)
{
    ss_zjob_t *j;
    int rc = 0;
    while ((j = next_done(z, all)) != NULL) {
        if (rc == 0 && (j->failed || kputsn((const char *)j->out, j->out_len, out) < 0))
            rc = -1;
        keep_spare(z, j);
    }
    return rc;
}

static ss_zjob_t *take_job(ss_bgzf_pack_t *z)
{
    if (z->n_spare > 0)
        return z->spare[--z->n_spare];
    ss_zjob_t *j = malloc(sizeof(*j));
    if (j && !(j->in = malloc(BGZF_BLOCK_SIZE))) {
        free(j);
        return NULL;
    }
    return j;
}

int ss_bgzf_pack_send(ss_bgzf_pack_t *z, kstring_t *out)
{
    if (ss_bgzf_pack_land(z, out, 0) < 0)
        return -1;
    if (z->in_flight >= z->max_in_flight) { /* the oldest first: order is kept */
        ss_zjob_t *j = next_done(z, 1);
        if (!j)
            return -1;
        int bad = j->failed || kputsn((const char *)j->out, j->out_len, out) < 0;
        keep_spare(z, j);
        if (bad)
            return -1;
    }
    ss_zjob_t *j = take_job(z);
    if (!j)
        return -1;
    uint8_t *block = z->buf; /* the job takes the full block; the pack fills the job's */
    z->buf = j->in;
    j->in = block, j->in_len = z->len, j->level = z->level, j->failed = 0;
    z->len = 0;
    if (hts_tpool_dispatch(z->pool, z->q, compress_job, j) < 0) {
        job_free(j);
        return -1;
    }
    z->in_flight++;
    z->raw_in_flight += j->in_len;
    return 0;
}

int ss_bgzf_pack_to_pool(const ss_bgzf_pack_t *z)
{
    /* blocks in flight: this one follows them, so the order holds without waiting */
    return z->q && (z->in_flight > 0 || !z->busy ||
                    atomic_load_explicit(z->busy, memory_order_relaxed) < z->busy_max);
}

void ss_bgzf_pack_discard(ss_bgzf_pack_t *z)
{
    ss_zjob_t *j;
    while ((j = next_done(z, 1)) != NULL)
        keep_spare(z, j);
}

void ss_bgzf_pack_async_end(ss_bgzf_pack_t *z)
{
    if (!z->q)
        return;
    ss_bgzf_pack_discard(z);
    hts_tpool_process_destroy(z->q);
    for (int i = 0; i < z->n_spare; i++)
        job_free(z->spare[i]);
    free(z->spare);
    z->q = NULL, z->pool = NULL, z->spare = NULL, z->n_spare = 0;
}
