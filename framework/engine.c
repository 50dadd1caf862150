/*
 * engine.c -- run a kernel over the plan: N worker threads process shards,
 * the main thread writes their bytes in shard order: through the ordered
 * writer with one rank; with several, into the store, from which the main
 * thread writes each shard at its offset once every earlier shard's size is
 * known (merge.c), while the workers go on.
 *
 * Threads and ownership:
 *   - each worker owns its reader, its kernel state and the buffer of the
 *     shard it is processing; stats[id] is written only by worker id and
 *     read by the main thread after join;
 *   - shared: the scheduler (atomic counter, or sched_par.c's lock), the
 *     ordered writer (its lock), the store (its lock), reads_done and
 *     workers_live (atomics), the error state (error.c);
 *   - the main thread owns the output file, the merge, every MPI call, the
 *     progress line and the report.
 * Stopping: a failing worker calls ss_error() and stops the ordered writer;
 * every other worker sees -1 from the scheduler and drains out; the main
 * thread's run() returns -1, it joins the workers and removes the temporary
 * output. No output file appears.
 *
 * Testing hooks: SEQSHARD_FAIL_SHARD=<idx> makes the processing of shard idx
 * fail with an error message, as a kernel failure would; SEQSHARD_KILL_SHARD
 * =<idx> makes the process that takes shard idx die by SIGKILL, as a node
 * crash would; with SEQSHARD_KILL_RANK=<r> as well, rank r dies instead, at
 * the first shard >= idx it takes, or once its workers are done if it takes
 * none (so the test can kill rank 0 whatever the scheduling);
 * SEQSHARD_STALL_SHARD=<idx> makes the worker that takes shard idx stop there
 * until a signal ends the process, as a hung file system would, so a test can
 * signal a run that is certainly still going. The integration tests use them
 * to check that a failed or interrupted run leaves no output, exits non-zero
 * and does not hang.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../alloc/ss_alloc.h"
#include "ss_comm.h"
#include "ss_engine.h"

/* Multi-rank: finished outputs kept in memory per worker before spilling. */
#define STORE_MEM_PER_WORKER ((size_t)128 << 20)

static int cpu_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* --tmp-dir, or the output's directory (default beside the output). */
static const char *spill_dir(const ss_common_opts_t *o, char *buf, size_t size)
{
    if (o->tmp_dir)
        return o->tmp_dir;
    const char *scratch = ss_slurm_tmpdir();
    if (scratch)
        return scratch;
    const char *slash = o->output ? strrchr(o->output, '/') : NULL;
    if (!slash)
        return ".";
    snprintf(buf, size, "%.*s", (int)(slash - o->output), o->output);
    return *buf ? buf : "/";
}

/*
 * Several ranks on this node that the launcher did not bind (mpirun
 * --bind-to none, or oversubscribed) all see every core: pinning each rank's
 * workers to cores 0..N-1 would stack them on the same cores, so --bind auto
 * then leaves placement to the kernel.
 */
static int shared_node_unbound(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!v)
        v = getenv("MPI_LOCALNRANKS");
    if (!v)
        v = getenv("SLURM_NTASKS_PER_NODE");
    if (!v || atoi(v) < 2)
        return 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 && cpu_count() >= online;
}

/*
 * The multi-rank store's memory cap: 128 MiB per worker, plus 128 MiB, then
 * pieces spill to --tmp-dir. SEQSHARD_STORE_MEM=<bytes> (k/m/g) overrides it,
 * for tuning and for tests (0 spills every piece).
 */
static size_t store_mem_cap(int n_workers)
{
    const char *s = getenv("SEQSHARD_STORE_MEM");
    hts_pos_t v;
    if (s && *s && ss_parse_size(s, &v) == 0)
        return (size_t)v;
    return STORE_MEM_PER_WORKER * (size_t)(n_workers + 1);
}

static int shard_from_env(const char *name)
{
    const char *s = getenv(name);
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
    const char *ctg = sh->tid >= 0 ? sam_hdr_tid2name(ss_job_header(e->job), sh->tid) : "*";
    ss_shard_stats_t st = { 0, 0 };
    double t0 = ss_now();
    if (ss_reader_begin(rd) < 0)
        return -1;
    int r;
    if (e->kill_shard >= 0 &&
        (e->kill_rank < 0 ? idx == e->kill_shard
                          : e->kill_rank == ss_comm_rank() && idx >= e->kill_shard))
        raise(SIGKILL);
    while (idx == e->stall_shard)
        pause(); /* only a signal's handler, which exits, ends this */
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
    if (e->bgzf) {
        if (ss_bgzf_compress_ks(buf->s, buf->l, &w->z, -1) < 0) {
            ss_error("shard %d (%s:%lld-%lld): BGZF compression failed (out of memory?)", idx,
                     ctg, (long long)sh->beg + 1, (long long)sh->end);
            return -1;
        }
        kstring_t t = *buf; /* the buffer leaves with the compressed bytes */
        *buf = w->z;
        w->z = t;
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
    ss_reader_t *rd = NULL;
    /* Bind first: the reader's and kernel's buffers are then first touched on our node. */
    if (e->place && ss_topo_bind_self(e->topo, &e->place[w->id]) < 0)
        goto stop;
    rd = ss_reader_init(ss_job_inputs(e->job));
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
        kstring_t *buf = ss_ordered_buffer(e->ow, e->place ? e->place[w->id].group : 0, idx);
        if (!buf) {
            if (!ss_ordered_stopped(e->ow))
                ss_error("out of memory for shard %d's output", idx);
            goto stop;
        }
        if (process_shard(e, w, rd, ws, idx, buf) < 0) {
            ss_ordered_release(e->ow, buf);
            goto stop;
        }
        if (!e->store) {
            ss_ordered_put(e->ow, idx, buf);
            continue;
        }
        int r = ss_store_put(e->store, idx, buf->s ? buf->s : "", buf->l);
        ss_ordered_release(e->ow, buf);
        if (r < 0)
            goto stop;
    }
    if (!ss_error_raised())
        goto done;
stop:
    ss_ordered_stop(e->ow);
done:
    if (e->k->worker_destroy)
        e->k->worker_destroy(ws);
    ss_reader_destroy(rd);
    free(w->z.s);
    if (e->store) {
        /* after our last put: the main thread may now find every piece in the store */
        atomic_fetch_sub(&e->workers_live, 1);
        ss_sched_par_kick(e->sched);
    }
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

/* The file's first bytes (kernel header, BGZF-framed for .gz text). 0 or -1. */
static int build_header(engine_t *e, kstring_t *h)
{
    if (!e->k->header)
        return 0;
    int r = e->k->header(e->kopts, e->job, h);
    if (r < 0) {
        if (!ss_error_raised())
            ss_error("%s: cannot build the output header", e->k->name);
        return -1;
    }
    if (e->bgzf && h->l) {
        kstring_t z = KS_INITIALIZE;
        if (ss_bgzf_compress_ks(h->s, h->l, &z, -1) < 0) {
            free(z.s);
            ss_error("out of memory compressing the header");
            return -1;
        }
        free(h->s);
        *h = z;
    }
    return 0;
}

int ss_engine_start_workers(engine_t *e, int n_workers, worker_t *w)
{
    int started = 0;
    for (int i = 0; i < n_workers; i++) {
        w[i].e = e;
        w[i].id = i;
        atomic_fetch_add(&e->workers_live, 1); /* before it can run, and leave */
        if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
            atomic_fetch_sub(&e->workers_live, 1);
            break; /* run with the workers we have */
        }
        w[i].started = 1;
        started++;
    }
    if (started == 0 && e->n_shards > 0) {
        ss_error("cannot start any worker thread; lower -@ or check ulimit -u");
        return -1;
    }
    if (started < n_workers)
        ss_warn("started %d of %d worker threads (system limit); continuing", started,
                n_workers);
    return 0;
}

void ss_engine_join_workers(int n_workers, worker_t *w)
{
    for (int i = 0; i < n_workers; i++)
        if (w[i].started)
            pthread_join(w[i].thread, NULL);
}

/* One rank: start the workers, write everything in order, join. Returns 0 or -1. */
static int run_workers(engine_t *e, int n_workers, worker_t *w)
{
    int rc = ss_engine_start_workers(e, n_workers, w);
    if (rc == 0)
        rc = ss_ordered_run(e->ow, sink, tick, e, TICK_S);
    if (rc < 0)
        ss_ordered_stop(e->ow);
    ss_engine_join_workers(n_workers, w);
    return rc < 0 || ss_error_raised() ? -1 : 0;
}

/* Largest contig length: tabix needs CSI past 2^29 - 1. */
static int needs_csi(const ss_job_t *job)
{
    sam_hdr_t *h = ss_job_header(job);
    for (int i = 0; i < sam_hdr_nref(h); i++)
        if (sam_hdr_tid2len(h, i) >= (1LL << 29))
            return 1;
    return 0;
}

int ss_engine_trailer(engine_t *e, kstring_t *t)
{
    return e->k->trailer ? e->k->trailer(e->kopts, e->job, t) : 0;
}

/*
 * The output's last steps (the rank that owns it): on success index .gz
 * text (tabix's .tbi, or .csi past 2^29 bp) or run the kernel's finish hook
 * (view's --write-index), both on the temporary file, then rename the file
 * and its index into place; on failure remove them. Returns 0 or -1.
 */
static int seal(engine_t *e, int rc)
{
    if (rc == 0 && e->bgzf && KIND(e) == SS_OUT_TEXT)
        rc = ss_output_index_tabix(e->out, needs_csi(e->job));
    /* NULL for standard output or a device: the hook says whether it needed a file */
    if (rc == 0 && e->k->finish)
        rc = e->k->finish(e->kopts, e->job, ss_output_index_path(e->out));
    if (rc != 0) {
        ss_output_abort(e->out);
        return -1;
    }
    return ss_output_commit(e->out);
}

/* One rank: the trailer and the BGZF EOF after the last shard. 0 or -1. */
static int finish_output(engine_t *e, int rc)
{
    if (rc == 0) {
        kstring_t t = KS_INITIALIZE;
        rc = ss_engine_trailer(e, &t);
        if (rc == 0 && t.l)
            rc = ss_output_write(e->out, t.s, t.l);
        free(t.s);
    }
    if (rc == 0 && (KIND(e) == SS_OUT_BGZF || KIND(e) == SS_OUT_BAM || e->bgzf))
        rc = ss_output_write(e->out, ss_bgzf_eof, sizeof(ss_bgzf_eof));
    e->bytes_written = ss_output_bytes(e->out);
    return rc;
}

/*
 * --report, collective: every rank's summary to rank 0, which writes the
 * JSON under its temporary name into *rep (NULL elsewhere, or when the run
 * failed). It is renamed after the output, so neither file appears unless
 * both were written. 0 or -1.
 */
static int write_report(engine_t *e, ss_report_t *r, int rc, ss_output_t **rep)
{
    r->bytes_written = e->bytes_written;
    r->buffer_peak = e->ow ? ss_ordered_peak_buffers(e->ow) : 0;
    return ss_report_write_all(ss_job_opts(e->job)->report, r, rc, rep);
}

/* Index and rename the output, then the report. Returns 0 or -1. */
static int seal_all(engine_t *e, int rc, ss_output_t *rep)
{
    rc = seal(e, rc);
    if (rc == 0 && rep)
        return ss_output_commit(rep);
    ss_output_abort(rep);
    return rc;
}

int ss_engine_run(const ss_kernel_t *kernel, void *kopts, ss_job_t *job)
{
    const ss_common_opts_t *o = ss_job_opts(job);
    double t0 = ss_now();
    engine_t e = { .k = kernel, .kopts = kopts, .job = job };
    worker_t *w = NULL;
    ss_shard_t *shards = NULL;
    kstring_t header = KS_INITIALIZE;
    int n = 0, rc = -1, parallel = ss_comm_parallel(), rank0 = ss_comm_rank() == 0;
    atomic_init(&e.reads_done, 0);
    atomic_init(&e.workers_live, 0);
    e.fail_shard = shard_from_env("SEQSHARD_FAIL_SHARD");
    e.kill_shard = shard_from_env("SEQSHARD_KILL_SHARD");
    e.kill_rank = shard_from_env("SEQSHARD_KILL_RANK");
    e.stall_shard = shard_from_env("SEQSHARD_STALL_SHARD");
    e.bgzf = KIND_K(kernel, kopts) == SS_OUT_TEXT && ss_bgzf_wanted(o->output);
    /* failures before the agreement below only mark setup_failed: returning
     * early would leave the other ranks waiting in a collective */
    int setup_failed = ss_plan_build(job, &shards, &n) < 0;
    e.shards = shards;
    e.n_shards = n;
    ss_topo_t *topo = NULL;
    ss_placement_t *place = NULL; /* [n_workers] */
    int bind = shared_node_unbound() && o->bind == SS_BIND_AUTO ? SS_BIND_NONE : o->bind;
    if (bind != SS_BIND_NONE && !setup_failed) {
        if (!(topo = ss_topo_load(NULL, NULL)))
            setup_failed = 1;
        else
            ss_topo_set_quiet(topo, o->quiet || ss_comm_rank() != 0);
    }
    /* -@ unset: Slurm's CPUs per task, else one worker per core we may use */
    int cores = topo ? ss_topo_ncores(topo) : cpu_count();
    int threads = o->threads > 0 ? o->threads : ss_slurm_cpus(cores);
    if (threads <= 0)
        threads = cores;
    int n_workers = threads < n ? threads : n;
    int window = 4 * threads > 8 ? 4 * threads : 8;
    uint64_t total_work = 0;
    for (int i = 0; i < n; i++)
        total_work += shards[i].est_work;
    ss_alloc_tune(threads);
    ss_io_budget_init();
    int n_slots = n_workers > 0 ? n_workers : 1; /* per-worker arrays, never empty */
    e.stats = calloc((size_t)n_slots, sizeof(*e.stats));
    w = calloc((size_t)n_slots, sizeof(*w));
    /*
     * One buffer per worker that can run at once, plus the one being written: each new
     * buffer's pages are faulted in once, and that was most of the system time
     * (benchmarks.md#allocators). Workers beyond the cores cannot run at once anyway;
     * they wait for a buffer instead of filling one that the writer cannot take yet.
     */
    int running = n_slots < cores ? n_slots : cores;
    int buffer_cap = (running > 0 ? running : 1) + 1;
    e.ow = ss_ordered_init(n, window, buffer_cap);
    if (parallel) {
        e.sched = ss_sched_par_init(n_slots);
        char dir[4096];
        e.store = ss_store_init(spill_dir(o, dir, sizeof(dir)), store_mem_cap(n_workers));
    } else {
        e.sched = e.ow ? ss_sched_local_init(n, e.ow) : NULL;
    }
    if (topo && n_workers > 0 && !setup_failed) {
        if (!(place = calloc((size_t)n_workers, sizeof(*place))) ||
            ss_topo_plan(topo, n_workers, (ss_bind_mode_t)bind, place) < 0) {
            if (!ss_error_raised())
                ss_error("cannot place %d workers on this machine's cores", n_workers);
            setup_failed = 1;
        } else {
            if (o->print_binding)
                ss_topo_print(stderr, ss_comm_rank(), place, n_workers);
            e.topo = topo;
            e.place = place;
        }
    }
    if (setup_failed) {
        /* reported above */
    } else if (!e.stats || !w || !e.ow || !e.sched || (parallel && !e.store)) {
        ss_error("out of memory starting the run");
        setup_failed = 1;
    } else if (parallel && !o->output) {
        if (rank0)
            ss_error("under mpirun with %d ranks the output must be a file: add -o FILE",
                     ss_comm_size());
        setup_failed = 1;
    } else if (build_header(&e, &header) < 0 ||
               (rank0 && !parallel && !(e.out = ss_output_open(o->output)))) {
        setup_failed = 1;
    } else if (!parallel && header.l && ss_output_write(e.out, header.s, header.l) < 0) {
        setup_failed = 1;
    }
    /* no rank may enter a collective step that another rank will never reach */
    if (ss_comm_max_int(setup_failed) || (parallel && ss_comm_counter_open(n) < 0)) {
        ss_output_abort(e.out);
        goto out;
    }
    if (parallel && ss_engine_par_open(&e, &header) < 0) {
        ss_comm_counter_close();
        goto out;
    }
    ss_signals_output_direct(e.out && !ss_output_tmp_path(e.out));
    e.progress = ss_progress_start(n, total_work, o->quiet, rank0);
    ss_count_t count0, count1;
    int counted = ss_count_total(&count0) == 0;
    if (parallel) {
        rc = ss_engine_par_run(&e, n_workers, w);
        if (e.kill_shard >= 0 && e.kill_rank == ss_comm_rank())
            raise(SIGKILL); /* the testing hook's rank took no shard >= kill_shard */
        rc = ss_engine_par_finish(&e, rc);
    } else {
        rc = run_workers(&e, n_workers, w);
        rc = finish_output(&e, rc);
    }
    counted = counted && ss_count_total(&count1) == 0;
    ss_output_t *rep = NULL;
    if (o->report) {
        ss_report_t r = { .kernel = kernel->name, .threads = threads, .n_shards = n,
                          .n_workers = n_workers, .workers = e.stats, .wall_s = ss_now() - t0,
                          .est_work_total = total_work, .buffer_cap = buffer_cap };
        r.count_before = counted ? &count0 : NULL;
        r.count_after = counted ? &count1 : NULL;
        if (write_report(&e, &r, rc, &rep) < 0)
            rc = -1;
    }
    /* the owner of the output (rank 0) indexes and renames, the others wait below */
    if (!parallel || rank0)
        rc = seal_all(&e, rc, rep);
    ss_progress_finish(e.progress, rc == 0);
    if (parallel) {
        /* every rank exits with its status, and the others keep guarding the
         * temporary name until rank 0 renamed or removed it */
        if (ss_comm_max_int(rc < 0) != 0)
            rc = -1;
        if (!rank0)
            ss_output_unguard();
    }
out:
    if (rc < 0 && !ss_error_raised() && !parallel)
        ss_error("the run failed");
    ss_sched_destroy(e.sched);
    ss_ordered_destroy(e.ow);
    ss_merge_destroy(e.merge);
    ss_store_destroy(e.store);
    free(header.s);
    if (place)
        ss_topo_plan_free(place, n_workers);
    free(place);
    ss_topo_destroy(topo);
    free(e.stats);
    free(w);
    free(shards);
    return rc == 0 ? SS_EXIT_OK : SS_EXIT_FAIL;
}
