/*
 * diff.h -- the differential tester (ssdiff): each routine seqshard
 * reimplements from htslib or bcftools for speed is run against the original
 * on generated inputs, random and adversarial, and every case must give the
 * same bits. The original is htslib's public function where one exists, or a
 * plain transcription of bcftools 1.16's code kept only here, in tests/diff/.
 *
 * A routine is a table entry (diff_routines.c); its run function does n cases
 * from a seed and reports, for the first few that differ, a minimal
 * reproduction: the inputs, shrunk where the routine knows how, and both
 * results. Cases are independent: case i depends only on (seed, i), so a
 * reported case repeats with --seed S --first I --cases 1.
 */
#ifndef SS_TESTS_DIFF_H
#define SS_TESTS_DIFF_H

#include <stdint.h>
#include <stdio.h>

/* A case's random stream: splitmix64 seeded from (seed, routine, case). */
typedef struct {
    uint64_t s;
} diff_rng_t;

void diff_rng_init(diff_rng_t *r, uint64_t seed, const char *routine, uint64_t case_no);
uint64_t diff_rng_next(diff_rng_t *r);
/* Uniform in [0, n); n > 0. */
uint32_t diff_rng_below(diff_rng_t *r, uint32_t n);
/* Uniform in [lo, hi]. */
int diff_rng_range(diff_rng_t *r, int lo, int hi);
/* 1 with probability 1/n. */
int diff_rng_one_in(diff_rng_t *r, uint32_t n);
/* Uniform double in [0, 1). */
double diff_rng_unit(diff_rng_t *r);

/* What a run reports back: cases run and cases that differed. */
typedef struct {
    uint64_t cases, differed;
    int shown; /* reproductions printed so far (at most max_show) */
    int max_show;
    FILE *log;
} diff_tally_t;

/*
 * Counts case_no as differing and, for the first max_show, prints a line
 * "ROUTINE seed S case I: ..." with printf-style detail. Returns 1 when the
 * caller should print more detail (the reproduction), else 0.
 */
int diff_report(diff_tally_t *t, const char *routine, uint64_t seed, uint64_t case_no,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* One routine under test. run() does cases first .. first + n - 1. */
typedef struct {
    const char *name; /* what --routine selects */
    const char *what; /* one line: ours against which original */
    double weight;    /* its share of --cases (cost-weighted: slower routines take fewer) */
    void (*run)(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t);
} diff_routine_t;

/* The table, ended by an entry with name NULL (diff_routines.c). */
extern const diff_routine_t diff_routines[];

#endif
