/*
 * report_shards.c -- the parts of --report that say where and when each
 * piece ran: every finished shard (index, region, worker, rank, start and
 * end seconds from the run's start, reads, output bytes), the binding of
 * rank 0's workers, and the hosts of the ranks. scripts/plot-report.py
 * draws the shard records as a Gantt chart.
 *
 * Shard times are wall-clock seconds since the report's start_time (when the
 * options were read on rank 0), so shards of different ranks, even on
 * different nodes, share one axis; across nodes they are as good as the
 * nodes' clock synchronisation (NTP: milliseconds).
 */
#include <stdio.h>
#include <string.h>

#include "../run/run.h"
#include "report.h"

/* "ctgA:1-4096" (1-based, inclusive) or "*" for the unplaced reads. */
static void region_text(char *buf, size_t size, const ss_report_t *r, const ss_shard_t *sh)
{
    if (sh->tid < 0 || !r->header)
        snprintf(buf, size, "*");
    else
        snprintf(buf, size, "%s:%lld-%lld", sam_hdr_tid2name(r->header, sh->tid),
                 (long long)sh->beg + 1, (long long)sh->end);
}

void ss_report_shards_json(FILE *fp, const ss_report_t *r)
{
    double t0 = ss_log_opened_wall();
    fprintf(fp, "  \"shard_records\": [");
    for (int i = 0; i < r->n_done; i++) {
        const ss_shard_rec_t *k = &r->done[i];
        char region[512] = "?";
        if (r->plan && k->idx >= 0 && k->idx < r->n_shards)
            region_text(region, sizeof(region), r, &r->plan[k->idx]);
        fprintf(fp, "%s\n    {\"index\": %d, \"region\": ", i ? "," : "", k->idx);
        ss_json_str(fp, region);
        fprintf(fp,
                ", \"worker\": %d, \"rank\": %d, \"start_s\": %.6f, \"end_s\": %.6f, "
                "\"reads\": %llu, \"bytes\": %llu}",
                k->worker, k->rank, k->beg - t0, k->end - t0, (unsigned long long)k->reads,
                (unsigned long long)k->bytes);
    }
    fprintf(fp, "%s],\n", r->n_done ? "\n  " : "");
}

void ss_report_binding_json(FILE *fp, const ss_report_t *r)
{
    static const char *const asked[] = {"auto", "core", "numa", "none"};
    int b = r->opts ? r->opts->bind : 0;
    fprintf(fp, "  \"binding\": {\"asked\": \"%s\", \"mode\": ", b >= 0 && b < 4 ? asked[b] : "?");
    ss_json_str(fp, r->bind_mode ? r->bind_mode : "none");
    fprintf(fp, ", \"workers\": [");
    for (int i = 0; r->place && i < r->n_workers; i++) {
        const ss_placement_t *p = &r->place[i];
        fprintf(fp,
                "%s{\"worker\": %d, \"pinned\": %s, \"core\": %d, \"numa\": %d, "
                "\"package\": %d}",
                i ? ", " : "", i, p->pinned ? "true" : "false", p->core_os, p->numa_os,
                p->package_os);
    }
    fprintf(fp, "]},\n");
}

/* The distinct host names of the ranks, in rank order of first appearance. */
void ss_report_hosts_json(FILE *fp, const ss_report_t *r)
{
    fprintf(fp, "  \"hosts\": [");
    int shown = 0;
    for (int i = 0; r->ranks && i < r->n_ranks; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(r->ranks[j].host, r->ranks[i].host) == 0;
        if (seen)
            continue;
        fputs(shown++ ? ", " : "", fp);
        ss_json_str(fp, r->ranks[i].host);
    }
    fprintf(fp, "],\n");
}
