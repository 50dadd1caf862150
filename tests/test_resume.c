/*
 * test_resume.c -- the resume manifest's format (framework/resume/resume_manifest.c):
 * records survive encoding and a damaged one is rejected; a manifest reads
 * back with its run id, identity and records; a torn last record, and
 * everything after a damaged one, is ignored; a damaged header or a missing
 * file is told apart; queued records reach the file when flushed, or within
 * SS_RESUME_SYNC_S by the log's own thread; the
 * identity comparison names the first line that differs.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../framework/resume/resume.h"
#include "ss_testutil.h"

static char dir[256];

static void path_in(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

static ss_resume_rec_t rec_of(uint32_t idx)
{
    ss_resume_rec_t r = {.idx = idx,
                         .off = 1000 + 77 * idx,
                         .size = 77,
                         .crc = 0xdeadbeef ^ idx,
                         .reads = 10 * idx,
                         .bases = 100 * idx};
    for (int i = 0; i < SS_KERNEL_COUNTERS; i++)
        r.counts[i] = idx + (uint64_t)i;
    for (int i = 0; i < SS_SUMMARY_N; i++)
        r.summary[i] = (uint64_t)i << 40 | idx;
    return r;
}

static void test_record_roundtrip(void)
{
    unsigned char buf[SS_RESUME_REC_SIZE];
    ss_resume_rec_t in = rec_of(41), out;
    ss_resume_rec_encode(&in, buf);
    SS_EQ(ss_resume_rec_decode(buf, &out), 0);
    CU_ASSERT(memcmp(&in, &out, sizeof(in)) == 0);
    for (int i = 0; i < SS_RESUME_REC_SIZE; i += 13) {
        buf[i] ^= 0x10; /* any flipped byte, payload or checksum, fails the record */
        SS_EQ(ss_resume_rec_decode(buf, &out), -1);
        buf[i] ^= 0x10;
    }
}

/* Write a manifest of n_init + n_added records and flush them. */
static void write_manifest(const char *path, int n_init, int n_added)
{
    ss_resume_rec_t init[8];
    for (int i = 0; i < n_init; i++)
        init[i] = rec_of((uint32_t)i);
    ss_resume_log_t *l =
        ss_resume_log_create(path, 0x1234abcdULL, "kernel k\ninput 1 2 a\n", -1, init, n_init);
    CU_ASSERT_FATAL(l != NULL);
    for (int i = 0; i < n_added; i++) {
        ss_resume_rec_t r = rec_of((uint32_t)(n_init + i));
        SS_EQ(ss_resume_log_add(l, &r), 0);
    }
    SS_EQ(ss_resume_log_flush(l), 0);
    ss_resume_log_close(l);
}

static void test_write_read(void)
{
    char path[300];
    path_in(path, sizeof(path), "m1");
    write_manifest(path, 2, 3);
    uint64_t nonce;
    char *id;
    ss_resume_rec_t *recs;
    int n;
    SS_EQ_FATAL(ss_resume_read(path, &nonce, &id, &recs, &n), 0);
    SS_CMP_U(nonce, ==, 0x1234abcdULL);
    SS_STR_EQ(id, "kernel k\ninput 1 2 a\n");
    SS_EQ(n, 5);
    for (int i = 0; i < n; i++) {
        ss_resume_rec_t want = rec_of((uint32_t)i);
        CU_ASSERT(memcmp(&recs[i], &want, sizeof(want)) == 0);
    }
    free(id);
    free(recs);
}

/* Records only count up to the first that is not whole and intact. */
static void test_torn_and_damaged(void)
{
    char path[300];
    path_in(path, sizeof(path), "m2");
    write_manifest(path, 0, 4);
    int fd = open(path, O_WRONLY | O_APPEND);
    CU_ASSERT_FATAL(fd >= 0);
    unsigned char half[SS_RESUME_REC_SIZE / 2] = {1, 2, 3};
    SS_EQ(write(fd, half, sizeof(half)), (ssize_t)sizeof(half));
    close(fd);
    uint64_t nonce;
    char *id;
    ss_resume_rec_t *recs;
    int n;
    SS_EQ_FATAL(ss_resume_read(path, &nonce, &id, &recs, &n), 0);
    SS_EQ(n, 4);
    free(id), free(recs);
    /* damage record 2 (of 0..3): records 2 and 3 no longer count */
    struct stat st;
    CU_ASSERT_FATAL(stat(path, &st) == 0);
    off_t at = st.st_size - (off_t)sizeof(half) - 2 * SS_RESUME_REC_SIZE + 9;
    fd = open(path, O_WRONLY);
    CU_ASSERT_FATAL(fd >= 0);
    SS_EQ(pwrite(fd, "Z", 1, at), 1);
    close(fd);
    SS_EQ_FATAL(ss_resume_read(path, &nonce, &id, &recs, &n), 0);
    SS_EQ(n, 2);
    free(id), free(recs);
}

static void test_bad_header_missing_file(void)
{
    char path[300];
    path_in(path, sizeof(path), "m3");
    write_manifest(path, 1, 0);
    int fd = open(path, O_WRONLY);
    CU_ASSERT_FATAL(fd >= 0);
    SS_EQ(pwrite(fd, "K", 1, 30), 1); /* in the run id: the header's CRC fails */
    close(fd);
    uint64_t nonce;
    char *id = NULL;
    ss_resume_rec_t *recs = NULL;
    int n;
    SS_EQ(ss_resume_read(path, &nonce, &id, &recs, &n), -2);
    path_in(path, sizeof(path), "missing");
    SS_EQ(ss_resume_read(path, &nonce, &id, &recs, &n), -1);
    path_in(path, sizeof(path), "m3.new");
    SS_EQ(access(path, F_OK), -1); /* the rename left no .new behind */
}

/* A queued record reaches the file with a flush, or by itself within SS_RESUME_SYNC_S. */
static void test_flush_batches(void)
{
    char path[300];
    path_in(path, sizeof(path), "m4");
    ss_resume_log_t *l = ss_resume_log_create(path, 7, "kernel k\n", -1, NULL, 0);
    CU_ASSERT_FATAL(l != NULL);
    ss_resume_rec_t r = rec_of(0);
    SS_EQ(ss_resume_log_add(l, &r), 0);
    SS_EQ(ss_resume_log_flush(l), 0);
    uint64_t nonce;
    char *id;
    ss_resume_rec_t *recs;
    int n;
    SS_EQ_FATAL(ss_resume_read(path, &nonce, &id, &recs, &n), 0);
    SS_EQ(n, 1);
    free(id), free(recs);
    r = rec_of(1);
    SS_EQ(ss_resume_log_add(l, &r), 0);
    usleep((useconds_t)(SS_RESUME_SYNC_S * 1.6e6)); /* the log's thread appends it */
    SS_EQ_FATAL(ss_resume_read(path, &nonce, &id, &recs, &n), 0);
    SS_EQ(n, 2);
    free(id), free(recs);
    ss_resume_log_close(l);
}

static void test_identity_diff(void)
{
    ss_resume_diff_t d;
    const char *a = "kernel pileup\noptions pileup -B x.bam\ninput 10 5.0 x.bam\n";
    SS_EQ(ss_resume_identity_diff(a, a, &d), 0);
    SS_EQ(ss_resume_identity_diff(a, "kernel pileup\noptions pileup -B x.bam\ninput 10 6.0 x.bam\n",
                                  &d),
          1);
    SS_STR_EQ(d.key, "input");
    SS_STR_EQ(d.was, "input 10 5.0 x.bam");
    SS_STR_EQ(d.now, "input 10 6.0 x.bam");
    SS_EQ(ss_resume_identity_diff(a, "kernel pileup\noptions pileup -B -Q 20 x.bam\n", &d), 1);
    SS_STR_EQ(d.key, "options");
    /* one text ends first: the key comes from the line the other still has */
    SS_EQ(ss_resume_identity_diff("kernel pileup\n", "kernel pileup\nbed 1 2 a.bed\n", &d), 1);
    SS_STR_EQ(d.key, "bed");
    SS_STR_EQ(d.was, "");
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/test_resume.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir) || CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("resume", NULL, NULL);
    if (!s || !CU_add_test(s, "record_roundtrip", test_record_roundtrip) ||
        !CU_add_test(s, "write_read", test_write_read) ||
        !CU_add_test(s, "torn_and_damaged", test_torn_and_damaged) ||
        !CU_add_test(s, "bad_header_missing_file", test_bad_header_missing_file) ||
        !CU_add_test(s, "flush_batches", test_flush_batches) ||
        !CU_add_test(s, "identity_diff", test_identity_diff))
        return 1;
    int rc = ss_test_run();
    const char *names[] = {"m1", "m2", "m3", "m4"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[300];
        path_in(p, sizeof(p), names[i]);
        unlink(p);
    }
    rmdir(dir);
    return rc;
}
