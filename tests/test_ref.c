/*
 * test_ref.c -- the windowed reference (io/ref.c): covered positions read as
 * the FASTA has them, windows grow and are given back, contigs switch and
 * come back, a contig missing from the FASTA answers NULL; memory that runs
 * out is an error that says so, never a contig that reads as missing; and
 * mpileup's stretch of it (mp_ref_t): loaded to the contig's ends and its
 * NUL, and the indel code's scans of a long repeat loading on as they go,
 * both ways, with the answers of the whole contig.
 */
#include <htslib/faidx.h>
#include <string.h>
#include <sys/resource.h>

#include "../base/ss_base.h"
#include "../io/ss_ref.h"
#include "../kernels/mpileup/indel/mp_indel.h"
#include "ss_testutil.h"

#define LEN_A 3000000 /* several windows long */
#define LEN_B 777
#define RUN_H 300000 /* contig h: 100 C, this many A (past several loads), 100 G */

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
    fprintf(fp, ">h\n");
    for (hts_pos_t p = 0; p < RUN_H + 200; p++)
        fputc(p < 100 ? 'C' : p < 100 + RUN_H ? 'A' : 'G', fp);
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

/* The process's address space now, from /proc/self/statm (pages). 0 if unknown. */
static size_t vm_bytes(void)
{
    FILE *fp = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (fp && fscanf(fp, "%lu", &pages) != 1)
        pages = 0;
    if (fp)
        fclose(fp);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Run under an address-space limit of what is mapped now plus 1 MB (contig a is 3 MB). */
static int tight(struct rlimit *old)
{
    size_t vm = vm_bytes();
    if (vm == 0 || getrlimit(RLIMIT_AS, old) != 0)
        return -1;
    struct rlimit r = {vm + ((size_t)1 << 20), old->rlim_max};
    return setrlimit(RLIMIT_AS, &r);
}

static void test_out_of_memory(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return; /* ASan's allocator aborts on a failed allocation instead of returning NULL */
#endif
    ss_ref_t *r = ss_ref_init(fasta);
    SS_EQ_FATAL(r != NULL, 1);
    struct rlimit old;
    hts_pos_t len = 0;
    ss_error_reset();
    SS_EQ_FATAL(tight(&old), 0);
    const char *a = ss_ref_get(r, 0, "a", &len); /* no room for its 3 MB of address space */
    SS_EQ_FATAL(setrlimit(RLIMIT_AS, &old), 0);
    SS_EQ(a == NULL, 1);
    SS_EQ(len, -1);
    SS_EQ(ss_error_raised(), 1);
    SS_EQ(strstr(ss_error_message(), "out of memory") != NULL, 1);
    /* with room again the contig is there: the failure was not cached as "missing" */
    ss_error_reset();
    a = ss_ref_get(r, 0, "a", &len);
    SS_EQ_FATAL(a != NULL, 1);
    SS_EQ(len, LEN_A);
    /*
     * The window's bases need a 3 MB buffer in htslib, which the allocator may still
     * hold from before: either they read right, or the error says out of memory
     * (not a bad FASTA).
     */
    SS_EQ_FATAL(tight(&old), 0);
    int rc = ss_ref_cover(r, 0, 0, LEN_A);
    SS_EQ_FATAL(setrlimit(RLIMIT_AS, &old), 0);
    if (rc < 0)
        SS_EQ(strstr(ss_error_message(), "out of memory") != NULL, 1);
    ss_error_reset();
    SS_EQ(ss_ref_cover(r, 0, 0, LEN_A), 0);
    SS_EQ(same(a, 0, LEN_A), 1);
    ss_ref_destroy(r);
}

/* contig tid of r as mpileup binds it: nothing loaded yet */
static mp_ref_t bind(ss_ref_t *r, int tid, const char *name)
{
    hts_pos_t len = 0;
    ss_ref_release(r);
    const char *seq = ss_ref_get(r, tid, name, &len);
    return (mp_ref_t){.seq = seq, .len = len, .src = r, .tid = tid};
}

static void test_stretch_ends(void)
{
    ss_ref_t *r = ss_ref_init(fasta);
    SS_EQ_FATAL(r != NULL, 1);
    mp_ref_t b = bind(r, 1, "b");
    SS_EQ_FATAL(b.seq != NULL, 1);
    /* before the start and past the end: clipped, and the NUL after the last base readable */
    SS_EQ(mp_ref_need(&b, -50, 10), 0);
    SS_EQ(b.seq[0], 'A');
    SS_EQ(mp_ref_need(&b, LEN_B + 10, LEN_B + 20), 0);
    SS_EQ(b.seq[LEN_B - 1], "ACGT"[(LEN_B - 1) % 4]);
    SS_EQ(b.seq[LEN_B], 0);
    SS_EQ(b.lo, 0);
    SS_EQ(b.hi, LEN_B + 1);
    /* a shard at contig a's end only: its stretch, not the contig */
    mp_ref_t a = bind(r, 0, "a");
    SS_EQ(mp_ref_need(&a, LEN_A - 100, LEN_A + 500), 0);
    SS_EQ(same(a.seq, LEN_A - 100, LEN_A), 1);
    SS_EQ(a.seq[LEN_A], 0);
    SS_EQ(a.lo, LEN_A - 100);
    ss_ref_destroy(r);
}

/* The homopolymer and repeat scans of the indel code run past what was loaded. */
static void test_stretch_scans(void)
{
    ss_ref_t *r = ss_ref_init(fasta);
    SS_EQ_FATAL(r != NULL, 1);
    mp_ref_t h = bind(r, 2, "h");
    SS_EQ_FATAL(h.seq != NULL, 1);
    SS_EQ(mp_ref_need(&h, 50, 150), 0);
    SS_EQ(mp_indel_l_run(&h, 99), RUN_H);        /* rightwards to the run's end */
    SS_EQ(mp_indel_reg(99, &h, 1, NULL), RUN_H); /* a deleted A slides along it all */
    h = bind(r, 2, "h");
    SS_EQ(mp_ref_need(&h, 100 + RUN_H - 50, 100 + RUN_H + 50), 0);
    SS_EQ(mp_indel_l_run(&h, 100 + RUN_H - 10), RUN_H); /* leftwards to its start */
    SS_EQ(h.lo <= 99, 1);
    ss_ref_destroy(r);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("ref", setup, teardown);
    CU_add_test(s, "covered windows read as the FASTA", test_windows);
    CU_add_test(s, "no reference", test_no_reference);
    CU_add_test(s, "out of memory is an error", test_out_of_memory);
    CU_add_test(s, "mpileup's stretch at contig ends", test_stretch_ends);
    CU_add_test(s, "indel scans load on past the stretch", test_stretch_scans);
    return ss_test_run();
}
