/*
 * cram_diag.c -- why a CRAM could not be decoded, told the same way by every
 * kernel: no reference, a reference without the contig, the wrong reference
 * (its MD5 is not the @SQ M5), or, when the reference matches, a damaged
 * file. Each kernel names its own reference option (pileup -f, view -T).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/faidx.h>
#include <htslib/hts.h>
#include <htslib/sam.h>

#include "../base/ss_base.h"
#include "ss_diag.h"

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

/*
 * Whether a read of tid runs past len, its @SQ LN, once decoded without MD/NM.
 * htslib 1.16 logs "CRAM CIGAR extends beyond slice reference extents" for
 * such a read when it rebuilds MD/NM (samtools view, bcftools mpileup, this
 * program's view and mpileup do), and returns the error a damaged slice
 * returns; the log is not ours to read. Decoding the contig's end again
 * without MD/NM tells the two apart: only the reads from the contig's last
 * base on, through the CRAM's index, on this error path alone. 1 if a read
 * runs past; 0 if not, or when it cannot tell (the damage message stands).
 */
static int overhang_decodes(const char *path, const char *reference, int tid, hts_pos_t len)
{
    samFile *fp = hts_open(path, "r");
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    int ready = h && hts_set_fai_filename(fp, reference) == 0 &&
                hts_set_opt(fp, CRAM_OPT_DECODE_MD, 0) == 0;
    hts_idx_t *idx = ready ? sam_index_load(fp, path) : NULL;
    hts_itr_t *itr = idx ? sam_itr_queryi(idx, tid, len > 0 ? len - 1 : 0, HTS_POS_MAX) : NULL;
    bam1_t *b = itr ? bam_init1() : NULL;
    int past = 0;
    while (b && !past && sam_itr_next(fp, itr, b) >= 0)
        past = b->core.tid == tid && bam_endpos(b) > len;
    bam_destroy1(b);
    hts_itr_destroy(itr);
    hts_idx_destroy(idx);
    sam_hdr_destroy(h);
    if (fp)
        hts_close(fp);
    return past;
}

void ss_io_cram_read_error(const char *path, sam_hdr_t *h, const char *reference,
                           const char *ref_opt, int shard_idx, const char *where, int tid)
{
    /* htslib's decoder fails the same way when an allocation fails: errno tells */
    if (errno == ENOMEM) {
        ss_error("%s: out of memory decoding CRAM records in shard %d (%s); lower -@ or give "
                 "the run more memory",
                 path, shard_idx, where);
        return;
    }
    kstring_t m5 = KS_INITIALIZE;
    const char *sn = tid >= 0 ? sam_hdr_tid2name(h, tid) : NULL;
    if (sn)
        sam_hdr_find_tag_id(h, "SQ", "SN", sn, "M5", &m5);
    const char *want = m5.l ? m5.s : "none";
    /* no FAI_CREATE: never write a .fai next to someone's FASTA */
    errno = 0;
    faidx_t *fai = sn && reference ? fai_load3(reference, NULL, NULL, 0) : NULL;
    char got[33];
    int md5_rc = fai && m5.l && faidx_has_seq(fai, sn) ? fasta_md5(fai, sn, got) : -1;

    if ((sn && reference && !fai && errno == ENOMEM) || (md5_rc < 0 && errno == ENOMEM)) {
        ss_error("%s: out of memory checking the reference of shard %d (%s); lower -@ or give "
                 "the run more memory",
                 path, shard_idx, where);
    } else if (!sn) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): the file is corrupt or a "
                 "reference is missing; check %s and REF_PATH/REF_CACHE",
                 path, shard_idx, where, ref_opt);
    } else if (!reference) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): no reference found for @SQ "
                 "SN:%s M5:%s (looked in UR, REF_PATH, REF_CACHE); give the FASTA with %s or "
                 "set REF_PATH",
                 path, shard_idx, where, sn, want, ref_opt);
    } else if (!fai || !faidx_has_seq(fai, sn)) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): %s has no sequence for @SQ "
                 "SN:%s M5:%s; give the FASTA the CRAM was made with via %s",
                 path, shard_idx, where, reference, sn, want, ref_opt);
    } else if (md5_rc == 0 && strcasecmp(got, m5.s) != 0) {
        ss_error("%s: cannot decode CRAM records in shard %d (%s): %s is not the reference the "
                 "CRAM was made with (@SQ SN:%s M5:%s, FASTA MD5 %s); give the right FASTA with "
                 "%s",
                 path, shard_idx, where, reference, sn, want, got, ref_opt);
    } else if (overhang_decodes(path, reference, tid, sam_hdr_tid2len(h, tid))) {
        /* htslib logs "CRAM CIGAR extends beyond slice reference extents" and returns -1 */
        ss_error("%s: cannot decode CRAM records in shard %d (%s): a read runs past the end of "
                 "@SQ SN:%s (LN:%lld), and htslib cannot decode such a CRAM slice while it "
                 "rebuilds MD/NM ('samtools view -T' fails on it too); read the BAM it was made "
                 "from, or convert it: samtools view -b --input-fmt-option decode_md=0 -T %s "
                 "-o OUT.bam %s",
                 path, shard_idx, where, sn, (long long)sam_hdr_tid2len(h, tid), reference, path);
    } else {
        /* samtools quickcheck reads only the header and the EOF block: it passes such files */
        ss_error("%s: cannot decode CRAM records in shard %d (%s): the file is truncated or "
                 "corrupt (a block fails its checksum or ends early; the reference for @SQ "
                 "SN:%s matches); re-create it, 'samtools view -c %s' shows the damage",
                 path, shard_idx, where, sn, path);
    }
    if (fai)
        fai_destroy(fai);
    free(m5.s);
}
