/*
 * bam_enc.c -- BAM bytes without an htslib writer: records and header in
 * BAM layout (SAM spec section 4.2), packed into BGZF blocks with htslib's
 * bgzf_compress().
 *
 * Why not a BGZF writer: a shard's bytes must end on a block boundary and
 * live in memory until the ordered merge writes them; compressing whole
 * blocks ourselves gives exactly that. Records are laid out as htslib's
 * bam_write1 lays them out, and blocks are cut where its writer cuts them
 * (a record goes to the next block when it does not fit, unless it is larger
 * than a block), so the records are the bytes samtools would write.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>

#include "bgzf_async.h"
#include "ss_encode.h"

/* The record data (CIGAR, aux values) is copied as htslib holds it in memory,
 * which is little-endian only on little-endian hosts. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bam_enc.c writes BAM from htslib's in-memory layout: little-endian hosts only"
#endif

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int append_u32(kstring_t *s, uint32_t v)
{
    uint8_t b[4];
    put_u32(b, v);
    return kputsn((const char *)b, 4, s) < 0 ? -1 : 0;
}

/* ---- BGZF blocks ---- */

int ss_bgzf_pack_init(ss_bgzf_pack_t *z, int level)
{
    *z = (ss_bgzf_pack_t){.level = level, .buf = malloc(BGZF_BLOCK_SIZE)};
    return z->buf ? 0 : -1;
}

void ss_bgzf_pack_destroy(ss_bgzf_pack_t *z)
{
    if (!z)
        return;
    ss_bgzf_pack_async_end(z);
    free(z->buf);
    z->buf = NULL;
    z->len = 0;
}

/* The pending bytes as one block on out, compressed here. */
static int compress_pending(ss_bgzf_pack_t *z, kstring_t *out)
{
    if (z->len == 0)
        return 0;
    if (ks_resize(out, out->l + BGZF_MAX_BLOCK_SIZE) < 0)
        return -1;
    size_t dlen = BGZF_MAX_BLOCK_SIZE;
    if (bgzf_compress(out->s + out->l, &dlen, z->buf, z->len, z->level) < 0)
        return -1;
    out->l += dlen;
    z->len = 0;
    return 0;
}

int ss_bgzf_pack_flush(ss_bgzf_pack_t *z, kstring_t *out)
{
    if (z->q && ss_bgzf_pack_land(z, out, 1) < 0)
        return -1;
    return compress_pending(z, out);
}

/* A full block: to the pool when there is one, else compressed here. */
static int block_full(ss_bgzf_pack_t *z, kstring_t *out)
{
    return ss_bgzf_pack_to_pool(z) ? ss_bgzf_pack_send(z, out) : compress_pending(z, out);
}

int ss_bgzf_pack_write(ss_bgzf_pack_t *z, const void *p, size_t len, int whole_record,
                       kstring_t *out)
{
    const uint8_t *src = p;
    if (whole_record && z->len + len > BGZF_BLOCK_SIZE && z->len > 0 && block_full(z, out) < 0)
        return -1;
    while (len > 0) {
        size_t n = BGZF_BLOCK_SIZE - z->len;
        if (n > len)
            n = len;
        memcpy(z->buf + z->len, src, n);
        z->len += n;
        src += n;
        len -= n;
        if (z->len == BGZF_BLOCK_SIZE && block_full(z, out) < 0)
            return -1;
    }
    return 0;
}

/* ---- records ---- */

int ss_bam_encode(const bam1_t *b, kstring_t *out)
{
    const bam1_core_t *c = &b->core;
    uint32_t l_qname = (uint32_t)c->l_qname - c->l_extranul;
    uint32_t cigar_bytes = 4 * c->n_cigar;
    int long_cigar = c->n_cigar > 0xffff;

    if (l_qname > 255 || c->pos > INT32_MAX || c->mpos > INT32_MAX || c->isize < INT32_MIN ||
        c->isize > INT32_MAX || c->pos < -1 || c->mpos < -1) {
        errno = EOVERFLOW;
        return -1;
    }
    if ((uint32_t)b->l_data < (uint32_t)c->l_qname + cigar_bytes) {
        errno = EINVAL;
        return -1;
    }
    hts_pos_t ref_span = 0;
    if (long_cigar) {
        /* the stand-in CIGAR "<l_qseq>S<span>N" must hold the span in one operation */
        ref_span = bam_cigar2rlen(c->n_cigar, bam_get_cigar(b));
        if (ref_span >= (1 << 28)) {
            errno = EOVERFLOW;
            return -1;
        }
    }
    uint32_t block_len = 32 + (uint32_t)b->l_data - c->l_extranul + (long_cigar ? 16 : 0);
    if (ks_resize(out, out->l + 4 + block_len) < 0)
        return -1;

    uint8_t *p = (uint8_t *)out->s + out->l;
    put_u32(p, block_len);
    put_u32(p + 4, (uint32_t)c->tid);
    put_u32(p + 8, (uint32_t)c->pos);
    put_u32(p + 12, (uint32_t)c->bin << 16 | (uint32_t)c->qual << 8 | l_qname);
    put_u32(p + 16, (uint32_t)c->flag << 16 | (long_cigar ? 2 : c->n_cigar));
    put_u32(p + 20, (uint32_t)c->l_qseq);
    put_u32(p + 24, (uint32_t)c->mtid);
    put_u32(p + 28, (uint32_t)c->mpos);
    put_u32(p + 32, (uint32_t)c->isize);
    p += 36;
    memcpy(p, b->data, l_qname);
    p += l_qname;

    const uint8_t *after_cigar = b->data + c->l_qname + cigar_bytes;
    size_t rest = b->data + b->l_data - after_cigar;
    if (!long_cigar) {
        memcpy(p, b->data + c->l_qname, cigar_bytes);
        memcpy(p + cigar_bytes, after_cigar, rest);
        p += cigar_bytes + rest;
    } else {
        put_u32(p, (uint32_t)c->l_qseq << 4 | BAM_CSOFT_CLIP);
        put_u32(p + 4, (uint32_t)ref_span << 4 | BAM_CREF_SKIP);
        p += 8;
        memcpy(p, after_cigar, rest);
        p += rest;
        memcpy(p, "CGBI", 4);
        put_u32(p + 4, c->n_cigar);
        memcpy(p + 8, b->data + c->l_qname, cigar_bytes);
        p += 8 + cigar_bytes;
    }
    out->l = (char *)p - out->s;
    return 0;
}

/* ---- header ---- */

int ss_bam_encode_header(const sam_hdr_t *h_const, kstring_t *out)
{
    /* sam_hdr_str may rebuild the text, hence the cast; callers own h */
    sam_hdr_t *h = (sam_hdr_t *)h_const;
    const char *text = sam_hdr_str(h);
    size_t l_text = text ? sam_hdr_length(h) : 0;
    int n_ref = sam_hdr_nref(h);
    if (l_text > UINT32_MAX || n_ref < 0) {
        errno = EOVERFLOW;
        return -1;
    }
    if (kputsn("BAM\1", 4, out) < 0 || append_u32(out, (uint32_t)l_text) < 0 ||
        (l_text && kputsn(text, l_text, out) < 0) || append_u32(out, (uint32_t)n_ref) < 0)
        return -1;
    for (int i = 0; i < n_ref; i++) {
        const char *name = sam_hdr_tid2name(h, i);
        size_t l_name = strlen(name) + 1;
        hts_pos_t len = sam_hdr_tid2len(h, i);
        /* longer contigs keep their true length in the text only, as in htslib */
        uint32_t l_ref = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
        if (append_u32(out, (uint32_t)l_name) < 0 || kputsn(name, l_name, out) < 0 ||
            append_u32(out, l_ref) < 0)
            return -1;
    }
    return 0;
}
