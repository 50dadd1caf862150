/*
 * test_reader.c -- per-worker readers and the descriptor budget: readers
 * within the budget hold their files, the others open per shard, and no
 * descriptor leaks over 1000 begin/end cycles. Also the reference cache and
 * index estimates.
 */
#include <dirent.h>
#include <htslib/faidx.h>
#include <sys/resource.h>

#include "../framework/driver.h"
#include "../framework/ss_framework.h"
#include "../io/ss_budget.h"
#include "../io/ss_check.h"
#include "../io/ss_estimate.h"
#include "../io/ss_reader.h"
#include "../io/ss_ref.h"
#include "ss_testutil.h"

/* The kernel the jobs are opened for: one that reads only files. */
static const ss_kernel_t test_kernel = {.name = "test"};

static char bam1[256], bam2[256], big[256], fasta[256];

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the DIR's own descriptor */
}

static int setup(void)
{
    const char *names[] = {"c1", "c2", "c3"};
    hts_pos_t lens[] = {100000, 50000, 30000};
    ss_test_read_t reads[400];
    for (int i = 0; i < 400; i++)
        reads[i] = (ss_test_read_t){.tid = i % 4 == 0, .pos = (i * 211) % 49000, .len = 100};
    ss_test_read_t reads2[400];
    memcpy(reads2, reads, sizeof(reads)); /* the writer sorts in place */
    snprintf(bam1, sizeof(bam1), "%s", ss_test_path("rd", ".bam"));
    snprintf(bam2, sizeof(bam2), "%s", ss_test_path("rd", ".bam"));
    if (ss_test_write_bam(bam1, 3, names, lens, reads, 400, 0) < 0 ||
        ss_test_write_bam(bam2, 3, names, lens, reads2, 400, 1) < 0)
        return -1;
    /* 24,000 reads: several of the reader's batches of records */
    enum { N_BIG = 24000 };
    ss_test_read_t *many = malloc(N_BIG * sizeof(*many));
    if (!many)
        return -1;
    for (int i = 0; i < N_BIG; i++)
        many[i] = (ss_test_read_t){.tid = i % 5 == 0, .pos = (i * 7919) % 399000, .len = 150};
    snprintf(big, sizeof(big), "%s", ss_test_path("rd", ".bam"));
    hts_pos_t big_lens[] = {400000, 50000, 30000};
    int bad = ss_test_write_bam(big, 3, names, big_lens, many, N_BIG, 0);
    free(many);
    if (bad < 0)
        return -1;
    snprintf(fasta, sizeof(fasta), "%s", ss_test_path("rd", ".fa"));
    FILE *fp = fopen(fasta, "w");
    if (!fp)
        return -1;
    fprintf(fp, ">c1 desc\nACGTacgtNN\nAC\n>c2\nGGGG\n");
    fclose(fp);
    return fai_build(fasta);
}

static int teardown(void)
{
    char p[300];
    const char *files[] = {bam1, bam2, big, fasta};
    const char *ext[] = {"", ".bai", ".csi", ".fai"};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            snprintf(p, sizeof(p), "%s%s", files[i], ext[j]);
            unlink(p);
        }
    return 0;
}

static void test_budget_and_leaks(void)
{
    char *paths[] = {bam1, bam2};
    ss_io_inputs_t in = {.paths = paths, .n = 2, .reference = NULL};
    setenv("SEQSHARD_MAX_OPEN_FILES", "3", 1);
    SS_EQ(ss_io_budget_init(2, 1, 0), 3);
    int base = count_fds();
    CU_ASSERT_FATAL(base > 0);

    ss_reader_t *a = ss_reader_init(&in), *b = ss_reader_init(&in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    SS_EQ(count_fds(), base); /* nothing opens before the first begin */
    SS_EQ_FATAL(ss_reader_begin(a), 0);
    SS_EQ(ss_reader_holds(a), 2);
    SS_EQ(ss_io_budget_used(), 2);
    ss_reader_end(a);
    SS_EQ(count_fds(), base + 2); /* held across shards */

    SS_EQ_FATAL(ss_reader_begin(b), 0);
    SS_EQ(ss_reader_holds(b), 1);   /* the budget had room for one more */
    SS_EQ(ss_reader_streams(b), 0); /* the other, alone, opens per shard */
    SS_EQ(ss_io_budget_used(), 3);
    CU_ASSERT_PTR_NOT_NULL(ss_reader_file(b, 1));
    CU_ASSERT_PTR_NOT_NULL(ss_reader_header(b, 1));
    CU_ASSERT_PTR_NOT_NULL(ss_reader_index(b, 1));
    ss_reader_end(b);
    SS_EQ(count_fds(), base + 3);
    CU_ASSERT_PTR_NULL(ss_reader_file(b, 0));

    bam1_t *rec = bam_init1();
    for (int i = 0; i < 1000; i++) {
        ss_reader_t *r = i % 2 ? a : b;
        if (ss_reader_begin(r) != 0) {
            SS_EQ_FATAL(ss_reader_begin(r), 0);
        }
        /* read a record of each input, as a kernel does */
        for (int k = 0; k < 2; k++) {
            SS_EQ_FATAL(ss_reader_query(r, k, 0, 0, 5000), 0);
            CU_ASSERT(ss_reader_next(r, k, rec) >= 0);
        }
        ss_reader_end(r);
    }
    bam_destroy1(rec);
    SS_EQ(count_fds(), base + 3);
    SS_EQ(ss_reader_opens(a), 1);
    SS_EQ(ss_reader_opens(b), 501);
    SS_EQ(ss_reader_n(a), 2);
    CU_ASSERT_STRING_EQUAL(ss_reader_path(a, 1), bam2);
    ss_reader_destroy(a);
    ss_reader_destroy(b);
    ss_reader_destroy(NULL);
    SS_EQ(count_fds(), base);
    SS_EQ(ss_io_budget_used(), 0);
    unsetenv("SEQSHARD_MAX_OPEN_FILES");
}

/* Read every record of input k's [beg, end) on tid through r; a checksum of what came out. */
static uint64_t read_all(ss_reader_t *r, int k, int tid, hts_pos_t beg, hts_pos_t end, int *n)
{
    bam1_t *b = bam_init1();
    uint64_t sum = 0;
    *n = 0;
    CU_ASSERT_FATAL(ss_reader_query(r, k, tid, beg, end) == 0);
    while (ss_reader_next(r, k, b) >= 0) {
        sum = sum * 1000003u + (uint64_t)b->core.pos * 31u + b->core.l_qseq;
        sum += bam_get_qname(b)[0];
        (*n)++;
    }
    bam_destroy1(b);
    return sum;
}

/*
 * With no budget at all, two inputs are streamed: opened per batch of
 * records, never both at once, and the records are those a held reader
 * returns, in the same order, across many batches (the big file).
 */
static void test_streamed(void)
{
    char *paths[] = {big, bam1};
    ss_io_inputs_t in = {.paths = paths, .n = 2, .reference = NULL};
    setenv("SEQSHARD_MAX_OPEN_FILES", "0", 1);
    SS_EQ(ss_io_budget_init(2, 1, 0), 0);
    int base = count_fds();
    ss_reader_t *s = ss_reader_init(&in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    SS_EQ_FATAL(ss_reader_begin(s), 0);
    SS_EQ(ss_reader_holds(s), 0);
    SS_EQ(ss_reader_streams(s), 2);
    SS_EQ(count_fds(), base); /* streamed inputs are open only while a batch fills */
    CU_ASSERT_PTR_NULL(ss_reader_file(s, 0));
    CU_ASSERT_PTR_NOT_NULL(ss_reader_header(s, 0));

    unsetenv("SEQSHARD_MAX_OPEN_FILES");
    ss_io_budget_init(2, 1, 0);
    ss_reader_t *h = ss_reader_init(&in);
    SS_EQ_FATAL(ss_reader_begin(h), 0);
    SS_EQ(ss_reader_holds(h), 2);
    const hts_pos_t ranges[][3] = {
        {0, 0, 400000}, {0, 123456, 170000}, {1, 0, 50000}, {0, 399990, 400000}, {2, 0, 30000}};
    for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
        for (int i = 0; i < 2; i++) {
            int n_s, n_h;
            uint64_t a = read_all(s, i, (int)ranges[k][0], ranges[k][1], ranges[k][2], &n_s);
            uint64_t b = read_all(h, i, (int)ranges[k][0], ranges[k][1], ranges[k][2], &n_h);
            SS_EQ(n_s, n_h);
            CU_ASSERT(a == b);
        }
    }
    int n;
    read_all(s, 0, 0, 0, 400000, &n);
    CU_ASSERT(n > 15000);         /* many batches: the check above crossed batch ends */
    SS_EQ(count_fds(), base + 2); /* h holds its two; s holds none */
    ss_reader_end(s);
    ss_reader_end(h);
    ss_reader_destroy(s);
    ss_reader_destroy(h);
    SS_EQ(count_fds(), base);
}

/* Set the soft descriptor limit; the need counts only descriptors below it. */
static int need_under(struct rlimit *rl, rlim_t limit)
{
    rl->rlim_cur = limit;
    CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, rl) == 0);
    return ss_io_budget_need(2, 0);
}

/* A limit too low for the workers' own descriptors is refused, saying what would do. */
static void test_limit_too_low(void)
{
    struct rlimit old, rl;
    CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &old) == 0);
    rl = old;
    int need = need_under(&rl, 8); /* below the two workers' own 2 x 5 whatever is open */
    CU_ASSERT_FATAL(need > 8);
    ss_error_reset();
    SS_EQ(ss_io_budget_init(30, 2, 0), -1);
    char want[200];
    snprintf(want, sizeof(want),
             "30 inputs need at least %d open files per worker (-@ 2: %d in "
             "all) but the limit is 8 (ulimit -n); raise it with ulimit -n %d or use fewer "
             "threads",
             SS_IO_FDS_PER_WORKER, need, need);
    SS_CONTAINS(ss_error_message(), want);
    /* just enough: nothing left to hold, every input opened per use */
    int at = need_under(&rl, 64);
    int need_at = need_under(&rl, (rlim_t)at);
    SS_EQ(ss_io_budget_init(30, 2, 0), at - need_at);
    CU_ASSERT(at - need_at >= 0);
    CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &old) == 0);
    ss_error_reset();
}

static void test_reader_missing_file(void)
{
    char *paths[] = {bam1, "/nonexistent/gone.bam"};
    ss_io_inputs_t in = {.paths = paths, .n = 2, .reference = NULL};
    ss_io_budget_init(2, 1, 0);
    int base = count_fds();
    ss_reader_t *r = ss_reader_init(&in);
    ss_error_reset();
    SS_EQ(ss_reader_begin(r), -1);
    SS_CONTAINS(ss_error_message(), "/nonexistent/gone.bam: cannot open");
    SS_EQ(count_fds(), base); /* the first file was closed again */
    ss_reader_destroy(r);
    ss_error_reset();
}

static void test_ref_cache(void)
{
    ss_ref_t *none = ss_ref_init(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(none);
    hts_pos_t len = 7;
    CU_ASSERT_PTR_NULL(ss_ref_get(none, 0, "c1", &len));
    SS_EQ(len, 0);
    ss_ref_destroy(none);

    ss_ref_t *r = ss_ref_init(fasta);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const char *s = ss_ref_get(r, 0, "c1", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    SS_EQ(len, 12);
    SS_EQ(ss_ref_cover(r, 0, 0, 12), 0);            /* positions are readable once covered */
    CU_ASSERT_NSTRING_EQUAL(s, "ACGTacgtNNAC", 12); /* case kept */
    const char *s2 = ss_ref_get(r, 1, "c2", &len);
    SS_EQ(len, 4);
    CU_ASSERT_PTR_EQUAL(ss_ref_get(r, 0, "c1", &len), s); /* two contigs kept */
    CU_ASSERT_PTR_EQUAL(ss_ref_get(r, 1, "c2", &len), s2);
    CU_ASSERT_PTR_NULL(ss_ref_get(r, 7, "nope", &len)); /* missing contig: no reference */
    SS_EQ(len, 0);
    ss_ref_destroy(r);
    ss_ref_destroy(NULL);
}

/*
 * bai: a BAI's linear index resolves 16 kb windows. A CSI this small does
 * not: htslib folds bins spanning less than one BGZF block into their parent,
 * so only the sums are checked there.
 */
/* One range's estimate: a single cell. */
static int64_t estimate(ss_io_est_t *e, int tid, hts_pos_t beg, hts_pos_t end)
{
    hts_pos_t pos[2] = {beg, end};
    int64_t w;
    return ss_io_est_cells(e, tid, pos, 1, &w) < 0 ? -1 : w;
}

static void check_estimate(const char *path, int bai)
{
    samFile *fp = sam_open(path, "r");
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    hts_idx_t *idx = h ? sam_index_load(fp, path) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
    ss_io_est_t *e = ss_io_est_init(idx, fp, h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    int64_t all = estimate(e, 0, 0, 100000);
    int64_t c2 = estimate(e, 1, 0, 50000);
    CU_ASSERT(all > 0);
    CU_ASSERT(c2 > 0);
    SS_LE(c2, all);                     /* c2 holds a third as many reads as c1 */
    SS_EQ(estimate(e, 2, 0, 30000), 0); /* no reads at all */
    /* cells add up to the whole contig; the empty tail gets nothing */
    hts_pos_t pos[8];
    int64_t w[7], sum = 0;
    for (int i = 0; i < 7; i++)
        pos[i] = (hts_pos_t)i * 16384;
    pos[7] = 100000;
    SS_EQ_FATAL(ss_io_est_cells(e, 0, pos, 7, w), 0);
    for (int i = 0; i < 7; i++) {
        CU_ASSERT(w[i] >= 0);
        sum += w[i];
    }
    SS_LE(sum, all + 7); /* rounding of partial blocks: at most 1 byte per cell */
    SS_LE(all - 7, sum);
    SS_EQ(w[3] + w[4] + w[5] + w[6], 0); /* reads end before 49152: nothing past */
    if (bai) {
        CU_ASSERT(w[0] > 0);
        CU_ASSERT(w[1] > 0);
        CU_ASSERT(w[2] > 0); /* the last cell with reads keeps them, though a BAI has no
                              * linear index past it */
    }
    SS_EQ(estimate(e, 5, 0, 10), -1);
    CU_ASSERT_PTR_NULL(ss_io_est_init(NULL, fp, h));
    SS_EQ(estimate(e, 0, 10, 10), 0);
    ss_io_est_destroy(e);
    hts_idx_destroy(idx);
    sam_hdr_destroy(h);
    sam_close(fp);
}

/* A cell's profile: bins hold bytes exactly where the setup put read starts. */
static void test_profile(void)
{
    samFile *fp = sam_open(bam1, "r");
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    hts_idx_t *idx = h ? sam_index_load(fp, bam1) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
    ss_io_est_t *e = ss_io_est_init(idx, fp, h);
    enum { NB = 64, BEG = 16384, END = 32768 };
    double bins[NB];
    int starts[NB] = {0};
    for (int i = 0; i < 400; i++) {
        hts_pos_t pos = (i * 211) % 49000;
        if (i % 4 != 0 && pos >= BEG && pos < END)
            starts[(pos - BEG) * NB / (END - BEG)]++;
    }
    SS_EQ_FATAL(ss_io_est_profile(e, 0, BEG, END, NB, bins), 0);
    for (int k = 0; k < NB; k++)
        SS_EQ(bins[k] > 0, starts[k] > 0);
    SS_EQ(ss_io_est_profile(e, 2, 0, 30000, NB, bins), 1);     /* c3 has no reads */
    SS_EQ(ss_io_est_profile(e, 0, 60000, 90000, NB, bins), 1); /* past c1's reads */
    ss_io_est_destroy(e);
    hts_idx_destroy(idx);
    sam_hdr_destroy(h);
    sam_close(fp);
}

static void test_estimate(void)
{
    check_estimate(bam1, 1);
    check_estimate(bam2, 0);
}

/* ---- the budget at its limit, with the job's shared headers, indexes and reference ---- */

static int fd_peak, used_peak;

/* The open hook: descriptors and held budget at the moments they peak. */
static void note_fds(void)
{
    int n = count_fds();
    if (n > fd_peak)
        fd_peak = n;
    if (ss_io_budget_used() > used_peak)
        used_peak = ss_io_budget_used();
}

/* One "shard" as the pileup reads it: a window, a few queries in it, every input at once. */
static void read_shard(ss_reader_t *r, int n, int tid, hts_pos_t beg, hts_pos_t end, bam1_t *b)
{
    SS_EQ_FATAL(ss_reader_begin(r), 0);
    ss_reader_window(r, tid, beg - 1024, end);
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < n; i++) {
            hts_pos_t qb = q == 2 ? beg - 1 : beg - 1 - 300 * (q == 1), qe = q == 2 ? end : beg;
            SS_EQ_FATAL(ss_reader_query(r, i, tid, qb, qe), 0);
            for (int k = 0; k < 5 && ss_reader_next(r, i, b) >= 0; k++)
                note_fds(); /* all inputs mid-query at once, as a pileup's are */
        }
    for (int i = 0; i < n; i++)
        while (ss_reader_next(r, i, b) >= 0)
            ;
    note_fds();
    ss_reader_end(r);
}

/*
 * At budget B (SEQSHARD_MAX_OPEN_FILES), two workers' readers over 60 inputs
 * (BAM, BAM, CRAM): the descriptors held across shards never pass B, and all
 * open at once never pass what is open before, plus B, plus each worker's
 * SS_IO_FDS_PER_WORKER less the FASTA the shared reference saves.
 */
static void test_budget_peak(void)
{
    const char *td = getenv("SS_TESTDATA");
    if (!td) {
        fprintf(stderr, "SS_TESTDATA unset: skipped ");
        return;
    }
    enum { N = 60, B = 7 };
    char path[3][512], ref[512];
    snprintf(path[0], sizeof(path[0]), "%s/s1.bam", td);
    snprintf(path[1], sizeof(path[1]), "%s/s2.bam", td);
    snprintf(path[2], sizeof(path[2]), "%s/s1.cram", td);
    snprintf(ref, sizeof(ref), "%s/ref.fa", td);
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    for (int i = 0; i < N; i++)
        SS_EQ_FATAL(ss_common_add_input(&o, path[i % 3]), 0);
    o.reference = strdup(ref);
    ss_job_t *job = ss_job_open(&o, &test_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    const ss_io_inputs_t *in = ss_job_inputs(job);
    CU_ASSERT_PTR_NOT_NULL(in->cram_refs);
    setenv("SEQSHARD_MAX_OPEN_FILES", "7", 1);
    SS_EQ(ss_io_budget_init(N, 2, 1), B);
    int base = count_fds();
    fd_peak = used_peak = 0;
    ss_io_set_open_hook(note_fds);
    ss_reader_t *r[2] = {ss_reader_init(in), ss_reader_init(in)};
    bam1_t *b = bam_init1();
    CU_ASSERT_FATAL(r[0] && r[1] && b);
    for (int shard = 0; shard < 6; shard++) /* alternating, as two workers take shards */
        read_shard(r[shard % 2], N, 0, 5000 + 3000 * shard, 7000 + 3000 * shard, b);
    SS_LE(used_peak, B);
    SS_LE(fd_peak, base + B + 2 * (SS_IO_FDS_PER_WORKER - 1));
    CU_ASSERT(fd_peak > base);                               /* the hook saw the files open */
    SS_EQ(ss_reader_holds(r[0]) + ss_reader_holds(r[1]), B); /* 7 BAMs held, the rest streamed */
    ss_io_set_open_hook(NULL);
    bam_destroy1(b);
    ss_reader_destroy(r[0]);
    ss_reader_destroy(r[1]);
    SS_EQ(ss_io_budget_used(), 0);
    SS_EQ(count_fds(), base);
    unsetenv("SEQSHARD_MAX_OPEN_FILES");
    ss_job_close(job);
    ss_common_opts_free(&o);
}

/* Records a and b are the same: core, data length and data. */
static int same_record(const bam1_t *a, const bam1_t *b)
{
    return a->core.pos == b->core.pos && a->core.flag == b->core.flag &&
           a->core.n_cigar == b->core.n_cigar && a->l_data == b->l_data &&
           memcmp(a->data, b->data, (size_t)a->l_data) == 0;
}

/* Query input i of both readers over [beg, end); the number of records, both the same, or -1. */
static int same_query(ss_reader_t *win, ss_reader_t *file, int i, hts_pos_t beg, hts_pos_t end,
                      bam1_t *a, bam1_t *b)
{
    if (ss_reader_query(win, i, 0, beg, end) < 0 || ss_reader_query(file, i, 0, beg, end) < 0)
        return -1;
    int n = 0, ra, rb;
    while ((ra = ss_reader_next(win, i, a)) >= 0 && (rb = ss_reader_next(file, i, b)) >= 0) {
        if (!same_record(a, b))
            return -1;
        n++;
    }
    if (ra >= 0 || ss_reader_next(file, i, b) != -1)
        return -1; /* one ended before the other */
    return ra == -1 ? n : -1;
}

/*
 * CRAM windows: a reader answering queries from them returns the records
 * that one querying the files returns, for six CRAMs (four held, two
 * streamed) over windows of ~30 blocks each, shard after shard, as the
 * blocks go back to the reader and come out again.
 */
static void test_cram_window(void)
{
    const char *td = getenv("SS_TESTDATA");
    if (!td) {
        fprintf(stderr, "SS_TESTDATA unset: skipped ");
        return;
    }
    enum { N = 6 };
    char path[512], ref[512];
    snprintf(path, sizeof(path), "%s/s1.cram", td);
    snprintf(ref, sizeof(ref), "%s/ref.fa", td);
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    for (int i = 0; i < N; i++)
        SS_EQ_FATAL(ss_common_add_input(&o, path), 0);
    o.reference = strdup(ref);
    ss_job_t *job = ss_job_open(&o, &test_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    CU_ASSERT_FATAL(ss_io_budget_init(N, 2, 1) > N);
    const ss_io_inputs_t *in = ss_job_inputs(job);
    ss_reader_t *win = ss_reader_init(in), *file = ss_reader_init(in);
    bam1_t *a = bam_init1(), *b = bam_init1();
    CU_ASSERT_FATAL(win && file && a && b);
    for (int shard = 0; shard < 3; shard++) {
        hts_pos_t beg = 5000 + 15000 * shard, end = beg + 15000;
        SS_EQ_FATAL(ss_reader_begin(win), 0);
        SS_EQ_FATAL(ss_reader_begin(file), 0);
        ss_reader_window(win, 0, beg - 300, end + 300);
        for (int i = 0; i < N; i++) {
            CU_ASSERT(same_query(win, file, i, beg - 1, beg, a, b) > 0);
            CU_ASSERT(same_query(win, file, i, beg - 300, beg, a, b) > 0);
            SS_LE(2000, same_query(win, file, i, beg - 1, end + 300, a, b)); /* many blocks */
        }
        ss_reader_end(win);
        ss_reader_end(file);
    }
    SS_EQ(ss_reader_holds(win), 4);
    bam_destroy1(a);
    bam_destroy1(b);
    ss_reader_destroy(win);
    ss_reader_destroy(file);
    SS_EQ(ss_io_budget_used(), 0);
    ss_job_close(job);
    ss_common_opts_free(&o);
}

/* Input 0's records over [beg, end) of contig tid through htslib's own iterator: their count, or
 * -1. */
static int htslib_query(samFile *fp, hts_idx_t *idx, int tid, hts_pos_t beg, hts_pos_t end,
                        ss_reader_t *r, bam1_t *a, bam1_t *b)
{
    hts_itr_t *itr = sam_itr_queryi(idx, tid, beg, end);
    if (!itr || ss_reader_query(r, 0, tid, beg, end) < 0) {
        hts_itr_destroy(itr);
        return -1;
    }
    int n = 0, ra, rb = -1;
    while ((ra = sam_itr_next(fp, itr, a)) >= 0) {
        if ((rb = ss_reader_next(r, 0, b)) < 0 || !same_record(a, b))
            break;
        n++;
    }
    if (ra >= 0 || ss_reader_next(r, 0, b) != -1)
        n = -1; /* one ended before the other, or they differ */
    hts_itr_destroy(itr);
    return n;
}

/*
 * BAM queries that start at marks (reads finer than the BAI's 16 kb)
 * return what htslib's iterator returns: a 3000x stack, long reads that
 * span it, sparse stretches, empty queries before populated ones; queries
 * forward, backward and at random, shard after shard, in one reader.
 */
static void test_bam_marks(void)
{
    enum { N = 12000 };
    const char *names[] = {"m1", "m2"};
    hts_pos_t lens[] = {200000, 100000};
    ss_test_read_t *reads = malloc(N * sizeof(*reads));
    CU_ASSERT_PTR_NOT_NULL_FATAL(reads);
    uint32_t x = 7;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        int stack = i % 10 < 8; /* most in 20,000-24,000 */
        hts_pos_t pos = stack ? 20000 + (x >> 8) % 4000 : (x >> 8) % 105000;
        if (!stack && pos >= 15000)
            pos += 85000;                   /* the rest in 0-15,000 and 100,000-190,000 */
        int len = i % 97 == 0 ? 3000 : 100; /* some long reads, spanning marks */
        if (i % 10 == 8) /* a cluster past an empty stretch, too big for htslib to fold */
            pos = 60000 + (x >> 8) % 50;  /* its bin into the 128 kb one */
        if (i % 503 == 0) {               /* after it, reads across 64 kb: in a bin */
            pos = 65000 + (x >> 8) % 100; /* that holds 40,000 too */
            len = 3000;
        }
        reads[i] = (ss_test_read_t){.tid = i % 13 == 0, .pos = pos, .len = len};
    }
    char path[256];
    snprintf(path, sizeof(path), "%s", ss_test_path("marks", ".bam"));
    int bad = ss_test_write_bam(path, 2, names, lens, reads, N, 0);
    free(reads);
    SS_EQ_FATAL(bad, 0);

    char *paths[] = {path};
    ss_io_inputs_t in = {.paths = paths, .n = 1, .reference = NULL};
    ss_reader_t *r = ss_reader_init(&in);
    samFile *fp = sam_open(path, "r");
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    hts_idx_t *idx = h ? sam_index_load(fp, path) : NULL;
    bam1_t *a = bam_init1(), *b = bam_init1();
    CU_ASSERT_FATAL(r && idx && a && b);
    hts_pos_t q[][2] = {
        {40000, 40100}, {60010, 60020}, /* an empty query, then the cluster after it */
        {23000, 23100}, {22999, 23000}, {22000, 22001}, {21000, 23500},
        {20000, 20001}, {23950, 24050}, {30000, 30010}, {50000, 50100},
        {60010, 60020}, {59990, 60200}, {19990, 21000}, {0, 100},
    };
    for (int shard = 0; shard < 3; shard++) {
        SS_EQ_FATAL(ss_reader_begin(r), 0);
        for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
            SS_LE(0, htslib_query(fp, idx, 0, q[k][0] + shard, q[k][1] + shard, r, a, b));
        for (int k = 0; k < 40; k++) { /* steps back and forth across the stack */
            x = x * 1103515245u + 12345u;
            hts_pos_t beg = 19500 + (x >> 8) % 5000;
            SS_LE(0, htslib_query(fp, idx, 0, beg, beg + 1 + (x >> 4) % 300, r, a, b));
        }
        SS_LE(0, htslib_query(fp, idx, 1, 20000, 24000, r, a, b));
        ss_reader_end(r);
    }
    bam_destroy1(a);
    bam_destroy1(b);
    hts_idx_destroy(idx);
    sam_hdr_destroy(h);
    sam_close(fp);
    ss_reader_destroy(r);
    char p[300];
    snprintf(p, sizeof(p), "%s.bai", path);
    unlink(p);
    unlink(path);
}

/* A mapped record "r" on contig 0 with 2 bases, 1M1M, and the optional fields aux. */
static int aux_check(const char *aux, size_t n)
{
    bam1_t *b = bam_init1();
    uint32_t cigar[2] = {1 << 4, 1 << 4};
    int rc = -1000;
    /* bam_set1 makes room for n bytes of optional fields: aux goes there as it is */
    if (bam_set1(b, 1, "r", 0, 0, 10, 60, 2, cigar, -1, -1, 0, 2, "AC", NULL, n) >= 0) {
        memcpy(b->data + b->l_data, aux, n);
        b->l_data += (int)n;
        ss_io_order_t o;
        ss_io_order_reset(&o);
        rc = ss_io_check_record(b, 1, &o);
    }
    bam_destroy1(b);
    return rc;
}

/* Optional fields as samtools view reads them: whole ones pass, damaged ones are refused. */
static void test_aux_check(void)
{
    SS_EQ(aux_check("", 0), 0);
    SS_EQ(aux_check("RGZs1\0", 6), 0);
    SS_EQ(aux_check("RGZs1", 5), SS_IO_BAD_AUX); /* no NUL before the end */
    SS_EQ(aux_check("XAA1NMi\1\0\0\0", 11), 0);
    SS_EQ(aux_check("NMi\1\0\0", 6), SS_IO_BAD_AUX); /* 3 of its 4 bytes */
    SS_EQ(aux_check("XB!\1", 4), SS_IO_BAD_AUX);     /* no such type */
    SS_EQ(aux_check("XBd\1\2\3\4\5\6\7\0", 11), 0);  /* 'd': 8 bytes */
    SS_EQ(aux_check("XBBS\2\0\0\0\1\0\2\0", 12), 0);
    SS_EQ(aux_check("XBBS\3\0\0\0\1\0\2\0", 12), SS_IO_BAD_AUX); /* one short */
    SS_EQ(aux_check("XBBS\377\377\377\377\1\0", 10), SS_IO_BAD_AUX);
    SS_EQ(aux_check("XBBd\1\0\0\0\1\2\3\4\5\6\7\0", 16), SS_IO_BAD_AUX);
    SS_EQ(aux_check("XBBA\1\0\0\0x", 9), 0); /* samtools prints it */
    SS_EQ(aux_check("RGZs1\0XB", 8), 0);     /* under 4 bytes left: ignored */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("reader", setup, teardown);
    if (!s || !CU_add_test(s, "budget_and_leaks", test_budget_and_leaks) ||
        !CU_add_test(s, "streamed", test_streamed) ||
        !CU_add_test(s, "limit_too_low", test_limit_too_low) ||
        !CU_add_test(s, "missing_file", test_reader_missing_file) ||
        !CU_add_test(s, "ref_cache", test_ref_cache) ||
        !CU_add_test(s, "estimate", test_estimate) || !CU_add_test(s, "profile", test_profile) ||
        !CU_add_test(s, "budget_peak", test_budget_peak) ||
        !CU_add_test(s, "cram_window", test_cram_window) ||
        !CU_add_test(s, "bam_marks", test_bam_marks) ||
        !CU_add_test(s, "aux_check", test_aux_check))
        return 1;
    return ss_test_run();
}
