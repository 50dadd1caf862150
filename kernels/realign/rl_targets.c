/*
 * rl_targets.c -- where to look: targets and the windows they cluster into.
 *
 * Targets: every indel in an eligible read's CIGAR (left-normalised, so reads
 * that place one indel differently agree), every soft-clip boundary and every
 * indel suggested by a cluster of mismatches (rl_mismatch.c) that at least
 * RL_MIN_READS eligible reads share (bwa mem clips reads near indels, or
 * aligns past them ungapped), and every --known indel. A window is a maximal chain of targets each
 * less than RL_GAP from the last one's end; it is skipped when longer than
 * --max-window. Both depend only on the reads over the chain and the cap,
 * so any shard that holds those reads finds the same windows.
 */
#include <stdlib.h>
#include <string.h>

#include "realign.h"

enum { T_INDEL = 0, T_CLIP = 1, T_MM = 2 };

static int raw_add(rl_block_t *k, hts_pos_t beg, hts_pos_t end, int kind)
{
    if (k->n_raw == k->m_raw) {
        int m = k->m_raw ? 2 * k->m_raw : 1024;
        rl_raw_target_t *p = realloc(k->raw, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->raw = p, k->m_raw = m;
    }
    k->raw[k->n_raw++] = (rl_raw_target_t){beg, end, kind};
    return 0;
}

static int raw_cmp(const void *pa, const void *pb)
{
    const rl_raw_target_t *a = pa, *b = pb;
    if (a->beg != b->beg)
        return a->beg < b->beg ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->kind - b->kind;
}

/* The reference span an indel stands for: the deleted bases, or the base after an insertion. */
static void indel_span(const rl_indel_t *e, hts_pos_t *beg, hts_pos_t *end)
{
    *beg = e->pos;
    *end = e->pos + (e->len < 0 ? -e->len : 1);
}

/* The indel r's mismatches suggest, if any, kept in the block's mm for its window. */
static int mm_target(rl_block_t *k, rl_read_t *r, const rl_ref_t *ref)
{
    rl_indel_t e;
    if (!rl_read_mm_indel(r, ref, &e))
        return 0;
    if (k->n_mm == k->m_mm) {
        int m = k->m_mm ? 2 * k->m_mm : 256;
        rl_indel_t *p = realloc(k->mm, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->mm = p, k->m_mm = m;
    }
    r->mm = k->n_mm;
    k->mm[k->n_mm++] = e;
    hts_pos_t b, en;
    indel_span(&e, &b, &en);
    return raw_add(k, b, en, T_MM);
}

/* Each indel of one read, normalised, its clipped ends, and the indel its mismatches
 * suggest, as targets. */
static int read_targets(rl_block_t *k, rl_read_t *r, const rl_ref_t *ref)
{
    rl_indel_t e[8];
    int n = rl_read_indels(r, ref, e, 8);
    for (int i = 0; i < n && i < 8; i++) {
        hts_pos_t b, en;
        indel_span(&e[i], &b, &en);
        if (raw_add(k, b, en, T_INDEL) < 0)
            return -1;
    }
    if (r->lclip >= RL_MIN_CLIP && raw_add(k, r->pos, r->pos + 1, T_CLIP) < 0)
        return -1;
    if (r->rclip >= RL_MIN_CLIP && raw_add(k, r->end, r->end + 1, T_CLIP) < 0)
        return -1;
    return n == 0 ? mm_target(k, r, ref) : 0;
}

/* Keep indel and known targets, and clip and mismatch targets RL_MIN_READS reads share. */
static int keep_targets(rl_block_t *k)
{
    const rl_raw_target_t *t = k->raw;
    k->n_tg = 0;
    if (k->n_raw == 0)
        return 0; /* no targets, and qsort may not be given the NULL array */
    qsort(k->raw, (size_t)k->n_raw, sizeof(*k->raw), raw_cmp);
    for (int i = 0, j; i < k->n_raw; i = j) {
        for (j = i + 1; j < k->n_raw && !raw_cmp(&t[i], &t[j]); j++)
            ;
        if (t[i].kind != T_INDEL && j - i < RL_MIN_READS)
            continue;
        if (k->n_tg == k->m_tg) {
            int m = k->m_tg ? 2 * k->m_tg : 1024;
            rl_span_t *p = realloc(k->tg, (size_t)m * sizeof(*p));
            if (!p)
                return -1;
            k->tg = p, k->m_tg = m;
        }
        k->tg[k->n_tg++] = (rl_span_t){t[i].beg, t[i].end};
    }
    return 0;
}

static int add_window(rl_block_t *k, hts_pos_t beg, hts_pos_t end, int cap)
{
    if (k->n_win == k->m_win) {
        int m = k->m_win ? 2 * k->m_win : 256;
        rl_window_t *p = realloc(k->win, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->win = p, k->m_win = m;
    }
    k->win[k->n_win++] = (rl_window_t){beg, end, end - beg > cap, 0};
    return 0;
}

/* Chain the sorted targets into windows. */
static int chain(rl_block_t *k, int cap)
{
    k->n_win = 0;
    for (int i = 0; i < k->n_tg;) {
        hts_pos_t beg = k->tg[i].beg, end = k->tg[i].end;
        for (i++; i < k->n_tg && k->tg[i].beg < end + RL_GAP; i++)
            if (k->tg[i].end > end)
                end = k->tg[i].end;
        if (add_window(k, beg, end, cap) < 0)
            return -1;
    }
    return 0;
}

/* Each eligible read joins the leftmost window its clipped span overlaps. */
static void assign_reads(rl_block_t *k)
{
    for (int i = 0; i < k->n; i++) {
        rl_read_t *r = &k->reads[i];
        if (!r->eligible)
            continue;
        int lo = 0, hi = k->n_win;
        while (lo < hi) { /* the first window ending after the read starts */
            int mid = lo + (hi - lo) / 2;
            if (k->win[mid].end <= r->ustart)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < k->n_win && k->win[lo].beg < r->uend)
            r->win = lo;
    }
}

int rl_find_windows(rl_block_t *k, const rl_opts_t *o, const rl_ref_t *ref)
{
    k->n_raw = k->n_mm = 0;
    for (int i = 0; i < k->n; i++)
        if (k->reads[i].eligible && read_targets(k, &k->reads[i], ref) < 0)
            return -1;
    for (int i = 0; i < k->n_known; i++) {
        hts_pos_t b, e;
        indel_span(&k->known[i], &b, &e);
        if (raw_add(k, b, e, T_INDEL) < 0)
            return -1;
    }
    if (keep_targets(k) < 0 || chain(k, o->max_window) < 0)
        return -1;
    assign_reads(k);
    return k->n_win;
}
