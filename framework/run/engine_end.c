/*
 * engine_end.c -- the end of a run, after the workers: the kernel's summary
 * (view -c), the --report (gathered from every rank, written on failure
 * too) and the job log's final line. Each function is collective under
 * mpirun where its comment says so; the main thread calls them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../comm/comm.h"
#include "engine.h"

/* The report's figures from what setup decided and what the workers did. */
static void report_fill(const engine_t *e, const setup_t *s, double t0, ss_report_t *r)
{
    *r = (ss_report_t){.kernel = e->k->name,
                       .counter_names = e->counter_names,
                       .opts = ss_job_opts(e->job),
                       .header = ss_job_header(e->job),
                       .plan = s->shards,
                       .threads = s->threads,
                       .n_shards = s->n,
                       .n_workers = s->n_workers,
                       .workers = e->stats,
                       .wall_s = ss_now() - t0,
                       .est_work_total = s->total_work,
                       .recs = e->recs};
    r->kernel_info = e->k->describe ? e->k->describe() : NULL;
    r->setup_s = (s->workers_at > 0 ? s->workers_at : ss_now()) - ss_log_opened();
    r->bytes_written = e->bytes_written;
    r->has_input_records = ss_acct_records(e->acct, &r->input_records);
    r->index_merge_s = e->index_merge_s;
    r->buffer_cap = s->buffer_cap;
    r->buffer_peak = e->ow ? ss_ordered_peak_buffers(e->ow) : 0;
    r->buffer_budget = e->ow ? ss_ordered_budget(e->ow) : 0;
    r->buffer_peak_bytes = e->ow ? ss_ordered_peak_held(e->ow) : 0;
    /* auto means one worker per core when pinned (ss_topo_plan), else none */
    int pinned = 0;
    for (int i = 0; e->place && i < s->n_workers; i++)
        pinned |= e->place[i].pinned;
    int mode = !pinned ? SS_BIND_NONE : s->bind == SS_BIND_AUTO ? SS_BIND_CORE : s->bind;
    r->bind_mode = ss_bind_mode_name((ss_bind_mode_t)mode);
    r->place = e->place;
    r->resumed = r->opts->resume;
    /* rank 0 alone adds the kept shards: every rank knows them, but they count once */
    if (ss_comm_rank() == 0) {
        r->n_reused = e->n_kept;
        ss_resume_kept_stats(e->resume, &r->reused);
    }
}

/*
 * Report: --report, collective: every rank's summary and shard records to
 * rank 0 (into *r, released by the caller), which writes the JSON of a run
 * that worked under its temporary name into *rep (NULL elsewhere, or when
 * the run failed); seal renames it after the output. rc or -1.
 */
int ss_engine_report(engine_t *e, const setup_t *s, double t0, const ss_count_t *c0,
                     const ss_count_t *c1, int rc, ss_report_t *r, ss_output_t **rep)
{
    const ss_common_opts_t *o = ss_job_opts(e->job);
    *rep = NULL;
    if (!o->report)
        return rc;
    report_fill(e, s, t0, r);
    r->count_before = c0;
    r->count_after = c1;
    if (ss_report_gather(r) < 0 && ss_comm_rank() == 0) {
        ss_error("%s: cannot gather the ranks' figures for the report", o->report);
        return -1;
    }
    if (ss_comm_rank() != 0 || rc != 0)
        return rc;
    return (*rep = ss_report_write(o->report, r)) ? rc : -1;
}

/*
 * A failed run's report, on rank 0, under its name at once (the output never
 * appears): what ran, the shards that finished, the error. The write's own
 * failure is only reported: the run failed already.
 */
void ss_engine_report_failed(const engine_t *e, ss_report_t *r)
{
    const char *path = ss_job_opts(e->job)->report;
    if (path && ss_comm_rank() == 0)
        ss_report_write_failed(path, r);
}

/*
 * The batch log's final line of a run that worked: reads, bytes and the
 * largest peak RSS over every rank. Collective; rc is the agreed status, so
 * every rank takes the same branch.
 */
void ss_engine_log_done(const engine_t *e, const setup_t *s, int rc)
{
    if (rc != 0)
        return;
    uint64_t v[2] = {0, e->bytes_written};
    for (int i = 0; i < s->n_workers; i++)
        v[0] += e->stats[i].reads;
    struct rusage ru;
    int rss_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? (int)ru.ru_maxrss : 0;
    if (ss_comm_sum_u64(v, 2) < 0)
        return;
    /* the input's records once, where the tally counted them: not the margins' re-reads */
    uint64_t records;
    if (ss_acct_records(e->acct, &records))
        v[0] = records;
    int max_kb = ss_comm_max_int(rss_kb);
    const ss_common_opts_t *o = ss_job_opts(e->job);
    ss_log_done(s->n, v[0], v[1], (int64_t)max_kb * 1024, o->resume ? e->n_kept : -1);
}

/*
 * The batch log's final line of a failed run names the first failing rank's
 * error, which rank 0 may not have seen: every rank's message is gathered.
 * Collective; failed is agreed, so every rank takes the same branch.
 */
void ss_engine_log_failed(int failed)
{
    if (!failed || !ss_comm_parallel())
        return; /* one process: cli.c prints its own error */
    enum { LEN = 512 };
    int n = ss_comm_size();
    char mine[LEN], *all = calloc((size_t)n, LEN);
    const char *m = ss_error_message();
    snprintf(mine, sizeof(mine), "%s", strncmp(m, "seqshard: ", 10) ? m : m + 10);
    if (all && ss_comm_gather(mine, LEN, all) == 0 && ss_comm_rank() == 0)
        for (int i = 0; i < n; i++)
            if (all[(size_t)i * LEN]) {
                ss_log_failed(all + (size_t)i * LEN);
                break;
            }
    free(all);
}

/*
 * The kernel's summary (view -c): its counters summed over every worker and
 * rank, turned into text by the kernel on the output's owner, encoded as the
 * output's text into e->summary, which the sink writes before the trailer.
 * Collective when the kernel has a summary hook, whatever rc is on this rank
 * (a rank that failed still takes part). rc or -1.
 */
int ss_engine_summarize(engine_t *e, const setup_t *s, int rc)
{
    if (!e->k->run_summary)
        return rc;
    uint64_t sums[SS_SUMMARY_N] = {0};
    if (ss_comm_rank() == 0) { /* the shards kept by --resume count once, on rank 0 */
        ss_worker_stats_t kept;
        ss_resume_kept_stats(e->resume, &kept);
        memcpy(sums, kept.summary, sizeof(sums));
    }
    for (int i = 0; i < s->n_workers; i++)
        for (int j = 0; j < SS_SUMMARY_N; j++)
            sums[j] += e->stats[i].summary[j];
    if (ss_comm_sum_u64(sums, SS_SUMMARY_N) < 0) {
        ss_error("cannot add up the ranks' %s counts", e->k->name);
        return -1;
    }
    if (rc != 0 || ss_comm_rank() != 0)
        return rc;
    kstring_t text = KS_INITIALIZE;
    int r = e->k->run_summary(e->kopts, e->run, sums, &text);
    if (r == 0 && text.l && ss_out_run_text(e->orun, text.s, text.l, &e->summary) < 0) {
        ss_error("out of memory writing the %s summary", e->k->name);
        r = -1;
    }
    free(text.s);
    return r < 0 ? -1 : rc;
}

/* Every rank failed setup together (agreed): the report says what was planned and why. */
void ss_engine_setup_failed(engine_t *e, const setup_t *s, double t0)
{
    if (!ss_job_opts(e->job)->report)
        return;
    ss_report_t r;
    report_fill(e, s, t0, &r);
    if (ss_report_gather(&r) == 0)
        ss_engine_report_failed(e, &r);
    ss_report_release(&r);
}
