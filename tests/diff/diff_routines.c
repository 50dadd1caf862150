/*
 * diff_routines.c -- the routines ssdiff checks, each against its original.
 * Weights share --cases by cost: a routine ten times slower per case gets a
 * tenth of the cases of a cheap one, so every routine gets a run of similar
 * time.
 */
#include "diff_routines.h"
#include "base/ss_exact_fp.h"
#include "diff.h"

const diff_routine_t diff_routines[] = {
    {"hmm-score", "indel model's probaln_glocal score vs htslib probaln_glocal", 0.45,
     diff_hmm_score},
    {"baq", "BAQ on every path (scalar, sse2, avx2) vs htslib sam_prob_realn", 0.025, diff_baq},
    {"baq-pass", "the HMM pass, scalar: states and unrounded posteriors vs a transcription", 0.12,
     diff_baq_pass},
    {"baq-pass-sse2", "the HMM pass, 2 lanes (SSE2) vs the transcription", 0.1, diff_baq_pass_sse2},
    {"baq-pass-avx2", "the HMM pass, 4 lanes (AVX2) vs the transcription", 0.06,
     diff_baq_pass_avx2},
    {"errmod", "SNP error model mp_errmod_cal vs htslib errmod_cal", 1.8, diff_errmod},
    {"mwu", "Mann-Whitney U (Z, probability, left-only) vs bcftools calc_mwu_biasZ", 1.5, diff_mwu},
    {"vdb", "variant distance bias mp_vdb vs bcftools calc_vdb", 0.45, diff_vdb},
    {"sgb", "segregation bias mp_seg_bias vs bcftools calc_SegBias", 1.4, diff_sgb},
    {"snp-words", "SNP words, scalar and SIMD, vs bcftools bcf_call_glfgen's per-base fields", 1.5,
     diff_snp_words},
    {"call-m", "call -m mc_multi_call vs bcftools mcall (pdg, alleles, QUAL, GT, GQ, GP)", 0.3,
     diff_call_multi},
    {"call-em", "call -c site EM mc_em_site vs bcftools bcf_em1 (with kmin_brent)", 0.5,
     diff_call_em},
    {"indel-qual",
     "indel reads' indelQ/seqQ/alleles mp_indel_assign vs bcftools "
     "bcf_cgp_compute_indelQ",
     0.2, diff_indel_qual},
    {NULL, NULL, 0, NULL}};
