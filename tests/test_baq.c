/*
 * test_baq.c -- our BAQ (genomics/baq.c) against htslib's
 * sam_prob_realn on the same reads: every byte of every record after BAQ
 * (qualities, BQ/ZQ tags, the rest of the aux data) and every return code,
 * on each path in turn (scalar, SSE2, AVX2 where the CPU has it).
 *
 * Random reads of many shapes: 1-1200 bases, indels of every size up to 60,
 * soft and hard clips, N and padding in the CIGAR, reads off either contig
 * end, N in read and reference (and lower case and IUPAC codes), qualities
 * 0-93 with some above, qual[0] == 0xff, unmapped reads, BQ/ZQ tags right,
 * of the wrong length or type, both in either order; flags 3 and 7 (samtools
 * mpileup's, without and with -E) and the others (1, 5, 2, 6). Most of a
 * batch shares a few shapes so that full SIMD groups run, and the rest fill
 * partial groups. Then every read of testdata/s1.bam against ref.fa.
 */
#include <limits.h>

#include <htslib/faidx.h>
#include <htslib/hts_log.h>
#include <htslib/sam.h>

#include "../genomics/baq.h"
#include "ss_testutil.h"

#define REF_LEN 4000
/* Under AddressSanitizer (about 6x slower here) a quarter of the random cases: the
 * sanitizer looks for memory errors, which every read shape shows in the first rounds;
 * the bit-for-bit comparison runs in full in the normal build and in ssdiff. */
#ifdef __SANITIZE_ADDRESS__
#define CASE_SHARE 4
#else
#define CASE_SHARE 1
#endif
#define BATCH 64

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16) % n;
}

static char ref[REF_LEN + 1];

static void make_ref(void)
{
    static const char other[] = "NNNNnRYacgt";
    for (int i = 0; i < REF_LEN; i++)
        ref[i] = rnd(50) == 0 ? other[rnd(sizeof(other) - 1)] : "ACGT"[rnd(4)];
    ref[REF_LEN] = 0;
}

static const baq_path_t paths[] = {BAQ_PATH_SCALAR, BAQ_PATH_SSE2, BAQ_PATH_AVX2};

static int path_runs(baq_path_t p)
{
    __builtin_cpu_init();
    return p != BAQ_PATH_AVX2 || __builtin_cpu_supports("avx2");
}

/* A CIGAR for a query of lq bases (shape: 0 plain M, 1 random). Returns n_cigar. */
static int make_cigar(uint32_t *cig, int lq, int random)
{
    if (!random) {
        cig[0] = bam_cigar_gen(lq, BAM_CMATCH);
        return 1;
    }
    int n = 0, left = lq;
    if (rnd(4) == 0)
        cig[n++] = bam_cigar_gen(1 + rnd(5), BAM_CHARD_CLIP);
    if (rnd(3) == 0 && left > 1) {
        int s = 1 + rnd(left / 2 + 1);
        if (s >= left)
            s = left - 1;
        cig[n++] = bam_cigar_gen(s, BAM_CSOFT_CLIP), left -= s;
    }
    int tail = rnd(3) == 0 && left > 1 ? 1 + rnd(left / 3 + 1) : 0;
    if (tail >= left)
        tail = left - 1;
    left -= tail;
    while (left > 0 && n < 24) {
        int m = 1 + rnd(left < 80 ? left : 80);
        if (n >= 20)
            m = left;
        static const int mops[] = {BAM_CMATCH, BAM_CMATCH, BAM_CEQUAL, BAM_CDIFF};
        cig[n++] = bam_cigar_gen(m, mops[rnd(4)]), left -= m;
        if (left <= 0 || n >= 22)
            break;
        int r = rnd(12);
        if (r < 4) {
            int l = 1 + rnd(r == 0 ? 60 : 8);
            if (l > left)
                l = left;
            cig[n++] = bam_cigar_gen(l, BAM_CINS), left -= l;
        } else if (r < 8) {
            cig[n++] = bam_cigar_gen(1 + rnd(r == 4 ? 60 : 8), BAM_CDEL);
        } else if (r == 8) {
            cig[n++] = bam_cigar_gen(rnd(3), BAM_CPAD);
        } else if (r == 9 && rnd(4) == 0) {
            cig[n++] = bam_cigar_gen(1 + rnd(100), BAM_CREF_SKIP);
        } else if (r == 10) {
            cig[n++] = bam_cigar_gen(0, rnd(2) ? BAM_CDEL : BAM_CINS);
        }
    }
    if (left > 0)
        cig[n++] = bam_cigar_gen(left, BAM_CMATCH);
    if (tail)
        cig[n++] = bam_cigar_gen(tail, BAM_CSOFT_CLIP);
    if (rnd(4) == 0)
        cig[n++] = bam_cigar_gen(1 + rnd(5), BAM_CHARD_CLIP);
    return n;
}

static void add_tag(bam1_t *b, const char *tag, int lq)
{
    int kind = rnd(6);
    if (kind == 0) {
        bam_aux_update_int(b, tag, 7); /* wrong type */
        return;
    }
    int len = kind == 1 ? lq + 1 + (int)rnd(3) : kind == 2 && lq > 1 ? lq - 1 : lq;
    char *s = malloc(len + 1);
    for (int i = 0; i < len; i++)
        s[i] = (char)(33 + rnd(90));
    s[len] = 0;
    bam_aux_append(b, tag, 'Z', len + 1, (uint8_t *)s);
    free(s);
}

/* A random read; shape 0..3 are shared shapes (plain M, 150/100/151/36), 4 random. */
static bam1_t *make_read(int shape, int i)
{
    static const int shared[] = {150, 100, 151, 36};
    uint32_t cig[32];
    int lq;
    if (shape < 4) {
        lq = shared[shape];
    } else {
        int r = rnd(10);
        lq = r < 2 ? 1 + rnd(20) : r < 8 ? 20 + rnd(280) : r < 9 ? 300 + rnd(700) : 900 + rnd(300);
    }
    int nc = make_cigar(cig, lq, shape == 4);
    hts_pos_t rlen = bam_cigar2rlen(nc, cig);
    hts_pos_t pos;
    int where = rnd(10);
    if (where == 0)
        pos = rnd(20); /* near the start: the window is cut at 0 */
    else if (where == 1)
        pos = REF_LEN - 1 - rnd(rlen < 40 ? 40 : (uint32_t)rlen); /* off the end */
    else
        pos = rnd(REF_LEN - (rlen < REF_LEN / 2 ? rlen : REF_LEN / 2));
    if (pos < 0)
        pos = 0;
    char *seq = malloc(lq + 1), *qual = malloc(lq + 1), name[32];
    for (int k = 0; k < lq; k++) {
        hts_pos_t rp = pos + k;
        char rb = rp < REF_LEN ? ref[rp] : 'A';
        seq[k] = rnd(15) == 0 ? "ACGTN"[rnd(5)] : (rb == 'N' || rb == 'n' ? 'A' : rb);
        qual[k] = (char)(rnd(30) == 0 ? 94 + rnd(160) : rnd(94));
    }
    if (rnd(10) == 0)
        memset(qual, rnd(2) ? 0 : 93, lq);
    if (rnd(40) == 0)
        qual[0] = (char)0xff;
    seq[lq] = 0;
    snprintf(name, sizeof(name), "r%d", i);
    uint16_t flag = rnd(50) == 0 ? BAM_FUNMAP : rnd(2) ? BAM_FREVERSE : 0;
    bam1_t *b = bam_init1();
    if (bam_set1(b, strlen(name), name, flag, 0, pos, 60, nc, cig, -1, -1, 0, lq, seq, qual, 64) <
        0)
        abort();
    if (rnd(5) == 0)
        bam_aux_update_str(b, "RG", 3, "rg");
    int t = rnd(12);
    if (t == 0 || t == 2)
        add_tag(b, "BQ", lq);
    if (t == 1 || t == 2 || t == 3)
        add_tag(b, "ZQ", lq);
    if (t == 3)
        add_tag(b, "BQ", lq);
    if (rnd(5) == 0)
        bam_aux_update_int(b, "NM", 3);
    free(seq);
    free(qual);
    return b;
}

static int same_record(const bam1_t *a, const bam1_t *b)
{
    return a->l_data == b->l_data && a->core.qual == b->core.qual &&
           a->core.l_qseq == b->core.l_qseq && memcmp(a->data, b->data, a->l_data) == 0;
}

static void report_diff(const bam1_t *in, const bam1_t *a, const bam1_t *b, int flag, int ret,
                        int want)
{
    int lq = in->core.l_qseq, at = -1;
    for (int i = 0; i < lq && at < 0; i++)
        if (bam_get_qual(a)[i] != bam_get_qual(b)[i])
            at = i;
    fprintf(stderr,
            "\nread %s (l_qseq %d, pos %lld, flag %d): ret %d, htslib %d; l_data %d, "
            "htslib %d",
            bam_get_qname(in), lq, (long long)in->core.pos, flag, ret, want, a->l_data, b->l_data);
    if (at >= 0)
        fprintf(stderr, "; quality %d is %d, htslib %d (was %d)", at, bam_get_qual(a)[at],
                bam_get_qual(b)[at], bam_get_qual(in)[at]);
    fputs("; CIGAR ", stderr);
    for (uint32_t k = 0; k < in->core.n_cigar; k++)
        fprintf(stderr, "%d%c", bam_cigar_oplen(bam_get_cigar(in)[k]),
                bam_cigar_opchr(bam_get_cigar(in)[k]));
    fputc('\n', stderr);
}

/* BAQ n reads both ways, compare; returns mismatches (and prints the first). */
static int compare_batch(baq_t *q, bam1_t **reads, int n, const char *r, hts_pos_t rl, int flag)
{
    bam1_t *ours[BATCH] = {NULL}, *theirs[BATCH] = {NULL};
    int ret[BATCH], bad = 0;
    for (int i = 0; i < n; i++) {
        ours[i] = bam_dup1(reads[i]);
        theirs[i] = bam_dup1(reads[i]);
    }
    CU_ASSERT_EQUAL(baq_batch(q, ours, n, r, rl, flag, ret), 0);
    for (int i = 0; i < n; i++) {
        int want = sam_prob_realn(theirs[i], r, rl, flag);
        if (ret[i] != want || !same_record(ours[i], theirs[i])) {
            if (!bad)
                report_diff(reads[i], ours[i], theirs[i], flag, ret[i], want);
            bad++;
        }
        bam_destroy1(ours[i]);
        bam_destroy1(theirs[i]);
    }
    return bad;
}

static void test_random_reads(void)
{
    hts_set_log_level(HTS_LOG_OFF);
    make_ref();
    for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
        if (!path_runs(paths[p])) {
            fprintf(stderr, "\n(no AVX2 on this CPU: path avx2 not tested) ");
            continue;
        }
        baq_t *q = baq_init(paths[p]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        int bad = 0, total = 0;
        for (int round = 0; round < 120 / CASE_SHARE; round++) {
            bam1_t *reads[BATCH];
            int n = 1 + rnd(BATCH);
            /* most rounds: a few shared shapes plus random ones; some rounds all random */
            int mix = rnd(4);
            for (int i = 0; i < n; i++)
                reads[i] = make_read(mix == 0 ? 4 : rnd(3) ? (int)rnd(4) : 4, total + i);
            static const int flags[] = {3, 7, 3, 7, 1, 5, 2, 6};
            int flag = flags[rnd(8)];
            bad += compare_batch(q, reads, n, ref, REF_LEN, flag);
            total += n;
            for (int i = 0; i < n; i++)
                bam_destroy1(reads[i]);
        }
        if (bad)
            fprintf(stderr, "path %s: %d of %d reads differ\n", baq_path_name(paths[p]), bad,
                    total);
        SS_EQ(bad, 0);
        baq_destroy(q);
    }
}

/* A full group of one read per lane, each read in every lane position. */
static void test_lanes_independent(void)
{
    hts_set_log_level(HTS_LOG_OFF);
    make_ref();
    for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
        if (!path_runs(paths[p]))
            continue;
        baq_t *q = baq_init(paths[p]);
        bam1_t *reads[BATCH];
        for (int n = 1; n <= 17; n++) {
            for (int i = 0; i < n; i++)
                reads[i] = make_read(0, i);
            SS_EQ(compare_batch(q, reads, n, ref, REF_LEN, 3), 0);
            SS_EQ(compare_batch(q, reads, n, ref, REF_LEN, 7), 0);
            for (int i = 0; i < n; i++)
                bam_destroy1(reads[i]);
        }
        baq_destroy(q);
    }
}

/* Every read of testdata/s1.bam, in batches as the pileup makes them. */
static void test_s1_bam(void)
{
    const char *dir = getenv("SS_TESTDATA");
    char bam[4096], fa[4096];
    snprintf(bam, sizeof(bam), "%s/s1.bam", dir ? dir : "");
    snprintf(fa, sizeof(fa), "%s/ref.fa", dir ? dir : "");
    if (!dir || access(bam, R_OK) != 0 || access(fa, R_OK) != 0) {
        fprintf(stderr, "\n(skipped: no test data; set SS_TESTDATA to the folder with s1.bam) ");
        return;
    }
    hts_set_log_level(HTS_LOG_OFF);
    faidx_t *fai = fai_load(fa);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fai);
    for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
        if (!path_runs(paths[p]))
            continue;
        samFile *fp = sam_open(bam, "r");
        sam_hdr_t *h = sam_hdr_read(fp);
        baq_t *q = baq_init(paths[p]);
        bam1_t *reads[BATCH];
        int n = 0, tid = -1, bad = 0, total = 0;
        hts_pos_t len = 0;
        char *seq = NULL;
        for (;;) {
            bam1_t *b = bam_init1();
            int r = sam_read1(fp, h, b);
            int flush = r < 0 || n == BATCH || (r >= 0 && b->core.tid != tid);
            if (flush && n > 0) {
                bad += compare_batch(q, reads, n, seq, len, 3);
                bad += compare_batch(q, reads, n, seq, len, 7);
                total += n;
                for (int i = 0; i < n; i++)
                    bam_destroy1(reads[i]);
                n = 0;
            }
            if (r < 0) {
                bam_destroy1(b);
                break;
            }
            if (b->core.tid != tid) {
                free(seq);
                tid = b->core.tid;
                seq = tid >= 0
                          ? faidx_fetch_seq64(fai, sam_hdr_tid2name(h, tid), 0, HTS_POS_MAX, &len)
                          : NULL;
            }
            if (!seq || b->core.pos >= len) { /* pileup drops those before BAQ */
                bam_destroy1(b);
                continue;
            }
            reads[n++] = b;
        }
        free(seq);
        SS_CMP(total, >, 1000);
        SS_EQ(bad, 0);
        baq_destroy(q);
        sam_hdr_destroy(h);
        sam_close(fp);
    }
    fai_destroy(fai);
}

/*
 * baq_glocal_score against probaln_glocal without state or q (bcftools'
 * indel scoring): random codes 0-4 with some above, qualities 0-93 with some
 * above, lengths 0-300 either side longer, bands 1-60, bcftools' two gap
 * settings; a negative length too. One workspace grows and is reused.
 */
static void test_glocal_score(void)
{
    baq_path_t p;
    const char *why;
    SS_EQ(baq_path_select(&p, &why), 0);
    baq_t *q = baq_init(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    static uint8_t r[320], x[320], qual[320];
    int bad = 0;
    for (int t = 0; t < 4000 / CASE_SHARE; t++) {
        int lr = (int)rnd(300), lq = (int)rnd(300);
        if (rnd(10) == 0)
            lq = lr + (int)rnd(8); /* an indel's haplotype: a few bases longer */
        for (int i = 0; i < lr; i++)
            r[i] = rnd(40) ? rnd(4) : 4 + rnd(12);
        for (int i = 0; i < lq; i++) {
            x[i] = rnd(30) ? (rnd(4) ? r[i % (lr ? lr : 1)] : rnd(4)) : 4;
            qual[i] = rnd(20) ? rnd(94) : rnd(256);
        }
        probaln_par_t par = {rnd(2) ? 1e-3 : 1e-4, rnd(2) ? 0.1 : 0.3, 1 + (int)rnd(60)};
        int want = probaln_glocal(r, lr, x, lq, qual, &par, NULL, NULL);
        int got = baq_glocal_score(q, r, lr, x, lq, qual, &par);
        if (got != want && bad++ < 5)
            fprintf(stderr, "score: lr %d lq %d bw %d: htslib %d, ours %d\n", lr, lq, par.bw, want,
                    got);
    }
    SS_EQ(bad, 0);
    probaln_par_t par = {1e-3, 0.1, 10};
    SS_EQ(baq_glocal_score(q, r, -1, x, 5, qual, &par), INT_MIN);
    baq_destroy(q);
}

static void test_path_select(void)
{
    baq_path_t p;
    const char *why;
    setenv("SEQSHARD_BAQ_PATH", "scalar", 1);
    SS_EQ(baq_path_select(&p, &why), 0);
    SS_EQ(p, BAQ_PATH_SCALAR);
    setenv("SEQSHARD_BAQ_PATH", "htslib", 1);
    SS_EQ(baq_path_select(&p, &why), 0);
    SS_EQ(p, BAQ_PATH_HTSLIB);
    setenv("SEQSHARD_BAQ_PATH", "avx512", 1);
    SS_EQ(baq_path_select(&p, &why), -1);
    CU_ASSERT_PTR_NOT_NULL(why);
    unsetenv("SEQSHARD_BAQ_PATH");
    SS_EQ(baq_path_select(&p, &why), 0);
    SS_EQ(p, path_runs(BAQ_PATH_AVX2) ? BAQ_PATH_AVX2 : BAQ_PATH_SSE2);
    SS_STR_EQ(baq_path_name(BAQ_PATH_SSE2), "sse2");
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("baq", NULL, NULL);
    CU_add_test(s, "random reads of many shapes: the bytes htslib gives", test_random_reads);
    CU_add_test(s, "groups of 1-17 reads of one shape", test_lanes_independent);
    CU_add_test(s, "every read of s1.bam", test_s1_bam);
    CU_add_test(s, "indel scoring's forward-only likelihood", test_glocal_score);
    CU_add_test(s, "SEQSHARD_BAQ_PATH", test_path_select);
    return ss_test_run();
}
