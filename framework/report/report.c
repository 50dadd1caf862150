/*
 * report.c -- --report FILE.json: what ran, on what, where, and how the work
 * spread over the workers. Load imbalance = max busy time / mean busy time
 * (1.0 is perfect). Peak RSS is the process high-water mark (getrusage
 * ru_maxrss). A run that worked writes it under a temporary name like the
 * output, renamed with it; a failed run writes it under its name at once,
 * with "status": "failed" and the error (the output never appears then).
 * The per-shard records, binding and hosts are in report_shards.c.
 */
#include <htslib/hts.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../../alloc/ss_alloc.h"
#include "../cli/cli.h"
#include "../comm/comm.h"
#include "../run/run.h"
#include "../step/steps.h"
#include "report.h"

void ss_json_str(FILE *fp, const char *s)
{
    if (!s) {
        fputs("null", fp);
        return;
    }
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

static void api_version(char *buf, size_t size, unsigned v)
{
    snprintf(buf, size, "%u.%u.%u", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
}

static void write_versions(FILE *fp)
{
    char hw_c[32], hw_r[32], mpi[256];
    api_version(hw_c, sizeof(hw_c), HWLOC_API_VERSION);
    api_version(hw_r, sizeof(hw_r), hwloc_get_api_version());
    ss_comm_version(mpi, sizeof(mpi));
    ss_alloc_info_t ai;
    memset(&ai, 0, sizeof(ai));
    ss_alloc_info(&ai);
    fprintf(fp, "  \"tool\": \"seqshard\",\n  \"version\": \"%s\",\n", ss_build_version);
    fprintf(fp, "  \"build\": {\"type\": \"%s\", \"compiler\": \"%s\"},\n", ss_build_type,
            ss_build_compiler);
    fprintf(fp, "  \"htslib\": ");
    ss_json_str(fp, hts_version());
    fprintf(fp, ",\n  \"hwloc_api\": {\"compiled\": \"%s\", \"runtime\": \"%s\"},\n", hw_c, hw_r);
    fprintf(fp, "  \"mpi\": ");
    ss_json_str(fp, mpi);
    fprintf(fp, ",\n  \"allocator\": {\"name\": ");
    ss_json_str(fp, ai.name ? ai.name : ss_alloc_name());
    fprintf(fp, ", \"version\": ");
    ss_json_str(fp, ai.version);
    fprintf(fp,
            ", \"heap_bytes\": %zu, \"allocated_bytes\": %zu, \"free_bytes\": %zu, "
            "\"thread_cache_bytes\": %zu},\n",
            ai.heap_bytes, ai.allocated_bytes, ai.free_bytes, ai.thread_cache_bytes);
}

/* "kernel_counts": the kernel's own counters, over every worker of every rank. */
static void write_kernel_counts(FILE *fp, const ss_report_t *r)
{
    if (!r->counter_names || !r->counter_names[0])
        return;
    uint64_t tot[SS_KERNEL_COUNTERS] = {0};
    /* the shards kept by --resume count too: the counts describe the whole output */
    for (int c = 0; c < SS_KERNEL_COUNTERS; c++)
        tot[c] = r->reused.counts[c];
    if (r->ranks && r->n_ranks > 1) {
        for (int i = 0; i < r->n_ranks; i++)
            for (int c = 0; c < SS_KERNEL_COUNTERS; c++)
                tot[c] += r->ranks[i].counts[c];
    } else {
        for (int i = 0; i < r->n_workers; i++)
            for (int c = 0; c < SS_KERNEL_COUNTERS; c++)
                tot[c] += r->workers[i].counts[c];
    }
    fprintf(fp, "  \"kernel_counts\": {");
    for (int c = 0; c < SS_KERNEL_COUNTERS && r->counter_names[c]; c++) {
        fprintf(fp, "%s", c ? ", " : "");
        ss_json_str(fp, r->counter_names[c]);
        fprintf(fp, ": %llu", (unsigned long long)tot[c]);
    }
    fprintf(fp, "},\n");
}

/*
 * Returns this process's reads (what its allocation counts are divided by).
 * With several ranks, "workers" lists this rank's (rank 0's) workers, but
 * "totals" covers every rank, from the gathered rank records.
 */
static uint64_t write_workers(FILE *fp, const ss_report_t *r)
{
    ss_worker_stats_t tot = {0};
    double max_busy = 0;
    fprintf(fp, "  \"workers\": [");
    for (int i = 0; i < r->n_workers; i++) {
        const ss_worker_stats_t *w = &r->workers[i];
        fprintf(fp,
                "%s\n    {\"id\": %d, \"shards\": %llu, \"reads\": %llu, \"bases\": %llu, "
                "\"busy_s\": %.6f}",
                i ? "," : "", i, (unsigned long long)w->shards, (unsigned long long)w->reads,
                (unsigned long long)w->bases, w->busy_s);
        tot.shards += w->shards, tot.reads += w->reads, tot.bases += w->bases;
        tot.busy_s += w->busy_s;
        if (w->busy_s > max_busy)
            max_busy = w->busy_s;
    }
    double mean = r->n_workers ? tot.busy_s / r->n_workers : 0;
    uint64_t own_reads = tot.reads;
    if (r->ranks && r->n_ranks > 1) {
        memset(&tot, 0, sizeof(tot));
        for (int i = 0; i < r->n_ranks; i++) {
            tot.shards += r->ranks[i].shards, tot.reads += r->ranks[i].reads;
            tot.bases += r->ranks[i].bases, tot.busy_s += r->ranks[i].busy_s;
        }
    }
    fprintf(fp, "%s],\n", r->n_workers ? "\n  " : "");
    fprintf(fp,
            "  \"totals\": {\"shards\": %llu, \"reads\": %llu, \"bases\": %llu, "
            "\"busy_s\": %.6f},\n",
            (unsigned long long)tot.shards, (unsigned long long)tot.reads,
            (unsigned long long)tot.bases, tot.busy_s);
    /* "reads" above is what the shards read, margins and overlaps again; this, each once */
    if (r->has_input_records)
        fprintf(fp, "  \"input_records\": %llu,\n", (unsigned long long)r->input_records);
    else
        fprintf(fp, "  \"input_records\": null,\n");
    fprintf(fp, "  \"load_imbalance\": %.4f,\n", mean > 0 ? max_busy / mean : 1.0);
    write_kernel_counts(fp, r);
    return own_reads;
}

/*
 * CPU time over the CPU time the workers could have had (wall x workers):
 * 1.0 keeps every worker's core busy for the whole run; the main thread's
 * merging and writing count too, so it can pass 1.0 a little. Null when
 * nothing ran or the time is unknown.
 */
static void write_efficiency(FILE *fp, double cpu_s, double wall_s, int workers)
{
    if (cpu_s >= 0 && wall_s > 0 && workers > 0)
        fprintf(fp, "%.4f", cpu_s / (wall_s * workers));
    else
        fputs("null", fp);
}

/* Per rank, and imbalance over ranks (max/mean busy), when several ran. */
static void write_ranks(FILE *fp, const ss_report_t *r)
{
    if (!r->ranks || r->n_ranks < 2)
        return;
    double tot = 0, max = 0, idle_tot = 0;
    ss_rank_stats_t sum = {0};
    int64_t rss_max = 0;
    fprintf(fp, "  \"ranks\": [");
    for (int i = 0; i < r->n_ranks; i++) {
        const ss_rank_stats_t *k = &r->ranks[i];
        double idle = k->wall_s * k->threads - k->busy_s;
        fprintf(fp, "%s\n    {\"rank\": %d, \"host\": ", i ? "," : "", i);
        ss_json_str(fp, k->host);
        fprintf(fp,
                ", \"threads\": %d, \"shards\": %llu, \"reads\": %llu, "
                "\"bases\": %llu, \"busy_s\": %.6f, \"idle_s\": %.6f, \"bytes_out\": %llu, "
                "\"peak_rss_bytes\": %lld, \"wall_s\": %.6f, \"user_s\": %.3f, "
                "\"sys_s\": %.3f, \"cpu_efficiency\": ",
                k->threads, (unsigned long long)k->shards, (unsigned long long)k->reads,
                (unsigned long long)k->bases, k->busy_s, idle > 0 ? idle : 0,
                (unsigned long long)k->bytes_out, (long long)k->peak_rss_bytes, k->wall_s,
                k->user_s, k->sys_s);
        write_efficiency(fp, k->user_s + k->sys_s, k->wall_s, k->threads);
        fputc('}', fp);
        sum.user_s += k->user_s, sum.sys_s += k->sys_s;
        /* worker-seconds the ranks had, for the efficiency over all of them */
        sum.wall_s += k->wall_s * k->threads;
        tot += k->busy_s;
        if (k->busy_s > max)
            max = k->busy_s;
        sum.shards += k->shards, sum.reads += k->reads, sum.bases += k->bases;
        sum.bytes_out += k->bytes_out;
        idle_tot += idle > 0 ? idle : 0;
        if (k->peak_rss_bytes > rss_max)
            rss_max = k->peak_rss_bytes;
    }
    fprintf(fp,
            "\n  ],\n  \"all_ranks\": {\"ranks\": %d, \"shards\": %llu, \"reads\": %llu, "
            "\"bases\": %llu, \"busy_s\": %.6f, \"idle_s\": %.6f, \"bytes_out\": %llu, "
            "\"max_peak_rss_bytes\": %lld, \"user_s\": %.3f, \"sys_s\": %.3f, "
            "\"cpu_efficiency\": ",
            r->n_ranks, (unsigned long long)sum.shards, (unsigned long long)sum.reads,
            (unsigned long long)sum.bases, tot, idle_tot, (unsigned long long)sum.bytes_out,
            (long long)rss_max, sum.user_s, sum.sys_s);
    write_efficiency(fp, sum.user_s + sum.sys_s, sum.wall_s, 1);
    fputc('}', fp);
    fprintf(fp, ",\n  \"rank_load_imbalance\": %.4f,\n", tot > 0 ? max / (tot / r->n_ranks) : 1.0);
}

/* A Slurm variable as a JSON string, or null outside Slurm (or when unset there). */
static void slurm_str(FILE *fp, const char *key, const char *var)
{
    fprintf(fp, ",\n  \"%s\": ", key);
    const char *v = getenv(var);
    ss_json_str(fp, v && *v ? v : NULL);
}

/*
 * The Slurm job this run belongs to: its id, the array job and task (so a
 * report names its sample's task), and the nodes Slurm gave it, in Slurm's
 * compressed form ("node[01-04]"); "hosts" has the ranks' own host names.
 */
static void write_slurm(FILE *fp)
{
    slurm_str(fp, "slurm_job_id", "SLURM_JOB_ID");
    slurm_str(fp, "slurm_array_job_id", "SLURM_ARRAY_JOB_ID");
    const char *task = getenv("SLURM_ARRAY_TASK_ID");
    char *end = NULL;
    long id = task && *task ? strtol(task, &end, 10) : -1;
    if (task && *task && *end == '\0' && id >= 0)
        fprintf(fp, ",\n  \"slurm_array_task_id\": %ld", id);
    else
        fprintf(fp, ",\n  \"slurm_array_task_id\": null");
    slurm_str(fp, "slurm_nodelist", "SLURM_JOB_NODELIST");
}

/*
 * Each input's size in bytes, in the order of "inputs"; null for one stat
 * cannot size (standard input, a URL, a file gone since).
 */
static void write_input_bytes(FILE *fp, const ss_common_opts_t *o)
{
    unsigned long long total = 0;
    fputc('[', fp);
    for (int i = 0; o && i < o->n_inputs; i++) {
        struct stat st;
        fputs(i ? ", " : "", fp);
        if (strcmp(o->inputs[i], "-") != 0 && stat(o->inputs[i], &st) == 0 && S_ISREG(st.st_mode)) {
            fprintf(fp, "%lld", (long long)st.st_size);
            total += (unsigned long long)st.st_size;
        } else {
            fputs("null", fp);
        }
    }
    fprintf(fp, "],\n  \"input_bytes_total\": %llu", total);
}

/* What ran: paths, sizes, where, when; the status and the error. */
static void write_run(FILE *fp, const ss_report_t *r)
{
    const ss_common_opts_t *o = r->opts;
    fprintf(fp, "  \"status\": \"%s\",\n  \"error\": ", r->failed ? "failed" : "ok");
    ss_json_str(fp, r->failed ? ss_report_error(r) : NULL);
    fprintf(fp, ",\n  \"kernel\": ");
    ss_json_str(fp, r->kernel);
    if (r->kernel_info) {
        fprintf(fp, ",\n  \"kernel_info\": ");
        ss_json_str(fp, r->kernel_info);
    }
    fprintf(fp, ",\n  \"steps\": ["); /* in chain order, nearest the file first */
    for (int i = 0, k = 0; i < ss_steps_n(); i++)
        if (o->step_on[i]) {
            fprintf(fp, "%s", k++ ? ", " : "");
            ss_json_str(fp, ss_steps_get(i)->name);
        }
    fprintf(fp, "]");
    fprintf(fp, ",\n  \"command_line\": ");
    ss_json_str(fp, ss_cli_cmdline());
    write_slurm(fp);
    char t0[32], t1[32];
    ss_log_stamp_at(t0, sizeof(t0), ss_log_opened_wall());
    ss_log_stamp(t1, sizeof(t1));
    fprintf(fp, ",\n  \"start_time\": \"%s\",\n  \"end_time\": \"%s\",\n", t0, t1);
    fprintf(fp, "  \"inputs\": [");
    for (int i = 0; o && i < o->n_inputs; i++) {
        fputs(i ? ", " : "", fp);
        ss_json_str(fp, o->inputs[i]);
    }
    fprintf(fp, "],\n  \"input_bytes\": ");
    write_input_bytes(fp, o);
    fprintf(fp, ",\n  \"output\": ");
    ss_json_str(fp, o && o->output && strcmp(o->output, "-") ? o->output : NULL);
    fprintf(fp, ",\n  \"reference\": ");
    ss_json_str(fp, o ? o->reference : NULL);
    fprintf(fp,
            ",\n  \"threads\": %d,\n  \"shards\": %d,\n  \"shard_size\": %lld,\n"
            "  \"est_work_total\": %llu,\n",
            r->threads, r->n_shards, o ? (long long)o->shard_size : 0LL,
            (unsigned long long)r->est_work_total);
    /* "totals" and "workers" are this run's work; the kept shards are counted here */
    fprintf(fp,
            "  \"resume\": {\"requested\": %s, \"reused_shards\": %d, "
            "\"recomputed_shards\": %d, \"reused_reads\": %llu},\n",
            r->resumed ? "true" : "false", r->n_reused, r->n_shards - r->n_reused,
            (unsigned long long)r->reused.reads);
}

/* This process's CPU time (all its threads), user and system, and its efficiency. */
static void write_cpu(FILE *fp, const ss_report_t *r)
{
    struct rusage ru;
    double u = -1, sy = -1;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        u = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
        sy = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    }
    fprintf(fp, "  \"cpu\": {\"user_s\": %.3f, \"sys_s\": %.3f, \"efficiency\": ", u, sy);
    write_efficiency(fp, u >= 0 ? u + sy : -1, r->wall_s, r->n_workers);
    fprintf(fp, "},\n");
}

/*
 * What tells a developer how the framework behaved rather than what the run
 * did: the shard output buffers, and allocator calls when the counting shim
 * (libsscount.so) was preloaded; without it only "alloc_counting": "not
 * measured".
 */
static void write_diagnostics(FILE *fp, const ss_report_t *r, uint64_t reads)
{
    fprintf(fp,
            "  \"diagnostics\": {\"output_buffers\": {\"cap\": %d, \"peak\": %d, "
            "\"budget_bytes\": %zu, \"peak_bytes\": %zu}, ",
            r->buffer_cap, r->buffer_peak, r->buffer_budget, r->buffer_peak_bytes);
    if (r->count_before && r->count_after) {
        char counts[256];
        ss_count_json(counts, sizeof(counts), r->count_before, r->count_after, reads);
        fprintf(fp, "%s},\n", counts);
    } else {
        fprintf(fp, "\"alloc_counting\": \"not measured\"},\n");
    }
}

/* The JSON, built in memory: it reaches the file through ss_output's checked writes. */
static int report_json(const ss_report_t *r, char **buf, size_t *len)
{
    FILE *fp = open_memstream(buf, len);
    if (!fp)
        return -1;
    struct rusage ru;
    long max_rss_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
    fprintf(fp, "{\n  \"schema\": %d,\n", SS_REPORT_SCHEMA);
    write_versions(fp);
    write_run(fp, r);
    ss_report_hosts_json(fp, r);
    ss_report_binding_json(fp, r);
    uint64_t reads = write_workers(fp, r);
    write_ranks(fp, r);
    ss_report_shards_json(fp, r);
    write_cpu(fp, r);
    write_diagnostics(fp, r, reads);
    fprintf(fp,
            "  \"setup_s\": %.6f,\n  \"index_merge_s\": %.6f,\n  \"wall_s\": %.6f,\n"
            "  \"peak_rss_bytes\": %lld,\n  \"bytes_written\": %llu\n}\n",
            r->setup_s, r->index_merge_s, r->wall_s,
            max_rss_kb < 0 ? -1LL : (long long)max_rss_kb * 1024,
            (unsigned long long)r->bytes_written);
    int bad = ferror(fp);
    if (fclose(fp) != 0 || bad) {
        free(*buf);
        *buf = NULL;
        return -1;
    }
    return 0;
}

ss_output_t *ss_report_write(const char *path, const ss_report_t *r)
{
    char *buf = NULL;
    size_t len = 0;
    if (report_json(r, &buf, &len) < 0) {
        ss_error("%s: out of memory building the report", path);
        return NULL;
    }
    ss_output_t *out = ss_output_open(path);
    if (out && ss_output_write(out, buf, len) < 0) {
        ss_output_abort(out);
        out = NULL;
    }
    free(buf);
    return out;
}

int ss_report_write_failed(const char *path, ss_report_t *r)
{
    r->failed = 1;
    ss_output_t *out = ss_report_write(path, r);
    return out ? ss_output_commit(out) : -1;
}

const char *ss_report_error(const ss_report_t *r)
{
    for (int i = 0; r->ranks && i < r->n_ranks; i++)
        if (r->ranks[i].error[0])
            return r->ranks[i].error;
    const char *m = ss_error_message();
    return *m ? m : "the run failed (no message)";
}
