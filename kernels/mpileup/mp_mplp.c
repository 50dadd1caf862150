/*
 * mp_mplp.c -- htslib 1.16's multi-input pileup (bam_mplp_*), the same
 * columns in the same order, with its per-input state on the worker's own
 * cache lines.
 *
 * bam_mplp_init callocs five arrays of one entry per input and a 48-byte
 * struct, and bam_mplp64_auto writes them at every column. tcmalloc packs
 * such small objects of two workers side by side, so at two threads each
 * write took the cache line from the other core: bam_mplp64_auto's samples
 * grew sixfold and the run's CPU time by about a sixth against one thread.
 * Here they come from ss_alloc_private; the single-input pileups under them
 * are htslib's own.
 */
#include <stdlib.h>

#include "../../alloc/ss_alloc.h"
#include "mpileup.h"

/*
 * libhts exports it (bam_mplp_init_overlaps calls it for each input) but
 * sam.h does not declare it.
 */
int bam_plp_init_overlaps(bam_plp_t iter);

struct mp_mplp_s {
    int n;
    bam_plp_t *iter;
    hts_pos_t *pos;
    uint32_t *tid; /* htslib keeps it signed and compares it unsigned: an empty input is 0 */
    int *n_plp;
    const bam_pileup1_t **plp;
    hts_pos_t min_pos;
    uint32_t min_tid;
};

mp_mplp_t *mp_mplp_init(int n, bam_plp_auto_f func, void **data)
{
    mp_mplp_t *m = ss_alloc_private(sizeof(*m));
    if (!m)
        return NULL;
    m->n = n;
    m->iter = ss_calloc_private((size_t)n, sizeof(*m->iter));
    m->pos = ss_calloc_private((size_t)n, sizeof(*m->pos));
    m->tid = ss_calloc_private((size_t)n, sizeof(*m->tid));
    m->n_plp = ss_calloc_private((size_t)n, sizeof(*m->n_plp));
    m->plp = ss_calloc_private((size_t)n, sizeof(*m->plp));
    m->min_pos = HTS_POS_MAX;
    m->min_tid = (uint32_t)-1;
    int ok = m->iter && m->pos && m->tid && m->n_plp && m->plp;
    for (int i = 0; ok && i < n; i++) {
        ok = (m->iter[i] = bam_plp_init(func, data[i])) != NULL;
        m->pos[i] = m->min_pos;
        m->tid[i] = m->min_tid;
    }
    if (!ok) {
        mp_mplp_destroy(m);
        return NULL;
    }
    return m;
}

void mp_mplp_setup(mp_mplp_t *m, int overlaps, int maxcnt,
                   int (*constructor)(void *, const bam1_t *, bam_pileup_cd *))
{
    for (int i = 0; i < m->n; i++) {
        if (overlaps)
            bam_plp_init_overlaps(m->iter[i]);
        bam_plp_set_maxcnt(m->iter[i], maxcnt);
        bam_plp_constructor(m->iter[i], constructor);
    }
}

/* Advance the inputs at the last column; the next column is the least of theirs. -1 on error. */
static int advance(mp_mplp_t *m)
{
    hts_pos_t new_pos = HTS_POS_MAX;
    uint32_t new_tid = (uint32_t)-1;
    for (int i = 0; i < m->n; i++) {
        if (m->pos[i] == m->min_pos && m->tid[i] == m->min_tid) {
            int tid;
            hts_pos_t pos;
            m->plp[i] = bam_plp64_auto(m->iter[i], &tid, &pos, &m->n_plp[i]);
            if (!m->plp[i] && m->n_plp[i] < 0)
                return -1; /* htslib's pileup failed (its error flag; n_plp -1 says so) */
            m->tid[i] = m->plp[i] ? (uint32_t)tid : 0;
            m->pos[i] = m->plp[i] ? pos : 0;
        }
        if (m->plp[i] && (m->tid[i] < new_tid || (m->tid[i] == new_tid && m->pos[i] < new_pos))) {
            new_tid = m->tid[i];
            new_pos = m->pos[i];
        }
    }
    m->min_pos = new_pos;
    m->min_tid = new_tid;
    return 0;
}

int mp_mplp_auto(mp_mplp_t *m, int *tid, hts_pos_t *pos, int *n_plp, const bam_pileup1_t **plp)
{
    if (advance(m) < 0)
        return -1;
    if (m->min_pos == HTS_POS_MAX)
        return 0;
    *tid = (int)m->min_tid;
    *pos = m->min_pos;
    int ret = 0;
    for (int i = 0; i < m->n; i++) {
        int here = m->pos[i] == m->min_pos && m->tid[i] == m->min_tid;
        n_plp[i] = here ? m->n_plp[i] : 0;
        plp[i] = here ? m->plp[i] : NULL;
        ret += here;
    }
    return ret;
}

void mp_mplp_destroy(mp_mplp_t *m)
{
    if (!m)
        return;
    for (int i = 0; m->iter && i < m->n; i++)
        if (m->iter[i])
            bam_plp_destroy(m->iter[i]);
    free(m->iter);
    free(m->pos);
    free(m->tid);
    free(m->n_plp);
    free(m->plp);
    free(m);
}
