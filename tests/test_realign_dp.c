/*
 * test_realign_dp.c -- realign's gapped fit (kernels/realign/rl_dp.c) on
 * hand-made read/haplotype pairs, then through a whole block: a read with a
 * second indel, an indel 2 bases from a read's end, a soft clip that holds an
 * indel, and base qualities choosing between a gap and mismatches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "../kernels/realign/realign.h"

#define HLEN 400

static char hap_s[HLEN + 1];
static uint8_t hap_c[HLEN];

/* A made-up haplotype: a fixed LCG over ACGT, as bases and as 4-bit codes. */
static void make_hap(void)
{
    uint32_t x = 777;
    for (int i = 0; i < HLEN; i++) {
        x = x * 1103515245u + 12345u;
        hap_s[i] = "ACGT"[(x >> 16) & 3];
        hap_c[i] = (uint8_t)seq_nt16_table[(unsigned char)hap_s[i]];
    }
    memcpy(hap_s + 200, "CAAAAG", 6); /* a homopolymer for the left-alignment case */
    for (int i = 200; i < 206; i++)
        hap_c[i] = (uint8_t)seq_nt16_table[(unsigned char)hap_s[i]];
    hap_s[HLEN] = '\0';
}

/* A read of bases seq, all at quality q but the last n_low at low_q. */
static bam1_t *make_read(const char *seq, int q, int n_low, int low_q)
{
    size_t n = strlen(seq);
    char qual[512];
    for (size_t i = 0; i < n; i++)
        qual[i] = (char)(i + (size_t)n_low >= n ? low_q : q);
    bam1_t *b = bam_init1();
    uint32_t cig = bam_cigar_gen((uint32_t)n, BAM_CMATCH);
    CU_ASSERT_FATAL(b &&
                    bam_set1(b, 1, "r", 0, 0, 0, 60, 1, &cig, -1, -1, 0, n, seq, qual, 0) >= 0);
    return b;
}

/* The path in map as a CIGAR against the haplotype (S, M, I, D), and where it starts. */
static char path_buf[256];
static const char *path_of(const int *map, int qlen, int *start)
{
    int n = 0, run = 0, prev = -1;
    char op = 0;
    *start = -1;
    for (int i = 0; i <= qlen; i++) {
        char c = i == qlen ? 0 : map[i] == -2 ? 'S' : map[i] == -1 ? 'I' : 'M';
        if (c == 'M' && *start < 0)
            *start = map[i];
        int del = c == 'M' && prev >= 0 && map[i] != prev + 1 ? map[i] - prev - 1 : 0;
        if ((c != op || del) && run) {
            n += snprintf(path_buf + n, sizeof(path_buf) - (size_t)n, "%d%c", run, op);
            run = 0;
        }
        if (del)
            n += snprintf(path_buf + n, sizeof(path_buf) - (size_t)n, "%dD", del);
        if (c == 'M')
            prev = map[i];
        op = c, run++;
    }
    return path_buf;
}

#define CHECK_PATH(map, qlen, want_start, want_path)                                        \
    do {                                                                                    \
        int start_;                                                                         \
        const char *got_ = path_of(map, qlen, &start_);                                     \
        if (start_ != (want_start) || strcmp(got_, (want_path)))                            \
            printf("\n  got %d %s, want %d %s\n", start_, got_, (want_start), (want_path)); \
        CU_ASSERT_EQUAL(start_, (want_start));                                              \
        CU_ASSERT_STRING_EQUAL(got_, (want_path));                                          \
    } while (0)

/* hap[a, b) then hap[c, d) (and ins between) into buf. */
static const char *cut(char *buf, int a, int b, const char *ins, int c, int d)
{
    int n = 0;
    memcpy(buf, hap_s + a, (size_t)(b - a));
    n = b - a;
    if (ins)
        memcpy(buf + n, ins, strlen(ins)), n += (int)strlen(ins);
    memcpy(buf + n, hap_s + c, (size_t)(d - c));
    buf[n + d - c] = '\0';
    return buf;
}

/* A read with its own 3 bp deletion in the middle: one gap, its cost. */
static void test_second_indel(void)
{
    char s[256];
    int map[256];
    rl_dp_t *dp = rl_dp_init();
    bam1_t *b = make_read(cut(s, 100, 160, NULL, 163, 203), 30, 0, 0);
    int cost = rl_dp_align(dp, b, 0, 0, hap_c, HLEN, 100, RL_DP_INF - 1, map);
    CU_ASSERT_EQUAL(cost, RL_GAP_OPEN + 2 * RL_GAP_EXT);
    CHECK_PATH(map, 100, 100, "60M3D40M");
    /* the same read offered a bound below that cost: no fit */
    CU_ASSERT_EQUAL(rl_dp_align(dp, b, 0, 0, hap_c, HLEN, 100, cost - 1, NULL), RL_DP_INF);
    bam_destroy1(b);
    rl_dp_destroy(dp);
}

/*
 * A 2 bp deletion 2 bases from the read's end: at quality 30 the two bases past
 * it cost more as mismatches than a gap; at quality 10 they cost less, and stay.
 */
static void test_end_indel_by_quality(void)
{
    char s[256];
    int map[256];
    rl_dp_t *dp = rl_dp_init();
    int p = 198; /* a deletion of hap[p, p+2) that the two bases after it cannot hide */
    while (hap_s[p + 2] == hap_s[p] || hap_s[p + 3] == hap_s[p + 1] || hap_s[p - 1] == hap_s[p + 1])
        p++;
    cut(s, p - 98, p, NULL, p + 2, p + 4);
    bam1_t *hi = make_read(s, 30, 0, 0), *lo = make_read(s, 30, 2, 10);
    int c_hi = rl_dp_align(dp, hi, 0, 0, hap_c, HLEN, p - 98, RL_DP_INF - 1, map);
    CU_ASSERT_EQUAL(c_hi, RL_GAP_OPEN + RL_GAP_EXT);
    CHECK_PATH(map, 100, p - 98, "98M2D2M");
    int c_lo = rl_dp_align(dp, lo, 0, 0, hap_c, HLEN, p - 98, RL_DP_INF - 1, map);
    CU_ASSERT_EQUAL(c_lo, 20);
    CHECK_PATH(map, 100, p - 98, "100M");
    bam_destroy1(hi);
    bam_destroy1(lo);
    rl_dp_destroy(dp);
}

/*
 * A read whose first 12 bases were soft-clipped, with a 1 bp insertion of its own
 * after them: unclipped (they fit), the insertion kept. A clip that fits nothing
 * (bases of another place) stays clipped for RL_CLIP_CAP.
 */
static void test_clip_holding_indel(void)
{
    char s[256], junk[256];
    int map[256];
    rl_dp_t *dp = rl_dp_init();
    bam1_t *b = make_read(cut(s, 88, 130, "T", 130, 187), 30, 0, 0);
    int cost = rl_dp_align(dp, b, 12, 0, hap_c, HLEN, 88, RL_DP_INF - 1, map);
    CU_ASSERT_EQUAL(cost, RL_GAP_OPEN);
    CHECK_PATH(map, 100, 88, "42M1I57M");
    /* twelve bases from elsewhere in front: they stay clipped */
    cut(junk, 300, 312, NULL, 100, 188);
    bam1_t *c = make_read(junk, 30, 0, 0);
    cost = rl_dp_align(dp, c, 12, 0, hap_c, HLEN, 88, RL_DP_INF - 1, map);
    CU_ASSERT_EQUAL(cost, RL_CLIP_CAP);
    CHECK_PATH(map, 100, 100, "12S88M");
    bam_destroy1(b);
    bam_destroy1(c);
    rl_dp_destroy(dp);
}

/* A read missing one A of AAAA: the gap comes out leftmost, as CIGARs are normalised. */
static void test_gap_left_aligned(void)
{
    char s[256];
    int map[256];
    rl_dp_t *dp = rl_dp_init();
    bam1_t *b = make_read(cut(s, 150, 203, NULL, 204, 251), 30, 0, 0);
    CU_ASSERT_EQUAL(rl_dp_align(dp, b, 0, 0, hap_c, HLEN, 150, RL_DP_INF - 1, map), RL_GAP_OPEN);
    CHECK_PATH(map, 100, 150, "51M1D49M");
    bam_destroy1(b);
    rl_dp_destroy(dp);
}

/* A read that fits ungapped: cost 0, the diagonal, whatever the band offers. */
static void test_exact_fit(void)
{
    char s[256];
    int map[256];
    rl_dp_t *dp = rl_dp_init();
    bam1_t *b = make_read(cut(s, 150, 250, NULL, 250, 250), 30, 0, 0);
    CU_ASSERT_EQUAL(rl_dp_align(dp, b, 0, 0, hap_c, HLEN, 147, RL_DP_INF - 1, map), 0);
    CHECK_PATH(map, 100, 150, "100M");
    bam_destroy1(b);
    rl_dp_destroy(dp);
}

int main(void)
{
    make_hap();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("realign_dp", NULL, NULL);
    if (!s || !CU_add_test(s, "exact fit", test_exact_fit) ||
        !CU_add_test(s, "a read's own second indel", test_second_indel) ||
        !CU_add_test(s, "a gap in a homopolymer left-aligned", test_gap_left_aligned) ||
        !CU_add_test(s, "indel 2 bases from the end, by quality", test_end_indel_by_quality) ||
        !CU_add_test(s, "soft clip holding an indel", test_clip_holding_indel)) {
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
