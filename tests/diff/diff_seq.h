/*
 * diff_seq.h -- generated sequences for the HMM routines: references with
 * homopolymers and short tandem repeats, queries derived from them with an
 * indel planted in a repeat, mismatches, N and read-end indels, and quality
 * strings of every kind. Private to tests/diff/.
 */
#ifndef SS_TESTS_DIFF_SEQ_H
#define SS_TESTS_DIFF_SEQ_H

#include "diff.h"

/* A length: mostly 1-300, sometimes up to max. */
int diff_seq_length(diff_rng_t *r, int max);
/* n codes 0-3 (some above 3 for N and IUPAC): random, a homopolymer run or an STR. */
void diff_seq_ref(diff_rng_t *r, uint8_t *ref, int n);
/*
 * A query of codes 0-4 from ref: a copy with an insertion or deletion of up to
 * max_indel bases (in a repeat when there is one), mismatches and N. Returns its
 * length, at most cap; *indel gets the indel's length (negative: a deletion).
 */
int diff_seq_query(diff_rng_t *r, const uint8_t *ref, int l_ref, uint8_t *query, int cap,
                   int max_indel, int *indel);
/* n qualities: one value, a realistic spread, 0-93, or anything 0-255. */
void diff_seq_quals(diff_rng_t *r, uint8_t *qual, int n);
/* Prints codes as ACGTN (above 4: the number in brackets). */
void diff_seq_print(FILE *f, const char *label, const uint8_t *s, int n, int as_quals);

#endif
