/*
 * engine.c -- run a kernel over the plan: N worker threads process shards
 * and hand their bytes to the sink, which writes them in shard order: the
 * ordered writer with one rank (engine_local.c); with several, the store,
 * from which the main thread writes each shard at its offset once every
 * earlier shard's size is known (engine_par.c, merge.c), while the workers
 * go on. The run has three phases, each a function below: setup (plan,
 * threads, placement, output), run (the sink), and its end (engine_end.c:
 * the kernel's summary, the report, the log's final line).
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
 * SEQSHARD_TEST_SHARD_DELAY_MS=<ms> makes every shard take that much longer, so
 * a test can interrupt a run on small data part way (resume.sh). The integration
 * tests use them to check that a failed run leaves no output, exits non-zero
 * and does not hang.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../alloc/ss_alloc.h"
#include "../../io/ss_budget.h"
#include "../cli/cli.h"
#include "../comm/comm.h"
#include "../plan/plan.h"
#include "engine.h"

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
 * --bind auto pins only a process whose CPU set someone restricted: mpirun
 * --bind-to, srun --cpu-bind, a cgroup cpuset or taskset. Such a set was
 * given to this process alone, so its cores are ours to place workers on. A
 * process that may run anywhere shares the node with whatever else runs
 * there (a second seqshard from Snakemake, GNU parallel or xargs -P, other
 * ranks that mpirun did not bind): pinning its workers to cores 0..N-1 would
 * stack every such process on the same cores, so the kernel's scheduler
 * places them.
 */
static int cpu_set_restricted(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 && cpu_count() < online;
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

/*
 * The shard buffers' memory budget: SS_ORDERED_MEM_PER_BUFFER for each buffer
 * that may exist at once (the cap, or the window if smaller), or
 * SEQSHARD_SPILL_AT. Output spills to --tmp-dir only past it.
 */
static size_t out_budget(int window, int buffer_cap)
{
    int n = buffer_cap < window ? buffer_cap : window;
    return ss_env_size("SEQSHARD_SPILL_AT", SS_ORDERED_MEM_PER_BUFFER * (size_t)(n > 0 ? n : 1));
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

/* Testing hooks: die or fail on this shard, as a crashed node or a kernel failure would. */
static int injected(engine_t *e, const ss_shard_t *sh, const char *ctg)
{
    int idx = sh->idx;
    if (e->delay_ms > 0) /* a slow kernel, so a test can stop the run part way */
        nanosleep(&(struct timespec){e->delay_ms / 1000, (e->delay_ms % 1000) * 1000000L}, NULL);
    if (e->kill_shard >= 0 &&
        (e->kill_rank < 0 ? idx == e->kill_shard
                          : e->kill_rank == ss_comm_rank() && idx >= e->kill_shard))
        raise(SIGKILL);
    while (idx == e->stall_shard)
        pause(); /* only a signal's handler, which exits, ends this */
    if (idx != e->fail_shard)
        return 0;
    ss_error("shard %d (%s:%lld-%lld): failure injected by SEQSHARD_FAIL_SHARD (a testing "
             "hook); unset SEQSHARD_FAIL_SHARD",
             idx, ctg, (long long)sh->beg + 1, (long long)sh->end);
    return -1;
}

/* What the manifest keeps of a finished shard; the writer adds the offset. Worker thread. */
static int crc_add(void *ctx, const char *buf, size_t len)
{
    uint32_t *crc = ctx;
    *crc = ss_resume_crc32(*crc, buf, len);
    return 0;
}

/*
 * Shard idx's resume record: size and CRC over all its bytes (the spilled
 * ones first, read back from the spill file), and its counters. 0 or -1.
 */
static int resume_rec(ss_resume_rec_t *r, int idx, const ss_spill_t *sp, const kstring_t *buf,
                      const ss_shard_stats_t *st)
{
    *r = (ss_resume_rec_t){
        .idx = (uint32_t)idx, .size = sp->len + buf->l, .reads = st->reads, .bases = st->bases};
    uint32_t crc = 0;
    if (ss_spill_copy(sp, idx, crc_add, &crc) < 0)
        return -1;
    r->crc = ss_resume_crc32(crc, buf->s ? buf->s : "", buf->l);
    memcpy(r->counts, st->counts, sizeof(r->counts));
    memcpy(r->summary, st->summary, sizeof(r->summary));
    return 0;
}

/*
 * The kernel's process, with `before` from the census taken as the run goes:
 * when the shards ahead are still running and the kernel needs their counts,
 * its output so far is dropped, a census counts them, and it runs again.
 * 0, or -1 (after ss_error() when the kernel did not say why).
 */
static int process_counted(engine_t *e, worker_t *w, ss_out_t *out, void *ws, int idx,
                           kstring_t *buf, ss_shard_stats_t *st)
{
    ss_shard_t *sh = &e->shards[idx];
    if (e->lazy)
        sh->before = ss_census_lazy_before(e->lazy, idx);
    int r = e->k->process(ws, sh, out, st);
    if (r == SS_SHARD_NEEDS_BEFORE && e->lazy && sh->before == SS_BEFORE_UNKNOWN) {
        ss_out_abort(out);
        buf->l = 0;
        *st = (ss_shard_stats_t){0};
        r = ss_census_lazy_fill(e, e->lazy, idx, &w->census, w->id);
        if (r == 0)
            sh->before = ss_census_lazy_before(e->lazy, idx);
        if (r == 0)
            r = ss_out_begin(out, sh, buf);
        if (r == 0) {
            ss_chain_shard(w->chain, sh);
            r = e->k->process(ws, sh, out, st);
        }
    }
    if (r == SS_SHARD_NEEDS_BEFORE) {
        ss_error("%s: internal error: shard %d needs the census it was given", e->k->name, idx);
        return -1;
    }
    if (r == 0 && e->lazy)
        r = ss_census_lazy_report(e->lazy, idx, st->census);
    return r;
}

/* Run the kernel on one shard; its finished bytes end in buf. 0, or -1 after ss_error(). */
static int process_shard(engine_t *e, worker_t *w, ss_reader_t *rd, ss_out_t *out, void *ws,
                         int idx, kstring_t *buf)
{
    const ss_shard_t *sh = &e->shards[idx];
    const char *ctg = sh->tid >= 0 ? sam_hdr_tid2name(ss_job_header(e->job), sh->tid) : "*";
    ss_shard_stats_t st = {0};
    double t0 = ss_now(), wall0 = ss_wall_now();
    ss_reader_set_shard(rd, idx);
    ss_acct_shard(e->acct, rd, e->shards, idx); /* counted until ss_reader_end */
    if (ss_reader_begin(rd) < 0)
        return -1;
    int r = injected(e, sh, ctg);
    if (r == 0)
        r = ss_out_begin(out, sh, buf);
    ss_chain_shard(w->chain, sh);
    uint64_t read0 = ss_reader_records(rd);
    if (r == 0)
        r = process_counted(e, w, out, ws, idx, buf, &st);
    ss_chain_counts(w->chain, st.counts, SS_KERNEL_COUNTERS);
    if (w->chain) /* the kernel counts what its steps gave it; the reads are the files' */
        st.reads = ss_reader_records(rd) - read0;
    if (r == 0)
        r = ss_out_end(out);
    if (r == 0) {
        e->spills[idx] = ss_out_take_spill(out); /* shard idx is this worker's alone */
        if (e->ipieces)
            ss_out_take_index(out, &e->ipieces[idx]);
    }
    if (r == 0)
        r = ss_side_put(e->side, w->id, idx);
    ss_reader_end(rd);
    ss_worker_stats_t *s = &e->stats[w->id];
    s->busy_s += ss_now() - t0;
    if (r < 0) {
        ss_out_abort(out);
        if (!ss_error_raised())
            ss_error("%s failed on shard %d (%s:%lld-%lld)", e->k->name, idx, ctg,
                     (long long)sh->beg + 1, (long long)sh->end);
        return -1;
    }
    s->shards++;
    s->reads += st.reads;
    s->bases += st.bases;
    for (int c = 0; c < SS_KERNEL_COUNTERS; c++)
        s->counts[c] += st.counts[c];
    for (int i = 0; i < SS_SUMMARY_N; i++)
        s->summary[i] += st.summary[i];
    /* shard idx is this worker's alone: the main thread reads the record after the join */
    e->recs[idx] = (ss_shard_rec_t){.idx = idx,
                                    .worker = w->id,
                                    .rank = ss_comm_rank(),
                                    .done = 1,
                                    .beg = wall0,
                                    .end = ss_wall_now(),
                                    .reads = st.reads,
                                    .bytes = e->spills[idx].len + buf->l};
    if (e->rrecs && resume_rec(&e->rrecs[idx], idx, &e->spills[idx], buf, &st) < 0)
        return -1;
    atomic_fetch_add_explicit(&e->reads_done, st.reads, memory_order_relaxed);
    return 0;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    engine_t *e = w->e;
    void *ws = NULL;
    ss_reader_t *rd = NULL;
    ss_out_t *out = NULL;
    /* Bind first: the reader's and kernel's buffers are then first touched on our node. */
    if (e->place && ss_topo_bind_self(e->topo, &e->place[w->id]) < 0)
        goto stop;
    if (!(rd = ss_reader_init(ss_job_inputs(e->job)))) {
        ss_error("out of memory starting worker %d", w->id);
        goto stop;
    }
    if (!(out = ss_out_init(e->orun, e->ow)) || ss_side_attach(e->side, out, w->id) < 0)
        goto stop;
    w->chain = ss_chain_open(e->job, rd, ss_job_step_reach(e->job).halo, e->n_kernel_counters);
    if (!w->chain && ss_error_raised())
        goto stop;
    if (e->k->worker_init && e->k->worker_init(&ws, e->kopts, e->run, e->job, rd, w->id) < 0) {
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
        ss_out_run_busy(e->orun, 1);
        int failed = process_shard(e, w, rd, out, ws, idx, buf) < 0;
        ss_out_run_busy(e->orun, -1);
        if (failed) {
            ss_ordered_release(e->ow, buf);
            goto stop;
        }
        if (e->sink->put(e, idx, buf) < 0)
            goto stop;
    }
    if (!ss_error_raised())
        goto done;
stop:
    ss_ordered_stop(e->ow);
done:
    ss_census_state_close(e, w->census);
    w->census = NULL;
    if (e->k->worker_destroy)
        e->k->worker_destroy(ws);
    ss_chain_close(w->chain);
    w->chain = NULL;
    ss_out_destroy(out);
    ss_acct_add(e->acct, rd);
    ss_reader_destroy(rd);
    if (e->store) {
        /* after our last put: the main thread may now find every piece in the store */
        atomic_fetch_sub(&e->workers_live, 1);
        ss_sched_par_kick(e->sched);
    }
    return NULL;
}

/*
 * Why pthread_create failed: glibc says EAGAIN both when the process limit
 * (ulimit -u) is reached and when a thread's stack cannot be mapped (ulimit -v,
 * memory). Mapping a stack's worth ourselves tells them apart. 1: no memory.
 */
static int no_room_for_stack(void)
{
    pthread_attr_t a;
    size_t size = (size_t)8 << 20;
    if (pthread_attr_init(&a) == 0) {
        if (pthread_attr_getstacksize(&a, &size) != 0)
            size = (size_t)8 << 20;
        pthread_attr_destroy(&a);
    }
    void *p =
        mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    munmap(p, size);
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
    int nomem = started < n_workers && no_room_for_stack();
    if (started == 0 && e->n_shards > 0) {
        if (nomem)
            ss_error("out of memory starting a worker thread (no room for its stack); give "
                     "the run more memory (ulimit -v)");
        else
            ss_error("cannot start any worker thread; lower -@ or check ulimit -u");
        return -1;
    }
    if (started < n_workers)
        ss_warn("started %d of %d worker threads (%s); continuing with the same output", started,
                n_workers, nomem ? "out of memory for their stacks" : "system limit");
    return 0;
}

void ss_engine_join_workers(int n_workers, worker_t *w)
{
    for (int i = 0; i < n_workers; i++)
        if (w[i].started)
            pthread_join(w[i].thread, NULL);
}

static void resume_done(engine_t *e)
{
    ss_resume_end(e->resume, 1);
    e->resume = NULL;
}

int ss_engine_resume_start(engine_t *e, const kstring_t *header)
{
    const ss_common_opts_t *o = ss_job_opts(e->job);
    if (!e->out || !ss_output_tmp_path(e->out))
        return 0; /* standard output, a FIFO: nothing to resume (ss_resume_check_opts) */
    ss_resume_args_t a = {.kernel = e->k->name,
                          .opts = o,
                          .shards = e->shards,
                          .n_shards = e->n_shards,
                          .header = header->s,
                          .header_len = header->l,
                          .want = o->resume};
    int refused = 0;
    if ((e->resume = ss_resume_start(&a, e->out, &refused))) {
        e->n_kept = ss_resume_n_kept(e->resume);
        ss_signals_resumable(1);
        return 0;
    }
    if (refused)
        ss_output_close_keep(e->out); /* the earlier run's files stay for a corrected rerun */
    else
        ss_output_abort(e->out);
    e->out = NULL;
    return -1;
}

/*
 * The output's last steps, on the rank that owns it: write the index (tabix
 * for .gz text; --write-index for BAM/CRAM, beside it), merged from the
 * shards' pieces or else built from the finished temporary file, then rename
 * both into place, then the report; on failure remove them all, so neither
 * file appears unless every one was written. Returns 0 or -1.
 */
static int seal(engine_t *e, int rc, ss_output_t *rep)
{
    ss_resume_quiesce(e->resume); /* its thread syncs e->out's descriptor, which goes now */
    const char *output = ss_job_opts(e->job)->output;
    uint64_t data_end = 0;
    if (rc == 0 && e->out)
        rc = ss_engine_index_seal(e, &data_end);
    if (rc == 0 && e->orun->tabix)
        rc = ss_out_run_index_tabix(e->orun, e->out, output, ss_engine_tabix_csi(e), e->imerge,
                                    data_end);
    /* standard output or a device: the index step says whether it needed a file */
    if (rc == 0)
        rc = ss_out_run_index(e->orun, e->out, output, e->imerge, data_end);
    if (rc == 0)
        rc = ss_side_seal(e->side, e->k, e->kopts, e->run);
    if (rc != 0) {
        ss_output_abort(e->out);
        ss_output_abort(rep);
        resume_done(e);
        return -1;
    }
    rc = e->out ? ss_output_commit(e->out) : 0;
    resume_done(e); /* in place, or removed: the manifest has nothing left to describe */
    if (rc == 0)
        rc = ss_side_commit(e->side);
    if (rc == 0 && rep)
        return ss_output_commit(rep);
    ss_output_abort(rep);
    return rc;
}

/* Threads, placement and the ordered writer's window and buffers. 0, or 1 when it failed. */
/* --print-binding where nothing is pinned: say so, and why. */
static void print_unpinned(int asked, int n_workers)
{
    fprintf(stderr, "rank %d: %d worker%s not pinned (%s)\n", ss_comm_rank(), n_workers,
            n_workers == 1 ? "" : "s",
            asked == SS_BIND_NONE ? "--bind none"
                                  : "--bind auto: this process may run on every CPU, so the "
                                    "system places its threads; mpirun --bind-to, srun "
                                    "--cpu-bind or --bind core pin them");
}

static int setup_workers(engine_t *e, setup_t *s, int failed)
{
    const ss_common_opts_t *o = ss_job_opts(e->job);
    int bind = o->bind == SS_BIND_AUTO && !cpu_set_restricted() ? SS_BIND_NONE : o->bind;
    s->bind = bind;
    if (bind != SS_BIND_NONE && !failed) {
        if (!(s->topo = ss_topo_load(NULL, NULL)))
            failed = 1;
        else
            ss_topo_set_quiet(s->topo, o->quiet || ss_comm_rank() != 0);
    }
    /* -@ unset: Slurm's CPUs per task, else one worker per core we may use */
    int cores = s->topo ? ss_topo_ncores(s->topo) : cpu_count();
    s->threads = o->threads > 0 ? o->threads : ss_slurm_cpus(cores);
    if (s->threads <= 0)
        s->threads = cores;
    if (ss_job_inputs(e->job)->stream)
        s->threads = 1; /* standard input is read once, in order, by one worker */
    s->n_workers = s->threads < s->n ? s->threads : s->n;
    int window = 4 * s->threads > 8 ? 4 * s->threads : 8;
    ss_alloc_tune(s->threads);
    /* before any output or worker: a limit too low for even one input per worker says so */
    if (!failed &&
        ss_io_budget_init(ss_job_opts(e->job)->n_inputs, s->n_workers > 0 ? s->n_workers : 1,
                          ss_job_inputs(e->job)->cram_refs != NULL) < 0)
        failed = 1;
    int n_slots = s->n_workers > 0 ? s->n_workers : 1; /* per-worker arrays, never empty */
    e->stats = calloc((size_t)n_slots, sizeof(*e->stats));
    e->recs = calloc((size_t)(s->n > 0 ? s->n : 1), sizeof(*e->recs));
    e->spills = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof(*e->spills));
    for (int i = 0; e->spills && i < s->n; i++)
        e->spills[i] = SS_SPILL_NONE;
    s->w = calloc((size_t)n_slots, sizeof(*s->w));
    /*
     * One buffer per worker that can run at once, plus the one being written: each new
     * buffer's pages are faulted in once, and that was most of the system time
     * (benchmarks.md#allocators). Workers beyond the cores cannot run at once anyway;
     * they wait for a buffer instead of filling one that the writer cannot take yet.
     */
    int running = n_slots < cores ? n_slots : cores;
    s->buffer_cap = (running > 0 ? running : 1) + 1;
    e->ow = ss_ordered_init(s->n, window, s->buffer_cap);
    if (e->ow)
        ss_ordered_set_budget(e->ow, out_budget(window, s->buffer_cap));
    if (ss_comm_parallel()) {
        e->sched = ss_sched_par_init(n_slots);
        char dir[4096];
        e->store = ss_store_init(spill_dir(o, dir, sizeof(dir)), store_mem_cap(s->n_workers));
    } else {
        e->sched = e->ow ? ss_sched_local_init(s->n, e->ow) : NULL;
    }
    if (s->topo && s->n_workers > 0 && !failed) {
        if (!(s->place = calloc((size_t)s->n_workers, sizeof(*s->place))) ||
            ss_topo_plan(s->topo, s->n_workers, (ss_bind_mode_t)bind, s->place) < 0) {
            if (!ss_error_raised())
                ss_error("cannot place %d workers on this machine's cores", s->n_workers);
            failed = 1;
        } else {
            if (o->print_binding)
                ss_topo_print(stderr, ss_comm_rank(), s->place, s->n_workers);
            e->topo = s->topo;
            e->place = s->place;
        }
    }
    if (!failed && !s->topo && o->print_binding)
        print_unpinned(o->bind, s->n_workers);
    if (!failed && e->orun)
        ss_out_run_zpool(e->orun, s->threads);
    int no_pieces = !failed && e->orun && ss_engine_index_init(e, s->n) < 0;
    if (!failed && (!e->stats || !e->recs || !e->spills || !s->w || !e->ow || !e->sched ||
                    (ss_comm_parallel() && !e->store) || no_pieces)) {
        ss_error("out of memory starting the run");
        failed = 1;
    }
    return failed;
}

/*
 * The plan: rank 0's, sent to every rank, so one plan serves the run and no
 * other rank reads index cells (or a CRAM's containers) to make it. The plan
 * is a function of the inputs and options alone, so this changes no bytes;
 * it takes the planning off every rank but one, and a rank whose
 * environment would plan otherwise (SEQSHARD_SHARD_OUTPUT) cannot disagree.
 * Returns 0, or 1 when this rank failed (reported): when rank 0 failed, the
 * others return 0 with no shards and the agreement after setup stops them.
 */
static int plan(engine_t *e, const ss_out_spec_t *spec, setup_t *s)
{
    if (!ss_comm_parallel())
        return ss_plan_build(e->job, spec, &s->shards, &s->n) < 0;
    int root = ss_comm_rank() == 0, failed = 0;
    void *buf = NULL;
    size_t len = 0;
    if (root && ss_env_on("SEQSHARD_FAIL_PLAN")) {
        ss_error("planning failed as SEQSHARD_FAIL_PLAN asked (a testing hook); unset it");
        failed = 1;
    } else if (root) {
        failed = ss_plan_build(e->job, spec, &s->shards, &s->n) < 0;
    }
    if (root) {
        buf = s->shards;
        len = failed ? SIZE_MAX : (size_t)s->n * sizeof(*s->shards);
    }
    if (ss_comm_bcast_bytes(&buf, &len) < 0) {
        ss_error("cannot send the plan to every rank (an MPI failure, or out of memory)");
        return 1;
    }
    if (!root && len != SIZE_MAX) {
        s->shards = buf;
        s->n = (int)(len / sizeof(*s->shards));
    }
    return failed;
}

/*
 * Setup: plan, workers, the output's kind and header. Failures only mark the
 * result: returning early would leave the other ranks waiting in the
 * agreement. Returns 0, or 1 when this rank failed (reported).
 */
static int setup(engine_t *e, ss_out_spec_t *spec, setup_t *s)
{
    const ss_common_opts_t *o = ss_job_opts(e->job);
    int failed = plan(e, spec, s);
    e->shards = s->shards;
    e->n_shards = s->n;
    e->n_kernel_counters = 0;
    while (e->k->counter_names && e->k->counter_names[e->n_kernel_counters])
        e->n_kernel_counters++;
    ss_job_counter_names(e->job, e->k->counter_names, e->counter_names, SS_KERNEL_COUNTERS + 1);
    if (!failed && !(e->orun = ss_out_run_init(spec, o)))
        failed = 1;
    if (!failed) {
        char dir[4096];
        snprintf(e->orun->spill_dir, sizeof(e->orun->spill_dir), "%s",
                 spill_dir(o, dir, sizeof(dir)));
    }
    for (int i = 0; i < s->n; i++)
        s->total_work += s->shards[i].est_work;
    failed = setup_workers(e, s, failed);
    if (!failed)
        failed = ss_side_init(&e->side, spec, o, s->n, s->n_workers) < 0;
    if (!failed)
        failed = ss_acct_init(&e->acct, e->job, s->shards, s->n) < 0;
    if (failed)
        return 1;
    if (ss_comm_parallel() && ss_job_inputs(e->job)->stream) {
        if (ss_comm_rank() == 0)
            ss_error("-: standard input is read by one process, but mpirun started %d ranks; "
                     "run without mpirun/srun, or give a BAM/CRAM file",
                     ss_comm_size());
        return 1;
    }
    if (o->resume && e->orun->no_main) {
        if (ss_comm_rank() == 0)
            ss_error("--resume: %s writes only files of its own, which are made whole at the "
                     "end; rerun without --resume",
                     e->k->name);
        return 1;
    }
    /* a kept shard's output is on disk, but not what it added to the sums */
    if (o->resume && (spec->n_values || spec->n_hists)) {
        if (ss_comm_rank() == 0)
            ss_error("--resume: this %s run sums figures over every shard (its statistics), "
                     "which a resumed run cannot recover; rerun without --resume",
                     e->k->name);
        return 1;
    }
    if (ss_resume_check_opts(o, ss_job_inputs(e->job)->stream != NULL) < 0)
        return 1;
    if (o->output && strcmp(o->output, "-") != 0 &&
        !(e->rrecs = calloc((size_t)(s->n > 0 ? s->n : 1), sizeof(*e->rrecs)))) {
        ss_error("out of memory for the resume records of %d shards", s->n);
        return 1;
    }
    return ss_out_run_header(e->orun, &s->header) < 0;
}

/* Run: the sink starts the workers and writes their shards, then finishes the file. */
static int run(engine_t *e, setup_t *s, double t0)
{
    const ss_common_opts_t *o = ss_job_opts(e->job);
    int parallel = ss_comm_parallel();
    ss_log_start(o->n_inputs, s->threads, ss_comm_size(), s->n);
    if (e->sink->open(e, &s->header) < 0) {
        /* agreed on every rank: the SIGTERM mpirun sends the others as the first exits
         * adds no second line to the one that said why */
        if (parallel)
            ss_signals_run_failed();
        return -1;
    }
    ss_signals_output_direct(e->out && !ss_output_tmp_path(e->out));
    ss_signals_output_name(o->output);
    e->progress = ss_progress_start(s->n, s->total_work, o->quiet, ss_comm_rank() == 0);
    ss_count_t count0, count1;
    int counted = ss_count_total(&count0) == 0;
    s->workers_at = ss_now();
    int rc = e->sink->run(e, s->n_workers, s->w);
    if (parallel && e->kill_shard >= 0 && e->kill_rank == ss_comm_rank())
        raise(SIGKILL); /* the testing hook's rank took no shard >= kill_shard */
    rc = ss_engine_summarize(e, s, rc);
    rc = ss_acct_check(e->acct, e, rc); /* before anything is renamed */
    rc = e->sink->finish(e, rc);
    if (parallel && rc != 0)
        ss_signals_run_failed(); /* the finish was an agreement: every rank knows */
    rc = ss_side_finish(e->side, rc);
    counted = counted && ss_count_total(&count1) == 0;
    ss_output_t *rep;
    ss_report_t r = {0};
    rc = ss_engine_report(e, s, t0, counted ? &count0 : NULL, counted ? &count1 : NULL, rc, &r,
                          &rep);
    /* the owner of the output (rank 0) indexes and renames, the others wait below */
    if (!parallel || ss_comm_rank() == 0)
        rc = seal(e, rc, rep);
    if (rc != 0 && r.kernel)
        ss_engine_report_failed(e, &r);
    ss_report_release(&r);
    ss_progress_finish(e->progress, rc == 0);
    if (parallel) {
        /* rank 0 has indexed, renamed and reported: every rank exits with its
         * status, and the others keep guarding the temporary name until then */
        if (ss_comm_max_int(rc < 0) != 0)
            rc = -1;
        if (rc != 0)
            ss_signals_run_failed();
        if (ss_comm_rank() != 0)
            ss_output_unguard();
    }
    ss_engine_log_done(e, s, rc);
    ss_engine_log_failed(parallel && rc != 0);
    return rc;
}

static void teardown(engine_t *e, setup_t *s)
{
    ss_sched_destroy(e->sched);
    ss_ordered_destroy(e->ow);
    ss_merge_destroy(e->merge);
    ss_funnel_destroy(e->funnel);
    ss_side_destroy(e->side);
    ss_acct_destroy(e->acct);
    ss_store_destroy(e->store);
    ss_engine_index_destroy(e);
    ss_out_run_destroy(e->orun);
    free(s->header.s);
    free(e->summary.s);
    if (s->place)
        ss_topo_plan_free(s->place, s->n_workers);
    free(s->place);
    ss_topo_destroy(s->topo);
    free(e->stats);
    free(e->recs);
    for (int i = 0; e->spills && i < s->n; i++)
        ss_spill_close(&e->spills[i]); /* a failed run's shards never written */
    free(e->spills);
    free(e->rrecs);
    ss_resume_end(e->resume, 0); /* ranks other than 0 close their record files */
    free(s->w);
    free(s->shards);
}

/*
 * The kernel's census: with one rank taken as the run goes, else before it;
 * before it too with --resume (kept shards never report their counts) and
 * with a gather (which reads the shards with their `before`). 0, or -1 after
 * ss_error() (collective, as ss_census_run).
 */
static int census_before_run(engine_t *e, setup_t *s, const ss_out_spec_t *spec)
{
    int gather = spec->gather && e->k->gather && e->k->gathered;
    if (!ss_comm_parallel() && !ss_job_opts(e->job)->resume && !gather) {
        e->lazy = ss_census_lazy_init(s->n);
        return e->lazy ? 0 : -1;
    }
    return ss_census_run(e, s->shards, s->n, s->n_workers);
}

int ss_engine_run(const ss_kernel_t *kernel, void *kopts, const void *run_state,
                  ss_out_spec_t *spec, ss_job_t *job)
{
    double t0 = ss_now();
    engine_t e = {.k = kernel, .kopts = kopts, .run = run_state, .job = job};
    setup_t s = {0};
    int parallel = ss_comm_parallel(), rc = -1;
    e.sink = parallel ? &ss_sink_par : &ss_sink_local;
    atomic_init(&e.reads_done, 0);
    atomic_init(&e.workers_live, 0);
    e.fail_shard = shard_from_env("SEQSHARD_FAIL_SHARD");
    e.kill_shard = shard_from_env("SEQSHARD_KILL_SHARD");
    e.kill_rank = shard_from_env("SEQSHARD_KILL_RANK");
    e.stall_shard = shard_from_env("SEQSHARD_STALL_SHARD");
    e.delay_ms = shard_from_env("SEQSHARD_TEST_SHARD_DELAY_MS");
    int failed = setup(&e, spec, &s);
    /* no rank may enter a collective step that another rank will never reach */
    failed = ss_comm_max_int(failed);
    if (!failed && spec->census && kernel->census)
        failed = census_before_run(&e, &s, spec) < 0;
    if (!failed && spec->gather && kernel->gather && kernel->gathered)
        failed = ss_gather_run(&e, s.n, s.n_workers) < 0;
    if (failed) {
        if (parallel)
            ss_signals_run_failed();
        ss_engine_setup_failed(&e, &s, t0);
        ss_engine_log_failed(parallel);
    } else if (!parallel || ss_comm_counter_open(s.n) == 0)
        rc = run(&e, &s, t0);
    if (rc < 0 && !ss_error_raised() && !parallel)
        ss_error("the run failed");
    teardown(&e, &s);
    ss_census_lazy_destroy(e.lazy);
    return rc == 0 ? SS_EXIT_OK : SS_EXIT_FAIL;
}
