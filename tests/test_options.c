/*
 * test_options.c -- the options every kernel shares: sizes with suffixes,
 * bad values rejected with exit-2 style errors, -b input lists, and the
 * lists of the files a run reads and writes (run_files.c).
 */
#include <sys/stat.h>

#include "../framework/cli/cli.h"
#include "../framework/plan/plan.h"
#include "ss_testutil.h"

static void test_sizes(void)
{
    struct {
        const char *s;
        long long want;
    } ok[] = {
        {"1000", 1000},       {"250k", 250000}, {"250K", 250000},     {"1.5m", 1500000},
        {"2G", 2000000000LL}, {"0.25k", 250},   {"1000000", 1000000}, {"3.125k", 3125},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        hts_pos_t v = -1;
        SS_EQ(ss_parse_size(ok[i].s, &v), 0);
        SS_EQ(v, ok[i].want);
    }
    const char *bad[] = {"",
                         "k",
                         "10x",
                         "-5",
                         "1e3",
                         " 100",
                         "1.2345k",
                         "1.",
                         ".5k",
                         "12kb",
                         "99999999999999999999",
                         "5k5",
                         NULL};
    for (int i = 0; bad[i]; i++) {
        hts_pos_t v = -1;
        int r = ss_parse_size(bad[i], &v);
        if (r != -1)
            fprintf(stderr, "\n'%s' accepted as %lld\n", bad[i], (long long)v);
        SS_EQ(r, -1);
    }
    hts_pos_t v;
    SS_EQ(ss_parse_size(NULL, &v), -1);
}

static void test_common_opts(void)
{
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    SS_EQ(o.threads, 0);
    SS_EQ(o.shard_size, SS_DEFAULT_SHARD_SIZE);
    SS_EQ(ss_common_opt('@', "4", &o), 1);
    SS_EQ(o.threads, 4);
    SS_EQ(ss_common_opt('@', "0", &o), -1);
    SS_EQ(ss_common_opt('@', "-2", &o), -1);
    SS_EQ(ss_common_opt('@', "3x", &o), -1);
    SS_EQ(ss_common_opt('@', "", &o), -1);
    SS_EQ(ss_common_opt('@', "100000", &o), -1);
    SS_EQ(o.threads, 4); /* bad values leave the option alone */
    SS_EQ(ss_common_opt(SS_OPT_SHARD_SIZE, "999", &o), -1);
    SS_EQ(ss_common_opt(SS_OPT_SHARD_SIZE, "1k", &o), 1);
    SS_EQ(o.shard_size, 1000);
    SS_EQ(ss_common_opt(SS_OPT_SHARD_SIZE, "2m", &o), 1);
    SS_EQ(o.shard_size, 2000000);
    SS_EQ(ss_common_opt(SS_OPT_REPORT, "r.json", &o), 1);
    SS_EQ(ss_common_opt(SS_OPT_REPORT, "r2.json", &o), 1); /* the last one wins, no leak */
    CU_ASSERT_STRING_EQUAL(o.report, "r2.json");
    SS_EQ(ss_common_opt(SS_OPT_TMP_DIR, "/tmp", &o), 1);
    CU_ASSERT_STRING_EQUAL(o.tmp_dir, "/tmp");
    SS_EQ(ss_common_opt(SS_OPT_QUIET, NULL, &o), 1);
    SS_EQ(o.quiet, 1);
    SS_EQ(ss_common_opt('q', "5", &o), 0); /* not ours: the kernel's */
    SS_EQ(ss_common_add_input(&o, "a.bam"), 0);
    SS_EQ(o.n_inputs, 1);
    ss_common_opts_free(&o);
    SS_EQ(o.n_inputs, 0);
    CU_ASSERT_PTR_NULL(o.inputs);
    ss_common_opts_free(NULL);
}

static const char *touch(void)
{
    const char *p = ss_test_path("opt", ".bam");
    FILE *fp = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fclose(fp);
    return p;
}

static const char *write_list(const char *text)
{
    const char *p = ss_test_path("list", ".txt");
    FILE *fp = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    fclose(fp);
    return p;
}

static void test_input_list(void)
{
    char a[256], b[256], text[1024];
    snprintf(a, sizeof(a), "%s", touch());
    snprintf(b, sizeof(b), "%s", touch());
    /* blank lines, trailing spaces, CRLF are skipped like samtools; URLs are not stat'ed */
    snprintf(text, sizeof(text), "%s  \n\n   \n%s\r\nhttps://example.org/x.bam\n", a, b);
    const char *list = write_list(text);
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    SS_EQ_FATAL(ss_common_add_input_list(&o, list), 0);
    SS_EQ_FATAL(o.n_inputs, 3);
    CU_ASSERT_STRING_EQUAL(o.inputs[0], a);
    CU_ASSERT_STRING_EQUAL(o.inputs[1], b);
    CU_ASSERT_STRING_EQUAL(o.inputs[2], "https://example.org/x.bam");
    ss_common_opts_free(&o);

    /* samtools: with -b, file arguments are ignored; the last -b wins */
    ss_common_opts_init(&o);
    SS_EQ(ss_common_add_input(&o, "before.bam"), 0);
    SS_EQ_FATAL(ss_common_add_input_list(&o, list), 0);
    SS_EQ(ss_common_add_input(&o, "after.bam"), 0);
    SS_EQ(o.n_inputs, 3);
    CU_ASSERT_STRING_EQUAL(o.inputs[0], a);
    SS_EQ_FATAL(ss_common_add_input_list(&o, list), 0);
    SS_EQ(o.n_inputs, 3);
    ss_common_opts_free(&o);
    unlink(list);

    /* a missing file: the error names the list and the line */
    snprintf(text, sizeof(text), "%s\n\n/nonexistent/missing.bam\n", a);
    list = write_list(text);
    ss_common_opts_init(&o);
    ss_error_reset();
    SS_EQ(ss_common_add_input_list(&o, list), -1);
    char want[512];
    snprintf(want, sizeof(want), "%s:3: listed input '/nonexistent/missing.bam'", list);
    SS_CONTAINS(ss_error_message(), want);
    ss_common_opts_free(&o);
    unlink(list);

    /* an empty list is an error, so is a missing list */
    list = write_list("\n  \n");
    ss_common_opts_init(&o);
    ss_error_reset();
    SS_EQ(ss_common_add_input_list(&o, list), -1);
    SS_CONTAINS(ss_error_message(), "names no files");
    unlink(list);
    ss_error_reset();
    SS_EQ(ss_common_add_input_list(&o, "/nonexistent/list.txt"), -1);
    SS_CONTAINS(ss_error_message(), "/nonexistent/list.txt: cannot read the input list");
    ss_common_opts_free(&o);
    ss_error_reset();
    unlink(a);
    unlink(b);
}

static void test_usage_text(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    ss_opts_help(ss_opts_run, fp);
    fclose(fp);
    SS_CONTAINS(buf, "--shard-size");
    SS_CONTAINS(buf, "--report");
    SS_CONTAINS(buf, "--quiet");
    SS_CONTAINS(buf, "-@");
    free(buf);
}

/* Is there an entry (path, role, key) in l? */
static int listed(const ss_run_files_t *l, const char *path, const char *role, const char *key)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->f[i].path, path) && !strcmp(l->f[i].role, role) && !strcmp(l->f[i].key, key))
            return 1;
    fprintf(stderr, "\nnot listed: %s (%s, %s)\n", path, role, key);
    return 0;
}

/* The files a run reads and writes: the framework's own, then each kernel's registered one. */
static void test_run_files(void)
{
    ss_common_opts_t o;
    ss_common_opts_init(&o);
    const char *in = touch();
    char list_text[4200];
    snprintf(list_text, sizeof(list_text), "%s\n", in);
    const char *list = write_list(list_text);
    SS_EQ_FATAL(ss_common_add_input_list(&o, list), 0);
    SS_EQ_FATAL(ss_opt_string(&o.reference, "r.fa"), 0);
    SS_EQ_FATAL(ss_opt_string(&o.bed, "t.bed"), 0);
    SS_EQ_FATAL(ss_common_add_read(&o, "k.vcf.gz", "the --known VCF", 1), 0);
    SS_EQ_FATAL(ss_common_add_read(&o, "rg.txt", "the -G read-group file", 0), 0);
    SS_EQ_FATAL(ss_common_add_write(&o, "p.summary.txt", "the summary", "--prefix"), 0);
    SS_EQ_FATAL(ss_common_add_write(&o, "p.bed.gz", "the BED output", "--prefix"), 0);
    ss_run_files_t l;
    SS_EQ_FATAL(ss_run_reads(&o, &l), 0);
    char p[4200];
    CU_ASSERT(listed(&l, in, "an input", "input"));
    snprintf(p, sizeof(p), "%s.bai", in);
    CU_ASSERT(listed(&l, p, "an input's index", "index"));
    snprintf(p, sizeof(p), "%.*s.crai", (int)strlen(in) - 4, in); /* in place of ".bam" */
    CU_ASSERT(listed(&l, p, "an input's index", "index"));
    CU_ASSERT(listed(&l, "r.fa.fai", "the reference's index", "reference"));
    CU_ASSERT(listed(&l, "r.fa.gzi", "the reference's index", "reference"));
    CU_ASSERT(listed(&l, "t.bed", "the BED file", "bed"));
    CU_ASSERT(listed(&l, list, "the list of inputs", "file"));
    CU_ASSERT(listed(&l, "k.vcf.gz", "the --known VCF", "file"));
    CU_ASSERT(listed(&l, "k.vcf.gz.tbi", "the --known VCF's index", "file"));
    CU_ASSERT(listed(&l, "k.vcf.gz.csi", "the --known VCF's index", "file"));
    CU_ASSERT(listed(&l, "rg.txt", "the -G read-group file", "file"));
    CU_ASSERT(!listed(&l, "rg.txt.tbi", "the -G read-group file's index", "file"));
    ss_run_files_free(&l);
    SS_EQ(l.n, 0);
    /* writes: a side stream takes the kernel's role for it; -o .gz brings its index names */
    ss_out_spec_t spec = {.format = SS_FMT_TEXT, .level = -1, .n_streams = 1};
    spec.streams[0] = (ss_stream_spec_t){.path = "p.bed.gz", .format = SS_STREAM_BED_GZ};
    SS_EQ_FATAL(ss_opt_string(&o.output, "o.txt.gz"), 0);
    SS_EQ_FATAL(ss_opt_string(&o.report, "r.json"), 0);
    SS_EQ_FATAL(ss_run_writes(&o, &spec, &l), 0);
    CU_ASSERT(listed(&l, "p.bed.gz", "the BED output", "--prefix"));
    CU_ASSERT(listed(&l, "p.bed.gz.csi", "the BED output's index", "--prefix"));
    CU_ASSERT(listed(&l, "p.summary.txt", "the summary", "--prefix"));
    CU_ASSERT(listed(&l, "o.txt.gz", "-o", "-o"));
    CU_ASSERT(listed(&l, "o.txt.gz.tbi", "-o's index", "-o"));
    CU_ASSERT(listed(&l, "r.json", "--report", "--report"));
    SS_EQ(l.n, 8); /* the stream once, though the kernel registered it too */
    ss_run_files_free(&l);
    ss_common_opts_free(&o);
    SS_EQ(o.n_side_reads, 0);
    CU_ASSERT_PTR_NULL(o.side_reads);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("options", NULL, NULL);
    if (!s || !CU_add_test(s, "sizes", test_sizes) ||
        !CU_add_test(s, "common_opts", test_common_opts) ||
        !CU_add_test(s, "input_list", test_input_list) ||
        !CU_add_test(s, "run_files", test_run_files) ||
        !CU_add_test(s, "usage_text", test_usage_text))
        return 1;
    return ss_test_run();
}
