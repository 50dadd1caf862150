/*
 * baq_priv.h -- private to baq*.c: the forward-backward pass on a group of
 * reads of one shape, in the widths each instruction set builds.
 */
#ifndef SS_GENOMICS_BAQ_PRIV_H
#define SS_GENOMICS_BAQ_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "base/ss_exact_fp.h" /* its users are built with the exact flags */

struct bam1_t;

/* What every lane of a group shares; the pass's constants follow from it. */
typedef struct {
    int l_query, l_ref, bw; /* bw: the band the pass uses (not the one asked for) */
    float d, e;             /* gap open and extension probabilities, as htslib's
                             * probaln_par_t holds them: in float, so the transitions
                             * computed from them are partly single precision */
    const float *q2p;       /* 10^(-q/10) as float, q = 0..255 */
} baq_shape_t;

/* One read of a group: its inputs and where its results go. */
typedef struct {
    const uint8_t *tseq, *tref; /* codes 0-4 (4: N or other), l_query and l_ref of them */
    const uint8_t *qual;        /* base qualities, l_query */
    int *state;                 /* per query base: ref position << 2 | 0 match, 1 insertion */
    double *miss;               /* per query base: 1 - posterior of state, before the log */
    int *failed;                /* set to 1 when the likelihood is no int (see baq_phred_int) */
} baq_lane_t;

/*
 * (int)x as x86-64 converts it (cvttsd2si), which is what htslib's
 * probaln_glocal returns: INT_MIN for NaN, infinities and values out of
 * range. A read whose forward pass underflows to such a likelihood (long
 * homopolymers against a repeat) makes probaln_glocal return INT_MIN, and
 * sam_prob_realn then fails with -4 and leaves the read as it was; BAQ must
 * do the same, so it computes the likelihood too, written out here rather
 * than left to an out-of-range conversion, which C leaves undefined.
 */
static inline int baq_phred_int(double x)
{
    if (!(x > -2147483649.0 && x < 2147483648.0))
        return -2147483647 - 1;
    return (int)x;
}

/*
 * Doubles of workspace a pass on shape sh needs at width w. The workspace is
 * aligned to 64 bytes.
 */
size_t baq_dp_doubles(const baq_shape_t *sh, int w);

/*
 * One pass over w lanes of shape sh (lanes[0..w-1]; lanes may repeat a read
 * to fill the width). Each lane's state[] and miss[] equal what the scalar
 * pass gives that read. ws: baq_dp_doubles(sh, w) doubles.
 */
void baq_dp_scalar(const baq_shape_t *sh, const baq_lane_t *lanes, double *ws);
void baq_dp_sse2_2(const baq_shape_t *sh, const baq_lane_t *lanes, double *ws);
void baq_dp_avx2_4(const baq_shape_t *sh, const baq_lane_t *lanes, double *ws);
/*
 * probaln_glocal's likelihood without state and q, before its rounding to an
 * int (baq_phred_int(x + .499) rounds it): the forward pass of one lane. The
 * differential tester compares these bits with a transcription of htslib's.
 */
double baq_dp_scalar_phred_only(const baq_shape_t *sh, const baq_lane_t *lane, double *ws);

/* ---- htslib's steps around the pass (baq_realn.c) ---- */

/* A read of a batch (baq.c): where its pass reads and writes (baq_realn.c). */
typedef struct {
    struct bam1_t *b;
    int ret;                         /* final code, or 1 while the pass is pending */
    int l_query, l_ref, bw, bw_pass; /* bw: realn's band; bw_pass: the pass's */
    float d;                         /* gap open probability, a float as htslib's conf.d */
    int xb, xe;                      /* the reference window, before the cut at the contig end */
    uint8_t *tseq, *tref, *bq;
    int *state;
    double *miss;
    int failed; /* the pass's likelihood was INT_MIN: htslib fails the read (-4) */
} baq_job_t;

/*
 * Before the pass: the read's own checks, its BQ/ZQ tags, its span, band and
 * window. Returns 1 when it needs the pass (j's sizes set), else the final
 * sam_prob_realn code.
 */
int baq_job_start(baq_job_t *j, struct bam1_t *b, int flag);
/* Bytes of per-read buffers baq_job_place needs for j (a multiple of 16). */
size_t baq_job_bytes(const baq_job_t *j);
/* Put j's buffers at p, 16-byte aligned, then fill its codes and set its window. */
void baq_job_place(baq_job_t *j, unsigned char *p, const char *ref, int64_t ref_len);
/* After the pass: BQ from the states and posteriors, applied. scratch: 2 * l_query. */
void baq_job_finish(baq_job_t *j, int flag, uint8_t *scratch);

#endif
