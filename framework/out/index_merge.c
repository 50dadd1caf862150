/*
 * index_merge.c -- the output's index from the shards' pieces (index_piece.c):
 * each piece's entries, shifted by its shard's file offset, are pushed in
 * shard order into one htslib index, as sam_index (BAM and SAM.gz: .bai, .csi),
 * tbx_index (text: `tabix -s1 -b2 -e2`, .tbi or .csi; VCF.gz as `bcftools
 * index` builds it through tbx_index, .csi or .tbi) and bcf_index (BCF: .csi)
 * push what they read.
 *
 * A shard's offset comes from the sink, which knows where it wrote it; the
 * piece says how long the shard is, so a shard dropped or added out of order
 * shows as a gap and is refused rather than indexed at the wrong place.
 *
 * Main thread of the rank that owns the output.
 */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/khash.h>
#include <htslib/tbx.h>

#include "index_piece.h"

KHASH_MAP_INIT_STR(ss_ctg, int)

struct ss_idx_merge_s {
    ss_idx_kind_t kind;
    int fmt, n_targets, min_shift, n_lvls;
    int data_lvls;         /* VCF CSI: the levels once a data line came (tbx_index) */
    hts_idx_t *idx;        /* lines: made at the first data line, as tbx_index makes it */
    uint64_t first_off;    /* lines: tabix's offset before the first data line */
    uint64_t next_off;     /* where the next shard starts */
    khash_t(ss_ctg) * ids; /* lines: contig names, numbered in order of first appearance */
    char **names;
    int n_names, m_names;
    kstring_t name;
    kstring_t crai; /* CRAI: the lines so far, offsets shifted */
    uint64_t *runs; /* per contig: mapped and unmapped records the pieces left out (E_RUN) */
    int m_runs;     /* contigs runs has room for */
    int n_runs;     /* one past the last contig with a run */
};

/* The entries of one piece, read in order. */
typedef struct {
    const uint8_t *p, *end;
    int bad;
    uint64_t file_off, shard_len, raw_len;
} cursor_t;

static uint64_t get_varint(cursor_t *c)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end)
            break;
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}

static int64_t get_zigzag(cursor_t *c)
{
    uint64_t v = get_varint(c);
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static uint64_t get_u64(const char *at)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | (uint8_t)at[i];
    return v;
}

/* Whether a kind's entries name contigs by id, counted from the header (sam_index, bcf_index). */
static int kind_has_ids(ss_idx_kind_t kind)
{
    return kind == SS_IDX_RECORDS || kind == SS_IDX_BCF || kind == SS_IDX_SAM;
}

/* CSI levels from `lvls` on until 2^(min_shift + 3 lvls) covers max_len + 256 (htslib's rule). */
static int levels_for(int min_shift, int lvls, int64_t max_len)
{
    for (int64_t s = (int64_t)1 << (min_shift + 3 * lvls); max_len + 256 > s; s <<= 3)
        lvls++;
    return lvls;
}

ss_idx_merge_t *ss_idx_merge_init(ss_idx_kind_t kind, int fmt, int n_targets, hts_pos_t max_len,
                                  uint64_t header_len)
{
    ss_idx_merge_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->kind = kind, m->fmt = fmt, m->n_targets = n_targets;
    m->min_shift = 14;
    /* sam_index's and bcf_index's levels (contigs up to max_len), tbx_index's for text CSI,
     * which a VCF's ##contig lengths raise once a data line comes */
    if (fmt == HTS_FMT_CSI && kind_has_ids(kind))
        m->n_lvls = levels_for(m->min_shift, 0, max_len);
    else
        m->n_lvls = fmt == HTS_FMT_CSI ? (TBX_MAX_SHIFT - m->min_shift + 2) / 3 : 5;
    m->data_lvls = kind == SS_IDX_VCF && fmt == HTS_FMT_CSI
                       ? levels_for(m->min_shift, m->n_lvls, max_len)
                       : m->n_lvls;
    m->first_off = m->next_off = header_len;
    m->first_off <<= 16;
    if ((kind == SS_IDX_LINES || kind == SS_IDX_VCF) && !(m->ids = kh_init(ss_ctg)))
        goto fail;
    if (kind_has_ids(kind) &&
        !(m->idx = hts_idx_init(n_targets, fmt, m->first_off, m->min_shift, m->n_lvls)))
        goto fail;
    return m;
fail:
    ss_idx_merge_destroy(m);
    return NULL;
}

int64_t ss_idx_vcf_max_len(const char *text, size_t len)
{
    int64_t max = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        const char *end = nl ? nl : text + len, *ptr = NULL;
        /* tbx_index: "##contig", then "length" anywhere after, spaces and '=', a number */
        if (end - (text + at) >= 8 && memcmp(text + at, "##contig", 8) == 0)
            ptr = memmem(text + at + 8, (size_t)(end - (text + at + 8)), "length", 6);
        if (ptr) {
            for (ptr += 6; ptr < end && (*ptr == ' ' || *ptr == '='); ptr++) {
            }
            char num[64];
            size_t n =
                (size_t)(end - ptr) < sizeof(num) - 1 ? (size_t)(end - ptr) : sizeof(num) - 1;
            memcpy(num, ptr, n);
            num[n] = '\0';
            int64_t l = strtoll(num, NULL, 10);
            max = max < l ? l : max;
        }
        at = (size_t)(end - text) + 1;
    }
    return max;
}

void ss_idx_merge_destroy(ss_idx_merge_t *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_names; i++)
        free(m->names[i]);
    free(m->names);
    if (m->ids)
        kh_destroy(ss_ctg, m->ids);
    if (m->idx)
        hts_idx_destroy(m->idx);
    free(m->name.s);
    free(m->crai.s);
    free(m->runs);
    free(m);
}

uint64_t ss_idx_merge_next_off(const ss_idx_merge_t *m)
{
    return m->next_off;
}

int64_t ss_idx_piece_shard_len(const char *piece, size_t len)
{
    return len >= PIECE_HEAD ? (int64_t)get_u64(piece + 8) : -1;
}

/* A run's counts (E_RUN) for contig tid, added to its pseudo-bin when saved. 0, or -1. */
static int add_run(ss_idx_merge_t *m, cursor_t *c, int tid)
{
    uint64_t run_m = get_varint(c), run_u = get_varint(c);
    if (tid < 0 || c->bad)
        return -1;
    if (tid >= m->m_runs) {
        int n = tid + 1 > 2 * m->m_runs ? tid + 1 : 2 * m->m_runs;
        uint64_t *r = realloc(m->runs, (size_t)n * 2 * sizeof(*r));
        if (!r)
            return -1;
        memset(r + 2 * m->m_runs, 0, (size_t)(n - m->m_runs) * 2 * sizeof(*r));
        m->runs = r, m->m_runs = n;
    }
    m->runs[2 * tid] += run_m;
    m->runs[2 * tid + 1] += run_u;
    m->n_runs = tid + 1 > m->n_runs ? tid + 1 : m->n_runs;
    return 0;
}

/* BAM records: the offsets are explicit. 0, or -1 (a bad piece), -2 (htslib refused). */
static int push_records(ss_idx_merge_t *m, cursor_t *c, uint64_t n)
{
    int32_t tid = -1;
    hts_pos_t beg = 0;
    uint64_t coff = 0;
    for (uint64_t i = 0; i < n && !c->bad; i++) {
        int flags = (int)get_varint(c);
        if (flags & E_CONTIG)
            tid = (int32_t)get_zigzag(c);
        beg += get_zigzag(c);
        hts_pos_t end = beg + get_zigzag(c);
        if ((flags & E_RUN) && add_run(m, c, tid) < 0)
            return -1;
        if (flags & E_BLOCK)
            coff += get_varint(c);
        uint64_t voff = (c->file_off + coff) << 16 | (get_varint(c) & 0xffff);
        if (!c->bad && hts_idx_push(m->idx, tid, beg, end, voff, flags & E_MAPPED) < 0)
            return -2;
    }
    return c->bad ? -1 : 0;
}

/* The id of the contig name in m->name, new names numbered in order; -1 out of memory. */
static int name_id(ss_idx_merge_t *m)
{
    khint_t k = kh_get(ss_ctg, m->ids, m->name.s);
    if (k != kh_end(m->ids))
        return kh_val(m->ids, k);
    if (m->n_names == m->m_names) {
        int n = m->m_names ? 2 * m->m_names : 16;
        char **a = realloc(m->names, (size_t)n * sizeof(*a));
        if (!a)
            return -1;
        m->names = a, m->m_names = n;
    }
    int absent;
    char *dup = strdup(m->name.s);
    if (!dup || (k = kh_put(ss_ctg, m->ids, dup, &absent), absent < 0)) {
        free(dup);
        return -1;
    }
    m->names[m->n_names] = dup;
    kh_val(m->ids, k) = m->n_names;
    return m->n_names++;
}

/* Raw text offset u of a shard to the virtual offset a reader's bgzf_tell gives there. */
static uint64_t line_voff(const cursor_t *c, const uint64_t *blk_at, uint64_t n_blocks, uint64_t u)
{
    if (u == c->raw_len)
        return (c->file_off + c->shard_len) << 16; /* the next shard's first block */
    uint64_t j = u / BGZF_BLOCK_SIZE;
    return j < n_blocks ? (c->file_off + blk_at[j]) << 16 | u % BGZF_BLOCK_SIZE : UINT64_MAX;
}

/* One line entry, its contig's name read into m->name; its tid, or -1 (bad, or no memory). */
static int line_contig(ss_idx_merge_t *m, cursor_t *c, int tid)
{
    uint64_t nlen = get_varint(c);
    if (c->bad || nlen > (uint64_t)(c->end - c->p))
        return -1;
    m->name.l = 0;
    if (kputsn((const char *)c->p, nlen, &m->name) < 0)
        return -1;
    c->p += nlen;
    tid = name_id(m);
    return tid;
}

/*
 * Text lines (BCF, SAM: records): offsets through the block table. 0, or -1
 * (a bad piece), -2 (htslib refused).
 */
static int push_lines(ss_idx_merge_t *m, cursor_t *c, const uint64_t *blk_at, uint64_t n_blocks,
                      uint64_t n)
{
    int tid = -1;
    hts_pos_t beg = 0;
    uint64_t u = 0;
    for (uint64_t i = 0; i < n && !c->bad; i++) {
        int flags = (int)get_varint(c);
        hts_pos_t end = 0;
        if (!(flags & E_META)) {
            if ((flags & E_CONTIG) && kind_has_ids(m->kind))
                tid = (int)get_zigzag(c);
            else if ((flags & E_CONTIG) && (tid = line_contig(m, c, tid)) < 0)
                return -1;
            beg += get_zigzag(c);
            end = beg + get_zigzag(c);
            if ((flags & E_RUN) && add_run(m, c, tid) < 0)
                return -1;
        }
        u += get_varint(c);
        uint64_t voff = line_voff(c, blk_at, n_blocks, u);
        if (c->bad || voff == UINT64_MAX)
            return -1;
        if (flags & E_META) {
            if (!m->idx)
                m->first_off = voff;
            continue;
        }
        if (!m->idx &&
            !(m->idx = hts_idx_init(0, m->fmt, m->first_off, m->min_shift, m->data_lvls)))
            return -1;
        if (hts_idx_push(m->idx, tid, beg, end, voff, flags & E_MAPPED) < 0)
            return -2;
    }
    return c->bad ? -1 : 0;
}

/* The block table: where each of the shard's blocks starts, relative to the shard. */
static uint64_t *block_starts(cursor_t *t, uint64_t n)
{
    uint64_t *at = malloc((n + 1) * sizeof(*at));
    if (!at)
        return NULL;
    at[0] = 0;
    for (uint64_t j = 0; j < n; j++)
        at[j + 1] = at[j] + get_varint(t);
    if (t->bad || at[n] != t->shard_len) {
        free(at);
        return NULL;
    }
    return at;
}

/*
 * CRAI: the shard's lines, each container offset (the fourth field) moved
 * from the shard's own CRAM, whose containers start at head_len, to where
 * the shard's containers start in the file. 0, or -1 (a bad line, no memory).
 */
static int push_crai(ss_idx_merge_t *m, const char *s, const char *end, uint64_t file_off,
                     uint64_t head_len)
{
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s)), *f = s;
        if (!nl)
            return -1;
        for (int tab = 0; tab < 3 && f && f < nl; tab++)
            f = memchr(f, '\t', (size_t)(nl - f)), f = f ? f + 1 : NULL;
        char *stop;
        unsigned long long coff = f ? strtoull(f, &stop, 10) : 0;
        if (!f || stop == f || *stop != '\t' || coff < head_len)
            return -1;
        if (kputsn(s, (size_t)(f - s), &m->crai) < 0 ||
            kputll((long long)(coff - head_len + file_off), &m->crai) < 0 ||
            kputsn(stop, (size_t)(nl + 1 - stop), &m->crai) < 0)
            return -1;
        s = nl + 1;
    }
    return 0;
}

int ss_idx_merge_add(ss_idx_merge_t *m, const char *piece, size_t len, uint64_t file_off)
{
    uint64_t h[PIECE_FIELDS];
    if (len < PIECE_HEAD)
        return -1;
    for (int i = 0; i < PIECE_FIELDS; i++)
        h[i] = get_u64(piece + 8 * i);
    /* h: kind, shard_len, raw_len, n_ent, n_blocks, table_off */
    if (h[0] != (uint64_t)m->kind || file_off != m->next_off || h[5] < PIECE_HEAD || h[5] > len ||
        (m->kind != SS_IDX_RECORDS && h[4] > len))
        return -1;
    const uint8_t *base = (const uint8_t *)piece;
    cursor_t c = {base + PIECE_HEAD, base + h[5], 0, file_off, h[1], h[2]};
    int rc;
    if (m->kind == SS_IDX_CRAI) {
        rc = push_crai(m, piece + PIECE_HEAD, piece + h[5], file_off, h[2]);
    } else if (m->kind == SS_IDX_RECORDS) {
        rc = push_records(m, &c, h[3]);
    } else {
        cursor_t t = {base + h[5], base + len, 0, file_off, h[1], h[2]};
        uint64_t *blk_at = block_starts(&t, h[4]);
        rc = blk_at ? push_lines(m, &c, blk_at, h[4], h[3]) : -1;
        free(blk_at);
    }
    if (rc == 0)
        m->next_off = file_off + h[1];
    return rc;
}

/*
 * tabix's meta block: its configuration (-s1 -b2 -e2, or tbx_conf_vcf's),
 * then the names, NUL-terminated.
 */
static int set_meta(ss_idx_merge_t *m)
{
    kstring_t meta = KS_INITIALIZE;
    int32_t conf[7] = {TBX_GENERIC, 1, 2, 2, '#', 0, 0};
    if (m->kind == SS_IDX_VCF)
        conf[0] = TBX_VCF, conf[3] = 0;
    for (int i = 0; i < m->n_names; i++)
        conf[6] += (int32_t)strlen(m->names[i]) + 1;
    int rc = kputsn((const char *)conf, sizeof(conf), &meta) < 0 ? -1 : 0; /* little-endian */
    for (int i = 0; rc == 0 && i < m->n_names; i++)
        rc = kputsn(m->names[i], strlen(m->names[i]) + 1, &meta) < 0 ? -1 : 0;
    if (rc == 0)
        rc = hts_idx_set_meta(m->idx, (uint32_t)meta.l, (uint8_t *)meta.s, 0);
    else
        free(meta.s);
    return rc;
}

/* samtools index's .crai: the lines, gzip-compressed as htslib writes them. 0 or -1. */
static int save_crai(const ss_idx_merge_t *m, const char *idx_path)
{
    BGZF *z = bgzf_open(idx_path, "wg");
    if (!z)
        return -1;
    int rc = m->crai.l && bgzf_write(z, m->crai.s, m->crai.l) != (ssize_t)m->crai.l ? -1 : 0;
    return bgzf_close(z) < 0 ? -1 : rc;
}

int ss_idx_merge_save(ss_idx_merge_t *m, uint64_t data_end, const char *idx_path)
{
    if (data_end != m->next_off)
        return -2;
    if (m->kind == SS_IDX_CRAI)
        return save_crai(m, idx_path);
    if (!m->idx && !(m->idx = hts_idx_init(0, m->fmt, m->first_off, m->min_shift, m->n_lvls)))
        return -1;
    /* both readers finish at the offset where reading stopped: the EOF block's */
    if (hts_idx_finish(m->idx, data_end << 16) != 0)
        return -1;
    if ((m->kind == SS_IDX_LINES || m->kind == SS_IDX_VCF) && set_meta(m) != 0)
        return -1;
    if (hts_idx_save_as(m->idx, idx_path, idx_path, m->fmt) < 0)
        return -1;
    return m->n_runs ? ss_idx_patch_counts(idx_path, m->fmt, m->runs, m->n_runs) : 0;
}
