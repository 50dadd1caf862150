/*
 * view_ref.c -- CRAM references for the view kernel: never fetched over the
 * network, and checked before CRAM output starts. (Decoding failures are
 * diagnosed in io/cram_diag.c, shared with pileup.)
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/faidx.h>

#include "../../io/ss_ref.h"
#include "view.h"

/* The reference's index, without creating a .fai next to someone's FASTA. */
static faidx_t *load_fai(const char *reference)
{
    return reference ? fai_load3(reference, NULL, NULL, 0) : NULL;
}

int vw_check_cram_output_refs(const sam_hdr_t *hc, const char *reference)
{
    sam_hdr_t *h = (sam_hdr_t *)hc; /* the find functions take non-const; they only read */
    faidx_t *fai = load_fai(reference);
    if (reference && !fai) {
        ss_error("%s: cannot load the reference index; run samtools faidx %s", reference,
                 reference);
        return -1;
    }
    int rc = 0;
    kstring_t tag = KS_INITIALIZE;
    for (int i = 0; i < sam_hdr_nref(h) && rc == 0; i++) {
        const char *name = sam_hdr_tid2name(h, i);
        int has_md5 = sam_hdr_find_tag_id(h, "SQ", "SN", name, "M5", &tag) == 0;
        int has_ur = sam_hdr_find_tag_id(h, "SQ", "SN", name, "UR", &tag) == 0;
        if (fai && !faidx_has_seq(fai, name) && !has_md5) {
            ss_error("%s: no sequence for @SQ SN:%s, which CRAM output needs; give the FASTA "
                     "the input was aligned to with -T/--reference",
                     reference, name);
            rc = -1;
        } else if (!fai && !has_md5 && !has_ur) {
            ss_error("@SQ SN:%s has no M5 or UR tag, so CRAM output needs the reference; give "
                     "it with -T/--reference ref.fa",
                     name);
            rc = -1;
        }
    }
    free(tag.s);
    if (fai)
        fai_destroy(fai);
    return rc;
}

int vw_check_reference_contigs(const ss_job_t *job, int cram_out)
{
    const ss_common_opts_t *co = ss_job_opts(job);
    const sam_hdr_t *h = ss_job_header(job);
    ss_ref_mismatch_t m;
    /* CRAM output of a contig missing from -T: vw_check_cram_output_refs decides (M5, UR) */
    int r = ss_ref_check_contigs(co->reference, h, cram_out, &m);
    if (r <= 0) /* -2: out of memory, said; -1: the job's own check reported the .fai */
        return r == -2 ? -1 : 0;
    char what[512];
    ss_ref_describe_mismatch(co->reference, h, co->inputs[0], &m, what, sizeof(what));
    if (cram_out) {
        ss_error("%s: CRAM output against it would store the reads against the wrong "
                 "sequence; give the FASTA the reads were aligned to with %s",
                 what, co->ref_option);
        return -1;
    }
    ss_warn("%s: CRAM records there cannot be decoded with it; give the FASTA the CRAM was "
            "made with via %s",
            what, co->ref_option);
    return 0;
}
