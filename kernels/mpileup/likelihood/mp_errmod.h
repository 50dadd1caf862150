/*
 * mp_errmod.h -- htslib 1.16's revised MAQ error model (errmod.c), which turns
 * one sample's bases at a site into phred-scaled genotype likelihoods,
 * written again for speed with the same floats bit for bit:
 *
 * - htslib sorts the bases before its pass over them; here a count per 11-bit
 *   base (quality, strand, base) replaces the sort. Equal bases add equal
 *   terms, so only the order of distinct values matters. Each base's sum
 *   only takes that base's terms, so the pass walks one base at a time, its
 *   (quality, strand) pairs from the largest down: the order htslib's loop
 *   over the sorted array gives that base, with the sum in a register.
 * - The beta table (the error terms for k of n bases at quality q) is stored
 *   by depth n first and filled for a depth on first use: a site touches one
 *   compact block, and a run at 30x never computes the rows for 200x.
 * - Every table entry is computed with htslib's expressions in its order;
 *   this file's unit (compiled with -ffp-contract=off) must keep it so.
 *
 * The struct is plain so that the unit test can compare the tables with
 * htslib's. Private to kernels/mpileup/ and tests/test_mp_errmod.c.
 */
#ifndef SS_MP_ERRMOD_H
#define SS_MP_ERRMOD_H

#include <stdint.h>

#define MP_ERRMOD_MAX_DEPTH 255  /* bases per call; the caller downsamples beyond it */
#define MP_ERRMOD_MIN_QUAL  4    /* htslib raises lower qualities to 4 */
#define MP_ERRMOD_N_QUAL    64   /* qualities 0..63 (6 bits) */
#define MP_ERRMOD_N_KEYS    2048 /* a base: 6-bit quality << 5 | strand << 4 | 4-bit base */

/* A slot's second term is read whether or not it has one: the tables have room past their ends. */
#define MP_ERRMOD_PAD 1

typedef struct {
    /* weight of the k-th base on one strand (then zeros, see MP_ERRMOD_PAD) */
    double fk[MP_ERRMOD_MAX_DEPTH + 1 + MP_ERRMOD_PAD];
    double le[MP_ERRMOD_N_QUAL];  /* ln(e) for error probability e of quality q */
    double le1[MP_ERRMOD_N_QUAL]; /* ln(1 - e) */
    double *lc;                   /* ln C(n, k) at [n << 8 | k], 0 for k = 0 or k > n */
    double *lhet;                 /* ln C(n, k) - n ln 2 at [n << 8 | k] */
    double *beta;                 /* rows by depth, then quality; see beta_row */
    uint8_t beta_ready[MP_ERRMOD_MAX_DEPTH + 1]; /* depth n's rows are filled */
    /* mp_errmod_cal's scratch, all zero between calls: per 4-bit base, how many of
     * each quality << 1 | strand, and which of those are present */
    uint8_t count[16][2 * MP_ERRMOD_N_QUAL];
    uint64_t present[16][2 * MP_ERRMOD_N_QUAL / 64];
} mp_errmod_t;

/*
 * The model for dependency depcorr (bcftools passes 1 - theta), as
 * errmod_init(depcorr) builds it. NULL when out of memory; free with
 * mp_errmod_destroy (which accepts NULL). The tables fill lazily, so one
 * model belongs to one thread at a time.
 */
mp_errmod_t *mp_errmod_init(double depcorr);
void mp_errmod_destroy(mp_errmod_t *em);

/*
 * htslib's beta[q << 16 | n << 8 | k] for k in [0, n), as the n entries from
 * the returned pointer; n in [1, 255], q in [MP_ERRMOD_MIN_QUAL, 63]. Fills
 * depth n's rows the first time. Owned by em.
 */
const double *mp_errmod_beta_row(mp_errmod_t *em, int n, int q);

/*
 * errmod_cal(em, n, m, bases, q) of htslib 1.16 for n <= 255 bases, each an
 * 11-bit key below MP_ERRMOD_N_KEYS (as mp_glfgen packs them): the m * m
 * likelihoods into q, the same floats. bases is left as given (htslib sorts
 * it). Returns 0; -1 with q zeroed when n is out of range or a base is not
 * an 11-bit key.
 */
int mp_errmod_cal(mp_errmod_t *em, int n, int m, const uint16_t *bases, float *q);

#endif
