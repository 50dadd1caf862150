/*
 * mp_header.c -- the VCF header bcftools mpileup 1.16 writes: its lines in
 * its order for the options given, then the samples. Where bcftools records
 * its version and command line, seqshard records its own (none with
 * --no-version).
 */
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "likelihood/mp_likelihood.h" /* the -a bits: MP_FMT_*, MP_INFO_* */
#include "mp_run.h"

/* The INFO and FORMAT lines that do not depend on the options, after the DP line. */
static const char *const zscore_lines[] = {
    "##INFO=<ID=MQBZ,Number=1,Type=Float,Description=\"Mann-Whitney U-z test of Mapping "
    "Quality Bias (closer to 0 is better)\">",
    "##INFO=<ID=BQBZ,Number=1,Type=Float,Description=\"Mann-Whitney U-z test of Base Quality "
    "Bias (closer to 0 is better)\">",
    "##INFO=<ID=MQSBZ,Number=1,Type=Float,Description=\"Mann-Whitney U-z test of Mapping "
    "Quality vs Strand Bias (closer to 0 is better)\">",
    "##INFO=<ID=NMBZ,Number=1,Type=Float,Description=\"Mann-Whitney U-z test of Number of "
    "Mismatches within supporting reads (closer to 0 is better)\">",
    NULL};

static const char *const mwu_lines[] = {
    "##INFO=<ID=MQB,Number=1,Type=Float,Description=\"Mann-Whitney U test of Mapping Quality "
    "Bias (bigger is better)\">",
    "##INFO=<ID=BQB,Number=1,Type=Float,Description=\"Mann-Whitney U test of Base Quality Bias "
    "(bigger is better)\">",
    "##INFO=<ID=MQSB,Number=1,Type=Float,Description=\"Mann-Whitney U test of Mapping Quality "
    "vs Strand Bias (bigger is better)\">",
    NULL};

/* Lines shown when one -a bit is set, in bcftools' order after the fixed ones. */
static const struct {
    int bit;
    const char *line;
} optional_lines[] = {
    {MP_FMT_DP, "##FORMAT=<ID=DP,Number=1,Type=Integer,Description=\"Number of high-quality "
                "bases\">"},
    {MP_FMT_DV, "##FORMAT=<ID=DV,Number=1,Type=Integer,Description=\"Number of high-quality "
                "non-reference bases\">"},
    {MP_FMT_DPR, "##FORMAT=<ID=DPR,Number=R,Type=Integer,Description=\"Number of high-quality "
                 "bases observed for each allele\">"},
    {MP_INFO_DPR, "##INFO=<ID=DPR,Number=R,Type=Integer,Description=\"Number of high-quality "
                  "bases observed for each allele\">"},
    {MP_FMT_DP4, "##FORMAT=<ID=DP4,Number=4,Type=Integer,Description=\"Number of high-quality "
                 "ref-fwd, ref-reverse, alt-fwd and alt-reverse bases\">"},
    {MP_FMT_SP, "##FORMAT=<ID=SP,Number=1,Type=Integer,Description=\"Phred-scaled strand bias "
                "P-value\">"},
    {MP_FMT_AD, "##FORMAT=<ID=AD,Number=R,Type=Integer,Description=\"Allelic depths "
                "(high-quality bases)\">"},
    {MP_FMT_ADF, "##FORMAT=<ID=ADF,Number=R,Type=Integer,Description=\"Allelic depths on the "
                 "forward strand (high-quality bases)\">"},
    {MP_FMT_ADR, "##FORMAT=<ID=ADR,Number=R,Type=Integer,Description=\"Allelic depths on the "
                 "reverse strand (high-quality bases)\">"},
    {MP_FMT_QS, "##FORMAT=<ID=QS,Number=R,Type=Integer,Description=\"Phred-score allele "
                "quality sum used by `call -mG` and `+trio-dnm`\">"},
    {MP_INFO_AD, "##INFO=<ID=AD,Number=R,Type=Integer,Description=\"Total allelic depths "
                 "(high-quality bases)\">"},
    {MP_INFO_ADF, "##INFO=<ID=ADF,Number=R,Type=Integer,Description=\"Total allelic depths on "
                  "the forward strand (high-quality bases)\">"},
    {MP_INFO_SCR, "##INFO=<ID=SCR,Number=1,Type=Integer,Description=\"Number of soft-clipped "
                  "reads (at high-quality bases)\">"},
    {MP_FMT_SCR, "##FORMAT=<ID=SCR,Number=1,Type=Integer,Description=\"Per-sample number of "
                 "soft-clipped reads (at high-quality bases)\">"},
    {MP_INFO_ADR, "##INFO=<ID=ADR,Number=R,Type=Integer,Description=\"Total allelic depths on "
                  "the reverse strand (high-quality bases)\">"},
};

static int add_lines(bcf_hdr_t *h, const char *const *lines)
{
    for (int i = 0; lines[i]; i++)
        if (bcf_hdr_append(h, lines[i]) < 0)
            return -1;
    return 0;
}

/* ##fileformat .. ##contig: version, command, reference and the first input's contigs. */
static int head_lines(bcf_hdr_t *h, const mp_opts_t *o, const ss_job_t *job)
{
    kstring_t s = KS_INITIALIZE;
    int rc = 0;
    if (o->record_cmd_line) {
        ksprintf(&s, "##seqshardVersion=%s+htslib-%s", ss_build_version, hts_version());
        rc |= bcf_hdr_append(h, s.s);
        s.l = 0;
        ksprintf(&s, "##seqshardCommand=%s", o->cmd_line);
        rc |= bcf_hdr_append(h, s.s);
    }
    const char *ref = ss_job_opts(job)->reference;
    if (ref) {
        s.l = 0;
        ksprintf(&s, "##reference=file://%s", ref);
        rc |= bcf_hdr_append(h, s.s);
    }
    sam_hdr_t *sh = ss_job_header(job);
    for (int i = 0; i < sam_hdr_nref(sh); i++) {
        s.l = 0;
        /* bcftools prints the length as an int */
        ksprintf(&s, "##contig=<ID=%s,length=%d>", sam_hdr_tid2name(sh, i),
                 (int)sam_hdr_tid2len(sh, i));
        rc |= bcf_hdr_append(h, s.s);
    }
    free(s.s);
    return rc;
}

/* The ALT, INFO and FORMAT lines, in bcftools' order for these annotations. */
static int body_lines(bcf_hdr_t *h, int f)
{
    int rc = 0;
    rc |= bcf_hdr_append(h, "##ALT=<ID=*,Description=\"Represents allele(s) other than "
                            "observed.\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=INDEL,Number=0,Type=Flag,Description=\"Indicates that "
                            "the variant is an INDEL.\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=IDV,Number=1,Type=Integer,Description=\"Maximum number "
                            "of raw reads supporting an indel\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=IMF,Number=1,Type=Float,Description=\"Maximum fraction "
                            "of raw reads supporting an indel\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=DP,Number=1,Type=Integer,Description=\"Raw read "
                            "depth\">");
    if (f & MP_INFO_VDB)
        rc |= bcf_hdr_append(h, "##INFO=<ID=VDB,Number=1,Type=Float,Description=\"Variant "
                                "Distance Bias for filtering splice-site artefacts in RNA-seq "
                                "data (bigger is better)\",Version=\"3\">");
    if (f & MP_INFO_ZSCORE) {
        if (f & MP_INFO_RPB)
            rc |= bcf_hdr_append(h, "##INFO=<ID=RPBZ,Number=1,Type=Float,Description=\"Mann-"
                                    "Whitney U-z test of Read Position Bias (closer to 0 is "
                                    "better)\">");
        rc |= add_lines(h, zscore_lines);
        if (f & MP_FMT_NMBZ)
            rc |= bcf_hdr_append(h, "##FORMAT=<ID=NMBZ,Number=1,Type=Float,Description=\"Mann-"
                                    "Whitney U-z test of Number of Mismatches within supporting "
                                    "reads (closer to 0 is better)\">");
        if (f & MP_INFO_SCB)
            rc |= bcf_hdr_append(h, "##INFO=<ID=SCBZ,Number=1,Type=Float,Description=\"Mann-"
                                    "Whitney U-z test of Soft-Clip Length Bias (closer to 0 is "
                                    "better)\">");
    } else {
        if (f & MP_INFO_RPB)
            rc |= bcf_hdr_append(h, "##INFO=<ID=RPB,Number=1,Type=Float,Description=\"Mann-"
                                    "Whitney U test of Read Position Bias (bigger is better)\">");
        rc |= add_lines(h, mwu_lines);
    }
    rc |= bcf_hdr_append(h, "##INFO=<ID=FS,Number=1,Type=Float,Description=\"Phred-scaled "
                            "p-value using Fisher's exact test to detect strand bias\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=SGB,Number=1,Type=Float,Description=\"Segregation "
                            "based metric.\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=MQ0F,Number=1,Type=Float,Description=\"Fraction of "
                            "MQ0 reads (smaller is better)\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=I16,Number=16,Type=Float,Description=\"Auxiliary tag "
                            "used for calling, see description of bcf_callret1_t in "
                            "bam2bcf.h\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=QS,Number=R,Type=Float,Description=\"Auxiliary tag "
                            "used for calling\">");
    rc |= bcf_hdr_append(h, "##FORMAT=<ID=PL,Number=G,Type=Integer,Description=\"List of "
                            "Phred-scaled genotype likelihoods\">");
    for (size_t i = 0; i < sizeof(optional_lines) / sizeof(optional_lines[0]); i++)
        if (f & optional_lines[i].bit)
            rc |= bcf_hdr_append(h, optional_lines[i].line);
    return rc;
}

/* -g's two INFO lines, after the others. */
static int gvcf_lines(bcf_hdr_t *h)
{
    int rc = bcf_hdr_append(h, "##INFO=<ID=END,Number=1,Type=Integer,Description=\"End position "
                               "of the variant described in this record\">");
    rc |= bcf_hdr_append(h, "##INFO=<ID=MinDP,Number=1,Type=Integer,Description=\"Minimum "
                            "per-sample depth in this gVCF block\">");
    return rc;
}

/* The header's bytes: VCF text, or BCF's magic, length and text with its NUL. */
int mp_header_bytes(bcf_hdr_t *h, int bcf, kstring_t *out)
{
    kstring_t txt = KS_INITIALIZE;
    if (bcf_hdr_format(h, bcf, &txt) < 0)
        return -1;
    int rc = 0;
    if (bcf) {
        uint32_t len = (uint32_t)txt.l + 1;
        uint8_t le[4] = {len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, len >> 24};
        rc |= kputsn("BCF\2\2", 5, out) < 0;
        rc |= kputsn((char *)le, 4, out) < 0;
        rc |= kputsn(txt.s, txt.l, out) < 0;
        rc |= kputc_('\0', out) < 0;
    } else {
        while (txt.l && txt.s[txt.l - 1] == '\0')
            txt.l--;
        rc |= kputsn(txt.s, txt.l, out) < 0;
    }
    free(txt.s);
    return rc ? -1 : 0;
}

int mp_header_build(mp_run_t *r, const mp_opts_t *o, const ss_job_t *job, kstring_t *bytes)
{
    bcf_hdr_t *h = bcf_hdr_init("w");
    r->vcf_hdr = h;
    int rc = !h || head_lines(h, o, job) || body_lines(h, o->fmt_flag) ||
             (o->gvcf_ranges && gvcf_lines(h));
    for (int i = 0; !rc && i < r->smpl.n; i++)
        rc = bcf_hdr_add_sample(h, r->smpl.names[i]) < 0;
    rc = rc || bcf_hdr_sync(h) < 0;
    int bcf = o->out_type == MP_OUT_BCF || o->out_type == MP_OUT_BCF_GZ;
    if (rc || mp_header_bytes(h, bcf, bytes) < 0) {
        ss_error("cannot build the VCF header (out of memory, or a sample or contig name "
                 "htslib refuses)");
        return -1;
    }
    return 0;
}
