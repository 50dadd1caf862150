/*
 * mp_mplp.c -- htslib 1.16's multi-input pileup (bam_mplp_*) as bcftools
 * mpileup drives it: the same columns in the same order, each input's
 * column the reads htslib would give, with mate overlaps, the depth cap and
 * each read's client data set by the constructor.
 *
 * Each input runs on the pileup kernel's engine (../pileup/pileup_engine.c),
 * which holds the buffered reads in one array and knows where a read is
 * plainly inside an alignment match, instead of htslib's, which resolves
 * every buffered read's CIGAR at every position: on deep stacks that
 * resolution was the run's largest cost. tests/test_pileup_engine.c compares
 * the engine with htslib's field by field, and every mpileup test compares
 * the records with bcftools'.
 *
 * The state is written at every column, so it sits on the worker's own cache
 * lines (ss_alloc_private): tcmalloc packs small objects of two workers side
 * by side. A worker keeps one for all its passes (mp_mplp_reset), so the
 * engines' records are reused rather than allocated again for every pass.
 */
#include <stdlib.h>

#include "../../../alloc/ss_alloc.h"
#include "base/ss_exact_fp.h"
#include "mp_mplp.h"

struct mp_mplp_s {
    int n;
    int tid;
    pe_t **eng;
    unsigned char *has_col; /* the input's next column is known: eng[i]->pos */
    unsigned char *at;      /* the input had the column last returned */
};

mp_mplp_t *mp_mplp_init(int n, pe_read_f read, void **data, const mp_mplp_opts_t *o)
{
    mp_mplp_t *m = ss_alloc_private(sizeof(*m));
    if (!m)
        return NULL;
    m->n = n;
    m->eng = ss_calloc_private((size_t)n, sizeof(*m->eng));
    m->has_col = ss_calloc_private((size_t)n, 1);
    m->at = ss_calloc_private((size_t)n, 1);
    int ok = m->eng && m->has_col && m->at;
    for (int i = 0; ok && i < n; i++) {
        ok = (m->eng[i] = pe_init(read, data[i], o->maxcnt, o->overlaps, 0)) != NULL;
        if (ok) {
            m->eng[i]->construct = o->construct;
            m->eng[i]->client_free = o->client_free;
        }
    }
    if (!ok) {
        mp_mplp_destroy(m);
        return NULL;
    }
    return m;
}

void mp_mplp_reset(mp_mplp_t *m, int tid)
{
    m->tid = tid;
    for (int i = 0; i < m->n; i++) {
        pe_reset(m->eng[i], tid); /* as a new htslib iterator, which starts at tid 0 */
        m->has_col[i] = m->at[i] = 0;
    }
}

/* The inputs at the last column move on; each finds its next. -1 on error. */
static int advance(mp_mplp_t *m, hts_pos_t *min)
{
    *min = HTS_POS_MAX;
    for (int i = 0; i < m->n; i++) {
        pe_t *e = m->eng[i];
        if (m->at[i]) {
            pe_done_pos(e);
            m->at[i] = m->has_col[i] = 0;
        }
        if (!m->has_col[i]) {
            int r = pe_next_pos(e);
            if (r < 0)
                return -1;
            m->has_col[i] = (unsigned char)r;
        }
        if (m->has_col[i] && e->pos < *min)
            *min = e->pos;
    }
    return 0;
}

int mp_mplp_auto(mp_mplp_t *m, int *tid, hts_pos_t *pos, int *n_plp, const bam_pileup1_t **plp)
{
    hts_pos_t min;
    if (advance(m, &min) < 0)
        return -1;
    if (min == HTS_POS_MAX)
        return 0;
    *tid = m->tid;
    *pos = min;
    int ret = 0;
    for (int i = 0; i < m->n; i++) {
        n_plp[i] = 0;
        plp[i] = NULL;
        if (!m->has_col[i] || m->eng[i]->pos != min)
            continue;
        if (!(plp[i] = pe_column(m->eng[i], &n_plp[i])))
            return -1; /* out of memory */
        m->at[i] = 1;
        ret++;
    }
    return ret;
}

void mp_mplp_destroy(mp_mplp_t *m)
{
    if (!m)
        return;
    for (int i = 0; m->eng && i < m->n; i++)
        pe_destroy(m->eng[i]);
    free(m->eng);
    free(m->has_col);
    free(m->at);
    free(m);
}
