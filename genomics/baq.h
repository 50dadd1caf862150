/*
 * baq.h -- BAQ for the kernels (pileup; mpileup, which also scores
 * its indel haplotypes with baq_glocal_score): BAQ (base alignment quality) that
 * gives exactly what htslib 1.16's sam_prob_realn() gives, qualities and
 * BQ/ZQ tags, but several reads at a time.
 *
 * sam_prob_realn() runs a banded forward-backward pass (probaln_glocal) per
 * read. Here the tag handling and the CIGAR walk are the same steps in the
 * same order (baq.c), and the pass itself (baq_dp.h) computes one read per
 * SIMD lane: every lane performs the scalar code's floating-point operations
 * in its order, so each lane's result is the scalar result bit for bit. That
 * holds only for lanes of one shape (query length, reference window, band),
 * so a batch is grouped by shape first; a group is padded with copies of its
 * own reads, never with another shape. The DP sources are built without FMA
 * contraction, reassociation or flush-to-zero (CMakeLists.txt), and call the
 * scalar libm log() and pow() where htslib does.
 *
 * Threads: a baq_t belongs to one worker; baq_path_* may be called from
 * any thread.
 */
#ifndef SS_GENOMICS_BAQ_H
#define SS_GENOMICS_BAQ_H

#include <htslib/hts.h>
#include <htslib/sam.h>

/* The code that runs the forward-backward pass. */
typedef enum {
    BAQ_PATH_HTSLIB, /* htslib's sam_prob_realn, per read */
    BAQ_PATH_SCALAR, /* ours, one read at a time */
    BAQ_PATH_SSE2,   /* ours, 2 reads per step (SSE2) */
    BAQ_PATH_AVX2    /* ours, 4 reads per step (AVX2) */
} baq_path_t;

/*
 * The path to run: SEQSHARD_BAQ_PATH (scalar, sse2, avx2, htslib) when set,
 * else AVX2 where the CPU has it, else SSE2. Returns 0, or -1 with *why set
 * to a one-line static message (a bad value, or a path this CPU cannot run).
 */
int baq_path_select(baq_path_t *path, const char **why);
const char *baq_path_name(baq_path_t path);

typedef struct baq_s baq_t;

/* Workspace for one worker, grown on demand and reused. NULL when out of memory. */
baq_t *baq_init(baq_path_t path);
void baq_destroy(baq_t *q);

/*
 * sam_prob_realn(b[i], ref, ref_len, flag) for every i < n, each with its
 * own return value in ret[i] (htslib's codes: 0 done, -1 nothing to do, -3
 * tags already right, -4 error). The reads of a batch are independent: the
 * result of each is the one htslib gives it alone. Returns 0, or -1 when the
 * workspace could not grow (then ret[] is -4 where nothing was done).
 */
int baq_batch(baq_t *q, bam1_t *const *b, int n, const char *ref, hts_pos_t ref_len, int flag,
              int *ret);

/* One read: baq_batch with n = 1. Returns what sam_prob_realn returns. */
int baq_one(baq_t *q, bam1_t *b, const char *ref, hts_pos_t ref_len, int flag);

/*
 * htslib 1.16's probaln_glocal(ref, l_ref, query, l_query, qual, par, NULL,
 * NULL): the phred-scaled likelihood of query against ref (codes 0-3, above 3
 * ambiguous), band par->bw, from the forward pass alone, bit for bit; INT_MIN
 * for a negative length and when the workspace cannot grow (errno ENOMEM).
 * Allocates nothing once the workspace has grown (bcftools' indel scoring).
 */
int baq_glocal_score(baq_t *q, const uint8_t *ref, int l_ref, const uint8_t *query, int l_query,
                     const uint8_t *qual, const probaln_par_t *par);

#endif
