/*
 * test_source.c -- the record source over a reader's input (io/source.c): a
 * range returns what an htslib region query returns, in file order, each
 * record stamped with its order in the range; a new query starts the count
 * again; a BAM without unplaced reads gives an empty unplaced range; a
 * query on a contig the header lacks fails with a message.
 */
#include <sys/stat.h>

#include "../base/ss_base.h"
#include "../io/ss_reader.h"
#include "../io/ss_source.h"
#include "ss_testutil.h"

static char bam_path[320], dir_path[256];

#define N_READS 300

static int setup(void)
{
    const char *names[] = {"a", "b"};
    hts_pos_t lens[] = {20000, 5000};
    ss_test_read_t reads[N_READS];
    for (int i = 0; i < N_READS; i++)
        reads[i] = (ss_test_read_t){i % 4 == 0, (i * 61) % 4800, 100};
    snprintf(dir_path, sizeof(dir_path), "%s", ss_test_path("source", ".d"));
    if (mkdir(dir_path, 0700) != 0)
        return -1;
    snprintf(bam_path, sizeof(bam_path), "%s/in.bam", dir_path);
    return ss_test_write_bam(bam_path, 2, names, lens, reads, N_READS, 0);
}

static int teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir_path);
    return system(cmd) == 0 ? 0 : -1;
}

/* What htslib's own region query returns for [beg, end) of tid: positions in order. */
static int expected(int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t *pos, int max)
{
    samFile *fp = sam_open(bam_path, "r");
    sam_hdr_t *h = sam_hdr_read(fp);
    hts_idx_t *idx = sam_index_load(fp, bam_path);
    hts_itr_t *itr = sam_itr_queryi(idx, tid, beg, end);
    bam1_t *b = bam_init1();
    int n = 0;
    while (sam_itr_next(fp, itr, b) >= 0 && n < max)
        pos[n++] = b->core.pos;
    bam_destroy1(b);
    hts_itr_destroy(itr);
    hts_idx_destroy(idx);
    sam_hdr_destroy(h);
    sam_close(fp);
    return n;
}

static ss_reader_t *open_reader(char **paths)
{
    static ss_io_inputs_t in;
    paths[0] = bam_path;
    in = (ss_io_inputs_t){.paths = paths, .n = 1};
    ss_reader_t *rd = ss_reader_init(&in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
    SS_EQ_FATAL(ss_reader_begin(rd), 0);
    return rd;
}

static void test_range_as_htslib(void)
{
    char *paths[1];
    ss_reader_t *rd = open_reader(paths);
    ss_source_t *src = ss_reader_source(rd, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    CU_ASSERT_STRING_EQUAL(src->name, bam_path);
    bam1_t *b = bam_init1();
    hts_pos_t want[N_READS];
    const hts_pos_t ranges[][3] = {{0, 0, 20000}, {0, 1000, 1100}, {1, 0, 5000}, {0, 15000, 20000}};
    for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
        int tid = (int)ranges[k][0];
        int n = expected(tid, ranges[k][1], ranges[k][2], want, N_READS);
        SS_EQ_FATAL(ss_source_query(src, tid, ranges[k][1], ranges[k][2]), 0);
        int got = 0, r;
        while ((r = ss_source_next(src, b)) >= 0) {
            CU_ASSERT_FATAL(got < n);
            SS_EQ(b->core.pos, want[got]);
            SS_EQ(b->id, got); /* its order in this range: ties sort by it */
            got++;
        }
        SS_EQ(r, -1);
        SS_EQ(got, n);
    }
    bam_destroy1(b);
    ss_reader_end(rd);
    ss_reader_destroy(rd);
}

static void test_unplaced_and_bad_contig(void)
{
    char *paths[1];
    ss_reader_t *rd = open_reader(paths);
    ss_source_t *src = ss_reader_source(rd, 0);
    bam1_t *b = bam_init1();
    /* no unplaced reads in this BAM: htslib has no iterator, the source an empty range */
    SS_EQ(ss_source_query(src, SS_IO_UNPLACED, 0, 0), 0);
    SS_EQ(ss_source_next(src, b), -1);
    ss_error_reset();
    CU_ASSERT(ss_source_query(src, 7, 0, 100) < 0);
    CU_ASSERT(ss_error_raised());
    SS_CONTAINS(ss_error_message(), "in.bam");
    ss_error_reset();
    CU_ASSERT_PTR_NULL(ss_reader_source(rd, 1));
    bam_destroy1(b);
    ss_reader_end(rd);
    ss_reader_destroy(rd);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("source", setup, teardown);
    if (!s || !CU_add_test(s, "range_as_htslib", test_range_as_htslib) ||
        !CU_add_test(s, "unplaced_and_bad_contig", test_unplaced_and_bad_contig))
        return 1;
    return ss_test_run();
}
