/*
 * test_pileup.c -- the pileup kernel's pieces: line formatting, options and
 * the safe start point a shard needs for exact depth capping.
 * (Byte identity with samtools on real data is tested in
 * tests/integration/pileup_vs_samtools.sh.)
 */
#include <CUnit/Basic.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../framework/driver.h" /* ss_common_opts_init */
#include "../kernels/pileup/pileup.h"
#include "ss_testutil.h"

int pl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);

static bam1_t *make_read(const char *seq, const char *qual33, int mapq, int rev)
{
    bam1_t *b = bam_init1();
    size_t n = strlen(seq);
    uint32_t cigar = bam_cigar_gen(n, BAM_CMATCH);
    char q[256];
    for (size_t i = 0; i < n; i++)
        q[i] = qual33[i] - 33;
    if (bam_set1(b, 2, "r1", rev ? BAM_FREVERSE : 0, 0, 100, mapq, 1, &cigar, -1, -1, 0, n, seq, q,
                 0) < 0) {
        bam_destroy1(b);
        return NULL;
    }
    return b;
}

static void test_format_basic(void)
{
    pl_opts_t o;
    pl_opts_default(&o);
    bam1_t *fwd = make_read("ACGT", "IIII", 60, 0), *rev = make_read("ACGA", "I+II", 30, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fwd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rev);
    bam_pileup1_t p[2];
    memset(p, 0, sizeof(p));
    p[0].b = fwd, p[0].qpos = 0, p[0].is_head = 1; /* 'A' on the forward strand, first base */
    p[1].b = rev, p[1].qpos = 3, p[1].is_tail = 1; /* 'A' on the reverse strand, last base */
    const bam_pileup1_t *plp[1] = {p};
    int n_plp[1] = {2};
    pl_fmt_buf_t fb;
    memset(&fb, 0, sizeof(fb));
    kstring_t out = KS_INITIALIZE;
    char ref[103];
    memset(ref, 'N', 100);
    memcpy(ref + 100, "AC", 3);
    /* reference base at 100 is 'A': both reads match, '.' forward and ',' reverse */
    SS_EQ(pl_format_line(&out, &o, NULL, "chr", 100, ref, 102, 1, n_plp, plp, &fb), 0);
    SS_STR_EQ(out.s, "chr\t101\tA\t2\t^].,$\tII\n");

    /* without a reference: bases upper (forward) and lower (reverse) case, ref N */
    out.l = 0;
    SS_EQ(pl_format_line(&out, &o, NULL, "chr", 100, NULL, 0, 1, n_plp, plp, &fb), 0);
    CU_ASSERT_STRING_EQUAL(out.s, "chr\t101\tN\t2\t^]Aa$\tII\n");

    /* -Q above every base quality (40): the reads stay but print as "0 * *" */
    o.min_baseq = 41;
    out.l = 0;
    SS_EQ(pl_format_line(&out, &o, NULL, "chr", 100, ref, 102, 1, n_plp, plp, &fb), 0);
    CU_ASSERT_STRING_EQUAL(out.s, "chr\t101\tA\t0\t*\t*\n");

    /* -s adds the MAPQ characters; --no-output-ends drops ^ and $ */
    o.min_baseq = 0;
    o.cols = PL_COL_MAPQ_CHAR;
    o.no_ends = 1;
    out.l = 0;
    SS_EQ(pl_format_line(&out, &o, NULL, "chr", 100, ref, 102, 1, n_plp, plp, &fb), 0);
    CU_ASSERT_STRING_EQUAL(out.s, "chr\t101\tA\t2\t.,\tII\t]?\n");

    /* a position with no reads for one of two files */
    int n2[2] = {2, 0};
    const bam_pileup1_t *plp2[2] = {p, NULL};
    out.l = 0;
    SS_EQ(pl_format_line(&out, &o, NULL, "chr", 100, ref, 102, 2, n2, plp2, &fb), 0);
    CU_ASSERT_STRING_EQUAL(out.s, "chr\t101\tA\t2\t.,\tII\t]?\t0\t*\t*\t*\n");
    free(out.s);
    free(fb.ins.s), free(fb.bases.s), free(fb.quals.s);
    bam_destroy1(fwd);
    bam_destroy1(rev);
}

static void test_format_empty(void)
{
    pl_opts_t o;
    pl_opts_default(&o);
    kstring_t out = KS_INITIALIZE;
    SS_EQ(pl_format_empty(&out, &o, "c", 4, "acgtN", 5, 2), 0);
    CU_ASSERT_STRING_EQUAL(out.s, "c\t5\tN\t0\t*\t*\t0\t*\t*\n");
    out.l = 0;
    o.cols = PL_COL_QNAME | PL_COL_QPOS;
    SS_EQ(pl_format_empty(&out, &o, "c", 0, "acgtN", 5, 1), 0);
    CU_ASSERT_STRING_EQUAL(out.s, "c\t1\ta\t0\t*\t*\t*\t*\n");
    free(out.s);
}

static void test_options(void)
{
    ss_common_opts_t co;
    void *k = NULL;
    ss_common_opts_init(&co);
    char *argv[] = {"pileup", "-Q", "20", "--ff", "UNMAP,DUP", "-aa", "-@", "3", "in.bam", NULL};
    SS_EQ_FATAL(pl_parse(9, argv, &co, &k), 0);
    pl_opts_t *o = k;
    SS_EQ(o->min_baseq, 20);
    SS_EQ(o->max_depth, 8000);
    SS_EQ(o->rflag_filter, BAM_FUNMAP | BAM_FDUP);
    SS_EQ(o->all, 2);
    SS_EQ(co.threads, 3);
    SS_EQ(co.n_inputs, 1);
    SS_EQ(co.all_contigs, 1);
    pl_opts_free(o);
    free(o);
    ss_common_opts_free(&co);

    ss_common_opts_init(&co);
    char *bad[] = {"pileup", "-B", "-E", "in.bam", NULL};
    SS_EQ(pl_parse(4, bad, &co, &k), SS_EXIT_USAGE); /* samtools: -B cannot go with -E */
    pl_opts_free(k);
    free(k);
    ss_common_opts_free(&co);
}

/* A pile deeper than -d right before a shard: the shard must start before it. */
static void test_safe_start(void)
{
    const char *path = "/tmp/ss_test_pileup_safe.bam";
    const char *names[] = {"c"};
    hts_pos_t lens[] = {20000};
    enum { N = 300 };
    ss_test_read_t reads[N];
    int n = 0;
    for (int i = 0; i < 200; i++) /* 200 reads piled at 5000..5099 */
        reads[n++] = (ss_test_read_t){0, 5000, 100};
    for (int i = 0; i < 100; i++) /* light coverage elsewhere */
        reads[n++] = (ss_test_read_t){0, 100 * i + 9000, 100};
    SS_EQ_FATAL(ss_test_write_bam(path, 1, names, lens, reads, n, 0), 0);

    char *paths[] = {(char *)path};
    ss_io_inputs_t inputs = {.paths = paths, .n = 1};
    ss_reader_t *rd = ss_reader_init(&inputs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
    SS_EQ_FATAL(ss_reader_begin(rd), 0);
    pl_opts_t o;
    pl_opts_default(&o);
    o.rflag_filter = 0;
    o.orphans = 1;
    pl_input_t in;
    memset(&in, 0, sizeof(in));
    in.rd = rd, in.src = ss_reader_source(rd, 0);
    in.hdr = ss_reader_header(rd, 0), in.opts = &o, in.path = path;
    bam1_t *b = bam_init1();

    /* no cap: start one base before the shard */
    SS_EQ(pl_safe_start(&in, 1, 0, 5050, 0, INT_MAX, b), 5049);
    /* a cap below the pile: the pile's start could drop reads, go back before it */
    hts_pos_t s = pl_safe_start(&in, 1, 0, 5050, 0, 50, b);
    SS_LE(s, 4999);
    /* a cap above the pile: nothing can be dropped */
    SS_EQ(pl_safe_start(&in, 1, 0, 5050, 0, 500, b), 5049);
    /* the shard that starts the scope starts there */
    SS_EQ(pl_safe_start(&in, 1, 0, 0, 0, 50, b), 0);
    /* light coverage: safe right away */
    SS_EQ(pl_safe_start(&in, 1, 0, 12000, 0, 50, b), 11999);

    bam_destroy1(b);
    ss_reader_end(rd);
    ss_reader_destroy(rd);
    unlink(path);
    char bai[256];
    snprintf(bai, sizeof(bai), "%s.bai", path);
    unlink(bai);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("pileup", NULL, NULL);
    CU_add_test(s, "format: bases, case, -Q, -s, empty file column", test_format_basic);
    CU_add_test(s, "format: zero-depth line", test_format_empty);
    CU_add_test(s, "options: samtools defaults and rules", test_options);
    CU_add_test(s, "safe start before a pile deeper than -d", test_safe_start);
    return ss_test_run();
}
