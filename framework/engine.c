/*
 * engine.c -- run a kernel over the plan: N worker threads process shards,
 * the main thread writes their bytes in shard order.
 *
 * Threads and ownership:
 *   - each worker owns its reader, its kernel state and the buffer of the
 *     shard it is processing; stats[id] is written only by worker id and
 *     read by the main thread after join;
 *   - shared: the scheduler (atomic counter), the ordered writer (its lock),
 *     reads_done (atomic, for progress), the error state (error.c);
 *   - the main thread owns the output file, the progress line and the report.
 * Stopping: a failing worker calls ss_error() and stops the ordered writer;
 * every other worker sees -1 from the scheduler and drains out; the main
 * thread's run() returns -1, it joins the workers and removes the temporary
 * output. No output file appears.
 *
 * Testing hook: SEQSHARD_FAIL_SHARD=<idx> makes the processing of shard idx
 * fail with an error message, as a kernel failure would; the integration
 * tests use it to check that a failed run leaves no output and exits 1.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../alloc/ss_alloc.h"
#include "ss_internal.h"
#include "ss_sched.h"

#define TICK_S 0.25

typedef struct {
    const ss_kernel_t *k;
    void *kopts;
    ss_job_t *job;
    const ss_shard_t *shards;
    int n_shards;
    ss_sched_t *sched;
    ss_ordered_t *ow;
    ss_worker_stats_t *stats;  /* [n_workers] */
    atomic_ullong reads_done;
    int fail_shard;            /* SEQSHARD_FAIL_SHARD, or -1 */
    /* main thread only */
    ss_output_t *out;
    ss_progress_t *progress;
    uint64_t work_done;
    uint64_t bytes_written;
} engine_t;

typedef struct {
    engine_t *e;
    int id;
    pthread_t thread;
    int started;
} worker_t;

static int cpu_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int fail_shard_from_env(void)
{
    const char *s = getenv("SEQSHARD_FAIL_SHARD");
    if (!s || !*s)
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v >= 0 && v < 1L << 30 ? (int)v : -1;
}

static int process_shard(engine_t *e, worker_t *w, ss_reader_t *rd, void *ws, int idx,
                         kstring_t *buf)
{
    const ss_shard_t *sh = &e->shards[idx];
    const char *ctg = sam_hdr_tid2name(ss_job_header(e->job), sh->tid);
    ss_shard_stats_t st = { 0, 0 };
    double t0 = ss_now();
    if (ss_reader_begin(rd) < 0)
        return -1;
    int r;
    if (idx == e->fail_shard) {
        ss_error("shard %d (%s:%lld-%lld): failure injected by SEQSHARD_FAIL_SHARD (a testing "
                 "hook); unset SEQSHARD_FAIL_SHARD", idx, ctg, (long long)sh->beg + 1,
                 (long long)sh->end);
        r = -1;
    } else {
        r = e->k->process(ws, sh, buf, &st);
    }
    ss_reader_end(rd);
    ss_worker_stats_t *s = &e->stats[w->id];
    s->busy_s += ss_now() - t0;
    if (r < 0) {
        if (!ss_error_raised())
            ss_error("%s failed on shard %d (%s:%lld-%lld)", e->k->name, idx, ctg,
                     (long long)sh->beg + 1, (long long)sh->end);
        return -1;
    }
    s->shards++;
    s->reads += st.reads;
    s->bases += st.bases;
    atomic_fetch_add_explicit(&e->reads_done, st.reads, memory_order_relaxed);
    return 0;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    engine_t *e = w->e;
    void *ws = NULL;
    ss_reader_t *rd = ss_reader_init(ss_job_inputs(e->job));
    if (!rd) {
        ss_error("out of memory starting worker %d", w->id);
        goto stop;
    }
    if (e->k->worker_init && e->k->worker_init(&ws, e->kopts, e->job, rd, w->id) < 0) {
        if (!ss_error_raised())
            ss_error("%s: worker %d failed to start", e->k->name, w->id);
        goto stop;
    }
    int idx;
    while ((idx = ss_sched_next(e->sched)) >= 0 && !ss_error_raised()) {
        kstring_t *buf = ss_ordered_buffer(e->ow);
        if (!buf) {
            ss_error("out of memory for shard %d's output", idx);
            goto stop;
        }
        if (process_shard(e, w, rd, ws, idx, buf) < 0) {
            ss_ordered_release(e->ow, buf);
            goto stop;
        }
        ss_ordered_put(e->ow, idx, buf);
    }
    if (!ss_error_raised())
        goto done;
stop:
    ss_ordered_stop(e->ow);
done:
    if (e->k->worker_destroy)
        e->k->worker_destroy(ws);
    ss_reader_destroy(rd);
    return NULL;
}

/* The ordered writer's sink: main thread. */
static int sink(void *ctx, int idx, const char *buf, size_t len)
{
    engine_t *e = ctx;
    if (len && ss_output_write(e->out, buf, len) < 0)
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

static int write_header(engine_t *e)
{
    if (!e->k->header)
        return 0;
    kstring_t h = KS_INITIALIZE;
    int r = e->k->header(e->kopts, e->job, &h);
    if (r < 0 && !ss_error_raised())
        ss_error("%s: cannot build the output header", e->k->name);
    if (r == 0 && h.l)
        r = ss_output_write(e->out, h.s, h.l);
    free(h.s);
    return r < 0 ? -1 : 0;
}

/* Start the workers, write everything in order, join. Returns 0 or -1. */
static int run_workers(engine_t *e, int n_workers, worker_t *w)
{
    int started = 0;
    for (int i = 0; i < n_workers; i++) {
        w[i].e = e;
        w[i].id = i;
        if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
            break; /* run with the workers we have */
        w[i].started = 1;
        started++;
    }
    int rc;
    if (started == 0 && e->n_shards > 0) {
        ss_error("cannot start any worker thread; lower -@ or check ulimit -u");
        rc = -1;
    } else {
        if (started < n_workers)
            ss_warn("started %d of %d worker threads (system limit); continuing", started,
                    n_workers);
        rc = ss_ordered_run(e->ow, sink, tick, e, TICK_S);
    }
    if (rc < 0)
        ss_ordered_stop(e->ow);
    for (int i = 0; i < n_workers; i++)
        if (w[i].started)
            pthread_join(w[i].thread, NULL);
    return rc < 0 || ss_error_raised() ? -1 : 0;
}

static int finish_output(engine_t *e, int rc)
{
    if (rc == 0 && (e->k->out_kind == SS_OUT_BGZF || e->k->out_kind == SS_OUT_BAM))
        rc = ss_output_write(e->out, ss_bgzf_eof, sizeof(ss_bgzf_eof));
    e->bytes_written = ss_output_bytes(e->out);
    if (rc == 0)
        return ss_output_commit(e->out);
    ss_output_abort(e->out);
    return -1;
}

int ss_engine_run(const ss_kernel_t *kernel, void *kopts, ss_job_t *job)
{
    const ss_common_opts_t *o = ss_job_opts(job);
    double t0 = ss_now();
    engine_t e = { .k = kernel, .kopts = kopts, .job = job };
    worker_t *w = NULL;
    ss_shard_t *shards = NULL;
    int n = 0, rc = -1;
    atomic_init(&e.reads_done, 0);
    e.fail_shard = fail_shard_from_env();
    if (ss_plan_build(job, &shards, &n) < 0)
        return SS_EXIT_FAIL;
    e.shards = shards;
    e.n_shards = n;
    int threads = o->threads > 0 ? o->threads : cpu_count();
    int n_workers = threads < n ? threads : n;
    int window = 4 * threads > 8 ? 4 * threads : 8;
    uint64_t total_work = 0;
    for (int i = 0; i < n; i++)
        total_work += shards[i].est_work;
    ss_alloc_tune(threads);
    ss_io_budget_init();
    e.stats = calloc((size_t)(n_workers > 0 ? n_workers : 1), sizeof(*e.stats));
    w = calloc((size_t)(n_workers > 0 ? n_workers : 1), sizeof(*w));
    e.ow = ss_ordered_init(n, window);
    e.sched = e.ow ? ss_sched_local_init(n, e.ow) : NULL;
    if (!e.stats || !w || !e.ow || !e.sched) {
        ss_error("out of memory starting the run");
        goto out;
    }
    if (!(e.out = ss_output_open(o->output)))
        goto out;
    if (write_header(&e) < 0) {
        ss_output_abort(e.out);
        goto out;
    }
    e.progress = ss_progress_start(n, total_work, o->quiet, 1);
    rc = run_workers(&e, n_workers, w);
    rc = finish_output(&e, rc);
    ss_progress_finish(e.progress, rc == 0);
    if (rc == 0 && o->report) {
        ss_report_t r = { .kernel = kernel->name, .threads = threads, .n_shards = n,
                          .n_workers = n_workers, .workers = e.stats, .wall_s = ss_now() - t0,
                          .est_work_total = total_work };
        r.bytes_written = e.bytes_written;
        rc = ss_report_write(o->report, &r);
    }
out:
    if (rc < 0 && !ss_error_raised())
        ss_error("the run failed");
    ss_sched_destroy(e.sched);
    ss_ordered_destroy(e.ow);
    free(e.stats);
    free(w);
    free(shards);
    return rc == 0 ? SS_EXIT_OK : SS_EXIT_FAIL;
}
