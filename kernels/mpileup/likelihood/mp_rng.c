/*
 * mp_rng.c -- drand48's stream, owned by the caller (see mp_rng.h).
 *
 * The recurrence is x' = (A * x + C) mod 2^48. Keeping the state in a
 * uint64_t lets the products wrap mod 2^64, which is a multiple of 2^48, so
 * masking to 48 bits afterwards gives the same residue.
 */
#include "mp_rng.h"
#include "base/ss_exact_fp.h"

#define LCG_A        0x5DEECE66DULL
#define LCG_C        0xBULL
#define LCG_MASK     ((1ULL << 48) - 1)
#define LCG_LOW_SEED 0x330EULL /* srand48's fixed low 16 bits */

void mp_rng_seed(mp_rng_t *r, long seed)
{
    /* srand48 keeps only the seed's low 32 bits, placed above the fixed 16. */
    r->x = ((uint64_t)(uint32_t)seed << 16) | LCG_LOW_SEED;
    r->draws = 0;
}

double mp_rng_next(mp_rng_t *r)
{
    r->x = (LCG_A * r->x + LCG_C) & LCG_MASK;
    r->draws++;
    /*
     * glibc puts the 48 bits in the mantissa of a double in [1, 2) and
     * subtracts 1; both steps are exact, so this is the same value.
     */
    return (double)r->x * 0x1p-48;
}

void mp_rng_jump(mp_rng_t *r, uint64_t n)
{
    /*
     * step = the map x -> a*x + c for 2^k draws; squaring it doubles k.
     * acc collects the steps for the bits of n. Maps of this form commute
     * (they are powers of one map), so the order of composition is free.
     */
    uint64_t step_a = LCG_A, step_c = LCG_C;
    uint64_t acc_a = 1, acc_c = 0;
    while (n) {
        if (n & 1) {
            acc_a = (step_a * acc_a) & LCG_MASK;
            acc_c = (step_a * acc_c + step_c) & LCG_MASK;
        }
        step_c = (step_a * step_c + step_c) & LCG_MASK;
        step_a = (step_a * step_a) & LCG_MASK;
        n >>= 1;
    }
    r->x = (acc_a * r->x + acc_c) & LCG_MASK;
    r->draws = 0;
}

void mp_rng_shuffle_u16(mp_rng_t *r, size_t n, uint16_t *a)
{
    /* Fisher-Yates from the top, in ks_shuffle's order and with its int index. */
    for (size_t i = n; i > 1; i--) {
        int j = (int)(mp_rng_next(r) * (double)i);
        uint16_t t = a[j];
        a[j] = a[i - 1];
        a[i - 1] = t;
    }
}

void mp_rng_skip_shuffle(mp_rng_t *r, size_t n)
{
    if (n < 2)
        return;
    uint64_t draws = r->draws + (n - 1);
    mp_rng_jump(r, n - 1);
    r->draws = draws;
}
