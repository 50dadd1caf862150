/*
 * mc_missed.c -- bcftools call 1.16's -i (--insert-missed, with -C alleles
 * and -T): a line of missing genotypes for every target no record took.
 *
 * Where bcftools writes them (vcfcall.c's tgt_flush), for the records that
 * get past its filters (a target taken, -V, REF N, -v and no ALT), call them
 * passing records: before each passing record, the targets not taken from
 * the last passing record's position (or the contig's start) up to the
 * record's; when the next passing record is on another contig, the rest of
 * the old contig past its last passing record's position; at the end, the
 * rest of the last contig from its last passing record's position, then what
 * is left of every contig in the targets file's order. So what is left at
 * the end, out of genomic order, is every target of a contig without a
 * passing record, and the untaken targets at the last passing position of a
 * contig other than the last with one.
 *
 * Shards: every target belongs to one shard (gaps between regions to the
 * shard after them, the contig's tail to its last shard). A shard writes its
 * untaken targets before its passing records as bcftools does, and the rest
 * at its end: nothing but such lines can come between them and the next
 * passing record, wherever that is. What a shard cannot know alone (whether
 * its contig has a passing record, which is the contig's last) comes from a
 * pass over every shard before the run: each says where its last passing
 * record is and which targets it leaves (mc_missed_summary); the plan made
 * of that (mc_missed_plan) gives each shard its part and holds the lines
 * that end the output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

static const mc_target_contig_t *missed_contig(const mc_caller_t *c)
{
    return c->missed.contig >= 0 ? &c->o->targets.contigs[c->missed.contig] : NULL;
}

/* The line bcftools writes for target t of contig tc: its alleles, GT missing. 0 or -1. */
int mc_missed_line(const mc_opts_t *o, bcf_hdr_t *hdr, int tc, size_t t, bcf1_t *line)
{
    const mc_target_contig_t *c = &o->targets.contigs[tc];
    int n = bcf_hdr_nsamples(hdr), n_als = 0;
    int32_t *gt = malloc((n ? 2 * (size_t)n : 1) * sizeof(*gt));
    if (!gt)
        return -1;
    for (int i = 0; i < n; i++)
        gt[2 * i] = bcf_gt_missing, gt[2 * i + 1] = bcf_int32_vector_end;
    while (c->als[t][n_als])
        n_als++;
    bcf_clear(line);
    line->rid = bcf_hdr_name2id(hdr, c->name);
    line->pos = c->pos[t];
    bcf_float_set_missing(line->qual);
    int r = bcf_update_genotypes(hdr, line, gt, 2 * n);
    if (r == 0)
        r = bcf_update_alleles(hdr, line, (const char **)c->als[t], n_als);
    free(gt);
    return r < 0 || line->rid < 0 ? -1 : 0;
}

/* Write the untaken targets [from, to) of the shard's contig. 0 or -1. */
static int write_untaken(mc_caller_t *c, size_t from, size_t to, hts_pos_t skip_pos)
{
    mc_missed_t *m = &c->missed;
    const mc_target_contig_t *tc = missed_contig(c);
    for (size_t t = from; t < to; t++) {
        if (m->used[t - m->lo] || tc->pos[t] == skip_pos)
            continue;
        if (!m->line && !(m->line = bcf_init1()))
            return -1;
        if (mc_missed_line(c->o, c->hdr, m->contig, t, m->line) < 0 || m->emit(m->ctx, m->line) < 0)
            return -1;
    }
    return 0;
}

int mc_missed_begin(mc_caller_t *c, const char *contig, const mc_missed_shard_t *part,
                    mc_emit_fn emit, void *ctx)
{
    mc_missed_t *m = &c->missed;
    m->active = 1;
    m->contig = mc_targets_contig(&c->o->targets, contig);
    m->part = *part;
    m->emit = emit, m->ctx = ctx;
    m->last_pass = -1;
    m->lo = m->hi = m->cursor = m->probe = 0;
    const mc_target_contig_t *tc = missed_contig(c);
    if (!tc)
        return 0;
    m->lo = m->cursor = m->probe = mc_targets_lower(tc, part->own_beg);
    m->hi = mc_targets_lower(tc, part->own_end);
    if (mc_grow(&m->used, &m->m_used, m->hi - m->lo + 1, 1) < 0)
        return -1;
    memset(m->used, 0, m->hi - m->lo);
    return 0;
}

int mc_missed_wants(mc_caller_t *c, hts_pos_t pos)
{
    mc_missed_t *m = &c->missed;
    const mc_target_contig_t *tc = missed_contig(c);
    if (!tc)
        return 0;
    while (m->probe < m->hi && tc->pos[m->probe] < pos) /* columns come in order */
        m->probe++;
    return m->probe < m->hi && tc->pos[m->probe] == pos;
}

void mc_missed_taken(mc_caller_t *c, size_t t)
{
    mc_missed_t *m = &c->missed;
    if (m->active && t >= m->lo && t < m->hi)
        m->used[t - m->lo] = 1;
}

int mc_missed_pass(mc_caller_t *c, const bcf1_t *rec)
{
    mc_missed_t *m = &c->missed;
    const mc_target_contig_t *tc = missed_contig(c);
    if (!m->active || !tc)
        return 0;
    if (rec->pos == 0) {
        /* the window before it ends at POS - 1, which wraps around in bcftools' unsigned
         * arithmetic: it writes the whole contig as missed there and drops its other calls */
        fprintf(stderr,
                MC_PFX ": -i: a call at %s:1, where bcftools call 1.16 -i writes "
                       "every target of the contig as missed and drops the contig's "
                       "other calls; leave POS 1 out of the targets\n",
                tc->name);
        return -1;
    }
    size_t to = mc_targets_lower(tc, rec->pos);
    to = to < m->cursor ? m->cursor : to > m->hi ? m->hi : to;
    int r = write_untaken(c, m->cursor, to, -1);
    m->cursor = to;
    m->last_pass = rec->pos;
    return r;
}

int mc_missed_end(mc_caller_t *c)
{
    mc_missed_t *m = &c->missed;
    if (!m->active || !missed_contig(c) || !m->part.keep_tail)
        return 0;
    hts_pos_t skip = m->last_pass == m->part.defer_pos ? m->part.defer_pos : -1;
    return write_untaken(c, m->cursor, m->hi, skip);
}

/* ---- before the run: what each shard leaves ---- */

static int put_i64(kstring_t *s, int64_t v)
{
    return kputsn((const char *)&v, sizeof(v), s) < 0 ? -1 : 0;
}

int mc_missed_summary(mc_caller_t *c, int idx, int tid, hts_pos_t beg, hts_pos_t end,
                      kstring_t *bytes)
{
    mc_missed_t *m = &c->missed;
    /* the runs of untaken targets the end may need: all of them without a passing record,
     * else those at the last passing position */
    size_t n_runs = 0, mark = bytes->l;
    int r = put_i64(bytes, idx) | put_i64(bytes, tid) | put_i64(bytes, m->contig) |
            put_i64(bytes, beg) | put_i64(bytes, end) | put_i64(bytes, m->last_pass) |
            put_i64(bytes, 0);
    const mc_target_contig_t *tc = missed_contig(c);
    for (size_t t = m->lo; tc && r == 0 && t < m->hi; t++) {
        if (m->used[t - m->lo] || (m->last_pass >= 0 && tc->pos[t] != m->last_pass))
            continue;
        size_t e = t + 1;
        while (e < m->hi && !m->used[e - m->lo] && tc->pos[e] == tc->pos[t])
            e++;
        if (m->last_pass < 0)
            while (e < m->hi && !m->used[e - m->lo])
                e++;
        r = put_i64(bytes, (int64_t)t) | put_i64(bytes, (int64_t)e);
        n_runs++;
        t = e - 1;
    }
    if (r == 0) {
        int64_t n = (int64_t)n_runs;
        memcpy(bytes->s + mark + 6 * sizeof(int64_t), &n, sizeof(n));
    }
    return r;
}
