/*
 * mp_bias.h -- the bias statistics behind mpileup's INFO tags (mp_bias.c),
 * for mp_record.c. Pure functions of their arguments: any thread.
 * Private to kernels/mpileup/; only mp_*.c include it.
 */
#ifndef SS_MP_BIAS_H
#define SS_MP_BIAS_H

#include "mp_likelihood.h"

/*
 * VDB from the ALT reads' position histogram (100 bins): 0 (biased)
 * to 1, HUGE_VAL with fewer than two reads.
 */
double mp_vdb(const mp_hist_t *pos);

/*
 * Mann-Whitney U test of histogram a (REF) against b (ALT) over n bins:
 * the Z-score when do_z, else a probability-like score in [0, 1] (HUGE_VAL
 * when left_only and U is above its mean). HUGE_VAL when either is empty.
 */
double mp_mwu_bias(const int *a, const int *b, int n, int left_only, int do_z);
/* The same test of two histograms, over the bins either uses. */
double mp_mwu_hist(const mp_hist_t *a, const mp_hist_t *b, int left_only, int do_z);

/* SGB into call->seg_bias, from the samples' I16 (HUGE_VAL when no ALT reads). */
void mp_seg_bias(const mp_smpl_t *bcr, mp_site_t *call);

#endif
