/*
 * test_plan.c -- the planner on a small BAM made here: deterministic, covers
 * its scope exactly once without crossing contigs, balanced on skewed data,
 * restricted by -r and -l, and cut from an ordered region list (view's
 * "in.bam r1 r2 ...", "*" the unplaced reads) in the order given.
 */
#include "../framework/driver.h"
#include "ss_testutil.h"

#define SHARD     20000
#define DENSE_LEN 2000000
#define EMPTY_LEN 500000
#define SMALL_LEN 30000

static char bam_path[256];
static ss_test_read_t *reads;
static int n_reads;

/* "dense": 1 read / 20 bp in [0, 200k), 1 / 2 kb after; "empty": none; "small": a few. */
static int setup(void)
{
    const char *names[] = {"dense", "empty", "small"};
    hts_pos_t lens[] = {DENSE_LEN, EMPTY_LEN, SMALL_LEN};
    reads = malloc(20000 * sizeof(*reads));
    if (!reads)
        return -1;
    for (hts_pos_t p = 0; p < 200000; p += 20)
        reads[n_reads++] = (ss_test_read_t){0, p, 100};
    for (hts_pos_t p = 200000; p < DENSE_LEN - 200; p += 2000)
        reads[n_reads++] = (ss_test_read_t){0, p, 100};
    for (hts_pos_t p = 100; p < 20000; p += 1000)
        reads[n_reads++] = (ss_test_read_t){2, p, 100};
    snprintf(bam_path, sizeof(bam_path), "%s", ss_test_path("plan", ".bam"));
    return ss_test_write_bam(bam_path, 3, names, lens, reads, n_reads, 0);
}

static int teardown(void)
{
    char p[300];
    unlink(bam_path);
    snprintf(p, sizeof(p), "%s.bai", bam_path);
    unlink(p);
    free(reads);
    return 0;
}

/* The kernels the jobs are opened for: what each reads (ss_kernel_t.unplaced, past_end). */
static const ss_kernel_t plain_kernel = {.name = "test"};
static const ss_kernel_t unplaced_kernel = {.name = "test", .unplaced = 1};
static const ss_kernel_t past_end_kernel = {.name = "test", .past_end = 1};

/*
 * Options over the test BAM: regions in order, a BED file; the kernel to open
 * the job for, with or without the unplaced reads.
 */
static const ss_kernel_t *opts_for(ss_common_opts_t *o, const char *const *regions, int n_regions,
                                   const char *bed, int unplaced)
{
    ss_common_opts_init(o);
    ss_common_add_input(o, bam_path);
    o->shard_size = SHARD;
    for (int i = 0; i < n_regions; i++)
        SS_EQ_FATAL(ss_common_add_region(o, regions[i]), 0);
    o->bed = bed ? strdup(bed) : NULL;
    return unplaced ? &unplaced_kernel : &plain_kernel;
}

/* Plan a region list; returns the shard count (aborts the test on failure). */
static int plan_list(const char *const *regions, int n_regions, const char *bed, int unplaced,
                     ss_shard_t **shards)
{
    ss_common_opts_t o;
    ss_job_t *job = ss_job_open(&o, opts_for(&o, regions, n_regions, bed, unplaced));
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    int n = -1;
    SS_EQ_FATAL(ss_plan_build(job, NULL, shards, &n), 0);
    ss_job_close(job);
    ss_common_opts_free(&o);
    return n;
}

/* Plan with the given options; returns the shard count (aborts the test on failure). */
static int plan(const char *region, const char *bed, int all_contigs, int threads,
                ss_shard_t **shards)
{
    ss_common_opts_t o;
    const ss_kernel_t *k = opts_for(&o, &region, region ? 1 : 0, bed, 0);
    o.threads = threads;
    o.all_contigs = all_contigs;
    ss_job_t *job = ss_job_open(&o, k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    int n = -1;
    SS_EQ_FATAL(ss_plan_build(job, NULL, shards, &n), 0);
    ss_job_close(job);
    ss_common_opts_free(&o);
    return n;
}

/*
 * Shards are numbered in order, ordered, disjoint, within one contig each,
 * at most 16 x the shard size (except the one shard of a contig without reads).
 */
static void check_order(const ss_shard_t *s, int n)
{
    for (int i = 0; i < n; i++) {
        SS_EQ(s[i].idx, i);
        CU_ASSERT(s[i].beg < s[i].end);
        if (s[i].tid != 1)
            SS_LE(s[i].end - s[i].beg, 16 * SHARD);
        if (i > 0 && s[i].tid == s[i - 1].tid)
            SS_LE(s[i - 1].end, s[i].beg);
        if (i > 0)
            SS_LE(s[i - 1].tid, s[i].tid);
    }
}

static void test_whole_genome(void)
{
    ss_shard_t *s;
    int n = plan(NULL, NULL, 0, 0, &s);
    CU_ASSERT_FATAL(n > 3);
    check_order(s, n);
    hts_pos_t lens[] = {DENSE_LEN, EMPTY_LEN, SMALL_LEN};
    int per_tid[3] = {0, 0, 0};
    hts_pos_t next[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        SS_EQ_FATAL(s[i].beg, next[s[i].tid]); /* contiguous: every position exactly once */
        next[s[i].tid] = s[i].end;
        per_tid[s[i].tid]++;
        SS_EQ(s[i].scope_beg, 0);
        SS_EQ(s[i].scope_end, HTS_POS_MAX); /* a whole contig: records past its end too */
        if (s[i].end - s[i].beg < 1000)
            SS_EQ(s[i].end - s[i].beg, lens[s[i].tid]); /* only a whole tiny span */
    }
    for (int t = 0; t < 3; t++)
        SS_EQ(next[t], lens[t]);
    SS_EQ(per_tid[1], 1); /* no reads: one shard, the kernel decides what to print */
    free(s);

    n = plan(NULL, NULL, 1, 0, &s); /* all_contigs (-aa): the empty contig is cut by bp */
    int empty = 0;
    for (int i = 0; i < n; i++)
        empty += s[i].tid == 1;
    SS_EQ(empty, EMPTY_LEN / SHARD);
    free(s);
}

static void test_deterministic(void)
{
    ss_shard_t *a, *b;
    int na = plan(NULL, NULL, 0, 1, &a), nb = plan(NULL, NULL, 0, 7, &b);
    SS_EQ_FATAL(na, nb);
    CU_ASSERT(memcmp(a, b, (size_t)na * sizeof(*a)) == 0);
    free(a);
    free(b);
}

static int reads_in(const ss_shard_t *s)
{
    int c = 0;
    for (int i = 0; i < n_reads; i++)
        c += reads[i].tid == s->tid && reads[i].pos >= s->beg && reads[i].pos < s->end;
    return c;
}

static void test_balanced(void)
{
    ss_shard_t *s;
    int n = plan(NULL, NULL, 0, 0, &s);
    /* the target: SHARD bases of average depth */
    double target = (double)n_reads * SHARD / (DENSE_LEN + EMPTY_LEN + SMALL_LEN);
    int max = 0, n_dense = 0;
    hts_pos_t dense_bp = 0, sparse_bp = 0;
    int n_sparse = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].tid != 0)
            continue;
        int r = reads_in(&s[i]);
        if (r > max)
            max = r;
        if (s[i].end <= 200000)
            dense_bp += s[i].end - s[i].beg, n_dense++;
        else if (s[i].beg >= 216384)
            sparse_bp += s[i].end - s[i].beg, n_sparse++;
    }
    SS_LE(max, 2 * target);
    CU_ASSERT_FATAL(n_dense > 0 && n_sparse > 0);
    /* dense shards are short, sparse ones long (up to 16 x shard size) */
    SS_LE(dense_bp / n_dense * 10, sparse_bp / n_sparse);
    SS_LE(n_dense, 3 * 10000 / target);
    SS_LE(10000 / target / 3, n_dense);
    free(s);
}

/*
 * A deep stretch filling the first half of one 16 kb cell, worth about four
 * shards: the index sees only the cell, so an even cut by bp would give the
 * first quarter, and about two shards' reads, to one shard. The plan cuts
 * where the reads are. (The cell must weigh more than the plan's floor for
 * reading a cell: 20,000 reads.)
 */
static void test_deep_spot(void)
{
    enum { LEN = 400000, SPOT = 8 << 14, SPOT_BP = 8192, SPOT_READS = 20000, SIZE = 20000 };
    ss_test_read_t *r = malloc((LEN / 5 + SPOT_READS) * sizeof(*r));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    int n = 0;
    for (hts_pos_t p = 0; p < LEN - 200; p += 5)
        r[n++] = (ss_test_read_t){0, p, 100};
    for (int i = 0; i < SPOT_READS; i++)
        r[n++] = (ss_test_read_t){0, SPOT + (hts_pos_t)i * SPOT_BP / SPOT_READS, 100};
    char path[256];
    snprintf(path, sizeof(path), "%s", ss_test_path("spot", ".bam"));
    const char *names[] = {"spot"};
    hts_pos_t lens[] = {LEN};
    SS_EQ_FATAL(ss_test_write_bam(path, 1, names, lens, r, n, 0), 0);
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    ss_common_add_input(&o, path);
    o.shard_size = SIZE;
    ss_job_t *job = ss_job_open(&o, &plain_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    ss_shard_t *s = NULL;
    int ns = -1;
    SS_EQ_FATAL(ss_plan_build(job, NULL, &s, &ns), 0);
    double target = (double)n * SIZE / LEN;
    int max = 0, in_spot = 0;
    for (int i = 0; i < ns; i++) {
        if (s[i].end <= SPOT || s[i].beg >= SPOT + SPOT_BP)
            continue; /* the background's shards: as the index estimates them */
        int c = 0;
        for (int k = 0; k < n; k++)
            c += r[k].pos >= s[i].beg && r[k].pos < s[i].end;
        max = c > max ? c : max;
        in_spot += s[i].beg >= SPOT && s[i].end <= SPOT + SPOT_BP;
    }
    SS_LE(max, 1.5 * target); /* an even cut: about 2 x target */
    CU_ASSERT(in_spot >= 2);  /* the spot itself is cut */
    free(s);
    free(r);
    ss_job_close(job);
    ss_common_opts_free(&o);
    char bai[300];
    snprintf(bai, sizeof(bai), "%s.bai", path);
    unlink(path);
    unlink(bai);
}

static void test_region(void)
{
    ss_shard_t *s;
    int n = plan("dense:150,001-250000", NULL, 0, 0, &s);
    CU_ASSERT_FATAL(n > 1);
    check_order(s, n);
    SS_EQ(s[0].beg, 150000);
    SS_EQ(s[n - 1].end, 250000);
    for (int i = 0; i < n; i++) {
        SS_EQ(s[i].tid, 0);
        SS_EQ(s[i].scope_beg, 150000);
        SS_EQ(s[i].scope_end, 250000);
        if (i)
            SS_EQ(s[i].beg, s[i - 1].end);
    }
    free(s);
    /* a whole contig as the region: its scope is the contig, cut relative to its own work */
    n = plan("small", NULL, 0, 0, &s);
    CU_ASSERT_FATAL(n >= 1);
    SS_EQ(s[0].beg, 0);
    SS_EQ(s[n - 1].end, SMALL_LEN);
    for (int i = 0; i < n; i++) {
        SS_EQ(s[i].tid, 2);
        SS_EQ(s[i].scope_end, HTS_POS_MAX);
    }
    free(s);
    /* an END past the contig's end: shards stop at the contig end, the scope keeps the END */
    n = plan("small:101-40000", NULL, 0, 0, &s);
    CU_ASSERT_FATAL(n >= 1);
    SS_EQ(s[0].beg, 100);
    SS_EQ(s[n - 1].end, SMALL_LEN);
    for (int i = 0; i < n; i++)
        SS_EQ(s[i].scope_end, 40000);
    free(s);
    n = plan("dense:3000000-", NULL, 0, 0, &s); /* past the end: nothing to do */
    SS_EQ(n, 0);
    free(s);
}

/*
 * The run of shards planned for one region of a list, starting at shard i0:
 * consecutive, tiling [beg, end) of tid, each with the region [beg, scope_end)
 * as its scope (scope_end: the END given, HTS_POS_MAX for a whole contig).
 * Returns the index after the run.
 */
static int check_run_to(const ss_shard_t *s, int n, int i0, int tid, hts_pos_t beg, hts_pos_t end,
                        hts_pos_t scope_end)
{
    CU_ASSERT_FATAL(i0 < n);
    hts_pos_t next = beg;
    int i = i0;
    for (; i < n && next < end; i++) {
        SS_EQ(s[i].idx, i);
        SS_EQ_FATAL(s[i].tid, tid);
        SS_EQ_FATAL(s[i].beg, next);
        CU_ASSERT(s[i].beg < s[i].end);
        SS_EQ(s[i].scope_beg, beg);
        SS_EQ(s[i].scope_end, scope_end);
        next = s[i].end;
    }
    SS_EQ(next, end);
    return i;
}

static int check_run(const ss_shard_t *s, int n, int i0, int tid, hts_pos_t beg, hts_pos_t end)
{
    return check_run_to(s, n, i0, tid, beg, end, end);
}

static void check_unplaced(const ss_shard_t *s, int i)
{
    SS_EQ(s[i].idx, i);
    SS_EQ(s[i].tid, SS_TID_UNPLACED);
    SS_EQ(s[i].beg, 0);
    SS_EQ(s[i].end, 0);
    SS_EQ(s[i].scope_beg, 0);
    SS_EQ(s[i].scope_end, 0);
    SS_EQ(s[i].est_work, 0);
}

/* Regions are planned in the order given: out of genomic order, overlapping, repeated. */
static void test_region_list(void)
{
    const char *regs[] = {"small:1,001-5000",
                          "dense:150001-250000",
                          "small:3001-4000",
                          "dense:190001-200000",
                          "small",
                          "dense:150001-250000"};
    const hts_pos_t want[][3] = {{2, 1000, 5000},     {0, 150000, 250000}, {2, 3000, 4000},
                                 {0, 190000, 200000}, {2, 0, SMALL_LEN},   {0, 150000, 250000}};
    ss_shard_t *s, *again;
    int n = plan_list(regs, 6, NULL, 0, &s);
    int i = 0, run1 = 0, run1_len = 0;
    for (int r = 0; r < 6; r++) {
        int start = i;
        hts_pos_t scope_end = r == 4 ? HTS_POS_MAX : want[r][2]; /* "small": all of it */
        i = check_run_to(s, n, i, (int)want[r][0], want[r][1], want[r][2], scope_end);
        if (r == 1)
            run1 = start, run1_len = i - start;
        if (r == 5) { /* a repeated region is cut the same way each time */
            SS_EQ_FATAL(i - start, run1_len);
            for (int k = 0; k < run1_len; k++) {
                SS_EQ(s[start + k].beg, s[run1 + k].beg);
                SS_EQ(s[start + k].end, s[run1 + k].end);
                SS_EQ(s[start + k].est_work, s[run1 + k].est_work);
            }
        }
    }
    SS_EQ(i, n);
    CU_ASSERT(run1_len > 1); /* the dense region is cut into several shards */
    /* a pure function of the inputs and options */
    SS_EQ_FATAL(plan_list(regs, 6, NULL, 0, &again), n);
    CU_ASSERT(memcmp(s, again, (size_t)n * sizeof(*s)) == 0);
    free(s);
    free(again);
}

/* "*" is one unplaced shard where it is given; "." is the whole file; both only for view. */
static void test_region_unplaced(void)
{
    ss_shard_t *whole, *s;
    int nw = plan_list(NULL, 0, NULL, 1, &whole);
    CU_ASSERT_FATAL(nw > 1);
    check_unplaced(whole, nw - 1); /* a whole-file plan ends with the unplaced reads */
    int n = plan(NULL, NULL, 0, 0, &s);
    SS_EQ_FATAL(n, nw - 1);
    CU_ASSERT(memcmp(s, whole, (size_t)n * sizeof(*s)) == 0);
    free(s);

    const char *dot[] = {"."};
    n = plan_list(dot, 1, NULL, 1, &s);
    SS_EQ_FATAL(n, nw);
    CU_ASSERT(memcmp(s, whole, (size_t)n * sizeof(*s)) == 0);
    free(s);
    free(whole);

    const char *star[] = {"*"};
    n = plan_list(star, 1, NULL, 1, &s);
    SS_EQ_FATAL(n, 1);
    check_unplaced(s, 0);
    free(s);

    const char *mixed[] = {"small:1-100", "*", "dense:1-1000", "*"};
    n = plan_list(mixed, 4, NULL, 1, &s);
    SS_EQ_FATAL(n, 4);
    SS_EQ(check_run(s, n, 0, 2, 0, 100), 1);
    check_unplaced(s, 1);
    SS_EQ(check_run(s, n, 2, 0, 0, 1000), 3);
    check_unplaced(s, 3);
    free(s);

    /* a kernel without unplaced reads (pileup -r) keeps refusing "*" */
    ss_common_opts_t o;
    const ss_kernel_t *k = opts_for(&o, star, 1, NULL, 0);
    ss_error_reset();
    CU_ASSERT_PTR_NULL(ss_job_open(&o, k));
    SS_CONTAINS(ss_error_message(), "unknown contig '*' in region '*'");
    ss_error_reset();
    ss_common_opts_free(&o);
}

/* merge_regions (view -M): one set, in header order, overlapping and touching merged. */
static void test_region_merge(void)
{
    const char *regs[] = {"*",
                          "small:3001-4000",
                          "dense:190001-200000",
                          "small:1001-5000",
                          "dense:150001-180000",
                          "*",
                          "dense:180001-185000",
                          "small:4500-6000",
                          "dense:185002-186000"};
    const hts_pos_t want[][3] = {
        {0, 150000, 185000}, {0, 185001, 186000}, {0, 190000, 200000}, {2, 1000, 6000}};
    ss_common_opts_t o;
    const ss_kernel_t *k = opts_for(&o, regs, 9, NULL, 1);
    o.merge_regions = 1;
    ss_job_t *job = ss_job_open(&o, k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    int nr = -1;
    const ss_interval_t *r = ss_job_regions(job, &nr);
    SS_EQ_FATAL(nr, 5);
    for (int k = 0; k < 4; k++) {
        SS_EQ(r[k].tid, want[k][0]);
        SS_EQ(r[k].beg, want[k][1]);
        SS_EQ(r[k].end, want[k][2]);
    }
    SS_EQ(r[4].tid, SS_TID_UNPLACED); /* once, last */
    ss_shard_t *s;
    int n = -1;
    SS_EQ_FATAL(ss_plan_build(job, NULL, &s, &n), 0);
    int i = 0;
    for (int k = 0; k < 4; k++)
        i = check_run(s, n, i, (int)want[k][0], want[k][1], want[k][2]);
    SS_EQ_FATAL(n, i + 1);
    check_unplaced(s, i);
    free(s);
    ss_job_close(job);
    ss_common_opts_free(&o);
}

/* An empty region plans nothing; a bad one fails the job, naming it. */
static void test_region_list_errors(void)
{
    const char *regs[] = {"dense:3000000-", "small:1-100", "empty:10-20"};
    ss_shard_t *s;
    int n = plan_list(regs, 3, NULL, 0, &s);
    SS_EQ_FATAL(n, 2);
    check_run(s, n, 0, 2, 0, 100);
    check_run(s, n, 1, 1, 9, 20);
    free(s);

    const char *bad[][3] = {{"small:1-100", "bogus", "dense"},
                            {"small:1-100", "small:200-100", "dense"}};
    const char *why[] = {"unknown contig 'bogus' in region 'bogus'",
                         "malformed region 'small:200-100'"};
    for (int k = 0; k < 2; k++) {
        ss_common_opts_t o;
        const ss_kernel_t *kernel = opts_for(&o, bad[k], 3, NULL, 1);
        ss_error_reset();
        CU_ASSERT_PTR_NULL(ss_job_open(&o, kernel));
        SS_CONTAINS(ss_error_message(), why[k]);
        ss_error_reset();
        ss_common_opts_free(&o);
    }

    /* ss_job_region is the one region (pileup's -r), NULL for a list */
    for (int k = 1; k <= 2; k++) {
        ss_common_opts_t o;
        ss_job_t *job = ss_job_open(&o, opts_for(&o, regs + 1, k, NULL, 0));
        CU_ASSERT_PTR_NOT_NULL_FATAL(job);
        int nr = -1;
        const ss_interval_t *r = ss_job_regions(job, &nr);
        SS_EQ(nr, k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        SS_EQ(r[k - 1].tid, k == 1 ? 2 : 1);
        const ss_interval_t *one = ss_job_region(job);
        CU_ASSERT(k == 1 ? one == r : one == NULL);
        ss_job_close(job);
        ss_common_opts_free(&o);
    }
}

static const char *write_bed(const char *text)
{
    const char *p = ss_test_path("planbed", ".bed");
    FILE *fp = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    fclose(fp);
    return p;
}

/* Every BED position in [lo, hi) of tid lies in exactly one shard. */
static int covered(const ss_shard_t *s, int n, int tid, hts_pos_t pos)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += s[i].tid == tid && s[i].beg <= pos && pos < s[i].end;
    return c;
}

static void test_bed(void)
{
    const char *bed = write_bed("dense 1000 2000\n"
                                "dense 2500 3000\n"       /* close: bridged */
                                "dense 500000 600000\n"   /* far: a separate span */
                                "dense 1999000 2100000\n" /* clipped to the contig */
                                "small 10 20\n"
                                "small 25000 25000\n" /* empty: no positions */
                                "nope 1 100\n");      /* not in the header: ignored */
    ss_shard_t *s;
    int n = plan(NULL, bed, 0, 0, &s);
    CU_ASSERT_FATAL(n > 0);
    check_order(s, n);
    hts_pos_t probes[][3] = {{0, 1000, 2000},
                             {0, 2500, 3000},
                             {0, 500000, 600000},
                             {0, 1999000, DENSE_LEN},
                             {2, 10, 20}};
    for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++)
        for (hts_pos_t p = probes[k][1]; p < probes[k][2]; p += 7)
            SS_EQ(covered(s, n, (int)probes[k][0], p), 1);
    SS_EQ(covered(s, n, 0, 100000), 0); /* the large gap is not read */
    SS_EQ(covered(s, n, 0, 999), 0);
    SS_EQ(covered(s, n, 1, 10), 0); /* no interval on "empty" */
    SS_EQ(covered(s, n, 2, 25000), 0);
    for (int i = 0; i < n; i++) {
        SS_EQ(s[i].scope_beg, 0); /* samtools reads whole contigs with -l */
        CU_ASSERT(s[i].tid != 1);
    }
    free(s);

    /* -r and -l together: the intersection */
    n = plan("dense:1501-550000", bed, 0, 0, &s);
    CU_ASSERT_FATAL(n > 0);
    SS_EQ(s[0].beg, 1500);
    SS_EQ(s[n - 1].end, 550000);
    SS_EQ(covered(s, n, 0, 1499), 0);
    SS_EQ(covered(s, n, 0, 2999), 1);
    SS_EQ(covered(s, n, 0, 100000), 0);
    SS_EQ(covered(s, n, 0, 549999), 1);
    for (int i = 0; i < n; i++) {
        SS_EQ(s[i].scope_beg, 1500);
        SS_EQ(s[i].scope_end, 550000);
    }
    free(s);
    unlink(bed);
}

/* A region list with -l: each region intersected with the intervals, in the order given. */
static void test_region_list_bed(void)
{
    const char *bed = write_bed("dense 1000 2000\n"
                                "dense 500000 600000\n"
                                "small 10 20\n");
    const char *regs[] = {"small", "dense:1501-550000"};
    ss_shard_t *s;
    int n = plan_list(regs, 2, bed, 0, &s);
    CU_ASSERT_FATAL(n >= 3);
    SS_EQ(s[0].tid, 2);
    SS_EQ(s[0].beg, 10);
    SS_EQ(s[0].end, 20);
    SS_EQ(s[0].scope_end, HTS_POS_MAX);
    SS_EQ(s[1].beg, 1500);
    SS_EQ(s[n - 1].end, 550000);
    for (int i = 1; i < n; i++) {
        SS_EQ(s[i].tid, 0);
        SS_EQ(s[i].scope_beg, 1500);
        SS_EQ(s[i].scope_end, 550000);
    }
    SS_EQ(covered(s, n, 0, 1999), 1);
    SS_EQ(covered(s, n, 0, 100000), 0);
    SS_EQ(covered(s, n, 0, 520000), 1);
    free(s);
    unlink(bed);
}

/* Plan a region list with -l and the kernel's past_end; the shard count. */
static int plan_past(const char *const *regions, int n_regions, const char *bed, int past_end,
                     ss_shard_t **shards)
{
    ss_common_opts_t o;
    opts_for(&o, regions, n_regions, bed, 0);
    ss_job_t *job = ss_job_open(&o, past_end ? &past_end_kernel : &plain_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    int n = -1;
    SS_EQ_FATAL(ss_plan_build(job, NULL, shards, &n), 0);
    ss_job_close(job);
    ss_common_opts_free(&o);
    return n;
}

/*
 * Regions and -l intervals starting at or past a contig's end: for a kernel that
 * prints what reads running past the end cover (past_end), one shard of one base
 * at the first position asked for, running on to the scope's end; else none.
 */
static void test_past_end(void)
{
    const char *regs[] = {"small:30001-", "small:30005-30009", "small:29991-30009"};
    ss_shard_t *s;
    SS_EQ(plan_past(regs, 2, NULL, 0, &s), 0);
    free(s);
    int n = plan_past(regs, 3, NULL, 1, &s);
    SS_EQ_FATAL(n, 3);
    hts_pos_t want[][4] = {{SMALL_LEN, SMALL_LEN + 1, SMALL_LEN, HTS_POS_MAX},
                           {30004, 30005, 30004, 30009},
                           {29990, SMALL_LEN, 29990, 30009}}; /* the contig's part only */
    for (int i = 0; i < n; i++) {
        SS_EQ(s[i].tid, 2);
        SS_EQ(s[i].beg, want[i][0]);
        SS_EQ(s[i].end, want[i][1]);
        SS_EQ(s[i].scope_beg, want[i][2]);
        SS_EQ(s[i].scope_end, want[i][3]);
        SS_EQ(s[i].query_end, want[i][3]);
    }
    free(s);
    /* -l: the first interval past the end, unless a span already reaches the end */
    const char *bed = write_bed("small 10 20\n"
                                "small 30003 30008\n"
                                "small 30020 30030\n"
                                "dense 1999900 2000050\n"
                                "dense 2000060 2000070\n");
    n = plan_past(NULL, 0, bed, 1, &s);
    SS_EQ_FATAL(n, 3);
    SS_EQ(s[0].tid, 0);
    SS_EQ(s[0].end, DENSE_LEN);
    SS_EQ(s[0].query_end, HTS_POS_MAX);
    SS_EQ(s[1].tid, 2);
    SS_EQ(s[1].end, 20);
    SS_EQ(s[2].tid, 2);
    SS_EQ(s[2].beg, 30003);
    SS_EQ(s[2].end, 30004);
    SS_EQ(s[2].query_end, HTS_POS_MAX);
    free(s);
    SS_EQ(plan_past(NULL, 0, bed, 0, &s), 2);
    free(s);
    unlink(bed);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("plan", setup, teardown);
    if (!s || !CU_add_test(s, "whole_genome", test_whole_genome) ||
        !CU_add_test(s, "deterministic", test_deterministic) ||
        !CU_add_test(s, "balanced", test_balanced) ||
        !CU_add_test(s, "deep_spot", test_deep_spot) || !CU_add_test(s, "region", test_region) ||
        !CU_add_test(s, "bed", test_bed) || !CU_add_test(s, "region_list", test_region_list) ||
        !CU_add_test(s, "region_unplaced", test_region_unplaced) ||
        !CU_add_test(s, "region_merge", test_region_merge) ||
        !CU_add_test(s, "region_list_errors", test_region_list_errors) ||
        !CU_add_test(s, "region_list_bed", test_region_list_bed) ||
        !CU_add_test(s, "past_end", test_past_end))
        return 1;
    return ss_test_run();
}
