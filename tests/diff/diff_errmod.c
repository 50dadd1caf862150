/*
 * diff_errmod.c -- the SNP error model: mp_errmod_cal against htslib 1.16's
 * public errmod_cal, on generated pileups of one sample.
 *
 * Both models are built with the dependency bcftools mpileup passes
 * (1 - 0.83). Pileups run from 0 bases to past 255, where htslib shuffles
 * with hts_drand48 and keeps 255, and mp_glf.c does the same shuffle with
 * its own drand48 stream (mp_rng) before calling mp_errmod_cal: past 255
 * both are seeded alike and compared as bcftools' caller uses them. Keys
 * carry qualities 0..63 (0..3 are raised to 4), both strands, one to five
 * alleles in skewed mixes, now and then a base code above 4; m is
 * mostly 5 (what bcftools passes) and sometimes 1..4.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/hts_os.h>

#include "../../kernels/mpileup/likelihood/mp_errmod.h"
#include "../../kernels/mpileup/likelihood/mp_rng.h"
#include "base/ss_exact_fp.h"
#include "diff_routines.h"

#define DEPCORR   (1. - 0.83) /* bcftools' 1 - theta */
#define MAX_BASES 2000
#define MAX_M     5

typedef struct {
    int n, m;
    long shuffle_seed; /* for n > 255: both sides' drand48 seed */
    uint16_t bases[MAX_BASES];
} errmod_case_t;

/* htslib's shuffle draws from one process-wide drand48: one caller at a time. */
static pthread_mutex_t drand_lock = PTHREAD_MUTEX_INITIALIZER;

/* How many bases: mostly shallow, then deep, the 255 edge, and past it. */
static int pick_depth(diff_rng_t *r)
{
    switch (diff_rng_below(r, 10)) {
    case 0:
        return diff_rng_range(r, 0, 2);
    case 1:
    case 2:
    case 3:
        return diff_rng_range(r, 1, 12);
    case 4:
    case 5:
        return diff_rng_range(r, 12, 80);
    case 6:
        return diff_rng_range(r, 80, 255);
    case 7:
        return diff_rng_range(r, 250, 258);
    case 8:
        return diff_rng_range(r, 255, 600);
    default:
        return diff_rng_one_in(r, 4) ? diff_rng_range(r, 600, MAX_BASES) : 255;
    }
}

/* Quality per base: one value, typical, low, uniform, or one of a few. */
static int pick_qual(diff_rng_t *r, int mode, int fixed)
{
    switch (mode) {
    case 0:
        return fixed;
    case 1:
        return diff_rng_one_in(r, 8) ? diff_rng_range(r, 0, 63) : diff_rng_range(r, 25, 41);
    case 2:
        return diff_rng_range(r, 0, 6);
    case 3:
        return diff_rng_range(r, 0, 63);
    default:
        return (int[]){4, 20, 37, 63}[diff_rng_below(r, 4)];
    }
}

/*
 * Alleles and their shares: the first takes most (homozygous), or about half
 * with a second (heterozygous), the rest trickle in as errors.
 */
static void make_case(diff_rng_t *r, errmod_case_t *c)
{
    c->n = pick_depth(r);
    c->m = diff_rng_one_in(r, 4) ? diff_rng_range(r, 1, 4) : MAX_M;
    c->shuffle_seed = (long)(diff_rng_next(r) & 0x7fffffff);
    int n_all = diff_rng_range(r, 1, 5), wide = diff_rng_one_in(r, 20);
    int allele[5], share[5];
    for (int k = 0; k < n_all; k++)
        allele[k] = wide ? diff_rng_range(r, 0, 15) : diff_rng_range(r, 0, 4);
    share[0] = diff_rng_one_in(r, 3) ? 1000 : diff_rng_range(r, 400, 600);
    for (int k = 1; k < n_all; k++)
        share[k] = k == 1 && share[0] < 1000 ? 1000 - share[0] : diff_rng_range(r, 1, 120);
    int total = 0;
    for (int k = 0; k < n_all; k++)
        total += share[k];
    int qmode = (int)diff_rng_below(r, 5), fixed = diff_rng_range(r, 0, 63);
    int smode = (int)diff_rng_below(r, 4), sbias = diff_rng_range(r, 1, 99);
    for (int i = 0; i < c->n; i++) {
        int x = (int)diff_rng_below(r, (uint32_t)total), k = 0;
        while (x >= share[k])
            x -= share[k++];
        int strand = smode < 2    ? smode
                     : smode == 2 ? (int)diff_rng_below(r, 2)
                                  : diff_rng_range(r, 1, 100) <= sbias;
        int q = pick_qual(r, qmode, fixed);
        c->bases[i] = (uint16_t)(q << 5 | strand << 4 | allele[k]);
    }
}

/* Ours, as mp_glf.c's caller runs it: past 255, shuffle with drand48's stream and keep 255. */
static void run_ours(mp_errmod_t *em, const errmod_case_t *c, float *q)
{
    uint16_t b[MAX_BASES];
    memcpy(b, c->bases, (size_t)c->n * sizeof(*b));
    int n = c->n;
    if (n > MP_ERRMOD_MAX_DEPTH) {
        mp_rng_t rng;
        mp_rng_seed(&rng, c->shuffle_seed);
        mp_rng_shuffle_u16(&rng, (size_t)n, b);
        n = MP_ERRMOD_MAX_DEPTH;
    }
    if (mp_errmod_cal(em, n, c->m, b, q) != 0)
        memset(q, 0xff, (size_t)c->m * c->m * sizeof(*q)); /* a NaN pattern: always differs */
}

static void run_htslib(errmod_t *em, const errmod_case_t *c, float *q)
{
    uint16_t b[MAX_BASES];
    memcpy(b, c->bases, (size_t)c->n * sizeof(*b));
    pthread_mutex_lock(&drand_lock);
    hts_srand48(c->shuffle_seed);
    errmod_cal(em, c->n, c->m, b, q);
    pthread_mutex_unlock(&drand_lock);
}

/* 1 when the m * m likelihoods differ in any bit. */
static int case_differs(mp_errmod_t *ours, errmod_t *theirs, const errmod_case_t *c, float *a,
                        float *b)
{
    run_ours(ours, c, a);
    run_htslib(theirs, c, b);
    return memcmp(a, b, (size_t)c->m * c->m * sizeof(*a)) != 0;
}

/* Drops bases while the case still differs (not past 255: that changes the shuffle). */
static void shrink(mp_errmod_t *ours, errmod_t *theirs, errmod_case_t *c)
{
    float a[MAX_M * MAX_M], b[MAX_M * MAX_M];
    if (c->n > MP_ERRMOD_MAX_DEPTH)
        return;
    for (int i = c->n - 1; i >= 0; i--) {
        errmod_case_t t = *c;
        memmove(t.bases + i, t.bases + i + 1, (size_t)(t.n - i - 1) * sizeof(t.bases[0]));
        t.n--;
        if (case_differs(ours, theirs, &t, a, b))
            *c = t;
    }
}

/* The case as a unit test's inputs, and both results (with their bits). */
static void print_case(FILE *f, const errmod_case_t *c, const float *a, const float *b)
{
    fprintf(f, "  int n = %d, m = %d; long drand48_seed = %ld; /* seed used when n > 255 */\n",
            c->n, c->m, c->shuffle_seed);
    fputs("  uint16_t bases[] = {", f);
    for (int i = 0; i < c->n; i++)
        fprintf(f, "%s0x%03x", i ? (i % 12 ? ", " : ",\n      ") : "", c->bases[i]);
    fputs("};\n", f);
    for (int i = 0; i < c->m * c->m; i++) {
        uint32_t x, y;
        memcpy(&x, a + i, 4), memcpy(&y, b + i, 4);
        if (x != y)
            fprintf(f, "  q[%d]: ours %.9g (0x%08x), htslib %.9g (0x%08x)\n", i, a[i], x, b[i], y);
    }
}

void diff_errmod(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    mp_errmod_t *ours = mp_errmod_init(DEPCORR);
    errmod_t *theirs = errmod_init(DEPCORR);
    errmod_case_t *c = malloc(sizeof(*c));
    if (!ours || !theirs || !c) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    float a[MAX_M * MAX_M], b[MAX_M * MAX_M];
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "errmod", i);
        make_case(&r, c);
        t->cases++;
        if (!case_differs(ours, theirs, c, a, b))
            continue;
        shrink(ours, theirs, c);
        case_differs(ours, theirs, c, a, b);
        if (diff_report(t, "errmod", seed, i, "likelihoods differ; shrunk to n %d, m %d", c->n,
                        c->m))
            print_case(t->log, c, a, b);
    }
    free(c);
    errmod_destroy(theirs);
    mp_errmod_destroy(ours);
}
