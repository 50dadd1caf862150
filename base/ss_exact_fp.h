/*
 * ss_exact_fp.h -- the mark of a source file whose floating point must give
 * htslib's or bcftools' numbers bit for bit (BAQ, the genotype likelihoods,
 * the caller, and the differential tester's transcriptions of them).
 *
 * CMakeLists.txt (ss_exact_fp_flags) finds every .c file that includes this
 * header, wherever it lives, and builds it with no FMA contraction, no
 * reassociation and no fast-math (which would also flush denormals to zero),
 * defining SS_EXACT_FP. So the flags follow the code, not a folder: a file
 * that moves keeps them, and a file that includes a header of such code
 * without including this one first does not compile.
 */
#ifndef SS_EXACT_FP_H
#define SS_EXACT_FP_H

#ifndef SS_EXACT_FP
#error \
    "built without the exact floating-point flags: include ss_exact_fp.h in the .c file itself (CMakeLists.txt gives the flags to the files that do)"
#endif
#ifdef __FAST_MATH__
#error "built with -ffast-math, which changes htslib's and bcftools' numbers"
#endif

#endif
