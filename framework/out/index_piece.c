/*
 * index_piece.c -- a worker's notes for the output's index, one shard at a
 * time (shard_index.h says why the notes are a stream of entries).
 *
 * Layout of a piece: a fixed header (PIECE_HEAD bytes, little-endian u64s:
 * kind, shard length, raw length, entries, blocks, where the block table
 * starts), the entries, then for text kinds the block table. An entry is
 * varints: flags (E_*), the contig when it changes (RECORDS, BCF, SAM: its id,
 * zigzag; LINES, VCF: the name's length and bytes), start minus the previous
 * entry's start (zigzag), end minus start (zigzag), then where a reader
 * stands after it: RECORDS the block address's step (with E_BLOCK) and the
 * offset in the block; text kinds the raw bytes since the previous entry
 * (after a SAM record's newline: bgzf_tell after sam_read1), which the merge maps
 * to blocks through the table, as blocks of text hold BGZF_BLOCK_SIZE bytes
 * each (compress.c), the shard's last one the rest.
 *
 * Worker thread that owns the piece.
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>

#include "index_piece.h"

void ss_idx_piece_free(ss_idx_piece_t *p)
{
    free(p->ent.s);
    free(p->blocks.s);
    free(p->name.s);
    free(p->carry.s);
    memset(p, 0, sizeof(*p));
}

void ss_idx_piece_reset(ss_idx_piece_t *p, ss_idx_kind_t kind)
{
    p->kind = kind;
    p->ent.l = p->blocks.l = p->name.l = p->carry.l = 0;
    p->n_ent = p->n_blocks = 0;
    p->failed = 0;
    p->tid = -1;
    p->beg = 0;
    p->coff = 0;
    p->pending = 0;
    p->scan_at = p->last_u = 0;
    p->seen_data = 0;
    p->n_any = p->held = 0;
    p->n_after = p->r_mapped = p->r_unmapped = 0;
    /* reserved from what the last shard needed, not grown by copying (pages are touched only
     * as far as the entries go) */
    size_t want = PIECE_HEAD + 4096 + p->last_len + p->last_len / 4;
    if (kind != SS_IDX_NONE && ks_resize(&p->ent, want) == 0) {
        memset(p->ent.s, 0, PIECE_HEAD);
        p->ent.l = PIECE_HEAD;
    } else if (kind != SS_IDX_NONE) {
        p->failed = 1;
    }
}

int ss_idx_put_varint(kstring_t *s, uint64_t v)
{
    uint8_t b[10];
    int n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return kputsn((const char *)b, (size_t)n, s) < 0 ? -1 : 0;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/*
 * An entry's flags (E_CONTIG added when the contig changes), contig, start and
 * end, into e; the caller adds where a reader stands after it.
 */
static void entry_head(ss_idx_piece_t *p, ss_idx_entry_t *e, int flags, int32_t tid, hts_pos_t beg,
                       hts_pos_t end)
{
    if (tid != p->tid || !p->n_ent)
        flags |= E_CONTIG;
    ss_idx_entry_varint(e, (uint64_t)flags);
    if (flags & E_CONTIG)
        ss_idx_entry_varint(e, zigzag(tid));
    ss_idx_entry_varint(e, zigzag(beg - p->beg));
    ss_idx_entry_varint(e, zigzag(end - beg));
    p->tid = tid, p->beg = beg;
}

/* Append the finished entry. 0, or -1 out of memory (the piece is then unusable). */
static int put_entry(ss_idx_piece_t *p, const ss_idx_entry_t *e)
{
    p->n_ent++;
    if (kputsn((const char *)e->b, (size_t)e->n, &p->ent) < 0) {
        p->failed = 1;
        return -1;
    }
    return 0;
}

/* RECORDS: an entry whose position is the virtual offset after it. */
static int write_record(ss_idx_piece_t *p, const ss_idx_note_t *r, uint64_t run_m, uint64_t run_u)
{
    uint64_t coff = r->after >> 16;
    int flags =
        (r->mapped ? E_MAPPED : 0) | (coff != p->coff ? E_BLOCK : 0) | (run_m | run_u ? E_RUN : 0);
    ss_idx_entry_t e = {.n = 0};
    entry_head(p, &e, flags, r->tid, r->beg, r->end);
    if (flags & E_RUN)
        ss_idx_entry_run(&e, run_m, run_u);
    if (flags & E_BLOCK)
        ss_idx_entry_varint(&e, coff - p->coff);
    ss_idx_entry_varint(&e, r->after & 0xffff);
    p->coff = coff;
    return put_entry(p, &e);
}

/* SAM and BCF: an entry whose position is the raw offset after it. */
static int write_text_record(ss_idx_piece_t *p, const ss_idx_note_t *r, uint64_t run_m,
                             uint64_t run_u)
{
    int flags = (r->mapped ? E_MAPPED : 0) | (run_m | run_u ? E_RUN : 0);
    ss_idx_entry_t e = {.n = 0};
    entry_head(p, &e, flags, r->tid, r->beg, r->end);
    if (flags & E_RUN)
        ss_idx_entry_run(&e, run_m, run_u);
    ss_idx_entry_varint(&e, r->after - p->last_u);
    p->last_u = r->after;
    return put_entry(p, &e);
}

static int write_note(ss_idx_piece_t *p, const ss_idx_note_t *r, uint64_t run_m, uint64_t run_u)
{
    if (p->kind == SS_IDX_RECORDS)
        return write_record(p, r, run_m, run_u);
    if (p->kind == SS_IDX_LINES || p->kind == SS_IDX_VCF)
        return ss_idx_write_line(p, r, run_m, run_u);
    return write_text_record(p, r, run_m, run_u);
}

/*
 * Whether r lies in the same windows as the record noted before it, on the
 * same contig and not before it: then it changes neither bin nor linear
 * index (shard_index.h). Positions as hts_idx_push shoehorns them.
 */
static int joins_run(const ss_idx_piece_t *p, const ss_idx_note_t *r, hts_pos_t wbeg,
                     hts_pos_t wend)
{
    return p->n_any && r->tid >= 0 && r->tid == p->n_tid && !r->new_contig && r->beg >= p->n_beg &&
           wbeg == p->n_wbeg && wend == p->n_wend;
}

int ss_idx_note_flush(ss_idx_piece_t *p)
{
    if (!p->held)
        return 0;
    ss_idx_note_t h = {p->h_tid, 0, p->h_beg, p->h_end, p->h_mapped, p->h_after};
    p->held = 0;
    int rc = write_note(p, &h, p->r_mapped, p->r_unmapped);
    p->r_mapped = p->r_unmapped = 0;
    return rc;
}

int ss_idx_note(ss_idx_piece_t *p, const ss_idx_note_t *r)
{
    if (p->failed || r->after < p->n_after) { /* file order: offsets only grow */
        p->failed = 1;
        return -1;
    }
    hts_pos_t beg = r->beg < 0 ? 0 : r->beg, end = r->end <= 0 ? 1 : r->end;
    hts_pos_t wbeg = beg >> RUN_SHIFT, wend = (end - 1) >> RUN_SHIFT;
    int joins = joins_run(p, r, wbeg, wend);
    p->n_any = 1, p->n_tid = r->tid, p->n_beg = r->beg;
    p->n_wbeg = wbeg, p->n_wend = wend, p->n_after = r->after;
    if (joins) {
        if (p->held)
            p->h_mapped ? p->r_mapped++ : p->r_unmapped++;
        p->held = 1;
        p->h_tid = r->tid, p->h_beg = r->beg, p->h_end = r->end;
        p->h_mapped = r->mapped, p->h_after = r->after;
        return 0;
    }
    if (ss_idx_note_flush(p) < 0 || write_note(p, r, 0, 0) < 0) {
        p->failed = 1;
        return -1;
    }
    return 0;
}

int ss_idx_piece_record(ss_idx_piece_t *p, int32_t tid, hts_pos_t beg, hts_pos_t end, int mapped,
                        uint64_t end_voff)
{
    ss_idx_note_t r = {tid, 0, beg, end, mapped, end_voff};
    return ss_idx_note(p, &r);
}

int ss_idx_piece_text_record(ss_idx_piece_t *p, int32_t tid, hts_pos_t beg, hts_pos_t end,
                             int mapped, uint64_t end_u)
{
    ss_idx_note_t r = {tid, 0, beg, end, mapped, end_u};
    return ss_idx_note(p, &r);
}

/* The pending record ends where the next begins (or the shard ends). */
static int flush_pending(ss_idx_piece_t *p, uint64_t end_voff)
{
    if (!p->pending)
        return 0;
    p->pending = 0;
    return ss_idx_piece_record(p, p->p_tid, p->p_beg, p->p_end, p->p_mapped, end_voff);
}

int ss_idx_piece_record_at(ss_idx_piece_t *p, int32_t tid, hts_pos_t beg, hts_pos_t end, int mapped,
                           uint64_t start_voff)
{
    if (flush_pending(p, start_voff) < 0)
        return -1;
    p->pending = 1;
    p->p_tid = tid, p->p_beg = beg, p->p_end = end, p->p_mapped = mapped;
    return 0;
}

int ss_idx_piece_blocks(ss_idx_piece_t *p, const char *z, size_t len)
{
    for (size_t at = 0; at + 18 <= len;) {
        /* BSIZE, the block's length minus one, at bytes 16-17 of its header */
        size_t bsize = ((size_t)(uint8_t)z[at + 16] | (size_t)(uint8_t)z[at + 17] << 8) + 1;
        if (ss_idx_put_varint(&p->blocks, bsize) < 0) {
            p->failed = 1;
            return -1;
        }
        p->n_blocks++;
        at += bsize;
    }
    return 0;
}

int ss_idx_piece_crai(ss_idx_piece_t *p, const char *text, size_t len)
{
    if (p->failed || kputsn(text, len, &p->ent) < 0) {
        p->failed = 1;
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        p->n_ent += text[i] == '\n';
    return 0;
}

static void put_u64(char *at, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        at[i] = (char)(v >> (8 * i));
}

int ss_idx_piece_end(ss_idx_piece_t *p, uint64_t shard_len, uint64_t raw_len)
{
    if (p->kind == SS_IDX_NONE)
        return 0;
    if (p->carry.l)
        p->failed = 1; /* a line's head with no end: see index_lines.c */
    if (p->kind == SS_IDX_SAM && p->n_after != raw_len)
        p->failed = 1; /* bytes no record of ours wrote: sam_index would read them as one */
    if (flush_pending(p, shard_len << 16) < 0 || ss_idx_note_flush(p) < 0 || p->failed)
        return -1;
    uint64_t table_off = p->ent.l;
    if (p->blocks.l && kputsn(p->blocks.s, p->blocks.l, &p->ent) < 0) {
        p->failed = 1;
        return -1;
    }
    uint64_t head[PIECE_FIELDS] = {p->kind, shard_len, raw_len, p->n_ent, p->n_blocks, table_off};
    for (int i = 0; i < PIECE_FIELDS; i++)
        put_u64(p->ent.s + 8 * i, head[i]);
    return 0;
}

void ss_idx_piece_take(ss_idx_piece_t *p, kstring_t *out)
{
    *out = p->ent;
    p->last_len = p->ent.l;
    p->ent = (kstring_t)KS_INITIALIZE;
    ss_idx_piece_reset(p, p->kind);
}
