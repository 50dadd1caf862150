/*
 * test_depth.c -- unit tests for the depth kernel's pure parts: the read
 * filters, per-read counting into the ring, -s pairing, row formatting and
 * option parsing. tests/integration/depth_vs_samtools.sh compares whole runs
 * with samtools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "../framework/driver.h" /* ss_common_opts_init */
#include "../kernels/depth/depth.h"

static sam_hdr_t *hdr;

/* A record from one SAM line (tabs as \t) on contig c1 of 10 kb. */
static bam1_t *read_of(const char *sam)
{
    bam1_t *b = bam_init1();
    kstring_t s = KS_INITIALIZE;
    kputs(sam, &s);
    CU_ASSERT_FATAL(b && sam_parse1(&s, hdr, b) >= 0);
    free(s.s);
    return b;
}

static void test_filters(void)
{
    dp_opts_t o;
    dp_opts_default(&o);
    bam1_t *b = read_of("r\t0\tc1\t100\t30\t5S20M5S\t*\t0\t0\tACGTACGTACGTACGTACGTACGTACGTAC\t*");
    CU_ASSERT_EQUAL(dp_qlen_used(b), 20);
    CU_ASSERT(dp_read_passes(&o, b));
    o.min_len = 21;
    CU_ASSERT(!dp_read_passes(&o, b));
    o.min_len = 0, o.min_mq = 31;
    CU_ASSERT(!dp_read_passes(&o, b));
    bam_destroy1(b);
    /* samtools subtracts only soft clips at the CIGAR's very ends, not behind a hard clip */
    b = read_of("h\t2048\tc1\t100\t30\t5H10S20M\t*\t0\t0\tACGTACGTACGTACGTACGTACGTACGTAC\t*");
    CU_ASSERT_EQUAL(dp_qlen_used(b), 30);
    o.min_mq = 0;
    CU_ASSERT(dp_read_passes(&o, b)); /* supplementary reads count */
    o.flag |= BAM_FSUPPLEMENTARY;
    CU_ASSERT(!dp_read_passes(&o, b));
    bam_destroy1(b);
    /* no SEQ: the M/I/=/X lengths */
    b = read_of("n\t0\tc1\t100\t30\t3S10M2I4M\t*\t0\t0\t*\t*");
    CU_ASSERT_EQUAL(dp_qlen_used(b), 16);
    bam_destroy1(b);
}

static void test_count(void)
{
    dp_opts_t o;
    dp_ring_t r;
    int bad = 0;
    dp_opts_default(&o);
    CU_ASSERT_FATAL(dp_ring_init(&r, 2) == 0);
    dp_ring_reset(&r, 100);
    /* POS 101 (0-based 100): 3M 2D 2M, qualities 40 40 2 | 40 40 */
    bam1_t *b = read_of("d\t0\tc1\t101\t30\t3M2D2M\t*\t0\t0\tACGTA\tII#II");
    CU_ASSERT_EQUAL(bam_endpos(b), 107);
    CU_ASSERT(dp_ring_extend(&r, 107) == 0);
    CU_ASSERT(dp_count_read(&r, 1, b, &o, 0, 107, &bad) == 0);
    int want[] = {1, 1, 1, 0, 0, 1, 1};
    for (int i = 0; i < 7; i++) {
        CU_ASSERT_EQUAL(dp_ring_at(&r, 100 + i)[1], want[i]);
        CU_ASSERT_EQUAL(dp_ring_at(&r, 100 + i)[0], 0);
    }
    /* -J -q 10: deletions judged by the base after them; the Q2 base not counted */
    o.count_del = 1, o.min_bq = 10;
    CU_ASSERT(dp_count_read(&r, 0, b, &o, 0, 107, &bad) == 0);
    int want_j[] = {1, 1, 0, 1, 1, 1, 1};
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(dp_ring_at(&r, 100 + i)[0], want_j[i]);
    /* a clip (-s) and the kept range [lo, top) */
    o.count_del = 0, o.min_bq = 0;
    CU_ASSERT(dp_count_read(&r, 1, b, &o, 102, 106, &bad) == 0);
    int want_c[] = {1, 1, 2, 0, 0, 2, 1};
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(dp_ring_at(&r, 100 + i)[1], want_c[i]);
    bam_destroy1(b);
    /* growing keeps what is valid, across the wrap */
    r.lo = 104;
    CU_ASSERT(dp_ring_extend(&r, 104 + 10000) == 0);
    CU_ASSERT(r.cap >= 10000);
    CU_ASSERT_EQUAL(dp_ring_at(&r, 105)[1], 2);
    CU_ASSERT_EQUAL(dp_ring_at(&r, 9000)[0], 0);
    dp_ring_destroy(&r);
}

static void test_pairs(void)
{
    dp_pairs_t *p = dp_pairs_init();
    CU_ASSERT_FATAL(p != NULL);
    bam1_t *a = read_of("x\t99\tc1\t1001\t60\t100M\t=\t1051\t0\t*\t*");
    bam1_t *b = read_of("x\t147\tc1\t1051\t60\t100M\t=\t1001\t0\t*\t*");
    bam1_t *c = read_of("x\t2113\tc1\t1101\t60\t50M\t=\t1001\t0\t*\t*");
    bam1_t *far = read_of("y\t99\tc1\t2001\t60\t100M\t=\t5001\t0\t*\t*");
    /* the first stores its end, the mate takes it, the third stores again */
    CU_ASSERT_EQUAL(dp_pairs_clip(p, a), 0);
    CU_ASSERT_EQUAL(dp_pairs_clip(p, b), 1100);
    CU_ASSERT_EQUAL(dp_pairs_clip(p, c), 0);
    /* a mate that starts past the read's end cannot overlap: nothing stored */
    CU_ASSERT_EQUAL(dp_pairs_clip(p, far), 0);
    far->core.pos = 5000, far->core.mpos = 2000, far->core.flag = 147;
    CU_ASSERT_EQUAL(dp_pairs_clip(p, far), 0);
    /* alignments more than the window before a read are forgotten */
    dp_pairs_clear(p);
    CU_ASSERT_EQUAL(dp_pairs_clip(p, a), 0);
    b->core.pos = 1000 + DP_PAIR_WINDOW + 200;
    CU_ASSERT_EQUAL(dp_pairs_clip(p, b), 0);
    bam_destroy1(a), bam_destroy1(b), bam_destroy1(c), bam_destroy1(far);
    dp_pairs_destroy(p);
}

static void test_format(void)
{
    dp_fmt_t f;
    kstring_t s = KS_INITIALIZE;
    int32_t d[2] = {0, 4294967};
    dp_fmt_contig(&f, "chr1");
    for (hts_pos_t p = 8; p < 11; p++)
        CU_ASSERT(dp_fmt_row(&f, &s, p, d, 2) == 0);
    CU_ASSERT(dp_fmt_zero_row(&f, &s, 98, 2) == 0);
    CU_ASSERT(dp_fmt_row(&f, &s, 99, d, 1) == 0);
    CU_ASSERT_STRING_EQUAL(s.s, "chr1\t9\t0\t4294967\nchr1\t10\t0\t4294967\n"
                                "chr1\t11\t0\t4294967\nchr1\t99\t0\t0\nchr1\t100\t0\n");
    free(s.s);
}

static void test_options(void)
{
    char *argv[] = {"depth", "-a",    "-a", "-g", "UNMAP", "-G", "0x800", "-o",     "x.txt",
                    "-o",    "y.txt", "-d", "9",  "-s",    "-Q", "5",     "in.bam", NULL};
    ss_common_opts_t co;
    dp_opts_t *o = NULL;
    ss_common_opts_init(&co);
    CU_ASSERT_EQUAL(dp_parse(17, argv, &co, (void **)&o), 0);
    CU_ASSERT_EQUAL(o->all, 2);
    CU_ASSERT_EQUAL(o->flag, (DP_DEFAULT_FLAGS & ~BAM_FUNMAP) | BAM_FSUPPLEMENTARY);
    CU_ASSERT_STRING_EQUAL(co.output, "x.txt"); /* samtools keeps the first -o */
    CU_ASSERT(o->overlaps && o->min_mq == 5 && co.n_inputs == 1 && co.all_contigs);
    free(o);
    ss_common_opts_free(&co);
    char *odd[] = {"depth", "-X", "a.bam", "b.bam", "a.bai", NULL};
    ss_common_opts_init(&co);
    CU_ASSERT_EQUAL(dp_parse(5, odd, &co, (void **)&o), SS_EXIT_USAGE);
    free(o);
    ss_common_opts_free(&co);
}

int main(void)
{
    hdr = sam_hdr_parse(22, "@SQ\tSN:c1\tLN:10000\n");
    if (!hdr || CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("depth", NULL, NULL);
    if (!s || !CU_add_test(s, "filters", test_filters) || !CU_add_test(s, "count", test_count) ||
        !CU_add_test(s, "pairs (-s)", test_pairs) || !CU_add_test(s, "format", test_format) ||
        !CU_add_test(s, "options", test_options)) {
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    sam_hdr_destroy(hdr);
    return fails ? 1 : 0;
}
