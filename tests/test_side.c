/*
 * test_side.c -- the framework's side outputs: reductions combine by their
 * op over workers, histograms grow and sum (also from threads at once); a
 * BGZF stream's CSI index built while writing has the bytes tabix -p bed
 * --csi writes, including lines that end exactly at a block's end and a
 * stream without lines.
 */
#include <pthread.h>

#include <htslib/bgzf.h>
#include <htslib/tbx.h>

#include "../framework/out/compress.h"
#include "../framework/out/side.h"
#include "ss_testutil.h"

static void test_identity_and_combine(void)
{
    ss_reduce_op_t ops[3] = {SS_REDUCE_SUM, SS_REDUCE_MIN, SS_REDUCE_MAX};
    int64_t acc[3], v[3] = {5, -7, 9};
    ss_reduce_identity(acc, ops, 3);
    SS_EQ(acc[0], 0);
    SS_EQ(acc[1], INT64_MAX);
    SS_EQ(acc[2], INT64_MIN);
    ss_reduce_combine(acc, v, ops, 3);
    int64_t w[3] = {1, 3, 2};
    ss_reduce_combine(acc, w, ops, 3);
    SS_EQ(acc[0], 6);
    SS_EQ(acc[1], -7);
    SS_EQ(acc[2], 9);
}

/* Two workers' values and histograms: the result is their combination. */
static void test_reduce_workers(void)
{
    ss_reduce_op_t ops[2] = {SS_REDUCE_SUM, SS_REDUCE_MIN};
    ss_reduce_t *r = ss_reduce_init(2, ops, 3, 2);
    CU_ASSERT_FATAL(r != NULL);
    SS_EQ(ss_reduce_attach(r, 0), 0);
    SS_EQ(ss_reduce_attach(r, 1), 0);
    int64_t *a = ss_reduce_values(r, 0), *b = ss_reduce_values(r, 1);
    a[0] += 10, b[0] += 32;
    a[1] = 4, b[1] = 3;
    int64_t h[1000] = {0};
    h[4] = 2;
    SS_EQ(ss_reduce_hist_add(r, 1, h, 5), 0);
    h[4] = 1, h[999] = 7;
    SS_EQ(ss_reduce_hist_add(r, 1, h, 1000), 0); /* grows */
    SS_EQ(ss_reduce_finish(r), 0);
    const int64_t *v = ss_reduce_result(r);
    SS_EQ(v[0], 42);
    SS_EQ(v[1], 3);
    size_t n;
    const int64_t *res = ss_reduce_result_hist(r, 1, &n);
    CU_ASSERT_FATAL(res != NULL && n >= 1000);
    SS_EQ(res[4], 3);
    SS_EQ(res[999], 7);
    SS_EQ(res[0], 0);
    ss_reduce_result_hist(r, 0, &n);
    SS_EQ(n, 0); /* never touched */
    ss_reduce_destroy(r);
}

typedef struct {
    ss_reduce_t *r;
    int id;
} adder_t;

static void *add_many(void *arg)
{
    adder_t *a = arg;
    int64_t bins[300];
    for (int i = 0; i < 300; i++)
        bins[i] = 1;
    for (int k = 0; k < 200; k++)
        if (ss_reduce_hist_add(a->r, 0, bins, (size_t)(100 + (k * 7 + a->id) % 200)) < 0)
            return a;
    return NULL;
}

/* Four workers adding to one histogram at once: every bin counted. */
static void test_hist_threads(void)
{
    ss_reduce_t *r = ss_reduce_init(0, NULL, 1, 4);
    CU_ASSERT_FATAL(r != NULL);
    pthread_t t[4];
    adder_t a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (adder_t){r, i};
        SS_EQ(ss_reduce_attach(r, i), 0);
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, add_many, &a[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CU_ASSERT(bad == NULL);
    }
    SS_EQ(ss_reduce_finish(r), 0);
    size_t n;
    const int64_t *h = ss_reduce_result_hist(r, 0, &n);
    SS_EQ(h[0], 800); /* every add covers bin 0 */
    int64_t want = 0;
    for (int id = 0; id < 4; id++)
        for (int k = 0; k < 200; k++)
            want += 100 + (k * 7 + id) % 200 > 150;
    SS_EQ(h[150], want);
    ss_reduce_destroy(r);
}

/* BED lines for a shard: contig, start, end, padded so lines have the given length. */
static void lines(kstring_t *s, const char *ctg, int from, int n, int width)
{
    for (int i = 0; i < n; i++) {
        size_t l0 = s->l;
        ksprintf(s, "%s\t%d\t%d\t", ctg, from + 10 * i, from + 10 * i + 10);
        while ((int)(s->l - l0) < width - 1)
            kputc('x', s);
        kputc('\n', s);
    }
}

/* Write shards (a header, BGZF pieces, the EOF block) indexing on the way; compare the
 * index with tabix's of the same file. */
static void check_index(const char *header, kstring_t *shard, int n_shards, const char *tag)
{
    char path[256], copy[256], csi[300], csi2[300];
    snprintf(path, sizeof(path), "/tmp/ss-test-side.%d.%s.bed.gz", (int)getpid(), tag);
    snprintf(copy, sizeof(copy), "/tmp/ss-test-side.%d.%s.tabix.bed.gz", (int)getpid(), tag);
    FILE *fp = fopen(path, "wb"), *cp = fopen(copy, "wb");
    CU_ASSERT_FATAL(fp && cp);
    kstring_t z = KS_INITIALIZE;
    uint64_t off = 0;
    if (header && *header) {
        SS_EQ(ss_bgzf_compress_ks(header, strlen(header), &z, 1), 0);
        fwrite(z.s, 1, z.l, fp), fwrite(z.s, 1, z.l, cp);
        off = z.l;
    }
    ss_bedidx_t *x = ss_bedidx_init(off);
    CU_ASSERT_FATAL(x != NULL);
    for (int i = 0; i < n_shards; i++) {
        ss_lineidx_t *t = NULL;
        SS_EQ(ss_lineidx_scan(shard[i].s ? shard[i].s : "", shard[i].l, &t), 0);
        z.l = 0;
        if (shard[i].l)
            SS_EQ(ss_bgzf_compress_ks(shard[i].s, shard[i].l, &z, 1), 0);
        SS_EQ(ss_bedidx_add(x, t, off, z.s, z.l), 0);
        if (z.l) /* an empty shard writes nothing (and fwrite may not take NULL) */
            fwrite(z.s, 1, z.l, fp), fwrite(z.s, 1, z.l, cp);
        off += z.l;
        ss_lineidx_destroy(t);
    }
    fwrite(ss_bgzf_eof, 1, sizeof(ss_bgzf_eof), fp), fwrite(ss_bgzf_eof, 1, 28, cp);
    fclose(fp), fclose(cp);
    snprintf(csi, sizeof(csi), "%s.csi", path);
    snprintf(csi2, sizeof(csi2), "%s.csi", copy);
    SS_EQ(ss_bedidx_save(x, off, path, csi), 0);
    ss_bedidx_destroy(x);
    SS_EQ(tbx_index_build(copy, 14, &tbx_conf_bed), 0);
    kstring_t a = KS_INITIALIZE, b = KS_INITIALIZE;
    BGZF *fa = bgzf_open(csi, "r"), *fb = bgzf_open(csi2, "r");
    CU_ASSERT_FATAL(fa && fb);
    char buf[65536];
    ssize_t n;
    while ((n = bgzf_read(fa, buf, sizeof(buf))) > 0)
        kputsn(buf, (size_t)n, &a);
    while ((n = bgzf_read(fb, buf, sizeof(buf))) > 0)
        kputsn(buf, (size_t)n, &b);
    bgzf_close(fa), bgzf_close(fb);
    SS_EQ(a.l, b.l);
    CU_ASSERT(a.l == b.l && memcmp(a.s, b.s, a.l) == 0);
    free(a.s), free(b.s), free(z.s);
    unlink(path), unlink(copy), unlink(csi), unlink(csi2);
}

static void test_index_like_tabix(void)
{
    kstring_t s[4] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    lines(&s[0], "chrA", 0, 5000, 40);     /* several blocks */
    lines(&s[1], "chrA", 50000, 1632, 40); /* 65280 bytes: the last line ends the block */
    lines(&s[2], "chrB", 0, 3, 33);
    lines(&s[2], "chrC", 100, 2, 30); /* two contigs in one shard */
    check_index("#chrom\tstart\tend\tregion\t1X\n", s, 4, "a");
    check_index(NULL, s, 3, "b");
    for (int i = 0; i < 4; i++)
        free(s[i].s);
}

static void test_index_empty(void)
{
    kstring_t s[2] = {KS_INITIALIZE, KS_INITIALIZE};
    check_index(NULL, s, 2, "c");
    check_index("#h\n", s, 1, "d");
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("side", NULL, NULL);
    if (!s || !CU_add_test(s, "identity_and_combine", test_identity_and_combine) ||
        !CU_add_test(s, "reduce_workers", test_reduce_workers) ||
        !CU_add_test(s, "hist_threads", test_hist_threads) ||
        !CU_add_test(s, "index_like_tabix", test_index_like_tabix) ||
        !CU_add_test(s, "index_empty", test_index_empty))
        return 1;
    return ss_test_run();
}
