/*
 * engine_local.c -- the sink of a one-rank run: workers put finished shards
 * into the ordered writer (ordered.c), and the main thread writes them to
 * the output file in shard order while the workers go on.
 */
#include <string.h>

#include "../comm/comm.h"
#include "engine.h"

/*
 * The output, and with -o FILE the resume state: shards an earlier run wrote
 * are skipped by the scheduler and the writer (ss_ordered_set_kept). Standard
 * input cannot be read twice, so its run is not made resumable.
 */
static int local_open(engine_t *e, const kstring_t *header)
{
    if (e->orun->no_main)
        return 0; /* side streams only (side_out.c) */
    const char *path = ss_job_opts(e->job)->output;
    int stream = ss_job_inputs(e->job)->stream != NULL;
    /* mpirun -np 1: past its forwarding when it can; -1: mpirun's own is closed (reported) */
    if ((!path || strcmp(path, "-") == 0) && ss_comm_stdout_direct() < 0)
        return -1;
    if (!(e->out = stream ? ss_output_open(path) : ss_output_open_resumable(path)))
        return -1;
    if (!stream && ss_engine_resume_start(e, header) < 0)
        return -1;
    ss_ordered_set_kept(e->ow, ss_resume_kept_map(e->resume));
    if (header->l && ss_output_write(e->out, header->s, header->l) < 0) {
        ss_resume_quiesce(e->resume);
        ss_output_abort(e->out);
        e->out = NULL;
        return -1;
    }
    ss_engine_index_open(e, header->l);
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

/* A kept shard is already in the file, where this run's offsets put it too: step over it. */
static int skip_kept(engine_t *e, int idx)
{
    uint64_t off, size, at = ss_output_bytes(e->out);
    if (ss_resume_kept_at(e->resume, idx, &off, &size) < 0)
        return -1; /* the writer only passes NULL for kept shards */
    if (off != at) {
        ss_error("%s: shard %d of the earlier run starts at byte %llu, this run puts it at "
                 "%llu (the output is not the same as the interrupted run's); rerun without "
                 "--resume",
                 ss_job_opts(e->job)->output, idx, (unsigned long long)off, (unsigned long long)at);
        return -1;
    }
    return ss_output_skip(e->out, size);
}

/*
 * Shard idx as this run made it: its spilled bytes first (spill.c), then
 * buf, then its side streams' pieces. No main output (side streams only):
 * only those.
 */
static int write_made(engine_t *e, int idx, const char *buf, size_t len)
{
    int rc = e->out ? ss_spill_copy(&e->spills[idx], idx, to_output, e->out) : 0;
    ss_spill_close(&e->spills[idx]);
    if (rc < 0 || (len && e->out && ss_output_write(e->out, buf, len) < 0))
        return -1;
    return ss_side_write_shard(e->side, idx);
}

/* The ordered writer hands over shard idx (buf NULL: kept from an earlier run): main thread. */
static int write_shard(void *ctx, int idx, const char *buf, size_t len)
{
    engine_t *e = ctx;
    uint64_t off = e->out ? ss_output_bytes(e->out) : 0;
    if (!buf) {
        if (skip_kept(e, idx) < 0)
            return -1;
    } else if (write_made(e, idx, buf, len) < 0 || ss_engine_index_written(e, idx, off) < 0) {
        return -1;
    } else if (e->resume) {
        ss_resume_rec_t r = e->rrecs[idx];
        r.off = off;
        if (ss_resume_note(e->resume, &r) < 0)
            return -1;
    }
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
        /* an earlier run's temporary may have been longer */
        if (rc == 0)
            rc = ss_output_set_length(e->out, ss_output_bytes(e->out));
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
