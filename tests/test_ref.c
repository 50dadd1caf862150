/*
 * test_ref.c -- the windowed reference (io/ref.c): covered positions read as
 * the FASTA has them, windows grow and are given back, contigs switch and
 * come back, a contig missing from the FASTA answers NULL.
 */
#include <htslib/faidx.h>

#include "../io/ss_io.h"
#include "ss_testutil.h"

#define LEN_A 3000000 /* several windows long */
#define LEN_B 777

static char fasta[256];
static char *seq_a;

static char base_at(hts_pos_t p)
{
    return "ACGTacgtNn"[(p * 7 + p / 13) % 10];
}

static int setup(void)
{
    snprintf(fasta, sizeof(fasta), "%s", ss_test_path("ref", ".fa"));
    FILE *fp = fopen(fasta, "w");
    if (!fp || !(seq_a = malloc(LEN_A)))
        return -1;
    fprintf(fp, ">a desc\n");
    for (hts_pos_t p = 0; p < LEN_A; p++) {
        seq_a[p] = base_at(p);
        fputc(seq_a[p], fp);
        if (p % 60 == 59)
            fputc('\n', fp);
    }
    fprintf(fp, "\n>b\n");
    for (hts_pos_t p = 0; p < LEN_B; p++)
        fputc("ACGT"[p % 4], fp);
    fputc('\n', fp);
    if (fclose(fp) != 0)
        return -1;
    return fai_build(fasta);
}

static int teardown(void)
{
    char p[300];
    unlink(fasta);
    snprintf(p, sizeof(p), "%s.fai", fasta);
    unlink(p);
    free(seq_a);
    return 0;
}

static int same(const char *s, hts_pos_t b, hts_pos_t e)
{
    for (hts_pos_t p = b; p < e; p++)
        if (s[p] != seq_a[p]) {
            fprintf(stderr, "\nposition %lld: got %c, want %c\n", (long long)p, s[p], seq_a[p]);
            return 0;
        }
    return 1;
}

static void test_windows(void)
{
    ss_ref_t *r = ss_ref_init(fasta);
    SS_EQ_FATAL(r != NULL, 1);
    hts_pos_t len = 0;
    const char *a = ss_ref_get(r, 0, "a", &len);
    SS_EQ_FATAL(a != NULL, 1);
    SS_EQ(len, LEN_A);
    SS_EQ(ss_ref_cover(r, 0, 100, 200), 0);
    SS_EQ(same(a, 100, 200), 1);
    /* a later stretch, then an earlier one: the window fills the gap */
    SS_EQ(ss_ref_cover(r, 0, 2500000, 2500100), 0);
    SS_EQ(same(a, 2500000, 2500100), 1);
    SS_EQ(ss_ref_cover(r, 0, 0, 50), 0);
    SS_EQ(same(a, 0, 50), 1);
    SS_EQ(same(a, 100, 200), 1);
    /* past the end is clipped */
    SS_EQ(ss_ref_cover(r, 0, LEN_A - 10, LEN_A + 1000), 0);
    SS_EQ(same(a, LEN_A - 10, LEN_A), 1);
    /* given back, then read again */
    ss_ref_release(r);
    SS_EQ(ss_ref_cover(r, 0, 1234567, 1234600), 0);
    SS_EQ(same(a, 1234567, 1234600), 1);

    /* a second contig, and back: the first keeps its address and its window */
    const char *b = ss_ref_get(r, 1, "b", &len);
    SS_EQ_FATAL(b != NULL, 1);
    SS_EQ(len, LEN_B);
    SS_EQ(ss_ref_cover(r, 1, 0, LEN_B), 0);
    SS_EQ(b[0], 'A');
    SS_EQ(b[LEN_B - 1], "ACGT"[(LEN_B - 1) % 4]);
    SS_EQ(ss_ref_get(r, 0, "a", &len) == a, 1);
    SS_EQ(same(a, 1234567, 1234600), 1);
    /* a contig missing from the FASTA */
    SS_EQ(ss_ref_get(r, 2, "nope", &len) == NULL, 1);
    SS_EQ(len, 0);
    SS_EQ(ss_ref_cover(r, 2, 0, 10), 0);
    ss_ref_destroy(r);
}

static void test_no_reference(void)
{
    ss_ref_t *r = ss_ref_init(NULL);
    hts_pos_t len = 5;
    SS_EQ(ss_ref_get(r, 0, "a", &len) == NULL, 1);
    SS_EQ(len, 0);
    SS_EQ(ss_ref_cover(r, 0, 0, 10), 0);
    ss_ref_release(r);
    ss_ref_destroy(r);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("ref", setup, teardown);
    CU_add_test(s, "covered windows read as the FASTA", test_windows);
    CU_add_test(s, "no reference", test_no_reference);
    return ss_test_run();
}
