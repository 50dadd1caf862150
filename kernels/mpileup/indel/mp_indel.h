/*
 * mp_indel.h -- private to mp_indel*.c: the column mp_gap_prep scores and the
 * worker's buffers it scores with. Nothing outside mp_indel*.c includes it;
 * the kernel sees only mp_gap_prep and mp_indel_ws_free (../likelihood/mp_likelihood.h).
 *
 * Files: mp_indel.c (entry, candidate sizes, the per-read loop),
 * mp_indel_cons.c (masked sample references, insertion consensus, the
 * haplotype of one candidate), mp_indel_align.c (one read against one
 * haplotype, with the tandem-repeat penalty), mp_indel_qual.c (position
 * statistics, and each read's call and qualities).
 */
#ifndef SS_MP_INDEL_H
#define SS_MP_INDEL_H

#include <htslib/sam.h>
#include <stddef.h>
#include <stdint.h>

#include "../likelihood/mp_likelihood.h"

/* bcftools skips a column with this many candidate sizes or more (REF counted). */
#define MP_INDEL_MAX_TYPES 64

/* A tandem repeat found in a haplotype segment: [start, end] inclusive, unit length. */
typedef struct {
    int start, end, unit;
} mp_str_run_t;

/*
 * Buffers reused from column to column by one worker (hung on bca->indel_ws).
 * Each grows to the largest column seen; contents never carry over: every
 * column writes (or zeroes) what it reads.
 */
typedef struct {
    int *sizes; /* every read's indel length, for the candidate list */
    size_t m_sizes;
    char *masked; /* n samples x span: each sample's masked reference, 4-bit codes */
    size_t m_masked;
    char *ref4; /* the window's reference in 4-bit codes */
    size_t m_ref4;
    uint32_t *tally; /* per window base: reads agreeing (low 16 bits), differing (high) */
    size_t m_tally;
    int *ins_votes; /* per candidate, inserted base and code 0-4: reads voting */
    size_t m_ins_votes;
    char *ins_cons; /* per candidate, max_ins codes 0-4: the inserted bases */
    size_t m_ins_cons;
    uint8_t *hap; /* one sample's haplotype for one candidate, codes 0-4 */
    size_t m_hap;
    uint8_t *query; /* the read's bases over the window, codes 0-4 */
    size_t m_query;
    uint8_t *qual; /* the read's capped qualities over the window */
    size_t m_qual;
    int *score; /* per read and candidate: alignment score << 8 | penalty */
    size_t m_score;
    mp_str_run_t *runs; /* tandem repeats of the current segment */
    size_t m_runs;
} mp_indel_ws_t;

/* The column being scored: its reads, candidates and window. */
typedef struct {
    int n; /* samples */
    int *n_plp;
    bam_pileup1_t **plp;
    int pos;
    const char *ref; /* the contig by position (rs->seq), NUL-terminated */
    mp_ref_t *rs;    /* which of it is loaded */
    int n_reads, max_rd_len;
    int types[MP_INDEL_MAX_TYPES]; /* candidate lengths, ascending; 0 is REF */
    int n_types, ref_type;
    int left, right; /* the window [left, right) on the contig */
    int span;        /* right - left + 1 as first set: the stride of ws->masked */
    int max_ins;     /* longest insertion candidate (0 if none) */
    int l_run;       /* homopolymer run at pos + 1 */
} mp_indel_col_t;

/*
 * Make *buf hold at least need elements of elem bytes, keeping its contents.
 * Returns the buffer (and updates *cap), or NULL with *buf untouched when out
 * of memory.
 */
void *mp_indel_reserve(void *buf, size_t *cap, size_t need, size_t elem);

/*
 * mp_indel_cons.c. mp_indel_mask_ref fills ws->masked (one row of col->span
 * per sample); mp_indel_ins_cons fills ws->ins_cons and may set an insertion
 * candidate's length to 0 (its majority base is N). Both return 0, or -1 when
 * out of memory. mp_indel_build_hap writes hap_len codes and may pull
 * col->right in.
 */
int mp_indel_mask_ref(const mp_indel_col_t *col, mp_indel_ws_t *ws);
int mp_indel_ins_cons(mp_indel_col_t *col, mp_indel_ws_t *ws);
int mp_indel_l_run(mp_ref_t *r, int pos);
int mp_indel_reg(int pos, mp_ref_t *r, int len, const char *ins);
void mp_indel_build_hap(mp_indel_col_t *col, const mp_indel_ws_t *ws, int s, int t, uint8_t *hap,
                        int hap_len);

/*
 * mp_indel_align.c: read p against candidate t's haplotype in ws->hap; the
 * read's bases go through ws->query. 0, or -1 when the column is dropped.
 */
int mp_indel_score_read(const mp_indel_col_t *col, const mp_aux_t *bca, mp_indel_ws_t *ws,
                        const bam_pileup1_t *p, int t, int *score);

/*
 * mp_indel_qual.c: the bias histograms for one read; then every read's call
 * into p->aux and the site's alleles into bca (returns the reads calling a
 * non-REF allele, or -1 when out of memory).
 */
void mp_indel_read_stats(mp_aux_t *bca, const bam_pileup1_t *p, double mq_scale);
int mp_indel_assign(const mp_indel_col_t *col, mp_aux_t *bca, const char *ins_cons,
                    const int *score);

#endif
