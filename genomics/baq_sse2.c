/*
 * baq_sse2.c -- the forward-backward pass on 2 reads per step with SSE2 (the
 * x86-64 baseline). Built without FMA contraction or fast-math
 * (CMakeLists.txt).
 */
#include <math.h>

#include "baq_priv.h"
#include "base/ss_exact_fp.h"

typedef double baq_v2d __attribute__((vector_size(16)));
typedef __typeof__((baq_v2d){0} == (baq_v2d){0}) baq_v2m;

#define BAQ_W            2
#define BAQ_FN           baq_dp_sse2_2
#define BAQ_VD           baq_v2d
#define BAQ_VM           baq_v2m
#define BAQ_SEL(m, a, b) ((baq_v2d)(((m) & (baq_v2m)(a)) | (~(m) & (baq_v2m)(b))))
#include "baq_dp.h"
