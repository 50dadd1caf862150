/*
 * baq_scalar.c -- the forward-backward pass one read at a time (baq_dp.h).
 * Built without FMA contraction or fast-math (CMakeLists.txt).
 */
#include <math.h>

#include "baq_priv.h"
#include "base/ss_exact_fp.h"

#define BAQ_W            1
#define BAQ_FN           baq_dp_scalar
#define BAQ_VD           double
#define BAQ_VM           int
#define BAQ_SEL(m, a, b) ((m) ? (a) : (b))
#include "baq_dp.h"
