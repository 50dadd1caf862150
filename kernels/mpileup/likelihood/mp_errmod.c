/*
 * mp_errmod.c -- genotype likelihoods from a sample's bases, the same floats
 * as htslib 1.16's errmod_cal (see mp_errmod.h for what differs in how).
 *
 * Bit-identity rests on three things: each table entry comes from the same
 * libm calls and the same expression order as htslib's; each accumulator
 * (one per base) receives its terms in htslib's order, which is the bases'
 * descending order; and the float/double mix of the final sums is htslib's.
 * Changing any expression below, even to an algebraically equal one, can
 * move a last bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_errmod.h"

#define ETA    0.03 /* errmod's floor on the dependency weight */
#define N_BASE 16   /* 4-bit base */

/* The error terms of all depths, n by n: depth n holds N_QUAL rows of n entries. */
#define BETA_SIZE ((size_t)MP_ERRMOD_N_QUAL * MP_ERRMOD_MAX_DEPTH * (MP_ERRMOD_MAX_DEPTH + 1) / 2)

static double *beta_at(const mp_errmod_t *em, int n, int q)
{
    size_t depth_start = (size_t)MP_ERRMOD_N_QUAL * n * (n - 1) / 2;
    return em->beta + depth_start + (size_t)q * n;
}

/* ln n! through the reentrant lgamma (the same value; htslib's lgamma writes signgam). */
static double log_factorial(int n)
{
    int sign;
    return lgamma_r(n + 1, &sign);
}

/* ln C(n, k) for 1 <= k <= n, 0 elsewhere; then ln C(n, k) - n ln 2 everywhere. */
static void fill_binomials(mp_errmod_t *em)
{
    for (int n = 1; n <= MP_ERRMOD_MAX_DEPTH; ++n) {
        double lfn = log_factorial(n);
        for (int k = 1; k <= n; ++k)
            em->lc[n << 8 | k] = lfn - log_factorial(k) - log_factorial(n - k);
    }
    for (int n = 0; n <= MP_ERRMOD_MAX_DEPTH; ++n)
        for (int k = 0; k <= MP_ERRMOD_MAX_DEPTH; ++k)
            em->lhet[n << 8 | k] = em->lc[n << 8 | k] - M_LN2 * n;
}

mp_errmod_t *mp_errmod_init(double depcorr)
{
    mp_errmod_t *em = calloc(1, sizeof(*em));
    if (!em)
        return NULL;
    size_t n_pairs = (size_t)(MP_ERRMOD_MAX_DEPTH + 1) << 8;
    em->lc = calloc(n_pairs, sizeof(double));
    em->lhet = malloc(n_pairs * sizeof(double));
    /* untouched depths cost no memory: malloc, not calloc (tcmalloc would zero all
     * 17 MB); the last row has room past its end */
    em->beta = malloc((BETA_SIZE + MP_ERRMOD_PAD) * sizeof(double));
    if (!em->lc || !em->lhet || !em->beta) {
        mp_errmod_destroy(em);
        return NULL;
    }
    em->fk[0] = 1.0;
    for (int n = 1; n <= MP_ERRMOD_MAX_DEPTH; ++n)
        em->fk[n] = pow(1. - depcorr, n) * (1.0 - ETA) + ETA;
    for (int q = 1; q < MP_ERRMOD_N_QUAL; ++q) {
        double e = pow(10.0, -q / 10.0);
        em->le[q] = log(e);
        em->le1[q] = log(1.0 - e);
    }
    fill_binomials(em);
    return em;
}

void mp_errmod_destroy(mp_errmod_t *em)
{
    if (!em)
        return;
    free(em->lc);
    free(em->lhet);
    free(em->beta);
    free(em);
}

/*
 * Depth n's rows. Each row is a running log-sum from k = n down, so entry k
 * depends on those above it: the loop keeps htslib's direction and sums.
 */
static void fill_depth(mp_errmod_t *em, int n)
{
    for (int q = MP_ERRMOD_MIN_QUAL; q < MP_ERRMOD_N_QUAL; ++q) {
        double *beta = beta_at(em, n, q);
        double le = em->le[q], le1 = em->le1[q];
        double sum1 = em->lc[n << 8 | n] + n * le, sum;
        for (int k = n - 1; k >= 0; --k, sum1 = sum) {
            sum = sum1 + log1p(exp(em->lc[n << 8 | k] + k * le + (n - k) * le1 - sum1));
            beta[k] = -10. / M_LN10 * (sum1 - sum);
        }
    }
    /*
     * A row's last slot reads one entry past the row (tally_base): the next
     * row's first, or past the last row the first entry of depth n + 1's
     * quality-0 row (or the padding), which no depth fills: a zero there, so
     * that the term it makes, multiplied by zero, is zero.
     */
    beta_at(em, n, MP_ERRMOD_N_QUAL - 1)[n] = 0.0;
    em->beta_ready[n] = 1;
}

const double *mp_errmod_beta_row(mp_errmod_t *em, int n, int q)
{
    if (!em->beta_ready[n])
        fill_depth(em, n);
    return beta_at(em, n, q);
}

/* A base's slot in the scratch: quality << 1 | strand (the key's bits above the base). */
static inline int slot_of(unsigned key)
{
    return (int)(key >> 4);
}

/*
 * How many of each key (em->count, by base then slot) and which slots are
 * present (em->present, a bitmap per base); *bases gets a bit per base seen.
 * -1 when a key is out of range, with the scratch cleared again.
 */
static int count_keys(mp_errmod_t *em, int n, const uint16_t *bases, uint32_t *seen)
{
    uint32_t used = 0;
    for (int i = 0; i < n; i++) {
        unsigned key = bases[i];
        if (key >= MP_ERRMOD_N_KEYS) {
            for (int j = 0; j < i; j++) {
                em->count[bases[j] & 0xf][slot_of(bases[j])] = 0;
                memset(em->present[bases[j] & 0xf], 0, sizeof(em->present[0]));
            }
            return -1;
        }
        int base = key & 0xf, slot = slot_of(key);
        em->count[base][slot]++;
        em->present[base][slot >> 6] |= (uint64_t)1 << (slot & 63);
        used |= (uint32_t)1 << base;
    }
    *seen = used;
    return 0;
}

/* Per base: the sum of its error terms and its count. */
typedef struct {
    double bsum[N_BASE];
    int c[N_BASE];
} tally_t;

/*
 * One base's terms, its slots from the largest down (htslib's loop from the
 * end of the sorted array, seen through one base), summed in that order.
 * Each term is weighted by how many of its base and strand came before (fk),
 * and reads the error term for how many of its base came before (beta).
 * Most slots hold one read or two: the second term is always computed, and
 * multiplied by 0 when the slot has one read (adding a zero leaves a sum
 * that starts at +0.0 as it is), so that no branch depends on the count;
 * both arrays have room past their ends for it. Clears the base's scratch.
 */
static void tally_base(mp_errmod_t *em, int n, int base, tally_t *t)
{
    static const double second_if[2] = {0.0, 1.0}; /* a table, not a branch, on the count */
    const double *depth = beta_at(em, n, 0);
    uint8_t *count = em->count[base];
    uint64_t before = 0; /* how many of the base came before, per strand: 32 bits each */
    int c = 0;
    double bsum = 0.0;
    for (int wi = 1; wi >= 0; wi--) {
        uint64_t word = em->present[base][wi];
        em->present[base][wi] = 0;
        while (word) {
            int bit = 63 - __builtin_clzll(word);
            word &= ~((uint64_t)1 << bit);
            int slot = wi << 6 | bit, cnt = count[slot], shift = (slot & 1) * 32;
            count[slot] = 0;
            int q = slot >> 1 < MP_ERRMOD_MIN_QUAL ? MP_ERRMOD_MIN_QUAL : slot >> 1;
            const double *fk = em->fk + (uint32_t)(before >> shift);
            const double *beta = depth + (size_t)q * n + c;
            bsum += fk[0] * beta[0];
            bsum += fk[1] * beta[1] * second_if[cnt > 1];
            for (int k = 2; k < cnt; k++)
                bsum += fk[k] * beta[k];
            before += (uint64_t)cnt << shift;
            c += cnt;
        }
    }
    t->bsum[base] = bsum;
    t->c[base] = c;
}

/* Every base seen, each on its own (the sums never mix bases). */
static void tally_keys(mp_errmod_t *em, int n, uint32_t seen, tally_t *t)
{
    while (seen) {
        int base = __builtin_ctz(seen);
        seen &= seen - 1;
        tally_base(em, n, base, t);
    }
}

/*
 * The bases of the m alleles that were seen, ascending. htslib sums over all
 * m, but an unseen base's sum is +0.0, and adding +0.0 to a float sum that
 * starts at +0.0 (so is never -0.0) leaves it as it is.
 */
typedef struct {
    int base[N_BASE];
    int n;
} seen_t;

/*
 * The seen bases' error terms but for a and b (-1: none left out), in
 * ascending order into a float (htslib's accumulator: each step rounds).
 * *any: there were some.
 */
static float others(const tally_t *t, const seen_t *s, int a, int b, int *any)
{
    float sum = 0.0;
    int cnt = 0;
    for (int i = 0; i < s->n; ++i) {
        int base = s->base[i];
        if (base == a || base == b)
            continue;
        sum += t->bsum[base];
        cnt++;
    }
    *any = cnt;
    return sum;
}

/*
 * q[j*m+j] (homozygous j): the error terms of all other bases, when there
 * are any. q[j*m+k] (heterozygous): the binomial split of j and k's bases
 * plus the others' error terms. Negative values become 0.
 *
 * A column sees one base or two, so most of those sums are shared: leaving
 * out an unseen base leaves out nothing (the sum over all seen bases), and
 * leaving out a seen and an unseen base is the seen base's homozygous sum.
 * Only a pair of seen bases needs a sum of its own.
 */
static void likelihoods(const mp_errmod_t *em, const tally_t *t, int m, float *q)
{
    seen_t s = {.n = 0};
    for (int i = 0; i < m; ++i)
        if (t->c[i])
            s.base[s.n++] = i;
    int any;
    float all = others(t, &s, -1, -1, &any), hom[N_BASE];
    for (int j = 0; j < m; ++j)
        hom[j] = t->c[j] ? others(t, &s, j, j, &any) : all;
    for (int j = 0; j < m; ++j) {
        int seen_j = t->c[j] != 0;
        if (s.n - seen_j > 0)
            q[j * m + j] = hom[j];
        for (int k = j + 1; k < m; ++k) {
            int seen_k = t->c[k] != 0;
            float rest = seen_j && seen_k ? others(t, &s, j, k, &any)
                         : seen_j         ? hom[j]
                         : seen_k         ? hom[k]
                                          : all;
            double het = -4.343 * em->lhet[(t->c[j] + t->c[k]) << 8 | t->c[k]];
            q[j * m + k] = q[k * m + j] = s.n - seen_j - seen_k > 0 ? het + rest : het;
        }
        for (int k = 0; k < m; ++k)
            if (q[j * m + k] < 0.0)
                q[j * m + k] = 0.0;
    }
}

int mp_errmod_cal(mp_errmod_t *em, int n, int m, const uint16_t *bases, float *q)
{
    memset(q, 0, (size_t)m * m * sizeof(float));
    if (n < 0 || n > MP_ERRMOD_MAX_DEPTH || m > N_BASE)
        return -1;
    if (n == 0)
        return 0;
    uint32_t seen;
    if (count_keys(em, n, bases, &seen) < 0)
        return -1;
    if (!em->beta_ready[n])
        fill_depth(em, n);
    tally_t t;
    memset(&t, 0, sizeof(t));
    tally_keys(em, n, seen, &t);
    likelihoods(em, &t, m, q);
    return 0;
}
