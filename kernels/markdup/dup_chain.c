/*
 * dup_chain.c -- with -t or -d, samtools markdup revisits each original's
 * chain of duplicates once the original leaves its window: every duplicate's
 * do tag names the final original, a duplicate on the original's tile
 * within -d becomes optical (dt:Z:SQ), and duplicates within -d of each
 * other make the lower-scoring one optical. Counts go to the shard owning the
 * original.
 */
#include <stdlib.h>
#include <string.h>

#include "dup_machine.h"

int dup_in_window(const dup_machine_t *m, int i, hts_pos_t prev_coord, int prev_tid)
{
    return SLOT(m, i).pos + m->o->max_length > prev_coord && REC(m, i)->core.tid == prev_tid &&
           (prev_tid != -1 || prev_coord != -1);
}

/* Read i becomes an optical duplicate. */
static int retag(dup_machine_t *m, int i, dup_counts_t *c)
{
    if (bam_aux_update_str(REC(m, i), "dt", 3, "SQ") < 0) {
        ss_error("%s: out of memory tagging read %s", m->file, bam_get_qname(REC(m, i)));
        return -1;
    }
    if (dup_paired(REC(m, i)))
        c->optical++;
    else
        c->single_optical++;
    return dup_note_name(m, REC(m, i), 'R', 1, NULL);
}

static dup_check_t *list_add(dup_machine_t *m)
{
    if (m->n_list == m->m_list) {
        size_t n = m->m_list ? 2 * m->m_list : 128;
        dup_check_t *l = realloc(m->list, n * sizeof(*l));
        if (!l) {
            ss_error("%s: out of memory checking duplicates", m->file);
            return NULL;
        }
        m->list = l, m->m_list = n;
    }
    return &m->list[m->n_list++];
}

/* The do tag of duplicate d names the original. */
static int retarget(dup_machine_t *m, int d, const char *ori)
{
    bam1_t *b = REC(m, d);
    const uint8_t *t = bam_aux_get(b, "do");
    if (!t)
        return 0;
    const char *old = bam_aux2Z(t);
    if (!old) {
        ss_error("%s: read %s has a do tag that is not text; rerun with -c to clear old marks",
                 m->file, bam_get_qname(b));
        return -1;
    }
    if (strcmp(old, ori) != 0 && bam_aux_update_str(b, "do", (int)strlen(ori) + 1, ori) < 0) {
        ss_error("%s: out of memory tagging read %s", m->file, bam_get_qname(b));
        return -1;
    }
    return 0;
}

/* One duplicate against the original: tile position, optical mark, scores. */
static int against_original(dup_machine_t *m, int d, const char *ori, const dup_coords_t *oc,
                            dup_counts_t *c)
{
    dup_check_t *k = list_add(m);
    if (!k)
        return -1;
    bam1_t *b = REC(m, d);
    *k = (dup_check_t){.idx = d, .at = {.x = -1, .y = -1}};
    const uint8_t *t = bam_aux_get(b, "dt");
    const char *type = t ? bam_aux2Z(t) : NULL;
    k->opt = type && strcmp(type, "SQ") == 0;
    if (dup_is_optical(m->run, ori, oc, bam_get_qname(b), &k->at) && !k->opt) {
        if (retag(m, d, c) < 0)
            return -1;
        k->opt = 1;
    }
    k->score = dup_score(b);
    if (dup_paired(b) && (k->mate_score = dup_mate_score(b)) < 0) {
        ss_error("%s: read %s has no ms tag; run samtools fixmate -m on the input first", m->file,
                 bam_get_qname(b));
        return -1;
    }
    return 0;
}

/*
 * Walk original o's chain: do tags, and each duplicate against o. Returns 0,
 * 1 when o's name holds no coordinates (tags fixed, no optical check), or -1.
 */
static int walk_chain(dup_machine_t *m, int o, dup_counts_t *c)
{
    const char *ori = bam_get_qname(REC(m, o));
    dup_coords_t oc = {0};
    int coord_fail = m->o->opt_dist ? dup_coords(m->run, ori, &oc) : 0;
    if (coord_fail < 0) { /* samtools stops when --read-coords matches no original */
        ss_error("%s: --read-coords does not match read name %s; give a pattern every name "
                 "matches",
                 m->file, ori);
        return -1;
    }
    m->n_list = 0;
    for (int d = SLOT(m, o).dup; d >= 0; d = SLOT(m, d).dup) {
        SLOT(m, d).dup_checked = 1;
        if (m->o->tag && retarget(m, d, ori) < 0)
            return -1;
        if (m->o->opt_dist && !coord_fail && against_original(m, d, ori, &oc, c) < 0)
            return -1;
    }
    return coord_fail ? 1 : 0;
}

static int by_x(const void *a, const void *b)
{
    /* samtools' comparator, truncation and all, so qsort orders ties the same way */
    return (int)(((const dup_check_t *)a)->at.x - ((const dup_check_t *)b)->at.x);
}

/* Which of two duplicates on one tile is the optical one: 1 chk, 0 cur. */
static int chk_is_optical(const dup_machine_t *m, const dup_check_t *cur, const dup_check_t *chk)
{
    const bam1_t *a = REC(m, cur->idx), *b = REC(m, chk->idx);
    int ap = dup_paired(a), bp = dup_paired(b);
    if (ap != bp)
        return !bp;
    int64_t sa, sb;
    if ((a->core.flag & BAM_FQCFAIL) != (b->core.flag & BAM_FQCFAIL)) {
        sa = (a->core.flag & BAM_FQCFAIL) ? 0 : 1;
        sb = 1 - sa;
    } else {
        sa = cur->score + (ap ? cur->mate_score : 0);
        sb = chk->score + (ap ? chk->mate_score : 0);
    }
    if (sa == sb)
        sb += strcmp(bam_get_qname(b), bam_get_qname(a)) < 0 ? 1 : -1;
    return sa > sb;
}

/* The duplicates of one chain against each other. */
static int among_duplicates(dup_machine_t *m, dup_counts_t *c)
{
    qsort(m->list, m->n_list, sizeof(*m->list), by_x);
    for (size_t i = 0; i + 1 < m->n_list; i++) {
        dup_check_t *cur = &m->list[i];
        const char *cname = bam_get_qname(REC(m, cur->idx));
        for (size_t j = i + 1; j < m->n_list && m->list[j].at.x - cur->at.x <= m->o->opt_dist;
             j++) {
            dup_check_t *chk = &m->list[j];
            if ((cur->opt && chk->opt) || labs(cur->at.y - chk->at.y) > m->o->opt_dist ||
                strncmp(cname + cur->at.beg, bam_get_qname(REC(m, chk->idx)) + chk->at.beg,
                        (size_t)(cur->at.end - cur->at.beg)) != 0)
                continue;
            dup_check_t *opt = chk_is_optical(m, cur, chk) ? chk : cur;
            if (!opt->opt) {
                if (retag(m, opt->idx, c) < 0)
                    return -1;
                opt->opt = 1;
            }
        }
    }
    return 0;
}

int dup_chains(dup_machine_t *m, int upto, hts_pos_t prev_coord, int prev_tid, int in_range)
{
    for (int i = m->head; i <= upto; i++) {
        if (in_range && dup_in_window(m, i, prev_coord, prev_tid))
            break;
        if ((REC(m, i)->core.flag & BAM_FDUP) || SLOT(m, i).dup < 0)
            continue;
        dup_counts_t *c = dup_counts_of(m, i);
        m->now = i;
        int r = walk_chain(m, i, c);
        if (r < 0)
            return -1;
        if (r == 0 && m->o->opt_dist && among_duplicates(m, c) < 0)
            return -1;
        SLOT(m, i).dup = -1;
    }
    return 0;
}
