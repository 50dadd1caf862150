/*
 * mp_gvcf.c -- bcftools mpileup's gVCF blocks (-g): runs of reference-only
 * records whose smallest per-sample DP stays in one of the -g ranges become
 * one record with END and MinDP (bcftools' gvcf.c, as 1.16 writes it): the
 * first record's alleles, QS, GT (called records) and PL, the smallest DP of
 * each sample, and per sample the PL pair that is smallest in its second
 * value. mpileup's -g feeds it mpileup's records, --call -g the called ones
 * (reference calls have one allele and no PL).
 *
 * Shards: a block belongs to the shard where it starts. That shard follows it
 * past its end until it closes; the next shard skips the records that continue
 * it (mp_gvcf_skip_from).
 *
 * A worker's blocks go to its output as its records do (mp_gvcf_put_block);
 * mp_gvcf_close flushes the block still open when the worker's records end.
 */
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_gvcf.h"
#include "pileup/mp_worker.h" /* a worker's blocks: its output, its records' header */

struct mp_gvcf_s {
    const int *ranges; /* -g's bounds, borrowed from the options */
    int n_ranges;
    int prev_range; /* 0: no block open */
    int32_t rid, start, end, min_dp;
    int32_t *dp, *pl, *tmp, *gt;
    int m_dp, m_pl, m_tmp, n_pl, n_qs, m_gt, n_gt;
    float *qs;
    int m_qs;
    kstring_t als;
    bcf1_t *line;
    /* following the shard's last block past its end: no new block may start (it would be
     * the next shard's) */
    int following;
    /* the block of an earlier shard still open at this shard's start: its range, or 0 */
    int skip_range;
    int32_t skip_rid, skip_end;
};

mp_gvcf_t *mp_gvcf_init(const int *ranges, int n_ranges)
{
    mp_gvcf_t *g = calloc(1, sizeof(*g));
    if (!g || !(g->line = bcf_init1())) {
        free(g);
        return NULL;
    }
    g->ranges = ranges;
    g->n_ranges = n_ranges;
    g->rid = -1;
    return g;
}

void mp_gvcf_destroy(mp_gvcf_t *g)
{
    if (!g)
        return;
    free(g->dp), free(g->pl), free(g->tmp), free(g->qs), free(g->gt), free(g->als.s);
    bcf_destroy1(g->line);
    free(g);
}

void mp_gvcf_reset(mp_gvcf_t *g)
{
    g->prev_range = 0;
    g->rid = -1;
    g->n_pl = g->n_qs = g->n_gt = 0;
    g->skip_range = 0;
    g->following = 0;
}

void mp_gvcf_follow(mp_gvcf_t *g)
{
    g->following = 1;
}

int mp_gvcf_open(const mp_gvcf_t *g)
{
    return g->prev_range != 0;
}

/* The record is reference-only: one allele, or REF and mpileup's <*>. */
static int is_ref_record(const bcf1_t *rec)
{
    if (rec->n_allele == 1)
        return 1;
    const char *alt = rec->n_allele == 2 ? rec->d.allele[1] : NULL;
    return alt && alt[0] == '<' && alt[1] == '*' && alt[2] == '>';
}

/*
 * Which -g range the record's smallest sample DP falls in (1-based; 0: below
 * the first, so no block), and that DP. -1: the record has no per-sample DP.
 */
static int dp_range_of(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec, int32_t *min_dp)
{
    int n = bcf_hdr_nsamples(hdr);
    if (bcf_get_format_int32(hdr, rec, "DP", &g->tmp, &g->m_tmp) != n)
        return -1;
    *min_dp = g->tmp[0];
    for (int i = 1; i < n; i++)
        if (*min_dp > g->tmp[i])
            *min_dp = g->tmp[i];
    int r = 0;
    while (r < g->n_ranges && *min_dp >= g->ranges[r])
        r++;
    return r;
}

/* The open block as one record, through emit (bcftools' flush). 0, or -1 when emit failed. */
static int flush_block(mp_gvcf_t *g, const bcf_hdr_t *hdr, const bcf1_t *rec, mp_gvcf_emit_fn emit,
                       void *ctx)
{
    /* an indel record at the block's last position: that position is not the block's */
    if (rec && rec->rid == g->rid && rec->pos == g->end)
        g->end--;
    g->end++; /* 1-based */
    bcf1_t *l = g->line;
    bcf_clear1(l);
    l->rid = g->rid;
    l->pos = g->start;
    l->rlen = g->end - g->start;
    bcf_update_alleles_str(hdr, l, g->als.s);
    if (g->start + 1 < g->end) /* END only on a block of two sites or more */
        bcf_update_info_int32(hdr, l, "END", &g->end, 1);
    bcf_update_info_int32(hdr, l, "MinDP", &g->min_dp, 1);
    if (g->n_qs > 0)
        bcf_update_info_float(hdr, l, "QS", g->qs, g->n_qs);
    if (g->n_gt > 0) /* called records: the first one's genotypes */
        bcf_update_genotypes(hdr, l, g->gt, g->n_gt);
    if (g->n_pl > 0)
        bcf_update_format_int32(hdr, l, "PL", g->pl, g->n_pl);
    bcf_update_format_int32(hdr, l, "DP", g->dp, bcf_hdr_nsamples(hdr));
    g->prev_range = 0;
    g->rid = -1;
    g->n_pl = g->n_qs = g->n_gt = 0;
    return emit(ctx, l);
}

/* A block starts at rec: its alleles, QS, PL and sample DPs (in g->tmp). 0 or -1. */
static int start_block(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec, int32_t min_dp)
{
    int n = bcf_hdr_nsamples(hdr);
    if (n > g->m_dp) {
        int32_t *dp = realloc(g->dp, (size_t)n * sizeof(*dp));
        if (!dp)
            return -1;
        g->dp = dp, g->m_dp = n;
    }
    memcpy(g->dp, g->tmp, (size_t)n * sizeof(*g->dp));
    g->n_pl = bcf_get_format_int32(hdr, rec, "PL", &g->pl, &g->m_pl);
    g->n_qs = bcf_get_info_float(hdr, rec, "QS", &g->qs, &g->m_qs);
    g->n_gt = bcf_get_genotypes(hdr, rec, &g->gt, &g->m_gt);
    g->rid = rec->rid;
    g->start = (int32_t)rec->pos;
    g->als.l = 0;
    kputs(rec->d.allele[0], &g->als);
    for (int i = 1; i < rec->n_allele; i++) {
        kputc(',', &g->als);
        kputs(rec->d.allele[i], &g->als);
    }
    g->min_dp = min_dp;
    return 0;
}

/* rec joins the open block: the smallest DPs, and per sample the smallest PL pair. 0 or -1. */
static int extend_block(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec, int32_t min_dp)
{
    int n = bcf_hdr_nsamples(hdr);
    if (g->min_dp > min_dp)
        g->min_dp = min_dp;
    for (int i = 0; i < n; i++)
        if (g->dp[i] > g->tmp[i])
            g->dp[i] = g->tmp[i];
    int k = bcf_get_format_int32(hdr, rec, "PL", &g->tmp, &g->m_tmp);
    if (k < 0) {
        g->n_pl = 0;
        return 0;
    }
    if (k != n * 3) {
        ss_error("a reference-only record at %s:%lld has %d PL values for %d samples; "
                 "this is a bug in seqshard",
                 bcf_seqname_safe(hdr, rec), (long long)rec->pos + 1, k, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int32_t *pl = g->pl + 3 * i, *t = g->tmp + 3 * i;
        if (pl[1] > t[1])
            pl[1] = t[1], pl[2] = t[2];
        else if (pl[1] == t[1] && pl[2] > t[2])
            pl[2] = t[2];
    }
    return 0;
}

/* Whether rec continues the block an earlier shard owns (and so is that shard's). */
static int continues_skipped(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec)
{
    int32_t min_dp;
    int r = is_ref_record(rec) ? dp_range_of(g, hdr, rec, &min_dp) : 0;
    if (r <= 0 || r != g->skip_range || rec->rid != g->skip_rid || rec->pos > g->skip_end + 1) {
        g->skip_range = 0;
        return 0;
    }
    g->skip_end = (int32_t)rec->pos;
    return 1;
}

int mp_gvcf_write(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec, mp_gvcf_emit_fn emit, void *ctx)
{
    if (rec && g->skip_range) {
        bcf_unpack(rec, BCF_UN_ALL);
        if (continues_skipped(g, hdr, rec))
            return 0;
    }
    int is_ref = rec ? is_ref_record(rec) : 0, can_collapse = is_ref, needs_flush = !is_ref;
    int32_t range = 0, min_dp = 0;
    if (!rec && !g->prev_range)
        return 0;
    if (rec && can_collapse) {
        bcf_unpack(rec, BCF_UN_ALL);
        int r = dp_range_of(g, hdr, rec, &min_dp);
        if (r < 0) {
            needs_flush = 1; /* no per-sample DP (bcftools goes on collapsing) */
        } else if ((range = r) == 0) {
            needs_flush = 1; /* too shallow: the record stays as it is */
            can_collapse = 0;
        }
    }
    if (g->prev_range && g->prev_range != range)
        needs_flush = 1;
    if (!rec || g->rid != rec->rid || rec->pos > g->end + 1)
        needs_flush = 1;
    if (g->prev_range && needs_flush && flush_block(g, hdr, rec, emit, ctx) < 0)
        return -1;
    if (!rec)
        return 0;
    if (can_collapse && g->following && !g->prev_range)
        return 0; /* the next shard's block, which that shard writes */
    if (can_collapse) {
        int rc =
            g->prev_range ? extend_block(g, hdr, rec, min_dp) : start_block(g, hdr, rec, min_dp);
        g->prev_range = range;
        g->end = (int32_t)rec->pos; /* mpileup's records carry no END */
        return rc < 0 ? -1 : 0;
    }
    if (is_ref && min_dp)
        bcf_update_info_int32(hdr, rec, "MinDP", &min_dp, 1);
    return 1;
}

void mp_gvcf_skip_from(mp_gvcf_t *g)
{
    int range = g->prev_range;
    int32_t rid = g->rid, end = g->end;
    mp_gvcf_reset(g);
    g->skip_range = range;
    g->skip_rid = rid;
    g->skip_end = end;
}

int mp_gvcf_parse(const char *arg, int **ranges, int *n)
{
    *n = 1;
    for (const char *s = arg; *s; s++)
        *n += *s == ',';
    *ranges = malloc((size_t)*n * sizeof(**ranges));
    if (!*ranges)
        return -1;
    const char *s = arg;
    for (int k = 0; k < *n; k++) {
        char *end;
        (*ranges)[k] = (int)strtol(s, &end, 10);
        if (end == s || (*end && *end != ',') || (*end == ',' && !end[1]))
            return -1;
        s = end + 1;
    }
    return 0;
}

/* The header of the records written: the caller's with --call, else mpileup's. */
const bcf_hdr_t *mp_gvcf_header(const mp_worker_t *w)
{
    return w->caller ? w->run->out_hdr : w->run->vcf_hdr;
}

int mp_gvcf_put_block(void *ctx, bcf1_t *block)
{
    mp_block_out_t *b = ctx;
    return mp_put_record(b->w, block, b->out);
}

int mp_gvcf_close(mp_worker_t *w, kstring_t *out)
{
    mp_block_out_t b = {w, out};
    return w->gv ? mp_gvcf_write(w->gv, mp_gvcf_header(w), NULL, mp_gvcf_put_block, &b) : 0;
}
