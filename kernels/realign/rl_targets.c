/*
 * rl_targets.c -- where to look: targets and the windows they cluster into.
 *
 * Targets: every indel in an eligible read's CIGAR (left-normalised, so reads
 * that place one indel differently agree), every soft-clip boundary that at
 * least RL_MIN_READS eligible reads share (bwa mem clips reads near indels),
 * and every --known indel. A window is a maximal chain of targets each less
 * than RL_GAP from the last one's end; it is skipped when longer than
 * --max-window. Both depend only on the reads over the chain and the cap,
 * so any shard that holds those reads finds the same windows.
 */
#include <stdlib.h>
#include <string.h>

#include "realign.h"

enum { T_INDEL = 0, T_CLIP = 1 };

typedef struct {
    hts_pos_t beg, end;
    int kind;
} raw_target_t;

typedef struct {
    raw_target_t *t;
    int n, m;
} raw_list_t;

static int raw_add(raw_list_t *l, hts_pos_t beg, hts_pos_t end, int kind)
{
    if (l->n == l->m) {
        int m = l->m ? 2 * l->m : 1024;
        raw_target_t *p = realloc(l->t, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        l->t = p, l->m = m;
    }
    l->t[l->n++] = (raw_target_t){ beg, end, kind };
    return 0;
}

static int raw_cmp(const void *pa, const void *pb)
{
    const raw_target_t *a = pa, *b = pb;
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

/* Each indel of one read, normalised, and its clipped ends, as targets. */
static int read_targets(const rl_read_t *r, const rl_ref_t *ref, raw_list_t *l)
{
    rl_indel_t e[8];
    int n = rl_read_indels(r, ref, e, 8);
    for (int i = 0; i < n && i < 8; i++) {
        hts_pos_t b, en;
        indel_span(&e[i], &b, &en);
        if (raw_add(l, b, en, T_INDEL) < 0)
            return -1;
    }
    if (r->lclip >= RL_MIN_CLIP && raw_add(l, r->pos, r->pos + 1, T_CLIP) < 0)
        return -1;
    if (r->rclip >= RL_MIN_CLIP && raw_add(l, r->end, r->end + 1, T_CLIP) < 0)
        return -1;
    return 0;
}

/* Keep indel and known targets, and clip targets RL_MIN_READS reads share. */
static int keep_targets(rl_block_t *k, raw_list_t *l)
{
    qsort(l->t, (size_t)l->n, sizeof(*l->t), raw_cmp);
    k->n_tg = 0;
    for (int i = 0, j; i < l->n; i = j) {
        for (j = i + 1; j < l->n && !raw_cmp(&l->t[i], &l->t[j]); j++)
            ;
        if (l->t[i].kind == T_CLIP && j - i < RL_MIN_READS)
            continue;
        if (k->n_tg == k->m_tg) {
            int m = k->m_tg ? 2 * k->m_tg : 1024;
            rl_span_t *p = realloc(k->tg, (size_t)m * sizeof(*p));
            if (!p)
                return -1;
            k->tg = p, k->m_tg = m;
        }
        k->tg[k->n_tg++] = (rl_span_t){ l->t[i].beg, l->t[i].end };
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
    k->win[k->n_win++] = (rl_window_t){ beg, end, end - beg > cap, 0 };
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
    raw_list_t l = { 0 };
    int ret = -1;
    for (int i = 0; i < k->n; i++)
        if (k->reads[i].eligible && read_targets(&k->reads[i], ref, &l) < 0)
            goto out;
    for (int i = 0; i < k->n_known; i++) {
        hts_pos_t b, e;
        indel_span(&k->known[i], &b, &e);
        if (raw_add(&l, b, e, T_INDEL) < 0)
            goto out;
    }
    if (keep_targets(k, &l) < 0 || chain(k, o->max_window) < 0)
        goto out;
    assign_reads(k);
    ret = k->n_win;
out:
    free(l.t);
    return ret;
}
