/*
 * engine_local.c -- the sink of a one-rank run: workers put finished shards
 * into the ordered writer (ordered.c), and the main thread writes them to
 * the output file in shard order while the workers go on.
 */
#include "ss_engine.h"

static int local_open(engine_t *e, const kstring_t *header)
{
    if (e->orun->no_main)
        return 0; /* side streams only (side_out.c) */
    if (!(e->out = ss_output_open(ss_job_opts(e->job)->output)))
        return -1;
    if (header->l && ss_output_write(e->out, header->s, header->l) < 0) {
        ss_output_abort(e->out);
        e->out = NULL;
        return -1;
    }
    return 0;
}

static int local_put(engine_t *e, int idx, kstring_t *buf)
{
    ss_ordered_put(e->ow, idx, buf);
    return 0;
}

static int to_output(void *out, const char *buf, size_t len)
{
    return ss_output_write(out, buf, len);
}

/* The ordered writer hands over shard idx: main thread. Its spilled bytes come first. */
static int write_shard(void *ctx, int idx, const char *buf, size_t len)
{
    engine_t *e = ctx;
    int rc = ss_spill_copy(&e->spills[idx], idx, to_output, e->out);
    ss_spill_close(&e->spills[idx]);
    if (rc < 0 || (len && e->out && ss_output_write(e->out, buf, len) < 0))
        return -1;
    if (ss_side_write_shard(e->side, idx) < 0)
        return -1;
    e->work_done += e->shards[idx].est_work;
    ss_progress_update(e->progress, idx + 1, e->work_done,
                       atomic_load_explicit(&e->reads_done, memory_order_relaxed));
    return 0;
}

static void tick(void *ctx)
{
    engine_t *e = ctx;
    ss_progress_update(e->progress, ss_ordered_written(e->ow), e->work_done,
                       atomic_load_explicit(&e->reads_done, memory_order_relaxed));
}

static int local_run(engine_t *e, int n_workers, worker_t *w)
{
    int rc = ss_engine_start_workers(e, n_workers, w);
    if (rc == 0)
        rc = ss_ordered_run(e->ow, write_shard, tick, e, TICK_S);
    if (rc < 0)
        ss_ordered_stop(e->ow);
    ss_engine_join_workers(n_workers, w);
    return rc < 0 || ss_error_raised() ? -1 : 0;
}

static int local_finish(engine_t *e, int rc)
{
    if (rc == 0 && e->out) {
        kstring_t t = KS_INITIALIZE;
        /* the kernel's summary (view -c) ends the content, before the trailer */
        rc = e->summary.l && kputsn(e->summary.s, e->summary.l, &t) < 0 ? -1 : 0;
        if (rc == 0)
            rc = ss_out_run_trailer(e->orun, &t);
        if (rc == 0 && t.l)
            rc = ss_output_write(e->out, t.s, t.l);
        free(t.s);
    }
    e->bytes_written = ss_output_bytes(e->out);
    return rc;
}

const ss_sink_t ss_sink_local = {
    .open = local_open,
    .put = local_put,
    .run = local_run,
    .finish = local_finish,
};
