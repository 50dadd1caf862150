/*
 * engine_par.c -- the run on one rank among several: the main thread hands
 * shards from the counter all ranks share to its workers (sched_par.c) and,
 * as their outputs arrive in the store, writes each at its offset once the
 * sizes of all earlier shards are known (merge.c). Only the main thread calls
 * MPI (through comm.c and merge.c); workers never do.
 */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../out/store.h"
#include "engine.h"
#include "sched.h"

/* How often a rank whose pieces wait for other ranks' sizes looks again.
 * Sizes change only when some rank finishes a shard, so 10 ms costs nothing
 * and delays a write by far less than a shard takes. */
#define WAIT_SIZES_S 0.01

/* Between two write chunks of the merge: hand shards to waiting workers. */
static void serve_workers(void *ctx)
{
    engine_t *e = ctx;
    ss_sched_par_pump(e->sched, 0);
}

/* How often a rank tells rank 0 the reads it read, for the progress line. */
#define TELL_READS_S 0.25

/*
 * Multi-rank progress: the shards every rank has finished (their sizes are
 * published), their estimated work, and the reads every rank has told of;
 * gathered only when the line is due. A shard handed out counts only once it
 * is done, so the line reaches 100% with the last shard, not before.
 */
static void progress_parallel(engine_t *e)
{
    uint64_t mine = atomic_load_explicit(&e->reads_done, memory_order_relaxed);
    double now = ss_now();
    if (mine > e->reads_told && now - e->told_at >= TELL_READS_S) {
        if (ss_comm_reads_add(mine - e->reads_told) == 0)
            e->reads_told = mine;
        e->told_at = now;
    }
    if (!ss_progress_due(e->progress))
        return;
    int64_t *sizes = malloc((size_t)(e->n_shards > 0 ? e->n_shards : 1) * sizeof(*sizes));
    if (!sizes || ss_comm_sizes_read(0, e->n_shards, sizes, NULL) < 0) {
        free(sizes);
        return; /* progress is a nicety */
    }
    int done = 0;
    uint64_t work = 0;
    for (int i = 0; i < e->n_shards; i++)
        if (sizes[i] != SS_COMM_SIZE_UNKNOWN)
            done++, work += e->shards[i].est_work;
    free(sizes);
    ss_progress_update(e->progress, done, work, ss_comm_reads_total());
}

/*
 * Several ranks: the main thread hands shards to the workers from the shared
 * counter and, as they finish, publishes sizes and writes every piece whose
 * offset is known (ss_merge_step), until no worker is left and nothing waits.
 * Between events it sleeps in the scheduler's pump: up to TICK_S, or
 * WAIT_SIZES_S while pieces wait for other ranks' sizes, which is also when it
 * must notice another rank's failure soon, as those sizes may never come.
 * Returns 0 or -1 (this rank failed, or another rank raised the stop flag).
 */
/*
 * This rank failed: raise the stop, and print its message only if no other rank's was
 * printed before (ranks that fail together, on a full disk say, give one line). The
 * message waits (ss_error_defer, set for the run by the driver) until then.
 */
static void tell_first(void)
{
    if (ss_comm_raise_stop(1))
        ss_error_flush();
    else
        ss_error_quiet();
}

static int par_run(engine_t *e, int n_workers, worker_t *w)
{
    int rc = ss_engine_start_workers(e, n_workers, w);
    double last_check = ss_now(), wait = 0; /* no sleep before the first look */
    while (rc == 0) {
        /*
         * Back-pressure: a rank whose finished but unwritten output passed its
         * memory cap takes no new shard until writes catch up, so the spill
         * file holds at most what its workers had in flight, not a backlog
         * that grows with the genome when the file system is the bottleneck.
         */
        ss_sched_par_hold(e->sched, ss_store_over_cap(e->store));
        ss_sched_par_pump(e->sched, wait);
        /* read before the step: no worker left + nothing waiting = all written */
        int live = atomic_load(&e->workers_live);
        int waiting = ss_error_raised() ? -1
                      : e->merge        ? ss_merge_step(e->merge, serve_workers, e)
                      : e->funnel       ? ss_funnel_step(e->funnel, serve_workers, e)
                                        : 0;
        if (waiting < 0)
            break;
        int tick = ss_now() - last_check > TICK_S;
        if ((waiting || tick) && ss_comm_stop_raised())
            break; /* another rank failed: stop taking shards */
        if (tick) {
            last_check = ss_now();
            progress_parallel(e);
        }
        if (!live && !waiting)
            break;
        wait = waiting ? WAIT_SIZES_S : TICK_S;
    }
    if (e->funnel)
        ss_funnel_end(e->funnel); /* what was sent but not taken must not block the sender */
    int failed = rc < 0 || ss_error_raised() || ss_comm_stop_raised();
    if (ss_error_raised())
        tell_first();
    ss_sched_par_stop(e->sched, failed);
    ss_engine_join_workers(n_workers, w);
    if (ss_error_raised()) {
        tell_first(); /* a worker may have failed after the check above */
        return -1;
    }
    return failed ? -1 : 0;
}

/*
 * Multi-rank setup, after the ranks agreed and the counter is open: rank 0
 * creates the temporary output, every rank opens it (ss_merge_open). Returns
 * 0, or -1 on every rank (the counter closed again).
 */
/* The merge wrote this rank's shard idx at off: its record for the manifest. */
static int note_written(void *ctx, int idx, uint64_t off)
{
    engine_t *e = ctx;
    ss_engine_index_placed(e, idx, off);
    ss_resume_rec_t r = e->rrecs[idx];
    r.off = off;
    return ss_resume_note(e->resume, &r);
}

/* Where kept shard idx lies, for the merge, which does not know the resume state. */
static int kept_at(const void *ctx, int idx, uint64_t *off, uint64_t *size)
{
    return ss_resume_kept_at(ctx, idx, off, size);
}

/*
 * Collective, once the merge is open: every rank learns the shards kept from
 * an earlier run (rank 0 read them) and opens its record file; rank 0
 * publishes the kept shards' sizes, so every rank's offsets pass them, and
 * the scheduler never hands them out. 0, or -1 on every rank.
 */
static int par_resume(engine_t *e)
{
    if (ss_resume_share(&e->resume, e->n_shards, ss_merge_tmp_path(e->merge)) < 0)
        return -1;
    int bad = 0;
    uint64_t off, size;
    for (int i = 0; ss_comm_rank() == 0 && !bad && i < e->n_shards; i++)
        if (ss_resume_kept_at(e->resume, i, &off, &size) == 0)
            bad = ss_comm_size_publish(i, size) < 0;
    ss_sched_par_set_kept(e->sched, ss_resume_kept_map(e->resume));
    ss_merge_set_resume(e->merge, kept_at, e->resume, note_written, e);
    ss_signals_resumable(1);
    return ss_comm_max_int(bad) != 0 ? -1 : 0;
}

static int par_open(engine_t *e, const kstring_t *header)
{
    const char *path = ss_job_opts(e->job)->output;
    if (ss_side_share(e->side) < 0) {
        ss_comm_counter_close();
        return -1;
    }
    if (e->orun->no_main)
        return 0; /* side streams only: they are written at the end (side_out.c) */
    int root = ss_comm_rank() == 0, named = path && strcmp(path, "-") != 0;
    /* past mpirun's forwarding when it can; -1: mpirun's own is closed (reported) */
    int no_stdout = root && !named && ss_comm_stdout_direct() < 0;
    /* NULL: reported (or --resume refused); the merge or funnel then fails on every rank */
    if (root && !no_stdout)
        e->out = named ? ss_output_open_resumable(path) : ss_output_open(NULL);
    /*
     * A stream (standard output, or -o naming it, a FIFO or a device) has no
     * offsets to write at: rank 0 writes every shard, in order. Every rank
     * learns which from rank 0, the only one that opened it.
     */
    if (ss_comm_max_int(root && (!named || (e->out && !ss_output_tmp_path(e->out))))) {
        if ((e->funnel = ss_funnel_open(e->store, e->n_shards, header->s, header->l, e->out)))
            return 0;
        ss_output_abort(e->out);
        e->out = NULL;
        ss_comm_counter_close();
        return -1;
    }
    if (root && e->out && ss_engine_resume_start(e, header) == 0)
        ss_engine_index_open(e, header->l);
    e->merge = ss_merge_open(e->store, e->n_shards, header->s, header->l, e->out, path);
    if (e->merge && par_resume(e) == 0)
        return 0;
    ss_resume_quiesce(e->resume);
    ss_output_abort(e->out);
    e->out = NULL;
    ss_comm_counter_close();
    return -1;
}

/* A worker's finished shard goes into the store; its buffer goes back to the writer's pool. */
static int par_put(engine_t *e, int idx, kstring_t *buf)
{
    ss_spill_t *sp = &e->spills[idx];
    if (e->orun->no_main) {
        ss_spill_close(sp);
        ss_ordered_release(e->ow, buf);
        return 0;
    }
    const char *bytes = buf->s ? buf->s : "";
    int r = sp->fd < 0 ? ss_store_put(e->store, idx, bytes, buf->l)
                       : ss_store_put_spilled(e->store, idx, sp, bytes, buf->l);
    ss_spill_close(sp);
    ss_ordered_release(e->ow, buf);
    return r;
}

/* The multi-rank tail: the ranks agree and close; rank 0 indexes and renames later. */
static int par_finish(engine_t *e, int rc)
{
    kstring_t tail = KS_INITIALIZE;
    /* rank 0 alone holds the kernel's summary (view -c), and writes the tail */
    if (e->funnel) {
        if (rc == 0 && e->summary.l && kputsn(e->summary.s, e->summary.l, &tail) < 0)
            rc = -1;
        if (rc == 0 && ss_out_run_trailer(e->orun, &tail) < 0)
            rc = -1;
        rc = ss_funnel_finish(e->funnel, rc < 0, tail.s, tail.l);
        free(tail.s);
        ss_comm_counter_close();
        e->bytes_written = ss_funnel_bytes(e->funnel);
        return rc;
    }
    if (!e->merge) /* no main output: only the agreement */
        rc = ss_comm_max_int(rc < 0) ? -1 : 0;
    else if (rc == 0 && e->summary.l && kputsn(e->summary.s, e->summary.l, &tail) < 0)
        rc = -1;
    if (e->merge && rc == 0 && ss_out_run_trailer(e->orun, &tail) < 0)
        rc = -1;
    if (e->merge)
        rc = ss_merge_finish(e->merge, rc < 0, tail.s, tail.l);
    free(tail.s);
    rc = ss_engine_index_collect(e, rc);
    /* an earlier run's temporary may have been longer: cut it where this run ends */
    if (rc == 0 && e->merge && ss_comm_rank() == 0 &&
        ss_output_set_length(e->out, ss_merge_file_len(e->merge)) < 0)
        rc = -1;
    /* after the agreement no rank touches the window again: freeing it waits for nobody */
    ss_comm_counter_close();
    e->bytes_written = ss_merge_bytes(e->merge);
    return rc;
}

const ss_sink_t ss_sink_par = {
    .open = par_open,
    .put = par_put,
    .run = par_run,
    .finish = par_finish,
};
