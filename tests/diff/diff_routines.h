/*
 * diff_routines.h -- the run functions of diff_routines[], one per routine
 * (see diff.h for what each does). Private to tests/diff/.
 */
#ifndef SS_TESTS_DIFF_ROUTINES_H
#define SS_TESTS_DIFF_ROUTINES_H

#include "diff.h"

void diff_hmm_score(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_baq(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_baq_pass(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_baq_pass_sse2(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_baq_pass_avx2(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_errmod(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_mwu(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_vdb(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_sgb(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_snp_words(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_call_multi(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_call_em(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
void diff_indel_qual(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);

#endif
