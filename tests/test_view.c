/*
 * test_view.c -- unit tests for the view kernel: its CRAM index reader and
 * option parsing (the encoders it writes through are tested in test_enc.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <htslib/bgzf.h>
#include <htslib/faidx.h>

#include "../framework/driver.h" /* ss_common_opts_init */
#include "../kernels/view/view.h"

extern const ss_kernel_t ss_kernel_view;

static char tmpdir[] = "/tmp/test_view.XXXXXX";
static char path_buf[4][512];

static const char *tmp_path(int slot, const char *name)
{
    snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", tmpdir, name);
    return path_buf[slot];
}

/* Parse argv into fresh options; returns vw_parse's status. */
static int parse(vw_opts_t **o, ss_common_opts_t *co, int argc, char **argv)
{
    ss_common_opts_init(co);
    *o = NULL;
    return vw_parse(argc, argv, co, (void **)o);
}

static void done(vw_opts_t *o, ss_common_opts_t *co)
{
    vw_opts_free(o);
    free(o);
    ss_common_opts_free(co);
}

/* Write lines as a gzipped .crai, as htslib writes it. */
static const char *write_crai(const char *name, const char *lines)
{
    const char *path = tmp_path(3, name);
    BGZF *f = bgzf_open(path, "wg");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(bgzf_write(f, lines, strlen(lines)) == (ssize_t)strlen(lines));
    CU_ASSERT_FATAL(bgzf_close(f) == 0);
    return path;
}

static void test_crai_containers(void)
{
    /*
     * Columns: ref, start, span, container offset, slice offset, slice size.
     * ref 0: three containers, the second of two slices (its start is the
     * first slice's); ref 1: a container shared with ref 2 (multi-reference),
     * so both use region queries; ref 3: out of order; ref -1: unplaced.
     */
    const char *crai = write_crai("t.crai", "0\t1\t500\t100\t10\t50\n"
                                            "0\t401\t300\t200\t10\t50\n"
                                            "0\t650\t200\t200\t60\t50\n"
                                            "0\t900\t100\t300\t10\t50\n"
                                            "1\t1\t50\t400\t10\t50\n"
                                            "1\t60\t50\t500\t10\t50\n"
                                            "2\t1\t50\t500\t10\t50\n"
                                            "3\t500\t50\t600\t10\t50\n"
                                            "3\t100\t50\t700\t10\t50\n"
                                            "-1\t0\t0\t800\t10\t50\n");
    vw_crai_t *x = vw_crai_load("unused.cram", crai, 4);
    CU_ASSERT_FATAL(x != NULL);
    const vw_container_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(vw_crai_containers(x, 0, &c), 3);
    CU_ASSERT_EQUAL(c[0].off, 100);
    CU_ASSERT_EQUAL(c[0].beg, 0);
    CU_ASSERT_EQUAL(c[1].off, 200);
    CU_ASSERT_EQUAL(c[1].beg, 400);
    CU_ASSERT_EQUAL(c[2].beg, 899);
    CU_ASSERT_EQUAL(vw_crai_containers(x, 1, &c), 0); /* shares a container with ref 2 */
    CU_ASSERT_EQUAL(vw_crai_containers(x, 2, &c), 0);
    CU_ASSERT_EQUAL(vw_crai_containers(x, 3, &c), 0); /* not in coordinate order */
    CU_ASSERT_EQUAL(vw_crai_containers(x, -1, &c), 0);
    CU_ASSERT_EQUAL(vw_crai_containers(x, 4, &c), 0);
    /* the first container starting at or after a position */
    vw_crai_containers(x, 0, &c);
    CU_ASSERT_EQUAL(vw_crai_first_at(c, 3, 0), 0);
    CU_ASSERT_EQUAL(vw_crai_first_at(c, 3, 1), 1);
    CU_ASSERT_EQUAL(vw_crai_first_at(c, 3, 400), 1);
    CU_ASSERT_EQUAL(vw_crai_first_at(c, 3, 401), 2);
    CU_ASSERT_EQUAL(vw_crai_first_at(c, 3, 5000), 3);
    vw_crai_destroy(x);

    /* an index naming more references than the header has, or garbage: not used */
    CU_ASSERT_PTR_NULL(vw_crai_load("unused.cram", crai, 2));
    CU_ASSERT_PTR_NULL(vw_crai_load("unused.cram", write_crai("bad.crai", "0\tx\n"), 4));
    CU_ASSERT_PTR_NULL(vw_crai_load("unused.cram", tmp_path(2, "missing.crai"), 4));
}

static void test_options(void)
{
    ss_common_opts_t co;
    vw_opts_t *o;
    char *a1[] = {"view", "-o", "x.bam", "in.bam", "ctgA:1-100"};
    CU_ASSERT_EQUAL(parse(&o, &co, 5, a1), 0);
    CU_ASSERT_EQUAL(o->fmt, VW_BAM);
    CU_ASSERT_EQUAL(co.n_regions, 1);
    CU_ASSERT_STRING_EQUAL(co.inputs[0], "in.bam");
    CU_ASSERT_STRING_EQUAL(o->cmdline, "seqshard view -o x.bam in.bam ctgA:1-100");
    done(o, &co);

    char *a2[] = {"view", "-u", "-o", "x.sam", "in.bam"};
    CU_ASSERT_EQUAL(parse(&o, &co, 5, a2), 0);
    CU_ASSERT_EQUAL(o->fmt, VW_SAM); /* -u with FILE.sam stays SAM, as in samtools */
    done(o, &co);

    char *a3[] = {"view", "-O", "CRAM,level=3", "-q", "20", "-F", "UNMAP,SECONDARY", "in.bam"};
    CU_ASSERT_EQUAL(parse(&o, &co, 8, a3), 0);
    CU_ASSERT(o->fmt == VW_CRAM && o->level == 3 && o->min_mapq == 20);
    CU_ASSERT_EQUAL(o->flag_off, BAM_FUNMAP | BAM_FSECONDARY);
    done(o, &co);

    char *bad[][4] = {{"view", "--write-index", "in.bam", NULL},             /* needs -o */
                      {"view", "--output-fmt-option", "level=10", "in.bam"}, /* level 0-9 */
                      {"view", "-O", "fastq", "in.bam"},
                      {"view", "-f", "BOGUS", "in.bam"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int n = bad[i][3] ? 4 : 3;
        CU_ASSERT_EQUAL(parse(&o, &co, n, bad[i]), SS_EXIT_USAGE);
        done(o, &co);
    }
    /* -l is samtools' --library now, not a level; -c, -s, -x and --keep-tag as samtools */
    char *a_lib[] = {"view", "-l",    "10",         "-c", "-s",    "3.25",
                     "-x",   "XA,MD", "--keep-tag", "NM", "in.bam"};
    CU_ASSERT_EQUAL(parse(&o, &co, 11, a_lib), 0);
    CU_ASSERT(o->library && strcmp(o->library, "10") == 0 && o->level == -1 && o->count);
    CU_ASSERT(o->subsam_frac == 0.25 && o->subsam_seed != 3); /* scrambled as samtools does */
    CU_ASSERT(o->remove.n == 2 && o->keep.n == 1 && o->keep.tags[0] == ('N' << 8 | 'M'));
    done(o, &co);

    /* several regions, kept in argument order for the planner, "*" among them */
    char *a5[] = {"view", "in.bam", "ctgB", "*", "ctgA:1-10", "ctgB"};
    CU_ASSERT_EQUAL(parse(&o, &co, 6, a5), 0);
    CU_ASSERT_EQUAL_FATAL(co.n_regions, 4);
    CU_ASSERT_STRING_EQUAL(co.regions[0], "ctgB");
    CU_ASSERT_STRING_EQUAL(co.regions[1], "*");
    CU_ASSERT_STRING_EQUAL(co.regions[2], "ctgA:1-10");
    CU_ASSERT_STRING_EQUAL(co.regions[3], "ctgB");
    CU_ASSERT_EQUAL(ss_kernel_view.unplaced, 1); /* "*" names the unplaced reads */
    CU_ASSERT_EQUAL(co.merge_regions, 0);
    done(o, &co);

    char *a6[] = {"view", "-M", "in.bam", "ctgB", "ctgA"};
    CU_ASSERT_EQUAL(parse(&o, &co, 5, a6), 0);
    CU_ASSERT(o->multi_region && co.merge_regions && co.n_regions == 2);
    done(o, &co);
    char *a7[] = {"view", "--use-index", "-L", "t.bed", "in.bam"}; /* -M -L: the BED's regions */
    CU_ASSERT_EQUAL(parse(&o, &co, 5, a7), 0);
    CU_ASSERT(o->multi_region && co.n_regions == 0);
    done(o, &co);
    char *a8[] = {"view", "-M", "-L", "t.bed", "in.bam", "ctgA"}; /* not yet */
    CU_ASSERT_EQUAL(parse(&o, &co, 6, a8), SS_EXIT_USAGE);
    done(o, &co);

    char *a4[] = {"view", "-1", "in.bam"};
    CU_ASSERT_EQUAL(parse(&o, &co, 3, a4), 0);
    CU_ASSERT(o->fmt == VW_BAM && o->level == 1);
    done(o, &co);
}

static int suite_init(void)
{
    if (!mkdtemp(tmpdir))
        return -1;
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
    CU_pSuite s = CU_add_suite("view", suite_init, suite_clean);
    if (!s || !CU_add_test(s, "CRAM index containers", test_crai_containers) ||
        !CU_add_test(s, "options", test_options)) {
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
