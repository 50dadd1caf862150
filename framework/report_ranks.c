/*
 * report_ranks.c -- the --report of a multi-rank run: every rank's summary
 * is gathered to rank 0 (one fixed-size record per rank), which writes the
 * JSON with "totals" and "bytes_written" over all ranks. In a single rank
 * this is just ss_report_write.
 */
#include <stdlib.h>
#include <sys/resource.h>

#include "ss_comm.h"
#include "ss_internal.h"

int ss_report_write_all(const char *path, ss_report_t *r, int run_rc, ss_output_t **out)
{
    int n = ss_comm_size();
    *out = NULL;
    if (n < 2) {
        if (run_rc == 0 && !(*out = ss_report_write(path, r)))
            return -1;
        return 0;
    }
    ss_rank_stats_t me = {0};
    for (int i = 0; i < r->n_workers; i++) {
        me.shards += r->workers[i].shards;
        me.reads += r->workers[i].reads;
        me.bases += r->workers[i].bases;
        me.busy_s += r->workers[i].busy_s;
        for (int c = 0; c < SS_KERNEL_COUNTERS; c++)
            me.counts[c] += r->workers[i].counts[c];
    }
    struct rusage ru;
    me.peak_rss_bytes = getrusage(RUSAGE_SELF, &ru) == 0 ? (int64_t)ru.ru_maxrss * 1024 : -1;
    me.wall_s = r->wall_s;
    me.threads = r->n_workers;
    me.bytes_out = r->bytes_written;
    ss_rank_stats_t *all = calloc((size_t)n, sizeof(*all));
    /* every rank takes part in the gather, so each allocates room for it */
    int rc = all ? ss_comm_gather(&me, sizeof(me), all) : -1;
    if (ss_comm_rank() != 0 || run_rc != 0 || rc < 0) {
        free(all);
        return 0;
    }
    r->ranks = all;
    r->n_ranks = n;
    /* each rank wrote its own pieces (rank 0 also header and tail): together, the file */
    r->bytes_written = 0;
    for (int i = 0; i < n; i++)
        r->bytes_written += all[i].bytes_out;
    *out = ss_report_write(path, r);
    r->ranks = NULL;
    free(all);
    return *out ? 0 : -1;
}
