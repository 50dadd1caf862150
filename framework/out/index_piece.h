/*
 * index_piece.h -- the layout of a shard's index piece, shared by the files
 * that write it (index_piece.c, index_lines.c) and the one that reads it
 * (index_merge.c); index_bcf.c writes BCF's. Private to those four.
 */
#ifndef SS_INDEX_PIECE_H
#define SS_INDEX_PIECE_H

#include "ss_shard_index.h"

/* Header fields, u64 little-endian each: kind, shard_len, raw_len, n_ent, n_blocks, table_off. */
#define PIECE_FIELDS 6
#define PIECE_HEAD   (8 * PIECE_FIELDS)

/* Entry flags. */
#define E_MAPPED 1 /* BAM, SAM: the read is mapped (counts in the pseudo-bin); lines, BCF always */
#define E_CONTIG 2 /* the contig changes: its id (records, BCF, SAM) or name (lines) follows */
#define E_BLOCK  4 /* records: the block address moves on by the varint that follows */
#define E_META   8 /* lines: a '#' line before any data line (moves tabix's first offset) */

/* BCF: ss_idx_piece_lines for records (index_bcf.c). */
int ss_idx_piece_bcf(ss_idx_piece_t *p, const char *text, size_t len, uint64_t text_off,
                     size_t leaving, int final);

/* Append v as a LEB128 varint. 0, or -1 out of memory. */
int ss_idx_put_varint(kstring_t *s, uint64_t v);

/* An entry is put together here first, then appended at once (one check for room). */
typedef struct {
    uint8_t b[64];
    int n;
} ss_idx_entry_t;

static inline void ss_idx_entry_varint(ss_idx_entry_t *e, uint64_t v)
{
    while (v > 0x7f) {
        e->b[e->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    e->b[e->n++] = (uint8_t)v;
}

#endif
