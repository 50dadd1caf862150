/*
 * test_bed.c -- -l region lists: samtools 1.16 bed_read parsing and
 * bed_overlap answers, merged intervals, error line numbers.
 */
#include <htslib/bgzf.h>
#include <zlib.h>

#include "../framework/ss_framework.h"
#include "../io/ss_bed.h"
#include "ss_testutil.h"

static const char *write_text(const char *text)
{
    const char *path = ss_test_path("bed", ".bed");
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    CU_ASSERT_EQUAL_FATAL(fclose(fp), 0);
    return path;
}

/* samtools' bed_overlap, as specified: any interval with end > beg and beg < end. */
static int naive_overlap(const hts_pair_pos_t *a, int n, hts_pos_t beg, hts_pos_t end)
{
    for (int i = 0; i < n; i++)
        if (a[i].end > beg && a[i].beg < end)
            return 1;
    return 0;
}

static void test_formats(void)
{
    const char *p = write_text("# comment\n"
                               "\n"
                               "browser position chr1:1-100\n"
                               "track name=x\n"
                               "  chr1\t100\t200\textra cols\n"
                               "chr1 5\n"        /* 1-based position 5 -> [4,5) */
                               "chr2\t0\t10\r\n" /* CRLF */
                               "   \t \n"
                               "chr1 300 300\n"); /* empty interval: legal */
    ss_bed_t *bed = ss_bed_read(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bed);
    SS_EQ(ss_bed_overlap(bed, "chr1", 4, 5), 1);
    SS_EQ(ss_bed_overlap(bed, "chr1", 3, 4), 0);
    SS_EQ(ss_bed_overlap(bed, "chr1", 5, 6), 0);
    SS_EQ(ss_bed_overlap(bed, "chr1", 99, 100), 0);
    SS_EQ(ss_bed_overlap(bed, "chr1", 100, 101), 1);
    SS_EQ(ss_bed_overlap(bed, "chr1", 199, 200), 1);
    SS_EQ(ss_bed_overlap(bed, "chr1", 200, 201), 0);
    SS_EQ(ss_bed_overlap(bed, "chr2", 9, 10), 1);
    SS_EQ(ss_bed_overlap(bed, "chr3", 0, 1000), 0);
    SS_EQ(ss_bed_overlap(bed, "browser", 0, 1000), 0);
    /* the empty interval [300,300) overlaps only a query strictly around 300 */
    SS_EQ(ss_bed_overlap(bed, "chr1", 299, 300), 0);
    SS_EQ(ss_bed_overlap(bed, "chr1", 300, 301), 0);
    SS_EQ(ss_bed_overlap(bed, "chr1", 299, 301), 1);
    int n;
    const hts_pair_pos_t *iv = ss_bed_intervals(bed, "chr1", &n);
    SS_EQ_FATAL(n, 3);
    SS_EQ(iv[0].beg, 4);
    SS_EQ(iv[0].end, 5);
    SS_EQ(iv[1].beg, 100);
    SS_EQ(iv[2].beg, 300);
    CU_ASSERT_PTR_NULL(ss_bed_intervals(bed, "chrX", &n));
    SS_EQ(n, 0);
    ss_bed_destroy(bed);
    unlink(p);
}

static void test_merge_and_touching(void)
{
    /* unsorted, touching, contained and overlapping intervals */
    const char *p = write_text("c 20 30\nc 5 10\nc 0 5\nc 25 27\nc 40 41\nc 28 35\nc 50 50\n");
    ss_bed_t *bed = ss_bed_read(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bed);
    int n;
    const hts_pair_pos_t *iv = ss_bed_intervals(bed, "c", &n);
    /* bed_unify: [0,10) [20,35) [40,41) [50,50) */
    SS_EQ_FATAL(n, 4);
    SS_EQ(iv[0].beg, 0);
    SS_EQ(iv[0].end, 10);
    SS_EQ(iv[1].beg, 20);
    SS_EQ(iv[1].end, 35);
    SS_EQ(iv[2].beg, 40);
    SS_EQ(iv[3].end, 50);
    /* raw semantics: an empty query at the touching point 5 overlaps nothing, as in samtools */
    SS_EQ(ss_bed_overlap(bed, "c", 5, 5), 0);
    SS_EQ(ss_bed_overlap(bed, "c", 6, 6), 1);
    SS_EQ(ss_bed_overlap(bed, "c", 4, 6), 1);
    SS_EQ(ss_bed_overlap(bed, "c", 10, 20), 0);
    SS_EQ(ss_bed_overlap(bed, "c", 9, 21), 1);
    SS_EQ(ss_bed_overlap(bed, "c", 35, 40), 0);
    ss_bed_destroy(bed);
    unlink(p);
}

/* Random intervals and queries (empty, inverted, touching): same answers as the definition. */
static void test_overlap_random(void)
{
    srand(12345);
    for (int round = 0; round < 20; round++) {
        int n = 1 + rand() % 60;
        hts_pair_pos_t a[64];
        const char *path = ss_test_path("bedr", ".bed");
        FILE *fp = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        for (int i = 0; i < n; i++) {
            a[i].beg = rand() % 70000;
            a[i].end = a[i].beg + (rand() % 4 == 0 ? 0 : rand() % 40000);
            fprintf(fp, "ctg\t%lld\t%lld\n", (long long)a[i].beg, (long long)a[i].end);
        }
        fclose(fp);
        ss_bed_t *bed = ss_bed_read(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(bed);
        for (int q = 0; q < 3000; q++) {
            hts_pos_t beg = rand() % 120000, end = beg + rand() % 300 - 20;
            if (q % 3 == 0) { /* queries at interval ends */
                const hts_pair_pos_t *x = &a[rand() % n];
                beg = rand() % 2 ? x->end : x->beg;
                end = beg + rand() % 3;
            }
            int want = naive_overlap(a, n, beg, end), got = ss_bed_overlap(bed, "ctg", beg, end);
            if (want != got)
                fprintf(stderr, "\nround %d query [%lld,%lld): got %d want %d\n", round,
                        (long long)beg, (long long)end, got, want);
            CU_ASSERT_EQUAL(got, want);
        }
        ss_bed_destroy(bed);
        unlink(path);
    }
}

static void expect_error(const char *text, const char *want)
{
    const char *p = write_text(text);
    ss_error_reset();
    ss_bed_t *bed = ss_bed_read(p);
    CU_ASSERT_PTR_NULL(bed);
    ss_bed_destroy(bed);
    char expect[512];
    snprintf(expect, sizeof(expect), "%s%s", p, want);
    SS_CONTAINS(ss_error_message(), expect);
    unlink(p);
}

static void test_errors(void)
{
    /* line numbers are real file lines: blank lines count */
    expect_error("c 1 5\n\n\nc notanumber\n", ":4: no start position");
    expect_error("c 1 5\nc 10 5\n", ":2: end (5) is less than start (10)");
    expect_error("c 0\n", ":1: position 0");
    expect_error("# only a comment\nchrOnly\n", ":2: no start position after 'chrOnly'");
    /* browser/track lines are skipped even though they have no numbers */
    const char *p = write_text("browser\ntrack\nc 1 2\n");
    ss_bed_t *bed = ss_bed_read(p);
    CU_ASSERT_PTR_NOT_NULL(bed);
    ss_bed_destroy(bed);
    unlink(p);
    ss_error_reset();
    CU_ASSERT_PTR_NULL(ss_bed_read("/nonexistent/x.bed"));
    SS_CONTAINS(ss_error_message(), "/nonexistent/x.bed: cannot open");
    ss_error_reset();
}

static void test_compressed(void)
{
    const char *text = "c 10 20\nc 30\n";
    const char *p1 = ss_test_path("bedgz", ".bed.gz");
    BGZF *bz = bgzf_open(p1, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(bz);
    CU_ASSERT_EQUAL(bgzf_write(bz, text, strlen(text)), (ssize_t)strlen(text));
    CU_ASSERT_EQUAL_FATAL(bgzf_close(bz), 0);
    const char *p2 = ss_test_path("bedgz", ".bed.gz");
    gzFile gz = gzopen(p2, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
    CU_ASSERT_EQUAL(gzputs(gz, text), (int)strlen(text));
    CU_ASSERT_EQUAL_FATAL(gzclose(gz), Z_OK);
    const char *paths[2] = {p1, p2};
    for (int i = 0; i < 2; i++) {
        ss_bed_t *bed = ss_bed_read(paths[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(bed);
        SS_EQ(ss_bed_overlap(bed, "c", 15, 16), 1);
        SS_EQ(ss_bed_overlap(bed, "c", 29, 30), 1);
        SS_EQ(ss_bed_overlap(bed, "c", 20, 29), 0);
        ss_bed_destroy(bed);
        unlink(paths[i]);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("bed", NULL, NULL);
    if (!s || !CU_add_test(s, "formats", test_formats) ||
        !CU_add_test(s, "merge_and_touching", test_merge_and_touching) ||
        !CU_add_test(s, "overlap_random", test_overlap_random) ||
        !CU_add_test(s, "errors", test_errors) || !CU_add_test(s, "compressed", test_compressed))
        return 1;
    return ss_test_run();
}
