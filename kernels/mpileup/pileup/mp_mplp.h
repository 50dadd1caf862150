/*
 * mp_mplp.h -- htslib's multi-input pileup (bam_mplp_*, as bcftools drives
 * it), on the pileup engine of genomics/ (mp_mplp.c). Private to
 * kernels/mpileup/.
 */
#ifndef SS_MP_MPLP_H
#define SS_MP_MPLP_H

#include <htslib/sam.h>

#include "../../../genomics/pileup_engine.h"

typedef struct mp_mplp_s mp_mplp_t;
typedef struct {
    int overlaps;                      /* mate overlaps, as bam_mplp_init_overlaps */
    int maxcnt;                        /* the depth cap, as bam_mplp_set_maxcnt */
    pe_construct_f construct;          /* as bam_mplp_constructor, or NULL */
    void (*client_free)(void *client); /* frees the data the kernel keeps with a record */
} mp_mplp_opts_t;
/* bam_mplp_init's iterator over n inputs, read through read(data[i]). NULL when out of memory. */
mp_mplp_t *mp_mplp_init(int n, pe_read_f read, void **data, const mp_mplp_opts_t *o);
/* Before a pass over contig tid, once its inputs are queried: as a new iterator. */
void mp_mplp_reset(mp_mplp_t *m, int tid);
/* bam_mplp64_auto: the next column's reads per input; the inputs there, 0 at the end, -1 error. */
int mp_mplp_auto(mp_mplp_t *m, int *tid, hts_pos_t *pos, int *n_plp, const bam_pileup1_t **plp);
void mp_mplp_destroy(mp_mplp_t *m);

#endif
