/*
 * test_realign.c -- the realign kernel's decisions on hand-made reads: a block
 * of reads over a made-up reference goes through rl_block_decide, and the
 * records that come out are checked (POS, CIGAR, tags).
 *
 * Each case builds a haplotype (the reference with an event), cuts reads from
 * it, and aligns them as a mapper might: with the event in the CIGAR, or
 * ungapped with the event shown as mismatches, or soft-clipped at it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "../kernels/realign/realign.h"

#define REF_LEN 2000
#define QLEN    100

static char ref_seq[REF_LEN + 1];
static rl_ref_t ref;
static rl_opts_t opts;

/* A made-up reference: a fixed LCG over ACGT, with a homopolymer run at 1200-1207. */
static void make_ref(void)
{
    uint32_t x = 12345;
    for (int i = 0; i < REF_LEN; i++) {
        x = x * 1103515245u + 12345u;
        ref_seq[i] = "ACGT"[(x >> 16) & 3];
    }
    memcpy(ref_seq + 1199, "CAAAAAAAAG", 10); /* A x8 at 1200-1207 */
    /* contexts where the cases' indels are already left-normalised */
    memcpy(ref_seq + 498, "CAGTCA", 6); /* deleting GT at 500 */
    memcpy(ref_seq + 298, "CAGTCA", 6); /* deleting GT at 300 */
    ref_seq[699] = 'C';                 /* inserting TTG before 700 */
    ref_seq[305] = 'G';                 /* inserting AC before 306 */
    ref_seq[REF_LEN] = '\0';
    ref = (rl_ref_t){ref_seq, 0, REF_LEN, REF_LEN, "chrT"};
    rl_opts_default(&opts);
}

/* The reference with a deletion of del bases at pos (del < 0: an insertion of ins). */
static char hap_seq[REF_LEN + 64];
static void make_hap(hts_pos_t pos, int del, const char *ins)
{
    int n = 0;
    memcpy(hap_seq, ref_seq, (size_t)pos);
    n = (int)pos;
    if (ins) {
        memcpy(hap_seq + n, ins, strlen(ins));
        n += (int)strlen(ins);
    }
    memcpy(hap_seq + n, ref_seq + pos + del, (size_t)(REF_LEN - pos - del));
    n += REF_LEN - (int)pos - del;
    hap_seq[n] = '\0';
}

/* Add read `name` with bases seq (QLEN of them), aligned at pos with cigar, to the block. */
static bam1_t *add_read(rl_block_t *k, const char *name, const char *seq, hts_pos_t pos,
                        const char *cigar, int flag, int mapq)
{
    uint32_t *cig = NULL;
    size_t m = 0;
    ssize_t n = sam_parse_cigar(cigar, NULL, &cig, &m);
    char qual[QLEN];
    memset(qual, 30, sizeof(qual));
    bam1_t *b = rl_block_next(k);
    CU_ASSERT_FATAL(b != NULL && n > 0);
    CU_ASSERT_FATAL(bam_set1(b, strlen(name), name, (uint16_t)flag, 0, pos, (uint8_t)mapq,
                             (size_t)n, cig, -1, -1, 0, QLEN, seq, qual, 64) >= 0);
    CU_ASSERT_FATAL(bam_aux_update_int(b, "NM", 0) == 0);
    CU_ASSERT_FATAL(bam_aux_update_str(b, "BQ", QLEN + 1, seq) == 0); /* any BQ: it must go */
    b->id = rl_block_n(k) - 1;
    free(cig);
    return b;
}

static char cigar_buf[256];
static const char *cigar_of(const bam1_t *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->core.n_cigar; i++)
        n += snprintf(cigar_buf + n, sizeof(cigar_buf) - (size_t)n, "%u%c",
                      bam_cigar_oplen(bam_get_cigar(b)[i]), bam_cigar_opchr(bam_get_cigar(b)[i]));
    return cigar_buf;
}

#define CHECK_READ(b, want_pos, want_cigar)                                              \
    do {                                                                                 \
        const char *got_ = cigar_of(b);                                                  \
        if ((b)->core.pos != (want_pos) || strcmp(got_, (want_cigar)))                   \
            printf("\n  %s: got %lld %s, want %lld %s\n", bam_get_qname(b),              \
                   (long long)(b)->core.pos, got_, (long long)(want_pos), (want_cigar)); \
        CU_ASSERT_EQUAL((b)->core.pos, (want_pos));                                      \
        CU_ASSERT_STRING_EQUAL(got_, (want_cigar));                                      \
    } while (0)

static rl_counts_t decide(rl_block_t *k)
{
    rl_counts_t c = {0};
    CU_ASSERT_EQUAL(rl_block_decide(k, &opts, &ref, 0, REF_LEN, &c), 0);
    return c;
}

/* Reads carrying a 2 bp deletion at 500 (one each 10 bp), with the deletion at d in the read. */
static void add_deletion_reads(rl_block_t *k, int n)
{
    char seq[QLEN + 1], name[32], cig[32];
    for (int i = 0; i < n; i++) {
        int d = 20 + 10 * i; /* bases before the deletion */
        memcpy(seq, hap_seq + 500 - d, QLEN);
        seq[QLEN] = '\0';
        snprintf(name, sizeof(name), "del%d", i);
        snprintf(cig, sizeof(cig), "%dM2D%dM", d, QLEN - d);
        add_read(k, name, seq, 500 - d, cig, 0, 60);
    }
}

static void test_indel_as_mismatches(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    add_deletion_reads(k, 6);
    char seq[QLEN + 1];
    memcpy(seq, hap_seq + 500 - 92, QLEN); /* the deletion 8 bases before its end */
    seq[QLEN] = '\0';
    bam1_t *b = add_read(k, "mism", seq, 408, "100M", 0, 60);
    rl_counts_t c = decide(k);
    CHECK_READ(b, 408, "92M2D8M");
    CU_ASSERT(bam_aux_get(b, "OA") &&
              !strcmp(bam_aux2Z(bam_aux_get(b, "OA")), "chrT,409,+,100M,60,0;"));
    CU_ASSERT(bam_aux_get(b, "BQ") == NULL);
    CU_ASSERT_EQUAL(bam_aux2i(bam_aux_get(b, "NM")), 2);
    CU_ASSERT_EQUAL(b->core.qual, 60);
    CU_ASSERT(c.cleaned == 1 && c.realigned == 1);
    /* the reads that had it right are untouched: no OA, BQ kept */
    CU_ASSERT(bam_aux_get(rl_block_rec(k, 0), "OA") == NULL);
    CU_ASSERT(bam_aux_get(rl_block_rec(k, 0), "BQ") != NULL);
    rl_block_destroy(k);
}

static void test_insertion_soft_clipped(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(700, 0, "TTG");
    char seq[QLEN + 1], name[32], cig[32];
    for (int i = 0; i < 5; i++) {
        int d = 20 + 12 * i;
        memcpy(seq, hap_seq + 700 - d, QLEN);
        seq[QLEN] = '\0';
        snprintf(name, sizeof(name), "ins%d", i);
        snprintf(cig, sizeof(cig), "%dM3I%dM", d, QLEN - d - 3);
        add_read(k, name, seq, 700 - d, cig, 0, 60);
    }
    memcpy(seq, hap_seq + 700 - 88, QLEN); /* 88 bases, then the insertion and 9 more */
    bam1_t *b = add_read(k, "clip", seq, 612, "88M12S", 0, 60);
    rl_counts_t c = decide(k);
    CHECK_READ(b, 612, "88M3I9M");
    CU_ASSERT_EQUAL(c.unclipped, 1);
    rl_block_destroy(k);
}

static void test_homopolymer(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(1200, 1, NULL); /* one A fewer: left-normalised at 1200 */
    char seq[QLEN + 1], name[32], cig[32];
    bam1_t *b[6];
    for (int i = 0; i < 6; i++) {
        int at = i % 4; /* the mapper put the deletion at 1200 + at */
        int start = 1200 - 30 - 7 * i;
        int before = 1200 + at - start;
        memcpy(seq, hap_seq + start, QLEN);
        seq[QLEN] = '\0';
        snprintf(name, sizeof(name), "hp%d", i);
        snprintf(cig, sizeof(cig), "%dM1D%dM", before, QLEN - before);
        b[i] = add_read(k, name, seq, start, cig, 0, 60);
    }
    decide(k);
    for (int i = 0; i < 6; i++) {
        char want[32];
        snprintf(want, sizeof(want), "%dM1D%dM", 30 + 7 * i, QLEN - 30 - 7 * i);
        CHECK_READ(b[i], 1200 - 30 - 7 * i, want);
    }
    rl_block_destroy(k);
}

static void test_two_indels(void)
{
    rl_block_t *k = rl_block_init();
    /* deletion of 2 at 300, insertion of AC before 306 (304 in the haplotype): one window */
    char h1[REF_LEN + 64];
    make_hap(300, 2, NULL);
    strcpy(h1, hap_seq);
    memcpy(hap_seq, h1, 304);
    strcpy(hap_seq + 304, "AC");
    strcpy(hap_seq + 306, h1 + 304);
    char seq[QLEN + 1], name[32], cig[32];
    for (int i = 0; i < 5; i++) {
        int start = 250 - 3 * i, a = 300 - start; /* both events inside, each read */
        memcpy(seq, hap_seq + start, QLEN);
        seq[QLEN] = '\0';
        snprintf(name, sizeof(name), "pair%d", i);
        snprintf(cig, sizeof(cig), "%dM2D4M2I%dM", a, QLEN - a - 6);
        add_read(k, name, seq, start, cig, 0, 60);
    }
    memcpy(seq, hap_seq + 215, QLEN); /* both shown as mismatches: ends 9 after the insertion */
    bam1_t *b = add_read(k, "mm2", seq, 215, "100M", 0, 60);
    decide(k);
    CHECK_READ(b, 215, "85M2D4M2I9M");
    rl_block_destroy(k);
}

/* A read whose alignment starts just past the deletion, the bases before it clipped. */
static void test_clipped_after_indel(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    add_deletion_reads(k, 6);
    char seq[QLEN + 1];
    memcpy(seq, hap_seq + 500 - 7, QLEN);
    seq[QLEN] = '\0';
    bam1_t *b = add_read(k, "clip", seq, 502, "7S93M", 0, 60);
    rl_counts_t c = decide(k);
    CHECK_READ(b, 493, "7M2D93M");
    CU_ASSERT_EQUAL(c.unclipped, 1);
    rl_block_destroy(k);
}

/*
 * A read that carries the window's deletion and an insertion of its own 30 bases
 * after it, which the mapper aligned ungapped past: no ungapped offset fits both
 * halves; the gapped fit to the haplotype holds both indels.
 */
static void test_second_indel_gapped(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    add_deletion_reads(k, 6);
    char seq[QLEN + 1], ins = 'A';
    while (ins == hap_seq[529] || ins == hap_seq[530]) /* an insertion nothing can shift */
        ins = ins == 'A' ? 'C' : ins == 'C' ? 'G' : 'T';
    memcpy(seq, hap_seq + 470, 60);
    seq[60] = ins;
    memcpy(seq + 61, hap_seq + 530, 39);
    seq[QLEN] = '\0';
    bam1_t *b = add_read(k, "own", seq, 470, "30M2D70M", 0, 60);
    decide(k);
    CHECK_READ(b, 470, "30M2D30M1I39M");
    rl_block_destroy(k);
}

/*
 * A read with a 1 bp deletion 3 bases from its end that nothing else shows, and the
 * three bases past it of quality 15: two mismatches there (30) cost less than a gap
 * (40), so the window is not cleaned and the read fits the reference ungapped.
 */
static void test_tail_gap_dropped(void)
{
    rl_block_t *k = rl_block_init();
    char seq[QLEN + 1];
    int p = 800; /* a deletion of ref[p] that leaves two of the last three bases wrong */
    while ((ref_seq[p + 1] != ref_seq[p]) + (ref_seq[p + 2] != ref_seq[p + 1]) +
                   (ref_seq[p + 3] != ref_seq[p + 2]) !=
               2 ||
           ref_seq[p - 1] == ref_seq[p])
        p++;
    memcpy(seq, ref_seq + p - 97, 97);
    memcpy(seq + 97, ref_seq + p + 1, 3);
    seq[QLEN] = '\0';
    bam1_t *b = add_read(k, "tail", seq, p - 97, "97M1D3M", 0, 60);
    for (int i = 97; i < QLEN; i++)
        bam_get_qual(b)[i] = 15;
    decide(k);
    CHECK_READ(b, p - 97, "100M");
    rl_block_destroy(k);
}

/* Four reads with a deletion 10-13 bases before their ends aligned ungapped, at quality q. */
static void add_mismatch_reads(rl_block_t *k, bam1_t **b, int q)
{
    char seq[QLEN + 1], name[32];
    for (int i = 0; i < 4; i++) {
        int before = 87 + i;
        memcpy(seq, hap_seq + 500 - before, QLEN);
        seq[QLEN] = '\0';
        snprintf(name, sizeof(name), "mm%d", i);
        b[i] = add_read(k, name, seq, 500 - before, "100M", 0, 60);
        memset(bam_get_qual(b[i]), q, QLEN);
        CU_ASSERT_FATAL(bam_aux_update_int(b[i], "NM", 8) == 0); /* the mismatches' count */
    }
}

static void check_mismatch_reads(bam1_t **b)
{
    for (int i = 0; i < 4; i++) {
        char want[32];
        snprintf(want, sizeof(want), "%dM2D%dM", 87 + i, QLEN - 87 - i);
        CHECK_READ(b[i], 500 - 87 - i, want);
    }
}

static void test_indel_only_mismatches(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    bam1_t *b[4];
    add_mismatch_reads(k, b, 30); /* no read holds the deletion: their mismatches suggest it */
    rl_counts_t c = decide(k);
    check_mismatch_reads(b);
    CU_ASSERT_EQUAL(c.realigned, 4);
    rl_block_reset(k);
    make_hap(306, 0,
             "AC"); /* an insertion after the first 9-10 bases of two reads, their start shifted */
    char seq[QLEN + 1];
    for (int i = 0; i < 2; i++) {
        memcpy(seq, hap_seq + 306 - 9 - i, QLEN);
        seq[QLEN] = '\0';
        b[i] = add_read(k, i ? "ins1" : "ins0", seq, 306 - 9 - i - 2, "100M", 0, 60);
        CU_ASSERT_FATAL(bam_aux_update_int(b[i], "NM", 8) == 0);
    }
    c = decide(k);
    CHECK_READ(b[0], 297, "9M2I89M");
    CHECK_READ(b[1], 296, "10M2I88M");
    rl_block_reset(k);
    make_hap(500, 2, NULL); /* one read alone is not enough for a target */
    add_mismatch_reads(k, b, 30);
    k->n = 1;
    c = decide(k);
    CU_ASSERT_EQUAL(c.realigned, 0);
    rl_block_destroy(k);
}

static void test_known_without_support(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    bam1_t *b[4];
    add_mismatch_reads(k, b, 15); /* too low in quality to suggest the deletion */
    rl_counts_t c = decide(k);
    CU_ASSERT_EQUAL(c.realigned, 0); /* no target without the known site */
    rl_block_reset(k);
    add_mismatch_reads(k, b, 15);
    rl_indel_t e;
    CU_ASSERT_EQUAL_FATAL(rl_indel_from_alleles(499, "XYZ", "X", &e), 0); /* bases: only lengths */
    CU_ASSERT(e.pos == 500 && e.len == -2);
    rl_indel_norm(&e, &ref);
    CU_ASSERT_EQUAL(rl_block_add_known(k, &e), 0);
    c = decide(k);
    check_mismatch_reads(b);
    CU_ASSERT_EQUAL(c.realigned, 4);
    rl_block_destroy(k);
}

static void test_pass_through(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    add_deletion_reads(k, 6);
    char seq[QLEN + 1];
    memcpy(seq, hap_seq + 500 - 92, QLEN);
    seq[QLEN] = '\0';
    static const int flags[] = {BAM_FDUP, BAM_FSECONDARY,           BAM_FSUPPLEMENTARY, BAM_FQCFAIL,
                                0,        BAM_FPAIRED | BAM_FMUNMAP};
    static const int mapqs[] = {60, 60, 60, 60, 0, 60};
    bam1_t *b[6];
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof(name), "pass%d", i);
        b[i] = add_read(k, name, seq, 408, "100M", flags[i], mapqs[i]);
    }
    /* the mate farther than --max-isize, and a hard-clipped read */
    bam1_t *far = add_read(k, "far", seq, 408, "100M", BAM_FPAIRED, 60);
    far->core.mtid = 0, far->core.mpos = 408 + 5000;
    bam1_t *hard = add_read(k, "hard", seq, 408, "5H100M", 0, 60);
    decide(k);
    for (int i = 0; i < 6; i++) {
        CHECK_READ(b[i], 408, "100M");
        CU_ASSERT(bam_aux_get(b[i], "OA") == NULL && bam_aux_get(b[i], "BQ") != NULL);
    }
    CHECK_READ(far, 408, "100M");
    CHECK_READ(hard, 408, "5H100M");
    rl_block_destroy(k);
}

static void test_window_past_cap(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    add_deletion_reads(k, 6);
    char seq[QLEN + 1];
    memcpy(seq, hap_seq + 500 - 92, QLEN);
    seq[QLEN] = '\0';
    bam1_t *b = add_read(k, "mism", seq, 408, "100M", 0, 60);
    /* known indels every 8 bp from 440 to 560 chain the window past a 60 bp cap */
    for (int p = 440; p <= 560; p += 8) {
        rl_indel_t e = {p, -1, ""};
        CU_ASSERT_EQUAL(rl_block_add_known(k, &e), 0);
    }
    opts.max_window = 60;
    rl_counts_t c = decide(k);
    opts.max_window = RL_DEFAULT_WINDOW;
    CU_ASSERT_EQUAL(c.skipped, 1);
    CU_ASSERT_EQUAL(c.realigned, 0);
    CHECK_READ(b, 408, "100M");
    rl_block_destroy(k);
}

static void test_mates(void)
{
    rl_block_t *k = rl_block_init();
    make_hap(500, 2, NULL);
    add_deletion_reads(k, 6);
    char seq[QLEN + 1];
    memcpy(seq, hap_seq + 500 - 92, QLEN);
    seq[QLEN] = '\0';
    /* a forward mate at 380 overlapping a reverse read that moves: its end 508 -> 510 */
    bam1_t *m = add_read(k, "pair", hap_seq + 380, 380, "100M",
                         BAM_FPAIRED | BAM_FREAD2 | BAM_FMREVERSE, 60);
    bam1_t *a = add_read(k, "pair", seq, 408, "100M", BAM_FPAIRED | BAM_FREAD1 | BAM_FREVERSE, 60);
    a->core.mtid = m->core.mtid = 0;
    a->core.mpos = 380, m->core.mpos = 408;
    a->core.isize = 380 - 508, m->core.isize = 508 - 380;
    CU_ASSERT_FATAL(bam_aux_update_str(m, "MC", 5, "100M") == 0);
    decide(k);
    CHECK_READ(a, 408, "92M2D8M");
    CHECK_READ(m, 380, "100M");
    CU_ASSERT_EQUAL(m->core.mpos, 408);
    CU_ASSERT_STRING_EQUAL(bam_aux2Z(bam_aux_get(m, "MC")), "92M2D8M");
    /* samtools fixmate's TLEN: 5' ends (the reverse read's end), mate's minus own */
    CU_ASSERT_EQUAL(m->core.isize, 510 - 380);
    CU_ASSERT_EQUAL(a->core.isize, 380 - 510);
    rl_block_destroy(k);
}

static void test_indel_norm(void)
{
    rl_indel_t e = {1205, -1, ""}; /* one A of the run at 1200-1207 */
    rl_indel_norm(&e, &ref);
    CU_ASSERT_EQUAL(e.pos, 1200);
    rl_indel_t i = {1206, 2, "AA"};
    rl_indel_norm(&i, &ref);
    CU_ASSERT_EQUAL(i.pos, 1200);
    CU_ASSERT_EQUAL(rl_indel_from_alleles(10, "AC", "ACGT", &i), 0);
    CU_ASSERT(i.pos == 12 && i.len == 2 && !strcmp(i.seq, "GT"));
    CU_ASSERT_EQUAL(rl_indel_from_alleles(10, "A", "G", &i), -1);
}

int main(void)
{
    make_ref();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("realign", NULL, NULL);
    if (!s || !CU_add_test(s, "indel normal form", test_indel_norm) ||
        !CU_add_test(s, "deletion near a read end shown as mismatches", test_indel_as_mismatches) ||
        !CU_add_test(s, "insertion soft-clipped", test_insertion_soft_clipped) ||
        !CU_add_test(s, "homopolymer deletion placed differently", test_homopolymer) ||
        !CU_add_test(s, "two nearby indels", test_two_indels) ||
        !CU_add_test(s, "a read's own second indel, fitted with gaps", test_second_indel_gapped) ||
        !CU_add_test(s, "a tail gap nothing supports dropped", test_tail_gap_dropped) ||
        !CU_add_test(s, "indel only mismatches show", test_indel_only_mismatches) ||
        !CU_add_test(s, "read clipped just after an indel", test_clipped_after_indel) ||
        !CU_add_test(s, "known indel with no read support", test_known_without_support) ||
        !CU_add_test(s, "reads that pass through", test_pass_through) ||
        !CU_add_test(s, "window past the cap", test_window_past_cap) ||
        !CU_add_test(s, "mates follow", test_mates)) {
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
