/*
 * diff_probaln.h -- a plain transcription of htslib 1.16's probaln_glocal
 * (its compiled, optimised branch), kept only in the tests: the same
 * floating-point operations in the same order and types, with the values the
 * public function rounds away left visible (the likelihood before rounding,
 * each base's 1 - posterior before the log), so that a reordered sum in ours
 * shows in the bits at once rather than once in a million rounded results.
 * It is itself checked against htslib's probaln_glocal on every case.
 */
#ifndef SS_TESTS_DIFF_PROBALN_H
#define SS_TESTS_DIFF_PROBALN_H

#include <stdint.h>

#include <htslib/hts.h>

/*
 * The pass on ref (l_ref codes) and query (l_query codes, qualities qual).
 * *phred: the likelihood before rounding. With state and miss non-NULL (l_query
 * each), the backward pass and MAP too: state as htslib's, miss = 1 - max/sum.
 * Returns what probaln_glocal returns; INT_MIN on a bad length or no memory.
 */
int tr_probaln(const uint8_t *ref, int l_ref, const uint8_t *query, int l_query,
               const uint8_t *qual, const probaln_par_t *par, double *phred, int *state,
               double *miss);

#endif
