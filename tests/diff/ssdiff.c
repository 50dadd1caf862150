/*
 * ssdiff.c -- the differential tester's command line: runs each routine of
 * diff_routines[] against its original for a share of --cases, on --threads
 * threads (cases are independent, so the result does not depend on them),
 * and exits 1 when any case differed.
 *
 *   ssdiff [--seed S] [--cases N] [--first I] [--routine NAME]... [--threads T]
 *          [--show K] [--list]
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/ss_exact_fp.h"
#include "diff.h"

#define MAX_THREADS 64

typedef struct {
    const diff_routine_t *r;
    uint64_t seed, first, n;
    diff_tally_t tally;
} slice_t;

static void *run_slice(void *arg)
{
    slice_t *s = arg;
    s->r->run(s->seed, s->first, s->n, &s->tally);
    return NULL;
}

/* Runs cases first .. first + n - 1 of r on up to threads threads; returns those that differed. */
static uint64_t run_routine(const diff_routine_t *r, uint64_t seed, uint64_t first, uint64_t n,
                            int threads, int show)
{
    slice_t sl[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    if ((uint64_t)threads > n)
        threads = n ? (int)n : 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) {
        uint64_t a = first + n * i / threads, b = first + n * (i + 1) / threads;
        sl[i] = (slice_t){r, seed, a, b - a, {0, 0, 0, show, stderr}};
        if (pthread_create(&tid[i], NULL, run_slice, &sl[i]) != 0) {
            fprintf(stderr, "ssdiff: cannot start a thread; try --threads 1\n");
            exit(2);
        }
    }
    uint64_t cases = 0, differed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        cases += sl[i].tally.cases;
        differed += sl[i].tally.differed;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("%-14s %12llu cases %6llu differ  %7.1f s  %s\n", r->name, (unsigned long long)cases,
           (unsigned long long)differed, secs, r->what);
    fflush(stdout);
    return differed;
}

static int selected(const char *name, char **want, int n_want)
{
    if (n_want == 0)
        return 1;
    for (int i = 0; i < n_want; i++)
        if (strcmp(want[i], name) == 0)
            return 1;
    return 0;
}

static uint64_t parse_count(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end); /* 1e8 and 100000000 alike */
    if (errno || end == s || *end || v < 0 || v > 1e15) {
        fprintf(stderr, "ssdiff: %s '%s' is not a count; give a number such as 1e6\n", opt, s);
        exit(2);
    }
    return (uint64_t)v;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: ssdiff [--seed S] [--cases N] [--first I] [--routine NAME]...\n"
               "              [--threads T] [--show K] [--list]\n"
               "Runs seqshard's reimplemented routines against htslib's and bcftools'\n"
               "on N generated cases in all (shared by weight), from seed S (default 1).\n"
               "A differing case prints as 'ROUTINE seed S case I: ...'; rerun it alone\n"
               "with --routine ROUTINE --seed S --first I --cases 1. Exit 1 if any differ.\n");
}

int main(int argc, char **argv)
{
    uint64_t seed = 1, cases = 1000000, first = 0;
    int threads = 1, show = 3, list = 0, n_want = 0;
    char *want[64];
    static const struct option lo[] = {
        {"seed", 1, 0, 's'},    {"cases", 1, 0, 'n'},   {"first", 1, 0, 'f'},
        {"routine", 1, 0, 'r'}, {"threads", 1, 0, 't'}, {"show", 1, 0, 'k'},
        {"list", 0, 0, 'l'},    {"help", 0, 0, 'h'},    {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "s:n:f:r:t:k:lh", lo, NULL)) >= 0) {
        switch (c) {
        case 's':
            seed = parse_count("--seed", optarg);
            break;
        case 'n':
            cases = parse_count("--cases", optarg);
            break;
        case 'f':
            first = parse_count("--first", optarg);
            break;
        case 'r':
            if (n_want < 64)
                want[n_want++] = optarg;
            break;
        case 't':
            threads = (int)parse_count("--threads", optarg);
            break;
        case 'k':
            show = (int)parse_count("--show", optarg);
            break;
        case 'l':
            list = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "ssdiff: --threads must be 1 to %d\n", MAX_THREADS);
        return 2;
    }
    double total_weight = 0;
    int n_sel = 0;
    for (const diff_routine_t *r = diff_routines; r->name; r++) {
        if (list)
            printf("%-14s %s\n", r->name, r->what);
        if (selected(r->name, want, n_want))
            total_weight += r->weight, n_sel++;
    }
    if (list)
        return 0;
    if (n_sel == 0) {
        fprintf(stderr, "ssdiff: no routine of that name; ssdiff --list names them\n");
        return 2;
    }
    printf("ssdiff: seed %llu, %llu cases\n", (unsigned long long)seed, (unsigned long long)cases);
    uint64_t differed = 0, done = 0;
    for (const diff_routine_t *r = diff_routines; r->name; r++) {
        if (!selected(r->name, want, n_want))
            continue;
        uint64_t n = (uint64_t)((double)cases * r->weight / total_weight + 0.5);
        if (n == 0)
            n = 1;
        differed += run_routine(r, seed, first, n, threads, show);
        done += n;
    }
    printf("ssdiff: %llu cases, %llu differ (seed %llu)\n", (unsigned long long)done,
           (unsigned long long)differed, (unsigned long long)seed);
    return differed ? 1 : 0;
}
