/*
 * test_mc_missed.c -- unit tests for kernels/mpileup/call/mc_missed_plan.c: from
 * every shard's summary (where its last passing record is, which targets it
 * left), each shard's part and the lines bcftools call -i writes last.
 *
 * The targets, in the targets file's order: ctgB (0-based 9, 19), ctgA (4,
 * 14, 14 again with other alleles, 29), ctgC (6). The header holds ctgA,
 * ctgB, ctgC; the plan has shards ctgA [0,20), ctgA [20,40), ctgB [0,40).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <htslib/kstring.h>
#include <htslib/vcf.h>

#include "../kernels/mpileup/call/mc_call.h"
#include "ss_testutil.h"

static char *als_snp[] = {"A", "C", NULL};
static char *als_del[] = {"AT", "A", NULL};
static hts_pos_t pos_b[] = {9, 19}, pos_a[] = {4, 14, 14, 29}, pos_c[] = {6};
static char **als_b[] = {als_snp, als_snp}, **als_a[] = {als_snp, als_snp, als_del, als_snp};
static char **als_c[] = {als_snp};

static void targets(mc_opts_t *o)
{
    static mc_target_contig_t c[3];
    c[0] = (mc_target_contig_t){"ctgB", pos_b, als_b, 2, 2};
    c[1] = (mc_target_contig_t){"ctgA", pos_a, als_a, 4, 4};
    c[2] = (mc_target_contig_t){"ctgC", pos_c, als_c, 1, 1};
    memset(o, 0, sizeof(*o));
    o->targets.contigs = c;
    o->targets.n_contigs = 3;
    o->constrain_alleles = o->insert_missed = 1;
}

static void put(kstring_t *s, int64_t v)
{
    kputsn((const char *)&v, sizeof(v), s);
}

/* One shard's summary as mc_missed_summary writes it; runs: n pairs [from, to). */
static void summary(kstring_t *s, int idx, int tid, int tc, hts_pos_t beg, hts_pos_t end,
                    hts_pos_t last_pass, int n, const int64_t *runs)
{
    int64_t f[] = {idx, tid, tc, beg, end, last_pass, n};
    for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
        put(s, f[i]);
    for (int i = 0; i < 2 * n; i++)
        put(s, runs[i]);
}

static bcf_hdr_t *header(void)
{
    bcf_hdr_t *h = bcf_hdr_init("w");
    bcf_hdr_append(h, "##contig=<ID=ctgA,length=40>");
    bcf_hdr_append(h, "##contig=<ID=ctgB,length=40>");
    bcf_hdr_append(h, "##contig=<ID=ctgC,length=40>");
    bcf_hdr_append(h, "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">");
    bcf_hdr_add_sample(h, "s1");
    CU_ASSERT_EQUAL_FATAL(bcf_hdr_sync(h), 0);
    return h;
}

typedef struct {
    bcf_hdr_t *hdr;
    kstring_t text;
} lines_t;

static int take_line(void *ctx, bcf1_t *line)
{
    lines_t *l = ctx;
    return vcf_format(l->hdr, line, &l->text);
}

/* The end's lines as VCF text (without the header). */
static char *end_lines(const mc_missed_plan_t *p, const mc_opts_t *o)
{
    lines_t l = {header(), KS_INITIALIZE};
    SS_EQ(mc_missed_plan_end(p, o, l.hdr, take_line, &l), 0);
    bcf_hdr_destroy(l.hdr);
    return l.text.s ? l.text.s : strdup("");
}

static void part_is(const mc_missed_plan_t *p, int idx, hts_pos_t beg, hts_pos_t end, int keep,
                    hts_pos_t defer)
{
    const mc_missed_shard_t *part = mc_missed_plan_part(p, idx);
    SS_EQ(part->own_beg, beg);
    SS_EQ(part->own_end, end);
    SS_EQ(part->keep_tail, keep);
    SS_EQ(part->defer_pos, defer);
}

/* ctgA has the last passing record; ctgB none; ctgC no shard. */
static void test_contig_without_call(void)
{
    mc_opts_t o;
    targets(&o);
    kstring_t s = KS_INITIALIZE;
    int64_t r0[] = {2, 3}, r1[] = {3, 4}, r2[] = {0, 1};
    summary(&s, 0, 0, 1, 0, 20, 14, 1, r0);  /* the second target at 14 left */
    summary(&s, 1, 0, 1, 20, 40, -1, 1, r1); /* 29 left, no passing record */
    summary(&s, 2, 1, 0, 0, 40, -1, 1, r2);  /* ctgB: 9 left, 19 taken by a record */
    mc_missed_plan_t *p = mc_missed_plan(&o, s.s, s.l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    part_is(p, 0, 0, 20, 1, -1);
    part_is(p, 1, 20, HTS_POS_MAX, 1, -1);
    part_is(p, 2, 0, HTS_POS_MAX, 0, -1);
    char *text = end_lines(p, &o);
    CU_ASSERT_STRING_EQUAL(text, "ctgB\t10\t.\tA\tC\t.\t.\t.\tGT\t.\n"
                                 "ctgC\t7\t.\tA\tC\t.\t.\t.\tGT\t.\n");
    free(text);
    mc_missed_plan_free(p);
    free(s.s);
}

/* ctgB has the last passing record: what ctgA left at its last call ends the output. */
static void test_deferred_last_call(void)
{
    mc_opts_t o;
    targets(&o);
    kstring_t s = KS_INITIALIZE;
    int64_t r0[] = {2, 3}, r1[] = {3, 4};
    summary(&s, 0, 0, 1, 0, 20, 14, 1, r0);
    summary(&s, 1, 0, 1, 20, 40, -1, 1, r1);
    summary(&s, 2, 1, 0, 0, 40, 19, 0, NULL);
    mc_missed_plan_t *p = mc_missed_plan(&o, s.s, s.l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    part_is(p, 0, 0, 20, 1, 14);
    part_is(p, 1, 20, HTS_POS_MAX, 1, -1);
    part_is(p, 2, 0, HTS_POS_MAX, 1, -1);
    char *text = end_lines(p, &o);
    CU_ASSERT_STRING_EQUAL(text, "ctgA\t15\t.\tAT\tA\t.\t.\t.\tGT\t.\n"
                                 "ctgC\t7\t.\tA\tC\t.\t.\t.\tGT\t.\n");
    free(text);
    mc_missed_plan_free(p);
    free(s.s);
}

/* A contig whose shards come apart in plan order cannot be placed: refused. */
static void test_regions_out_of_order(void)
{
    mc_opts_t o;
    targets(&o);
    kstring_t s = KS_INITIALIZE;
    summary(&s, 0, 0, 1, 20, 40, -1, 0, NULL);
    summary(&s, 1, 0, 1, 0, 20, -1, 0, NULL);
    CU_ASSERT_PTR_NULL(mc_missed_plan(&o, s.s, s.l));
    s.l = 0;
    summary(&s, 0, 0, 1, 0, 20, -1, 0, NULL);
    summary(&s, 1, 1, 0, 0, 40, -1, 0, NULL);
    summary(&s, 2, 0, 1, 20, 40, -1, 0, NULL);
    CU_ASSERT_PTR_NULL(mc_missed_plan(&o, s.s, s.l));
    /* a damaged summary (cut short) is refused too */
    CU_ASSERT_PTR_NULL(mc_missed_plan(&o, s.s, s.l - 3));
    free(s.s);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mc_missed", NULL, NULL);
    CU_add_test(s, "contig without a call ends the output", test_contig_without_call);
    CU_add_test(s, "untaken at a last call, not the last contig", test_deferred_last_call);
    CU_add_test(s, "regions out of order", test_regions_out_of_order);
    return ss_test_run();
}
