/*
 * side_index.c -- the CSI index of a BGZF side stream (tabix -p bed --csi),
 * built as the stream is written instead of by reading the file again.
 *
 * A worker scans its shard's text once (ss_lineidx_scan: each line's
 * contig, start, end and where it ends); the main thread, which writes the
 * shards in order and so knows where each lands, turns those into virtual
 * offsets and pushes them (ss_bedidx_add), as tbx_index does line by line:
 * the offset after a line is (block address << 16 | offset in the block),
 * the next block's address with offset 0 when the line ends its block. The
 * contig ids are the names in order of first appearance, the meta block is
 * tabix's. So the index has the bytes tabix would write, without the serial
 * second pass over the file (a quarter of a per-base run's CPU time).
 *
 * Threads: a line table is made by the worker and then read by the main
 * thread only; an index being built is the main thread's.
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/khash.h>
#include <htslib/tbx.h>

#include "side.h"

typedef struct {
    hts_pos_t beg, end;
    uint64_t uend; /* offset just past the line's '\n' in the shard's text */
    int32_t name;  /* offset of a new contig name in names, or -1: the line before's */
} line_t;

struct ss_lineidx_s {
    line_t *a;
    size_t n, m;
    kstring_t names; /* NUL-terminated names where the contig changes */
    uint64_t len;    /* the shard's text length */
};

KHASH_MAP_INIT_STR(ss_nm, int)

struct ss_bedidx_s {
    hts_idx_t *idx;
    khash_t(ss_nm) * names;
    char **order; /* names by id */
    int n_names, m_names, tid;
    uint64_t last_off; /* where the data starts (after the header's meta lines) */
    uint64_t end_voff; /* virtual offset after the last line pushed */
};

void ss_lineidx_destroy(ss_lineidx_t *t)
{
    if (!t)
        return;
    free(t->a);
    free(t->names.s);
    free(t);
}

/* A number at *p up to a tab or the line's end; 0, or -1 if there are no digits. */
static int number(const char **p, const char *end, hts_pos_t *v)
{
    const char *s = *p;
    int neg = s < end && *s == '-';
    s += neg;
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    hts_pos_t x = 0;
    while (s < end && *s >= '0' && *s <= '9')
        x = x * 10 + (*s++ - '0');
    *v = neg ? -x : x;
    *p = s;
    return 0;
}

static int push_line(ss_lineidx_t *t, line_t l)
{
    if (t->n == t->m) {
        size_t m = t->m ? 2 * t->m : 1024;
        line_t *a = realloc(t->a, m * sizeof(*a));
        if (!a)
            return -1;
        t->a = a, t->m = m;
    }
    t->a[t->n++] = l;
    return 0;
}

int ss_lineidx_scan(const char *text, size_t len, ss_lineidx_t **out)
{
    ss_lineidx_t *t = calloc(1, sizeof(*t));
    if (!(*out = t))
        return -1;
    t->len = len;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *s = text, *end = text + len; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        const char *tab = memchr(s, '\t', (size_t)(le - s));
        line_t l = {0, 0, (uint64_t)((nl ? nl + 1 : end) - text), -1};
        const char *p = tab ? tab + 1 : le;
        /* tabix -p bed: start in column 2 (0-based), end in column 3; others are skipped */
        int ok = *s != '#' && tab && number(&p, le, &l.beg) == 0 && p < le && *p == '\t';
        if (ok) {
            p++;
            ok = number(&p, le, &l.end) == 0;
        }
        if (ok) {
            size_t nlen = (size_t)(tab - s);
            if (l.beg < 0)
                l.beg = 0;
            if (!prev || nlen != prev_len || memcmp(prev, s, nlen)) {
                l.name = (int32_t)t->names.l;
                if (kputsn(s, nlen, &t->names) < 0 || kputc('\0', &t->names) < 0)
                    return -1;
                prev = s, prev_len = nlen;
            }
            if (push_line(t, l) < 0)
                return -1;
        }
        s = nl ? nl + 1 : end;
    }
    return 0;
}

ss_bedidx_t *ss_bedidx_init(uint64_t head_len)
{
    ss_bedidx_t *x = calloc(1, sizeof(*x));
    if (!x || !(x->names = kh_init(ss_nm))) {
        free(x);
        return NULL;
    }
    x->tid = -1;
    x->last_off = head_len << 16; /* the header's meta lines end their block */
    x->end_voff = x->last_off;
    return x;
}

void ss_bedidx_destroy(ss_bedidx_t *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->n_names; i++)
        free(x->order[i]);
    free(x->order);
    kh_destroy(ss_nm, x->names);
    if (x->idx)
        hts_idx_destroy(x->idx);
    free(x);
}

/* The id of a contig name, new names numbered in order of appearance; -1 out of memory. */
static int name_id(ss_bedidx_t *x, const char *name)
{
    khint_t k = kh_get(ss_nm, x->names, name);
    if (k != kh_end(x->names))
        return kh_val(x->names, k);
    if (x->n_names == x->m_names) {
        int m = x->m_names ? 2 * x->m_names : 16;
        char **o = realloc(x->order, (size_t)m * sizeof(*o));
        if (!o)
            return -1;
        x->order = o, x->m_names = m;
    }
    char *dup = strdup(name);
    int absent;
    if (!dup)
        return -1;
    k = kh_put(ss_nm, x->names, dup, &absent);
    if (absent < 0) {
        free(dup);
        return -1;
    }
    x->order[x->n_names] = dup;
    kh_val(x->names, k) = x->n_names;
    return x->n_names++;
}

/* Block addresses of a shard's BGZF bytes: [n + 1], the last the end. NULL out of memory. */
static uint64_t *block_starts(const char *z, size_t zlen, uint64_t file_off, size_t *n)
{
    size_t m = zlen / 28 + 2, k = 0;
    uint64_t *a = malloc(m * sizeof(*a));
    if (!a)
        return NULL;
    for (size_t at = 0; at + 18 <= zlen && k + 1 < m;) {
        a[k++] = file_off + at;
        size_t bsize = (size_t)(unsigned char)z[at + 16] | (size_t)(unsigned char)z[at + 17] << 8;
        at += bsize + 1;
    }
    a[k] = file_off + zlen;
    *n = k;
    return a;
}

int ss_bedidx_add(ss_bedidx_t *x, const ss_lineidx_t *t, uint64_t file_off, const char *z,
                  size_t zlen)
{
    if (!t || !t->n)
        return 0;
    size_t nb;
    uint64_t *blk = block_starts(z, zlen, file_off, &nb);
    if (!blk)
        return -1;
    if (!x->idx && !(x->idx = hts_idx_init(0, HTS_FMT_CSI, x->last_off, 14, 6))) {
        free(blk);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->n; i++) {
        const line_t *l = &t->a[i];
        if (l->name >= 0 && (x->tid = name_id(x, t->names.s + l->name)) < 0) {
            rc = -1;
            break;
        }
        /* blocks hold BGZF_BLOCK_SIZE bytes each, the shard's last one the rest */
        uint64_t j = l->uend / BGZF_BLOCK_SIZE, in = l->uend % BGZF_BLOCK_SIZE;
        uint64_t voff = l->uend == t->len || j >= nb ? blk[nb] << 16 : blk[j] << 16 | in;
        rc = hts_idx_push(x->idx, x->tid, l->beg, l->end, voff, 1) < 0 ? -1 : 0;
        x->end_voff = voff;
    }
    free(blk);
    return rc;
}

/* tabix's meta block: its configuration, then the names, NUL-terminated. */
static int set_meta(ss_bedidx_t *x)
{
    size_t l_nm = 0;
    for (int i = 0; i < x->n_names; i++)
        l_nm += strlen(x->order[i]) + 1;
    uint8_t *meta = malloc(28 + l_nm);
    if (!meta)
        return -1;
    int32_t conf[7] = {tbx_conf_bed.preset, tbx_conf_bed.sc,        tbx_conf_bed.bc,
                       tbx_conf_bed.ec,     tbx_conf_bed.meta_char, tbx_conf_bed.line_skip,
                       (int32_t)l_nm};
    memcpy(meta, conf, 28); /* little-endian hosts, as htslib writes it */
    size_t at = 28;
    for (int i = 0; i < x->n_names; i++) {
        size_t n = strlen(x->order[i]) + 1;
        memcpy(meta + at, x->order[i], n);
        at += n;
    }
    return hts_idx_set_meta(x->idx, (uint32_t)at, meta, 0);
}

int ss_bedidx_save(ss_bedidx_t *x, uint64_t data_end, const char *path, const char *idx_path)
{
    if (!x->idx && !(x->idx = hts_idx_init(0, HTS_FMT_CSI, x->last_off, 14, 6)))
        return -1;
    /* tbx_index finishes at the offset where reading stopped: the end block's */
    if (hts_idx_finish(x->idx, data_end << 16) != 0 || set_meta(x) != 0)
        return -1;
    return hts_idx_save_as(x->idx, path, idx_path, HTS_FMT_CSI) < 0 ? -1 : 0;
}
