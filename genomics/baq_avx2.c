/*
 * baq_avx2.c -- the forward-backward pass on 4 reads per step with AVX2.
 * Every function here is built for AVX2 (the pragma) and
 * only called after __builtin_cpu_supports("avx2") (baq.c). AVX2 does not
 * bring FMA with it, and the file is built without FMA contraction or
 * fast-math (CMakeLists.txt).
 */
#pragma GCC target("avx2")

#include <math.h>

#include "baq_priv.h"
#include "base/ss_exact_fp.h"

typedef double baq_v4d __attribute__((vector_size(32)));
typedef __typeof__((baq_v4d){0} == (baq_v4d){0}) baq_v4m;

#define BAQ_W            4
#define BAQ_FN           baq_dp_avx2_4
#define BAQ_VD           baq_v4d
#define BAQ_VM           baq_v4m
#define BAQ_SEL(m, a, b) ((baq_v4d)(((m) & (baq_v4m)(a)) | (~(m) & (baq_v4m)(b))))
#include "baq_dp.h"
