/*
 * test_enc.c -- unit tests for io/'s record encoders: the BAM record and
 * header serializer (compared with htslib's own bam_write1 and
 * bam_hdr_write, and read back through htslib), the BGZF block packer and
 * the CRAM per-shard framing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <htslib/bgzf.h>
#include <htslib/faidx.h>

#include <htslib/cram.h>
#include <htslib/kstring.h>
#include <htslib/thread_pool.h>

#include "../io/ss_encode.h"

/* The empty block that ends a BGZF file (SAM spec 4.1.2). */
#define BGZF_EOF "\037\213\010\4\0\0\0\0\0\377\6\0\102\103\2\0\033\0\3\0\0\0\0\0\0\0\0\0"

static char tmpdir[] = "/tmp/test_enc.XXXXXX";
static char path_buf[4][512];

static const char *tmp_path(int slot, const char *name)
{
    snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", tmpdir, name);
    return path_buf[slot];
}

static const char *HDR = "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:1000\n@SQ\tSN:c2\tLN:500\n"
                         "@RG\tID:g1\tSM:s\n";

static sam_hdr_t *make_header(void)
{
    sam_hdr_t *h = sam_hdr_parse(strlen(HDR), HDR);
    CU_ASSERT_FATAL(h != NULL);
    return h;
}

static char ref_c1[1001], ref_c2[501];

/* SAM lines covering the layout: aux of every type, unmapped, '*' fields, long names. */
static void sam_lines(kstring_t *ks)
{
    char name254[255];
    memset(name254, 'n', 254);
    name254[254] = '\0';
    ks->l = 0;
    ksprintf(ks,
             "r1\t99\tc1\t11\t60\t5M2I3M1D10M\t=\t101\t120\t%.20s\t%.20s\tRG:Z:g1\tAS:i:-5\t"
             "XA:A:x\tXc:i:200\tXs:i:-300\tXi:i:70000\tXf:f:1.5\tXB:B:c,1,-2\tXH:H:1AE3\t"
             "XS:B:S,1,65535\tXI:B:i,-1,2\tXF:B:f,0.5\n",
             ref_c1 + 10, "IIIIIIIIIIIIIIIIIIIIIIII");
    ksprintf(ks, "r2\t4\tc1\t50\t0\t*\t*\t0\t0\tACGTN\t*\n");
    ksprintf(ks, "%s\t0\tc2\t1\t255\t20M\t*\t0\t0\t%.20s\t*\n", name254, ref_c2);
    ksprintf(ks, "r4\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n");
    ksprintf(ks, "r5\t16\tc1\t900\t7\t3S17M\tc2\t40\t0\t%.20s\t%.20s\tNM:i:0\n", ref_c1 + 896,
             "ABCDEFGHIJKLMNOPQRST");
}

/* htslib's bytes for b: bam_write1 into an uncompressed BGZF file, read back raw. */
static void htslib_record_bytes(const bam1_t *b, kstring_t *out)
{
    const char *p = tmp_path(0, "ref_rec.bin");
    BGZF *fp = bgzf_open(p, "w0");
    CU_ASSERT_FATAL(fp != NULL);
    CU_ASSERT_FATAL(bam_write1(fp, b) >= 0);
    CU_ASSERT_FATAL(bgzf_close(fp) == 0);
    BGZF *in = bgzf_open(p, "r");
    CU_ASSERT_FATAL(in != NULL);
    char buf[65536];
    ssize_t n;
    out->l = 0;
    while ((n = bgzf_read(in, buf, sizeof(buf))) > 0)
        kputsn(buf, n, out);
    bgzf_close(in);
}

static void test_record_bytes_equal_htslib(void)
{
    sam_hdr_t *h = make_header();
    kstring_t lines = KS_INITIALIZE, line = KS_INITIALIZE, ours = KS_INITIALIZE,
              theirs = KS_INITIALIZE;
    sam_lines(&lines);
    bam1_t *b = bam_init1();
    char *save = NULL;
    int n = 0;
    for (char *l = strtok_r(lines.s, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
        kstring_t s = {strlen(l), strlen(l) + 1, l};
        CU_ASSERT_FATAL(sam_parse1(&s, h, b) >= 0);
        ours.l = 0;
        CU_ASSERT_EQUAL_FATAL(ss_bam_encode(b, &ours), 0);
        htslib_record_bytes(b, &theirs);
        if (ours.l != theirs.l || memcmp(ours.s, theirs.s, ours.l) != 0)
            fprintf(stderr, "\nrecord %d: ours %zu bytes, htslib %zu bytes\n", n, ours.l, theirs.l);
        CU_ASSERT_EQUAL(ours.l, theirs.l);
        CU_ASSERT(ours.l == theirs.l && memcmp(ours.s, theirs.s, ours.l) == 0);
    }
    CU_ASSERT_EQUAL(n, 5);
    bam_destroy1(b);
    sam_hdr_destroy(h);
    free(lines.s), free(line.s), free(ours.s), free(theirs.s);
}

/* Serialize records + header into a BAM with our packer; htslib must read the same records. */
static void test_round_trip_through_htslib(void)
{
    sam_hdr_t *h = make_header();
    kstring_t lines = KS_INITIALIZE, raw = KS_INITIALIZE, file = KS_INITIALIZE,
              want = KS_INITIALIZE, got = KS_INITIALIZE;
    ss_bgzf_pack_t z;
    CU_ASSERT_FATAL(ss_bgzf_pack_init(&z, 6) == 0);
    CU_ASSERT_FATAL(ss_bam_encode_header(h, &raw) == 0);
    CU_ASSERT_FATAL(ss_bgzf_pack_write(&z, raw.s, raw.l, 0, &file) == 0);
    CU_ASSERT_FATAL(ss_bgzf_pack_flush(&z, &file) == 0);

    sam_lines(&lines);
    bam1_t *b = bam_init1();
    char *save = NULL;
    /* many copies, so records cross several 64 KiB blocks */
    for (int copy = 0; copy < 400; copy++) {
        kstring_t dup = KS_INITIALIZE;
        kputsn(lines.s, lines.l, &dup);
        save = NULL;
        for (char *l = strtok_r(dup.s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            kstring_t s = {strlen(l), strlen(l) + 1, l};
            CU_ASSERT_FATAL(sam_parse1(&s, h, b) >= 0);
            raw.l = 0;
            CU_ASSERT_FATAL(ss_bam_encode(b, &raw) == 0);
            CU_ASSERT_FATAL(ss_bgzf_pack_write(&z, raw.s, raw.l, 1, &file) == 0);
            CU_ASSERT_FATAL(sam_format1(h, b, &raw) >= 0);
            kputsn(raw.s, raw.l, &want);
            kputc('\n', &want);
        }
        free(dup.s);
    }
    CU_ASSERT_FATAL(ss_bgzf_pack_flush(&z, &file) == 0);
    kputsn(BGZF_EOF, 28, &file);

    const char *p = tmp_path(1, "rt.bam");
    FILE *fp = fopen(p, "wb");
    CU_ASSERT_FATAL(fp && fwrite(file.s, 1, file.l, fp) == file.l && fclose(fp) == 0);
    samFile *in = sam_open(p, "r");
    CU_ASSERT_FATAL(in != NULL);
    sam_hdr_t *h2 = sam_hdr_read(in);
    CU_ASSERT_FATAL(h2 != NULL);
    CU_ASSERT_STRING_EQUAL(sam_hdr_str(h2), sam_hdr_str(h));
    int r;
    while ((r = sam_read1(in, h2, b)) >= 0) {
        CU_ASSERT_FATAL(sam_format1(h2, b, &raw) >= 0);
        kputsn(raw.s, raw.l, &got);
        kputc('\n', &got);
    }
    CU_ASSERT_EQUAL(r, -1);
    CU_ASSERT_EQUAL(got.l, want.l);
    CU_ASSERT(got.l == want.l && memcmp(got.s, want.s, got.l) == 0);

    /* every block holds at most BGZF_BLOCK_SIZE input bytes, and records do not straddle */
    BGZF *bg = bgzf_open(p, "r");
    CU_ASSERT_FATAL(bg != NULL);
    int blocks = 0;
    while (bgzf_read_block(bg) == 0 && bg->block_length > 0) {
        CU_ASSERT(bg->block_length <= BGZF_BLOCK_SIZE);
        blocks++;
    }
    CU_ASSERT(blocks > 3);
    bgzf_close(bg);

    sam_close(in);
    sam_hdr_destroy(h2);
    sam_hdr_destroy(h);
    bam_destroy1(b);
    ss_bgzf_pack_destroy(&z);
    free(lines.s), free(raw.s), free(file.s), free(want.s), free(got.s);
}

static void test_header_bytes_equal_htslib(void)
{
    sam_hdr_t *h = make_header();
    kstring_t ours = KS_INITIALIZE, theirs = KS_INITIALIZE;
    CU_ASSERT_FATAL(ss_bam_encode_header(h, &ours) == 0);
    const char *p = tmp_path(0, "hdr.bin");
    BGZF *fp = bgzf_open(p, "w0");
    CU_ASSERT_FATAL(fp && bam_hdr_write(fp, h) == 0 && bgzf_close(fp) == 0);
    BGZF *in = bgzf_open(p, "r");
    char buf[4096];
    ssize_t n;
    while ((n = bgzf_read(in, buf, sizeof(buf))) > 0)
        kputsn(buf, n, &theirs);
    bgzf_close(in);
    CU_ASSERT_EQUAL(ours.l, theirs.l);
    CU_ASSERT(ours.l == theirs.l && memcmp(ours.s, theirs.s, ours.l) == 0);
    sam_hdr_destroy(h);
    free(ours.s), free(theirs.s);
}

static void test_long_cigar_and_limits(void)
{
    enum { N = 70000 };
    uint32_t *cig = malloc(N * sizeof(*cig));
    for (int i = 0; i < N; i++)
        cig[i] = bam_cigar_gen(1, i % 2 ? BAM_CDEL : BAM_CMATCH);
    char *seq = malloc(N / 2 + 1);
    memset(seq, 'A', N / 2);
    bam1_t *b = bam_init1();
    CU_ASSERT_FATAL(bam_set1(b, 4, "long", 0, 0, 100, 60, N, cig, -1, -1, 0, N / 2, seq, NULL, 0) >=
                    0);
    kstring_t ours = KS_INITIALIZE, theirs = KS_INITIALIZE;
    CU_ASSERT_FATAL(ss_bam_encode(b, &ours) == 0);
    htslib_record_bytes(b, &theirs);
    CU_ASSERT(ours.l == theirs.l && memcmp(ours.s, theirs.s, ours.l) == 0);

    b->core.pos = (hts_pos_t)INT32_MAX + 1;
    ours.l = 0;
    errno = 0;
    CU_ASSERT_EQUAL(ss_bam_encode(b, &ours), -1);
    CU_ASSERT_EQUAL(errno, EOVERFLOW);
    CU_ASSERT_EQUAL(ours.l, 0);

    bam_destroy1(b);
    free(cig), free(seq), free(ours.s), free(theirs.s);
}

static void test_bgzf_big_record_and_empty_flush(void)
{
    ss_bgzf_pack_t z;
    kstring_t out = KS_INITIALIZE;
    CU_ASSERT_FATAL(ss_bgzf_pack_init(&z, 1) == 0);
    CU_ASSERT_EQUAL(ss_bgzf_pack_flush(&z, &out), 0);
    CU_ASSERT_EQUAL(out.l, 0); /* nothing pending: no empty block (that would read as EOF) */
    size_t big = 3 * BGZF_BLOCK_SIZE / 2;
    char *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)(i * 7);
    CU_ASSERT_EQUAL(ss_bgzf_pack_write(&z, "xy", 2, 1, &out), 0);
    CU_ASSERT_EQUAL(ss_bgzf_pack_write(&z, data, big, 1, &out), 0);
    CU_ASSERT_EQUAL(ss_bgzf_pack_flush(&z, &out), 0);
    kputsn(BGZF_EOF, 28, &out);
    const char *p = tmp_path(0, "big.gz");
    FILE *fp = fopen(p, "wb");
    CU_ASSERT_FATAL(fp && fwrite(out.s, 1, out.l, fp) == out.l && fclose(fp) == 0);
    BGZF *in = bgzf_open(p, "r");
    char *back = malloc(big + 16);
    CU_ASSERT_EQUAL(bgzf_read(in, back, big + 16), (ssize_t)(big + 2));
    CU_ASSERT(memcmp(back, "xy", 2) == 0 && memcmp(back + 2, data, big) == 0);
    bgzf_close(in);
    ss_bgzf_pack_destroy(&z);
    free(data), free(back), free(out.s);
}

/* Two shards written by separate CRAM writers concatenate into one valid CRAM. */
/* Pseudo-random bytes that compress a little, so blocks differ in size. */
static void fill_bytes(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)("ACGT"[(seed >> 16) & 3] + ((seed >> 20) & 1));
    }
}

/* Records of many sizes through a pack, whole or split; the bytes it wrote. With
 * busy, the writers' gauge goes up and down, so blocks go now to the pool, now not. */
static void pack_records(ss_bgzf_pack_t *z, kstring_t *file, atomic_int *busy)
{
    static uint8_t rec[3 * BGZF_BLOCK_SIZE];
    for (int i = 0; i < 400; i++) {
        size_t len = (size_t)(i * 7919) % 9000 + 1;
        if (i % 97 == 0)
            len = sizeof(rec); /* larger than a block */
        fill_bytes(rec, len, (uint32_t)i);
        if (busy)
            atomic_store(busy, (i / 37) % 2);
        CU_ASSERT_FATAL(ss_bgzf_pack_write(z, rec, len, i % 3 != 0, file) == 0);
    }
    CU_ASSERT_FATAL(ss_bgzf_pack_flush(z, file) == 0);
}

/* Blocks compressed on a pool land in order: the bytes of compressing in the writer. */
static void test_bgzf_async_same_bytes(void)
{
    kstring_t sync_out = KS_INITIALIZE, async_out = KS_INITIALIZE, dropped = KS_INITIALIZE,
              mixed_out = KS_INITIALIZE;
    ss_bgzf_pack_t a, b, c;
    atomic_int busy = 0;
    hts_tpool *pool = hts_tpool_init(3);
    CU_ASSERT_FATAL(pool != NULL);
    CU_ASSERT_FATAL(ss_bgzf_pack_init(&a, 6) == 0 && ss_bgzf_pack_init(&b, 6) == 0);
    CU_ASSERT_FATAL(ss_bgzf_pack_async(&b, pool, NULL, 0) == 0);
    CU_ASSERT_FATAL(ss_bgzf_pack_init(&c, 6) == 0 && ss_bgzf_pack_async(&c, pool, &busy, 1) == 0);
    pack_records(&a, &sync_out, NULL);
    pack_records(&c, &mixed_out, &busy);
    CU_ASSERT(mixed_out.l == sync_out.l && memcmp(mixed_out.s, sync_out.s, sync_out.l) == 0);
    /* a failed shard's blocks are dropped, and the next shard starts clean */
    static uint8_t junk[5 * BGZF_BLOCK_SIZE];
    fill_bytes(junk, sizeof(junk), 7);
    CU_ASSERT_FATAL(ss_bgzf_pack_write(&b, junk, sizeof(junk), 0, &dropped) == 0);
    ss_bgzf_pack_discard(&b);
    b.len = 0;
    pack_records(&b, &async_out, NULL);
    CU_ASSERT_EQUAL(b.in_flight, 0);
    CU_ASSERT_EQUAL(async_out.l, sync_out.l);
    CU_ASSERT(async_out.l == sync_out.l && memcmp(async_out.s, sync_out.s, sync_out.l) == 0);
    ss_bgzf_pack_destroy(&a);
    ss_bgzf_pack_destroy(&b);
    ss_bgzf_pack_destroy(&c);
    hts_tpool_destroy(pool);
    free(sync_out.s), free(async_out.s), free(dropped.s), free(mixed_out.s);
}

static void test_cram_shards_concatenate(void)
{
    const char *fa = tmp_path(2, "ref.fa");
    FILE *fp = fopen(fa, "w");
    CU_ASSERT_FATAL(fp != NULL);
    fprintf(fp, ">c1\n%s\n>c2\n%s\n", ref_c1, ref_c2);
    fclose(fp);
    CU_ASSERT_FATAL(fai_build(fa) == 0);

    ss_cram_opts_t co = {.file_id = "-", .reference = fa, .level = -1};
    ss_cram_frame_t frame = {KS_INITIALIZE, KS_INITIALIZE};
    sam_hdr_t *out_hdr = make_header();
    CU_ASSERT_FATAL(ss_cram_frame_build(&out_hdr, &co, &frame) == 0);
    CU_ASSERT(frame.head.l > 26 && frame.eof.l == 38);
    kstring_t m5 = KS_INITIALIZE;
    CU_ASSERT(sam_hdr_find_tag_id(out_hdr, "SQ", "SN", "c1", "M5", &m5) == 0);

    sam_hdr_t *wh = sam_hdr_dup(out_hdr);
    ss_cram_enc_t *cw = ss_cram_enc_init(&frame, &co, wh, NULL);
    CU_ASSERT_FATAL(cw != NULL);
    kstring_t file = KS_INITIALIZE, want = KS_INITIALIZE, got = KS_INITIALIZE, line = KS_INITIALIZE;
    kputsn(frame.head.s, frame.head.l, &file);
    bam1_t *b = bam_init1();
    for (int shard = 0; shard < 3; shard++) {
        CU_ASSERT_FATAL(ss_cram_enc_begin(cw) == 0);
        for (int i = 0; shard < 2 && i < 50; i++) { /* shard 2 is empty */
            int pos = shard * 400 + i * 5;
            ksprintf(&line, "q%d_%d\t0\tc1\t%d\t60\t30M\t*\t0\t0\t%.30s\t*\n", shard, i, pos + 1,
                     ref_c1 + pos);
            line.s[--line.l] = '\0'; /* sam_parse1 takes the line without its newline */
            CU_ASSERT_FATAL(sam_parse1(&line, wh, b) >= 0);
            CU_ASSERT_FATAL(sam_format1(wh, b, &line) >= 0); /* parsing cut the line up */
            kputsn(line.s, line.l, &want), kputc('\n', &want);
            line.l = 0;
            CU_ASSERT_FATAL(ss_cram_enc_write(cw, b) == 0);
        }
        size_t before = file.l;
        CU_ASSERT_FATAL(ss_cram_enc_end(cw, &file, shard) == 0);
        CU_ASSERT(shard == 2 ? file.l == before : file.l > before);
    }
    kputsn(frame.eof.s, frame.eof.l, &file);
    const char *p = tmp_path(1, "cat.cram");
    fp = fopen(p, "wb");
    CU_ASSERT_FATAL(fp && fwrite(file.s, 1, file.l, fp) == file.l && fclose(fp) == 0);

    samFile *in = sam_open(p, "r");
    CU_ASSERT_FATAL(in != NULL);
    CU_ASSERT(hts_set_fai_filename(in, fa) == 0);
    CU_ASSERT(hts_set_opt(in, CRAM_OPT_DECODE_MD, 0) == 0);
    sam_hdr_t *h2 = sam_hdr_read(in);
    CU_ASSERT_FATAL(h2 != NULL);
    int r;
    while ((r = sam_read1(in, h2, b)) >= 0) {
        CU_ASSERT_FATAL(sam_format1(h2, b, &line) >= 0);
        kputsn(line.s, line.l, &got), kputc('\n', &got);
    }
    CU_ASSERT_EQUAL(r, -1);
    CU_ASSERT(got.l == want.l && memcmp(got.s, want.s, got.l) == 0);
    sam_close(in);

    bam_destroy1(b);
    sam_hdr_destroy(h2);
    ss_cram_enc_destroy(cw);
    sam_hdr_destroy(wh);
    sam_hdr_destroy(out_hdr);
    ss_cram_frame_free(&frame);
    free(file.s), free(want.s), free(got.s), free(line.s), free(m5.s);
}

static int suite_init(void)
{
    if (!mkdtemp(tmpdir))
        return -1;
    unsigned s = 12345;
    for (int i = 0; i < 1000; i++)
        ref_c1[i] = "ACGT"[(s = s * 1103515245 + 12345) >> 16 & 3];
    for (int i = 0; i < 500; i++)
        ref_c2[i] = "ACGT"[(s = s * 1103515245 + 12345) >> 16 & 3];
    return 0;
}

static int suite_clean(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("enc", suite_init, suite_clean);
    if (!s || !CU_add_test(s, "record bytes equal bam_write1", test_record_bytes_equal_htslib) ||
        !CU_add_test(s, "round trip through htslib", test_round_trip_through_htslib) ||
        !CU_add_test(s, "header bytes equal bam_hdr_write", test_header_bytes_equal_htslib) ||
        !CU_add_test(s, "long CIGAR and limits", test_long_cigar_and_limits) ||
        !CU_add_test(s, "BGZF big record, empty flush", test_bgzf_big_record_and_empty_flush) ||
        !CU_add_test(s, "BGZF blocks on a pool, same bytes", test_bgzf_async_same_bytes) ||
        !CU_add_test(s, "CRAM shards concatenate", test_cram_shards_concatenate)) {
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
