/*
 * test_markdup.c -- the markdup kernel's pieces (kernels/markdup/): unclipped
 * ends and keys as samtools markdup 1.16.1 computes them (MC text included),
 * the barcode hash, the library size estimate, and the streaming machine on
 * hand-made blocks: a pair tie broken by name, a single losing to a pair,
 * the optical tag, and a key forgotten once its holder left the window.
 */
#include <htslib/sam.h>

#include "../kernels/markdup/markdup.h"
#include "ss_testutil.h"

static sam_hdr_t *hdr;

/* One record from SAM text (tabs written as |). */
static bam1_t *rec(const char *text)
{
    kstring_t s = KS_INITIALIZE;
    for (const char *p = text; *p; p++)
        kputc(*p == '|' ? '\t' : *p, &s);
    bam1_t *b = bam_init1();
    CU_ASSERT_FATAL(sam_parse1(&s, hdr, b) >= 0);
    ks_free(&s);
    return b;
}

static dup_opts_t opts;
static dup_run_t run;

static void reset_opts(void)
{
    memset(&opts, 0, sizeof(opts));
    opts.max_length = 300;
    opts.cmdline = "seqshard markdup";
    memset(&run, 0, sizeof(run));
    run.o = &opts;
}

static void test_unclipped_ends(void)
{
    bam1_t *b = rec("r|99|c1|101|60|5S20M3D10M7H|=|301|0|*|*");
    SS_EQ(dup_unclipped_start(b), 96);         /* 1-based, less the leading clip */
    SS_EQ(dup_unclipped_end(b), 100 + 33 + 7); /* past the span and trailing clips */
    bam_destroy1(b);
}

static void test_pair_key_from_mc(void)
{
    reset_opts();
    /* forward read1, mate reverse at 301 with 4S30M2I5M6S: its unclipped end 300+35+6 */
    bam1_t *b = rec("r|99|c1|101|60|50M|=|301|0|*|*|MC:Z:4S30M2I5M6S|ms:i:10");
    dup_key_t k;
    SS_EQ_FATAL(dup_pair_key(&run, &k, b), 0);
    SS_EQ(k.this_coord, 101);
    SS_EQ(k.other_coord, 341);
    SS_EQ(k.orientation, 5); /* FR */
    SS_EQ(k.leftmost, 11);
    SS_EQ(k.single, 0);
    bam_destroy1(b);
    b = rec("r|147|c1|301|60|4S30M2I5M6S|=|101|0|*|*|MC:Z:50M");
    SS_EQ_FATAL(dup_pair_key(&run, &k, b), 0);
    SS_EQ(k.this_coord, 341);
    SS_EQ(k.other_coord, 101);
    SS_EQ(k.orientation, 5);
    SS_EQ(k.leftmost, 13);
    bam_destroy1(b);
    b = rec("r|99|c1|101|60|50M|=|301|0|*|*");
    SS_EQ(dup_pair_key(&run, &k, b), -1); /* no MC */
    bam_destroy1(b);
}

static void test_barcode_hash(void)
{
    reset_opts();
    opts.barcode_tag = "BX";
    bam1_t *b = rec("r|0|c1|101|60|50M|*|0|0|*|*|BX:Z:ACGTACGT");
    dup_key_t k;
    dup_single_key(&run, &k, b);
    SS_EQ(k.barcode, -1337075388); /* Jenkins' one-at-a-time of "ACGTACGT", as samtools */
    SS_EQ(k.orientation, 2);
    bam_destroy1(b);
}

static void test_library_size(void)
{
    reset_opts();
    dup_counts_t c = {.pair = 1000, .duplicate = 200, .optical = 20};
    kstring_t s = KS_INITIALIZE;
    SS_EQ_FATAL(dup_stats_text(&opts, &c, &s), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.s, "ESTIMATED_LIBRARY_SIZE: 1164\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.s, "DUPLICATE PRIMARY TOTAL: 200\n"));
    ks_free(&s);
}

/* The reads leaving the machine, in order: each copied back over its original. */
static bam1_t **left;
static int n_left;

static int collect(void *ctx, bam1_t *b, int owned)
{
    (void)ctx;
    CU_ASSERT(owned);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bam_copy1(left[n_left++], b));
    return 0;
}

/* Stream recs (all owned) through the machine; recs hold the reads as they left it. */
static void machine(bam1_t **recs, int n, dup_counts_t *c)
{
    opts.check_chain = !opts.no_multi_dup && (opts.tag || opts.opt_dist);
    dup_machine_t *m = dup_machine_init(&run);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    left = recs, n_left = 0;
    dup_machine_begin(m, "test.bam", c, NULL, collect, NULL);
    for (int i = 0; i < n; i++) {
        bam1_t *b = dup_machine_slot(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(bam_copy1(b, recs[i]));
        SS_EQ(dup_machine_push(m, 1), 0);
    }
    SS_EQ(dup_machine_end(m), 0);
    SS_EQ(n_left, n);
    dup_machine_destroy(m);
}

static void test_pair_tie_by_name(void)
{
    reset_opts();
    opts.tag = 1;
    /* equal scores (no qualities): the name that sorts first is the original */
    bam1_t *r[2] = {rec("b|99|c1|101|60|50M|=|301|250|*|*|MC:Z:50M|ms:i:0"),
                    rec("a|99|c1|101|60|50M|=|301|250|*|*|MC:Z:50M|ms:i:0")};
    dup_counts_t c = {0};
    machine(r, 2, &c);
    SS_EQ(r[0]->core.flag & BAM_FDUP, BAM_FDUP);
    SS_EQ(r[1]->core.flag & BAM_FDUP, 0);
    SS_STR_EQ(bam_aux2Z(bam_aux_get(r[0], "do")), "a");
    SS_EQ(c.duplicate, 1);
    SS_EQ(c.writing, 2);
    bam_destroy1(r[0]), bam_destroy1(r[1]);
}

static void test_single_loses_to_pair(void)
{
    reset_opts();
    bam1_t *r[2] = {
        rec("s|0|c1|101|60|50M|*|0|0|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA|"
            "IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII"),
        rec("p|99|c1|101|60|50M|=|301|250|*|*|MC:Z:50M|ms:i:0")};
    dup_counts_t c = {0};
    machine(r, 2, &c);
    SS_EQ(r[0]->core.flag & BAM_FDUP, BAM_FDUP); /* despite its better qualities */
    SS_EQ(r[1]->core.flag & BAM_FDUP, 0);
    SS_EQ(c.single_dup, 1);
    SS_EQ(c.single, 1);
    SS_EQ(c.pair, 1);
    bam_destroy1(r[0]), bam_destroy1(r[1]);
}

static void test_optical(void)
{
    reset_opts();
    opts.opt_dist = 100;
    bam1_t *r[3] = {rec("M:1:F:1:1101:1000:1000|99|c1|101|60|50M|=|301|250|*|*|MC:Z:50M|ms:i:0"),
                    rec("M:1:F:1:1101:1050:1020|99|c1|101|60|50M|=|301|250|*|*|MC:Z:50M|ms:i:0"),
                    rec("M:1:F:1:1102:1050:1020|99|c1|101|60|50M|=|301|250|*|*|MC:Z:50M|ms:i:0")};
    dup_counts_t c = {0};
    machine(r, 3, &c);
    SS_EQ(r[0]->core.flag & BAM_FDUP, 0);                /* its name sorts first */
    SS_STR_EQ(bam_aux2Z(bam_aux_get(r[1], "dt")), "SQ"); /* same tile, within 100 */
    SS_STR_EQ(bam_aux2Z(bam_aux_get(r[2], "dt")), "LB"); /* another tile */
    SS_EQ(c.optical, 1);
    for (int i = 0; i < 3; i++)
        bam_destroy1(r[i]);
}

static void test_key_forgotten(void)
{
    reset_opts();
    opts.max_length = 100;
    /*
     * Same unclipped start (101) for both: the second read's 150 bp soft clip puts
     * its POS past the first read's window (101 + 100), so the first read left
     * with its key and the second finds none: neither is a duplicate, as in
     * samtools. (The kernel itself refuses reads reaching past -l; the machine
     * follows samtools' rules whatever it is given.)
     */
    bam1_t *r[3] = {rec("a|0|c1|101|60|50M|*|0|0|*|*"), rec("x|0|c1|240|60|50M|*|0|0|*|*"),
                    rec("b|0|c1|251|60|150S50M|*|0|0|*|*")};
    dup_counts_t c = {0};
    machine(r, 3, &c);
    SS_EQ(r[0]->core.flag & BAM_FDUP, 0);
    SS_EQ(r[2]->core.flag & BAM_FDUP, 0);
    SS_EQ(c.single_dup, 0);
    for (int i = 0; i < 3; i++)
        bam_destroy1(r[i]);
}

int main(void)
{
    hdr = sam_hdr_parse(30, "@SQ\tSN:c1\tLN:100000\n");
    if (!hdr || CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("markdup", NULL, NULL);
    CU_add_test(s, "unclipped ends", test_unclipped_ends);
    CU_add_test(s, "pair keys from MC", test_pair_key_from_mc);
    CU_add_test(s, "barcode hash", test_barcode_hash);
    CU_add_test(s, "library size", test_library_size);
    CU_add_test(s, "pair tie broken by name", test_pair_tie_by_name);
    CU_add_test(s, "a single loses to a pair", test_single_loses_to_pair);
    CU_add_test(s, "optical duplicates", test_optical);
    CU_add_test(s, "a key forgotten with its holder", test_key_forgotten);
    int r = ss_test_run();
    sam_hdr_destroy(hdr);
    return r;
}
