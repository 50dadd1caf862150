/*
 * mc_missed_plan.c -- -i across shards: from what every shard leaves
 * (mc_missed_summary, joined in plan order), each shard's part and the lines
 * that end the output. See mc_missed.c for where bcftools writes what.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

/* One shard's summary, read back; runs point into the joined bytes. */
typedef struct {
    int64_t idx, tid, tc, beg, end, last_pass, n_runs;
    const char *runs; /* n_runs pairs of int64: untaken targets [from, to) */
} summary_t;

struct mc_missed_plan_s {
    mc_missed_shard_t *parts; /* by shard index */
    int n_parts;
    int *end_tc; /* the lines that end the output: contig and target, in order */
    size_t *end_t;
    size_t n_end, m_end;
};

#define N_FIELDS 7

static int64_t get_i64(const char *p)
{
    int64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* The summaries in bytes, into *out (*n). 0, or -1 when malformed or out of memory. */
static int read_summaries(const char *bytes, size_t len, summary_t **out, size_t *n)
{
    size_t m = 0, off = 0;
    *out = NULL, *n = 0;
    while (off < len) {
        if (len - off < N_FIELDS * sizeof(int64_t))
            return -1;
        summary_t s;
        int64_t *f[N_FIELDS] = {&s.idx, &s.tid, &s.tc, &s.beg, &s.end, &s.last_pass, &s.n_runs};
        for (int i = 0; i < N_FIELDS; i++, off += sizeof(int64_t))
            *f[i] = get_i64(bytes + off);
        size_t run_bytes = (size_t)s.n_runs * 2 * sizeof(int64_t);
        if (s.n_runs < 0 || s.idx < 0 || len - off < run_bytes)
            return -1;
        s.runs = bytes + off;
        off += run_bytes;
        if (*n == m) {
            m = m ? 2 * m : 64;
            summary_t *a = realloc(*out, m * sizeof(*a));
            if (!a)
                return -1;
            *out = a;
        }
        (*out)[(*n)++] = s;
    }
    return 0;
}

static int push_end(mc_missed_plan_t *p, int tc, size_t t)
{
    if (p->n_end == p->m_end) {
        size_t m = p->m_end ? 2 * p->m_end : 64;
        int *a = realloc(p->end_tc, m * sizeof(*a));
        if (a)
            p->end_tc = a;
        size_t *b = a ? realloc(p->end_t, m * sizeof(*b)) : NULL;
        if (!b)
            return -1;
        p->end_t = b, p->m_end = m;
    }
    p->end_tc[p->n_end] = tc;
    p->end_t[p->n_end++] = t;
    return 0;
}

/* Whether each contig's shards come together and in order (-i's placing needs it). */
static int in_genomic_order(const summary_t *s, size_t n)
{
    for (size_t k = 1; k < n; k++) {
        if (s[k].tid == s[k - 1].tid) {
            if (s[k].beg < s[k - 1].end)
                return 0;
            continue;
        }
        for (size_t j = 0; j + 1 < k; j++) /* a contig seen before, left, come back to */
            if (s[j].tid == s[k].tid)
                return 0;
    }
    return 1;
}

/* Each shard's part: the targets it owns and what its end writes. 0, or -1 after a message. */
static int plan_parts(mc_missed_plan_t *p, const summary_t *s, size_t n, int64_t last_tid)
{
    if (!in_genomic_order(s, n)) {
        fprintf(stderr, MC_PFX ": -i needs the regions in genomic order, each contig's "
                               "together; give -r/-R sorted\n");
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        if (s[k].idx >= p->n_parts)
            p->n_parts = (int)s[k].idx + 1;
    if (!(p->parts = calloc(p->n_parts ? p->n_parts : 1, sizeof(*p->parts))))
        return -1;
    for (size_t a = 0, b; a < n; a = b) { /* one contig's shards: [a, b) */
        size_t last = SIZE_MAX;           /* its last shard with a passing record */
        for (b = a; b < n && s[b].tid == s[a].tid; b++)
            if (s[b].last_pass >= 0)
                last = b;
        for (size_t k = a; k < b; k++) {
            mc_missed_shard_t *part = &p->parts[s[k].idx];
            part->own_beg = k > a ? s[k - 1].end : 0;
            part->own_end = k + 1 < b ? s[k].end : HTS_POS_MAX;
            part->keep_tail = last != SIZE_MAX;
            part->defer_pos = k == last && s[k].tid != last_tid ? s[k].last_pass : -1;
        }
    }
    return 0;
}

/* Mark the runs of untaken targets a summary gives. */
static void mark_runs(uint8_t *left, size_t n, const summary_t *s)
{
    for (int64_t r = 0; r < s->n_runs; r++) {
        int64_t from = get_i64(s->runs + 16 * r), to = get_i64(s->runs + 16 * r + 8);
        for (int64_t t = from < 0 ? 0 : from; t < to && t < (int64_t)n; t++)
            left[t] = 1;
    }
}

/*
 * The lines of contig tc that end the output: without a passing record, every
 * target no record took; else, unless it is the last contig with one, those
 * left at its last passing position. sel[0..n_sel): the contig's summaries,
 * in plan order. 0 or -1.
 */
static int plan_contig_end(mc_missed_plan_t *p, const mc_opts_t *o, int tc, const summary_t *s,
                           const size_t *sel, size_t n_sel, int64_t last_tid)
{
    const mc_target_contig_t *c = &o->targets.contigs[tc];
    const summary_t *last = NULL; /* the contig's last shard with a passing record */
    for (size_t k = 0; k < n_sel; k++)
        if (s[sel[k]].last_pass >= 0)
            last = &s[sel[k]];
    if (last && last->tid == last_tid)
        return 0;
    uint8_t *left = malloc(c->n ? c->n : 1);
    if (!left)
        return -1;
    memset(left, !last, c->n);
    if (last)
        mark_runs(left, c->n, last);
    for (size_t k = 0; !last && k < n_sel; k++) {
        /* within a shard a target is taken unless the shard says otherwise */
        const summary_t *sk = &s[sel[k]];
        size_t from = mc_targets_lower(c, sk->beg), to = mc_targets_lower(c, sk->end);
        memset(left + from, 0, to - from);
        mark_runs(left, c->n, sk);
    }
    int rc = 0;
    for (size_t t = 0; rc == 0 && t < c->n; t++)
        if (left[t])
            rc = push_end(p, tc, t);
    free(left);
    return rc;
}

/* The end's lines, contig by contig in the targets file's order. 0 or -1. */
static int plan_end(mc_missed_plan_t *p, const mc_opts_t *o, const summary_t *s, size_t n,
                    int64_t last_tid)
{
    int nc = o->targets.n_contigs;
    size_t *start = calloc((size_t)nc + 1, sizeof(*start));
    size_t *sel = malloc((n ? n : 1) * sizeof(*sel));
    int rc = start && sel ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < n; k++) /* each contig's summaries, in plan order */
        if (s[k].tc >= 0 && s[k].tc < nc)
            start[s[k].tc + 1]++;
    for (int tc = 0; rc == 0 && tc < nc; tc++)
        start[tc + 1] += start[tc];
    for (size_t k = 0; rc == 0 && k < n; k++)
        if (s[k].tc >= 0 && s[k].tc < nc)
            sel[start[s[k].tc]++] = k;
    /* filling moved each start to the next contig's: each contig's run ends at start[tc] */
    for (int tc = 0; rc == 0 && tc < nc; tc++) {
        size_t beg = tc ? start[tc - 1] : 0;
        rc = plan_contig_end(p, o, tc, s, sel + beg, start[tc] - beg, last_tid);
    }
    free(start), free(sel);
    return rc;
}

mc_missed_plan_t *mc_missed_plan(const mc_opts_t *o, const char *bytes, size_t len)
{
    summary_t *s = NULL;
    size_t n = 0;
    mc_missed_plan_t *p = calloc(1, sizeof(*p));
    int rc = p ? read_summaries(bytes, len, &s, &n) : -1;
    if (rc < 0)
        fprintf(stderr, MC_PFX ": -i: out of memory or a damaged summary of the shards\n");
    int64_t last_tid = -1; /* the last contig with a passing record */
    for (size_t k = 0; k < n; k++)
        if (s[k].last_pass >= 0)
            last_tid = s[k].tid;
    if (rc == 0)
        rc = plan_parts(p, s, n, last_tid);
    if (rc == 0 && plan_end(p, o, s, n, last_tid) < 0) {
        fprintf(stderr, MC_PFX ": -i: out of memory placing the missed targets\n");
        rc = -1;
    }
    free(s);
    if (rc < 0) {
        mc_missed_plan_free(p);
        return NULL;
    }
    return p;
}

void mc_missed_plan_free(mc_missed_plan_t *p)
{
    if (!p)
        return;
    free(p->parts), free(p->end_tc), free(p->end_t);
    free(p);
}

const mc_missed_shard_t *mc_missed_plan_part(const mc_missed_plan_t *p, int idx)
{
    static const mc_missed_shard_t none = {0, 0, 0, -1};
    return p && idx >= 0 && idx < p->n_parts ? &p->parts[idx] : &none;
}

int mc_missed_plan_end(const mc_missed_plan_t *p, const mc_opts_t *o, bcf_hdr_t *hdr,
                       mc_emit_fn emit, void *ctx)
{
    bcf1_t *line = p && p->n_end ? bcf_init1() : NULL;
    int rc = p && p->n_end && !line ? -1 : 0;
    for (size_t i = 0; rc == 0 && p && i < p->n_end; i++)
        if (mc_missed_line(o, hdr, p->end_tc[i], p->end_t[i], line) < 0 || emit(ctx, line) < 0)
            rc = -1;
    if (line)
        bcf_destroy(line);
    return rc;
}
