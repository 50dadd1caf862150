/*
 * index_bcf.c -- a worker's notes for the CSI of its shard's BCF records,
 * as bcf_index (bcftools index) reads them: each record's contig id, start
 * and start + rlen from its fixed fields, and the raw offset just past it.
 *
 * A record's first 20 bytes say all of that (l_shared, l_indiv, rid, pos,
 * rlen, little-endian) and how long it is (8 + l_shared + l_indiv), so the
 * scan jumps from head to head and never needs a whole record in memory:
 * only a head cut by bytes leaving memory is kept (in carry) until the rest
 * of it comes. These are the bytes the kernel wrote, noted before they are
 * compressed: nothing is read back.
 *
 * Worker thread that owns the piece.
 */
#include <string.h>

#include "index_piece.h"

/* l_shared, l_indiv, rid, pos, rlen */
#define HEAD 20

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The next record's head into h, from carry and text; 0 when not all of it is here yet. */
static int next_head(const ss_idx_piece_t *p, const char *text, size_t len, uint64_t text_off,
                     uint8_t h[HEAD])
{
    if (p->scan_at >= text_off) {
        uint64_t at = p->scan_at - text_off;
        if (at + HEAD > len)
            return 0;
        memcpy(h, text + at, HEAD);
        return 1;
    }
    size_t k = p->carry.l; /* raw [scan_at, text_off), checked by the caller */
    if (k + len < HEAD)
        return 0;
    memcpy(h, p->carry.s, k);
    memcpy(h + k, text, HEAD - k);
    return 1;
}

/* The record whose head is h, starting at scan_at: its entry. 0, or -1 out of memory. */
static int note_record(ss_idx_piece_t *p, const uint8_t h[HEAD])
{
    uint64_t len = 8 + (uint64_t)le32(h) + le32(h + 4);
    int32_t tid = (int32_t)le32(h + 8);
    uint32_t pos = le32(h + 12);
    hts_pos_t beg = pos == UINT32_MAX ? -1 : (hts_pos_t)pos; /* as bcf_read1_core reads it */
    hts_pos_t end = beg + (int32_t)le32(h + 16);
    p->scan_at += len;
    return ss_idx_piece_text_record(p, tid, beg, end, 1, p->scan_at);
}

int ss_idx_piece_bcf(ss_idx_piece_t *p, const char *text, size_t len, uint64_t text_off,
                     size_t leaving, int final)
{
    if (p->failed)
        return -1;
    if (p->scan_at < text_off && p->carry.l != text_off - p->scan_at)
        p->failed = 1; /* a head left memory without being kept: cannot happen */
    uint8_t h[HEAD];
    while (!p->failed && next_head(p, text, len, text_off, h)) {
        p->carry.l = 0;
        if (note_record(p, h) < 0)
            p->failed = 1;
    }
    /* a head cut where the leaving bytes end: keep their part of it */
    uint64_t gone = text_off + leaving;
    if (!p->failed && p->scan_at < gone) {
        uint64_t from = p->scan_at > text_off ? p->scan_at - text_off : 0;
        if (kputsn(text + from, (size_t)(leaving - from), &p->carry) < 0)
            p->failed = 1;
    }
    /* the shard's text must end where its last record does */
    if (final && p->scan_at != text_off + len)
        p->failed = 1;
    return p->failed ? -1 : 0;
}
