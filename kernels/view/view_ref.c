/*
 * view_ref.c -- CRAM references for the view kernel: never fetched over the
 * network, checked before CRAM output starts, and, when decoding fails, a
 * diagnosis that names the @SQ line and says how to supply the reference.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/faidx.h>

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
                     "the input was aligned to with -T/--reference", reference, name);
            rc = -1;
        } else if (!fai && !has_md5 && !has_ur) {
            ss_error("@SQ SN:%s has no M5 or UR tag, so CRAM output needs the reference; give "
                     "it with -T/--reference ref.fa", name);
            rc = -1;
        }
    }
    free(tag.s);
    if (fai)
        fai_destroy(fai);
    return rc;
}

/* MD5 (hex) of sequence `name` in fai as CRAM computes it: upper case. 0 or -1. */
static int fasta_md5(faidx_t *fai, const char *name, char hex[33])
{
    hts_pos_t len = 0;
    char *seq = faidx_fetch_seq64(fai, name, 0, HTS_POS_MAX, &len);
    hts_md5_context *md5 = seq ? hts_md5_init() : NULL;
    if (!md5) {
        free(seq);
        return -1;
    }
    for (hts_pos_t i = 0; i < len; i++)
        seq[i] = (char)toupper((unsigned char)seq[i]);
    unsigned char digest[16];
    hts_md5_update(md5, seq, len);
    hts_md5_final(digest, md5);
    hts_md5_hex(hex, digest);
    hts_md5_destroy(md5);
    free(seq);
    return 0;
}

void vw_cram_read_error(const char *path, sam_hdr_t *h, const char *reference, int shard_idx,
                        const char *where, int tid)
{
    kstring_t m5 = KS_INITIALIZE;
    const char *sn = tid >= 0 ? sam_hdr_tid2name(h, tid) : NULL;
    if (sn)
        sam_hdr_find_tag_id(h, "SQ", "SN", sn, "M5", &m5);
    const char *want = m5.l ? m5.s : "none";
    faidx_t *fai = sn ? load_fai(reference) : NULL;
    char got[33];

    if (!sn) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): the file is corrupt or a "
                 "reference is missing; check -T/--reference and REF_PATH/REF_CACHE", path,
                 shard_idx, where);
    } else if (!reference) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): no reference found for @SQ "
                 "SN:%s M5:%s (looked in UR, REF_PATH, REF_CACHE); give the FASTA with "
                 "-T/--reference or set REF_PATH", path, shard_idx, where, sn, want);
    } else if (!fai || !faidx_has_seq(fai, sn)) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): %s has no sequence for @SQ "
                 "SN:%s M5:%s; give the FASTA the CRAM was made with via -T/--reference", path,
                 shard_idx, where, reference, sn, want);
    } else if (m5.l && fasta_md5(fai, sn, got) == 0 && strcasecmp(got, m5.s) != 0) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): %s is not the reference the "
                 "CRAM was made with (@SQ SN:%s M5:%s, FASTA MD5 %s); give the right FASTA with "
                 "-T/--reference", path, shard_idx, where, reference, sn, want, got);
    } else {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): the file is truncated or "
                 "corrupt (the reference for @SQ SN:%s matches); check it with samtools "
                 "quickcheck", path, shard_idx, where, sn);
    }
    if (fai)
        fai_destroy(fai);
    free(m5.s);
}
