/*
 * test_engine.c -- the engine with a test kernel that prints one line per
 * position: output complete and in order for any thread count and shard size,
 * header first, BGZF EOF appended for compressed kinds, a failed run leaves no
 * output (an existing file untouched, no temporary file), --report written.
 */
#include <dirent.h>
#include <htslib/bgzf.h>
#include <sys/stat.h>

#include "../framework/driver.h"
#include "ss_testutil.h"

static char bam_path[320], out_path[320], dir_path[256];

typedef struct {
    int fail_idx;    /* process() fails on this shard, or -1 */
    int census;      /* count each shard's positions before the run, print `before` */
    int census_fail; /* census() fails on this shard, or -1 */
} tk_opts_t;

typedef struct {
    const ss_job_t *job;
    ss_reader_t *rd;
    const tk_opts_t *o;
} tk_worker_t;

static int tk_prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    (void)job, (void)run;
    const tk_opts_t *o = kopts;
    out->text_header = "#header\n";
    out->census = o->census;
    return 0;
}

/* The census: a shard's count is its length, so `before` is its genome offset in plan order. */
static int tk_census(void *ws, const ss_shard_t *sh, uint64_t *count)
{
    tk_worker_t *w = ws;
    if (sh->idx == w->o->census_fail) {
        ss_error("test kernel: census of shard %d fails on purpose", sh->idx);
        return -1;
    }
    *count = (uint64_t)(sh->end - sh->beg);
    return 0;
}

static int tk_worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                          ss_reader_t *rd, int id)
{
    (void)id, (void)run;
    tk_worker_t *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->job = job, w->rd = rd, w->o = kopts;
    *ws = w;
    return 0;
}

static int tk_process(void *ws, const ss_shard_t *sh, ss_out_t *so, ss_shard_stats_t *st)
{
    tk_worker_t *w = ws;
    kstring_t *out = ss_out_text(so);
    if (sh->idx == w->o->fail_idx) {
        ss_error("test kernel: shard %d fails on purpose", sh->idx);
        return -1;
    }
    /* count the reads starting in the shard through the reader, as a kernel would */
    hts_itr_t *it = sam_itr_queryi(ss_reader_index(w->rd, 0), sh->tid, sh->beg, sh->end);
    bam1_t *b = bam_init1();
    int r;
    while (it && b && (r = sam_itr_next(ss_reader_file(w->rd, 0), it, b)) >= 0)
        st->reads += b->core.pos >= sh->beg;
    hts_itr_destroy(it);
    bam_destroy1(b);
    const char *ctg = sam_hdr_tid2name(ss_job_header(w->job), sh->tid);
    uint64_t before = sh->before;
    if (w->o->census && before == SS_BEFORE_UNKNOWN)
        return SS_SHARD_NEEDS_BEFORE; /* every line prints it */
    if (sh->idx == w->o->census_fail)
        usleep(300000); /* so that the shards after it count it while it runs */
    st->census = (uint64_t)(sh->end - sh->beg);
    for (hts_pos_t p = sh->beg; p < sh->end; p++)
        if ((w->o->census ? ksprintf(out, "%s\t%lld\t%llu\n", ctg, (long long)p + 1,
                                     (unsigned long long)before++)
                          : ksprintf(out, "%s\t%lld\n", ctg, (long long)p + 1)) < 0)
            return -1;
    st->bases += (uint64_t)(sh->end - sh->beg);
    return 0;
}

static void tk_worker_destroy(void *ws)
{
    free(ws);
}

static ss_kernel_t test_kernel = {
    .name = "testk",
    .summary = "one line per position",
    .prepare = tk_prepare,
    .worker_init = tk_worker_init,
    .process = tk_process,
    .worker_destroy = tk_worker_destroy,
    .census = tk_census,
};

#define LEN_A 30000
#define LEN_B 7000

static int setup(void)
{
    const char *names[] = {"a", "b"};
    hts_pos_t lens[] = {LEN_A, LEN_B};
    ss_test_read_t reads[600];
    for (int i = 0; i < 600; i++)
        reads[i] = (ss_test_read_t){i % 3 == 0, (i * 97) % 6500, 100};
    snprintf(dir_path, sizeof(dir_path), "%s", ss_test_path("engine", ".d"));
    if (mkdir(dir_path, 0700) != 0)
        return -1;
    snprintf(bam_path, sizeof(bam_path), "%s/in.bam", dir_path);
    snprintf(out_path, sizeof(out_path), "%s/out.txt", dir_path);
    return ss_test_write_bam(bam_path, 2, names, lens, reads, 600, 0);
}

static int teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir_path);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    kstring_t s = KS_INITIALIZE;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        kputsn(buf, n, &s);
    fclose(fp);
    *len = s.l;
    return s.s ? s.s : calloc(1, 1);
}

static kstring_t expected(void)
{
    kstring_t e = KS_INITIALIZE;
    kputs("#header\n", &e);
    for (int p = 1; p <= LEN_A; p++)
        ksprintf(&e, "a\t%d\n", p);
    for (int p = 1; p <= LEN_B; p++)
        ksprintf(&e, "b\t%d\n", p);
    return e;
}

/* Files in the test directory whose name contains "tmp": leftovers of a failed run. */
static int leftovers(void)
{
    DIR *d = opendir(dir_path);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

static int run_opts(int threads, hts_pos_t shard, const tk_opts_t *ko, const char *report);

static int run(int threads, hts_pos_t shard, int fail_idx, const char *report)
{
    tk_opts_t ko = {fail_idx, 0, -1};
    return run_opts(threads, shard, &ko, report);
}

static int run_opts(int threads, hts_pos_t shard, const tk_opts_t *ko, const char *report)
{
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    ss_common_add_input(&o, bam_path);
    o.output = strdup(out_path);
    o.threads = threads;
    o.shard_size = shard;
    o.quiet = 1;
    o.report = report ? strdup(report) : NULL;
    ss_error_reset();
    ss_job_t *job = ss_job_open(&o, &test_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    ss_out_spec_t spec = {.format = SS_FMT_TEXT, .level = -1};
    int rc = tk_prepare(ko, job, NULL, &spec) < 0
                 ? SS_EXIT_FAIL
                 : ss_engine_run(&test_kernel, (void *)ko, NULL, &spec, job);
    ss_job_close(job);
    ss_common_opts_free(&o);
    return rc;
}

static void test_output_in_order(void)
{
    kstring_t e = expected();
    int threads[] = {1, 2, 5};
    hts_pos_t shards[] = {1000, 3000, 250000};
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 3; s++) {
            SS_EQ(run(threads[t], shards[s], -1, NULL), SS_EXIT_OK);
            size_t len;
            char *got = slurp(out_path, &len);
            CU_ASSERT_PTR_NOT_NULL_FATAL(got);
            SS_EQ(len, e.l);
            int same = len == e.l && memcmp(got, e.s, len) == 0;
            if (!same)
                fprintf(stderr, "\noutput differs with -@ %d --shard-size %lld\n", threads[t],
                        (long long)shards[s]);
            CU_ASSERT(same);
            free(got);
            SS_EQ(leftovers(), 0);
        }
    free(e.s);
}

/*
 * With a census every shard learns the sum of the counts of the shards before it: here
 * each position prints its 0-based offset in the whole genome, whatever the threads and
 * shard size (at 3 threads shards start while those ahead still run, and count them). A
 * failing census stops the run, with no output.
 */
static void test_census(void)
{
    kstring_t e = KS_INITIALIZE;
    kputs("#header\n", &e);
    for (int p = 1; p <= LEN_A; p++)
        ksprintf(&e, "a\t%d\t%d\n", p, p - 1);
    for (int p = 1; p <= LEN_B; p++)
        ksprintf(&e, "b\t%d\t%d\n", p, LEN_A + p - 1);
    tk_opts_t ko = {-1, 1, -1};
    int threads[] = {1, 3};
    hts_pos_t shards[] = {1000, 250000};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 2; s++) {
            SS_EQ(run_opts(threads[t], shards[s], &ko, NULL), SS_EXIT_OK);
            size_t len;
            char *got = slurp(out_path, &len);
            CU_ASSERT_PTR_NOT_NULL_FATAL(got);
            SS_EQ(len, e.l);
            CU_ASSERT(len == e.l && memcmp(got, e.s, len) == 0);
            free(got);
        }
    free(e.s);
    unlink(out_path);
    ko.census_fail = 5;
    SS_EQ(run_opts(2, 1000, &ko, NULL), SS_EXIT_FAIL);
    SS_CONTAINS(ss_error_message(), "census of shard 5 fails on purpose");
    struct stat st;
    SS_EQ(stat(out_path, &st), -1);
    SS_EQ(leftovers(), 0);
}

static void test_failure_leaves_no_output(void)
{
    unlink(out_path);
    SS_EQ(run(2, 1000, 3, NULL), SS_EXIT_FAIL);
    SS_CONTAINS(ss_error_message(), "shard 3 fails on purpose");
    struct stat st;
    SS_EQ(stat(out_path, &st), -1);
    SS_EQ(leftovers(), 0);

    /* an existing file is left untouched */
    FILE *fp = fopen(out_path, "w");
    fputs("precious\n", fp);
    fclose(fp);
    SS_EQ(run(3, 1000, 0, NULL), SS_EXIT_FAIL);
    size_t len;
    char *got = slurp(out_path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, "precious\n");
    free(got);
    SS_EQ(leftovers(), 0);

    /* the SEQSHARD_FAIL_SHARD hook */
    setenv("SEQSHARD_FAIL_SHARD", "5", 1);
    SS_EQ(run(2, 1000, -1, NULL), SS_EXIT_FAIL);
    unsetenv("SEQSHARD_FAIL_SHARD");
    SS_CONTAINS(ss_error_message(), "SEQSHARD_FAIL_SHARD");
    got = slurp(out_path, &len);
    CU_ASSERT_STRING_EQUAL(got, "precious\n");
    free(got);
    ss_error_reset();
}

/* .gz text: BGZF blocks, the header first, the EOF block last (out_run.c). */
static void test_bgzf_eof(void)
{
    char plain[sizeof(out_path) - 4];
    snprintf(plain, sizeof(plain), "%.315s", out_path);
    snprintf(out_path, sizeof(out_path), "%s.gz", plain);
    SS_EQ(run(2, 5000, -1, NULL), SS_EXIT_OK);
    size_t len;
    char *got = slurp(out_path, &len);
    CU_ASSERT_FATAL(got && len > sizeof(ss_bgzf_eof));
    CU_ASSERT(memcmp(got + len - sizeof(ss_bgzf_eof), ss_bgzf_eof, sizeof(ss_bgzf_eof)) == 0);
    free(got);
    BGZF *fp = bgzf_open(out_path, "r");
    char head[8];
    CU_ASSERT_FATAL(fp != NULL);
    CU_ASSERT(bgzf_read(fp, head, 8) == 8 && strncmp(head, "#header\n", 8) == 0);
    bgzf_close(fp);
    snprintf(out_path, sizeof(out_path), "%s", plain);
}

static void test_report(void)
{
    char report[300];
    snprintf(report, sizeof(report), "%s/r.json", dir_path);
    SS_EQ(run(2, 2000, -1, report), SS_EXIT_OK);
    size_t len;
    char *j = slurp(report, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    SS_CONTAINS(j, "\"tool\": \"seqshard\"");
    SS_CONTAINS(j, "\"threads\": 2");
    SS_CONTAINS(j, "\"kernel\": \"testk\"");
    SS_CONTAINS(j, "\"load_imbalance\"");
    /* two workers: at most one buffer each plus one, and at least one was used */
    const char *ob = strstr(j, "\"output_buffers\": ");
    int cap = 0, peak = 0;
    CU_ASSERT_FATAL(
        ob && sscanf(ob, "\"output_buffers\": {\"cap\": %d, \"peak\": %d}", &cap, &peak) == 2);
    CU_ASSERT(cap >= 2 && cap <= 3);
    CU_ASSERT(peak >= 1 && peak <= cap + 1); /* shard `next` may take one past the cap */
    SS_CONTAINS(j, "\"peak_rss_bytes\"");
    /* totals: every position once, every read once (in the shard where it starts) */
    SS_CONTAINS(j, "\"totals\": {\"shards\": ");
    SS_CONTAINS(j, "\"reads\": 600, \"bases\": 37000, ");
    free(j);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("engine", setup, teardown);
    if (!s || !CU_add_test(s, "output_in_order", test_output_in_order) ||
        !CU_add_test(s, "failure_leaves_no_output", test_failure_leaves_no_output) ||
        !CU_add_test(s, "bgzf_eof", test_bgzf_eof) || !CU_add_test(s, "report", test_report) ||
        !CU_add_test(s, "census", test_census))
        return 1;
    return ss_test_run();
}
