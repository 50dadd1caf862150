/*
 * step_write.c -- the record writer a step runs in front of when it is a
 * command of its own (`seqshard realign`): each shard writes the records of
 * its input that it owns, read through the chain, so the command's output
 * is the step's output file, the same one any kernel behind the step reads.
 *
 * A shard owns the records whose POS lies in it; a region's first shard
 * also those that start before the region and reach into it, and its last
 * those placed past the contig's end (as a region query returns them).
 * Worker thread.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../io/ss_diag.h"
#include "../driver.h"
#include "../ss_framework.h"

struct ss_step_writer_s {
    ss_reader_t *rd;
    const sam_hdr_t *h;
    const char *fasta, *ref_option;
    bam1_t *b;
    double out_per_work; /* output bytes per byte of shard work, as last seen (+25%) */
};

ss_step_writer_t *ss_step_writer_init(const ss_job_t *job, ss_reader_t *rd)
{
    ss_step_writer_t *w = ss_alloc_private(sizeof(*w)); /* written per record */
    if (!w || !(w->b = ss_bam_private())) {
        free(w);
        ss_error("out of memory starting a worker");
        return NULL;
    }
    w->rd = rd, w->h = ss_job_header(job);
    w->fasta = ss_job_opts(job)->reference, w->ref_option = ss_job_opts(job)->ref_option;
    return w;
}

void ss_step_writer_destroy(ss_step_writer_t *w)
{
    if (!w)
        return;
    bam_destroy1(w->b);
    free(w);
}

/* A read that failed with code r (errno err as it failed). -1. */
static int read_failed(ss_step_writer_t *w, const ss_shard_t *sh, int r, int err)
{
    return ss_io_input_failed(w->rd, 0, r, err, sh->tid, sh->beg, sh->end, w->fasta, w->ref_option);
}

/* Room for what the shard will write, from what earlier shards wrote per unit of work. */
static int reserve(ss_step_writer_t *w, const ss_shard_t *sh, ss_out_t *out)
{
    double per = w->out_per_work > 0 ? w->out_per_work : 1.5;
    double want = per * (double)sh->est_work;
    return ss_out_reserve(out, want < (double)SS_RESERVE_MAX ? (size_t)want : SS_RESERVE_MAX);
}

int ss_step_writer_shard(ss_step_writer_t *w, const ss_shard_t *sh, ss_out_t *out,
                         ss_shard_stats_t *st)
{
    if (reserve(w, sh, out) < 0)
        return -1;
    ss_source_t *src = ss_reader_source(w->rd, 0);
    int first = sh->beg <= sh->scope_beg, unplaced = sh->tid == SS_TID_UNPLACED;
    hts_pos_t lo = first ? HTS_POS_MIN : sh->beg, hi = sh->query_end;
    if (ss_source_query(src, sh->tid,
                        unplaced ? 0
                        : first  ? sh->scope_beg
                                 : sh->beg,
                        unplaced ? 0 : hi) < 0)
        return -1;
    int r;
    for (;;) {
        errno = 0;
        if ((r = ss_source_next(src, w->b)) < 0)
            break;
        st->reads++;
        st->bases += (uint64_t)w->b->core.l_qseq;
        hts_pos_t pos = w->b->core.pos;
        if (!unplaced && (pos < lo || pos >= hi))
            continue;
        if (ss_out_record(out, w->b) < 0)
            return -1;
    }
    if (r < -1)
        return read_failed(w, sh, r, errno);
    if (sh->est_work > 0 && ss_out_length(out) > 0)
        w->out_per_work = 1.25 * (double)ss_out_length(out) / (double)sh->est_work;
    return 0;
}
