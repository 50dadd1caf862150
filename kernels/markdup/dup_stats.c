/*
 * dup_stats.c -- the -s report, line for line as samtools markdup 1.16.1
 * prints it, with the library size estimated as Picard does (the number of
 * molecules x for which sampling the pairs seen would leave the unique pairs
 * seen: c / x = 1 - exp(-n / x), solved by bisection).
 */
#include <math.h>
#include <stdio.h>

#include "markdup.h"

static double coverage(double x, double c, double n)
{
    return c / x - 1 + exp(-n / x);
}

/* 0 when it cannot be estimated (samtools prints 0 then). */
static long library_size(long paired, long paired_dups, long optical)
{
    unsigned long reads = (unsigned long)(paired - optical) / 2;
    unsigned long unique = (unsigned long)(paired - paired_dups) / 2;
    unsigned long dups = (unsigned long)(paired_dups - optical) / 2;
    if (!reads || !dups || !unique || reads <= dups) {
        ss_warn("markdup: cannot estimate the library size: read pairs (%lu) must outnumber "
                "duplicate pairs (%lu), both non-zero",
                reads, dups);
        return 0;
    }
    double u = (double)unique, n = (double)reads, lo = 1, hi = 100;
    if (coverage(lo * u, u, n) < 0) {
        ss_warn("markdup: cannot estimate the library size");
        return 0;
    }
    while (coverage(hi * u, u, n) > 0)
        hi *= 10;
    for (int i = 0; i < 40; i++) {
        double mid = (lo + hi) / 2, v = coverage(mid * u, u, n);
        if (v > 0)
            lo = mid;
        else if (v < 0)
            hi = mid;
        else
            break;
    }
    return (long)(unsigned long)((double)unique * (lo + hi) / 2);
}

int dup_stats_text(const dup_opts_t *o, const dup_counts_t *c, kstring_t *s)
{
    long els = library_size((long)c->pair, (long)c->duplicate, (long)c->optical);
    int r = ksprintf(s,
                     "COMMAND: %s\n"
                     "READ: %ld\n"
                     "WRITTEN: %ld\n"
                     "EXCLUDED: %ld\n"
                     "EXAMINED: %ld\n"
                     "PAIRED: %ld\n"
                     "SINGLE: %ld\n"
                     "DUPLICATE PAIR: %ld\n"
                     "DUPLICATE SINGLE: %ld\n"
                     "DUPLICATE PAIR OPTICAL: %ld\n"
                     "DUPLICATE SINGLE OPTICAL: %ld\n"
                     "DUPLICATE NON PRIMARY: %ld\n"
                     "DUPLICATE NON PRIMARY OPTICAL: %ld\n"
                     "DUPLICATE PRIMARY TOTAL: %ld\n"
                     "DUPLICATE TOTAL: %ld\n"
                     "ESTIMATED_LIBRARY_SIZE: %ld\n",
                     o->cmdline, (long)c->reading, (long)c->writing, (long)c->excluded,
                     (long)c->examined, (long)c->pair, (long)c->single, (long)c->duplicate,
                     (long)c->single_dup, (long)c->optical, (long)c->single_optical,
                     (long)c->np_duplicate, (long)c->np_opt_duplicate,
                     (long)(c->single_dup + c->duplicate),
                     (long)(c->single_dup + c->duplicate + c->np_duplicate), els);
    return r < 0 ? -1 : 0;
}
