/*
 * diff_rng.c -- the differential tester's random streams and its report line.
 */
#include <stdarg.h>

#include "base/ss_exact_fp.h"
#include "diff.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void diff_rng_init(diff_rng_t *r, uint64_t seed, const char *routine, uint64_t case_no)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the routine's name */
    for (const char *p = routine; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    r->s = mix(seed ^ mix(h) ^ mix(case_no + 0x9e3779b97f4a7c15ULL));
}

uint64_t diff_rng_next(diff_rng_t *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    return mix(r->s);
}

uint32_t diff_rng_below(diff_rng_t *r, uint32_t n)
{
    return (uint32_t)(((diff_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

int diff_rng_range(diff_rng_t *r, int lo, int hi)
{
    return lo + (int)diff_rng_below(r, (uint32_t)(hi - lo + 1));
}

int diff_rng_one_in(diff_rng_t *r, uint32_t n)
{
    return diff_rng_below(r, n) == 0;
}

double diff_rng_unit(diff_rng_t *r)
{
    return (double)(diff_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

int diff_report(diff_tally_t *t, const char *routine, uint64_t seed, uint64_t case_no,
                const char *fmt, ...)
{
    t->differed++;
    if (t->shown >= t->max_show)
        return 0;
    t->shown++;
    fprintf(t->log, "%s seed %llu case %llu: ", routine, (unsigned long long)seed,
            (unsigned long long)case_no);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(t->log, fmt, ap);
    va_end(ap);
    fputc('\n', t->log);
    return 1;
}
