/*
 * ss_testutil.h -- helpers shared by the CUnit tests (header-only, static):
 * assertions that print both values, and tiny sorted, indexed BAMs made with
 * htslib in /tmp.
 */
#ifndef SS_TESTUTIL_H
#define SS_TESTUTIL_H

#include <CUnit/Basic.h>
#include <htslib/sam.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Integer equality; on failure prints both sides with their values. */
#define SS_EQ_(a, b, fatal)                                                                     \
    do {                                                                                        \
        long long a_ = (long long)(a), b_ = (long long)(b);                                     \
        if (a_ != b_)                                                                           \
            fprintf(stderr, "\n%s:%d: %s = %lld, expected %s = %lld\n", __FILE__, __LINE__, #a, \
                    a_, #b, b_);                                                                \
        CU_ASSERT_EQUAL##fatal(a_, b_);                                                         \
    } while (0)
#define SS_EQ(a, b)       SS_EQ_(a, b, )
#define SS_EQ_FATAL(a, b) SS_EQ_(a, b, _FATAL)

/* a <= b, printing both on failure. */
#define SS_LE(a, b)                                                                                \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(a_ <= b_))                                                                           \
            fprintf(stderr, "\n%s:%d: %s = %g, expected <= %s = %g\n", __FILE__, __LINE__, #a, a_, \
                    #b, b_);                                                                       \
        CU_ASSERT(a_ <= b_);                                                                       \
    } while (0)

/* got OP want for integers (signed, or unsigned with SS_CMP_U); prints both on failure. */
#define SS_CMP_(T, fmt, got, op, want)                                                           \
    do {                                                                                         \
        T got_ = (T)(got), want_ = (T)(want);                                                    \
        int ok_ = got_ op want_;                                                                 \
        if (!ok_)                                                                                \
            fprintf(stderr, "\n%s:%d: %s is " fmt ", expected %s " fmt "\n", __FILE__, __LINE__, \
                    #got, got_, #op, want_);                                                     \
        CU_ASSERT(ok_);                                                                          \
    } while (0)
#define SS_CMP(got, op, want)   SS_CMP_(long long, "%lld", got, op, want)
#define SS_CMP_U(got, op, want) SS_CMP_(unsigned long long, "%llu", got, op, want)

/* String equality (NULL never equals); prints both on failure. */
#define SS_STR_EQ(got, want)                                                                      \
    do {                                                                                          \
        const char *got_ = (got), *want_ = (want);                                                \
        int ok_ = got_ != NULL && want_ != NULL && strcmp(got_, want_) == 0;                      \
        if (!ok_)                                                                                 \
            fprintf(stderr, "\n%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #got, \
                    got_ ? got_ : "(null)", want_ ? want_ : "(null)");                            \
        CU_ASSERT(ok_);                                                                           \
    } while (0)

/* String contains; prints the string on failure. */
#define SS_CONTAINS(s, sub)                                                                  \
    do {                                                                                     \
        const char *s_ = (s);                                                                \
        int ok_ = s_ && strstr(s_, (sub)) != NULL;                                           \
        if (!ok_)                                                                            \
            fprintf(stderr, "\n%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                    s_ ? s_ : "(null)", (sub));                                              \
        CU_ASSERT(ok_);                                                                      \
    } while (0)

typedef struct {
    int tid;
    hts_pos_t pos; /* 0-based leftmost */
    int len;       /* all-match CIGAR of this length */
} ss_test_read_t;

static inline int ss_test_read_cmp(const void *pa, const void *pb)
{
    const ss_test_read_t *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/*
 * Write a coordinate-sorted BAM with the given contigs and single-end reads
 * (sorted here), then index it (BAI, or CSI when csi). Returns 0 or -1.
 */
static inline int ss_test_write_bam(const char *path, int n_ctg, const char *const *names,
                                    const hts_pos_t *lens, ss_test_read_t *reads, int n_reads,
                                    int csi)
{
    qsort(reads, (size_t)n_reads, sizeof(*reads), ss_test_read_cmp);
    samFile *fp = sam_open(path, "wb");
    sam_hdr_t *h = sam_hdr_init();
    bam1_t *b = bam_init1();
    int rc = -1;
    char *seq = NULL, *qual = NULL;
    if (!fp || !h || !b)
        goto out;
    if (sam_hdr_add_line(h, "HD", "VN", "1.6", "SO", "coordinate", NULL) < 0)
        goto out;
    for (int i = 0; i < n_ctg; i++) {
        char len[32];
        snprintf(len, sizeof(len), "%lld", (long long)lens[i]);
        if (sam_hdr_add_line(h, "SQ", "SN", names[i], "LN", len, NULL) < 0)
            goto out;
    }
    if (sam_hdr_write(fp, h) < 0)
        goto out;
    for (int i = 0; i < n_reads; i++) {
        char name[32];
        int l = reads[i].len;
        snprintf(name, sizeof(name), "r%d", i);
        seq = realloc(seq, (size_t)l + 1);
        qual = realloc(qual, (size_t)l + 1);
        if (!seq || !qual)
            goto out;
        /* pseudo-random bases, so BGZF compresses them like real reads */
        uint32_t x = 2654435761u * (uint32_t)(i + 1);
        for (int j = 0; j < l; j++) {
            x = x * 1103515245u + 12345u;
            seq[j] = "ACGT"[(x >> 16) & 3];
            qual[j] = (char)(20 + ((x >> 20) & 15));
        }
        uint32_t cigar = bam_cigar_gen(l, BAM_CMATCH);
        if (bam_set1(b, strlen(name), name, 0, reads[i].tid, reads[i].pos, 60, 1, &cigar, -1, -1, 0,
                     (size_t)l, seq, qual, 0) < 0)
            goto out;
        if (sam_write1(fp, h, b) < 0)
            goto out;
    }
    rc = 0;
out:
    free(seq);
    free(qual);
    if (b)
        bam_destroy1(b);
    if (h)
        sam_hdr_destroy(h);
    if (fp && sam_close(fp) < 0)
        rc = -1;
    if (rc == 0 && sam_index_build(path, csi ? 14 : 0) < 0)
        rc = -1;
    return rc;
}

/* A fresh path under /tmp for this test process: /tmp/ss-<tag>-<pid>-<n><ext>. */
static inline const char *ss_test_path(const char *tag, const char *ext)
{
    static char buf[8][256];
    static int n;
    char *p = buf[n % 8];
    snprintf(p, sizeof(buf[0]), "/tmp/ss-%s-%ld-%d%s", tag, (long)getpid(), n, ext);
    n++;
    return p;
}

/* Run the registered CUnit suites; exit status 0 only if everything passed. */
static inline int ss_test_run(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

#endif
