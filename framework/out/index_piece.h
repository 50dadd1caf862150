/*
 * index_piece.h -- the layout of a shard's index piece, shared by the files
 * that write it (index_piece.c, index_lines.c) and the one that reads it
 * (index_merge.c); index_bcf.c writes BCF's. Private to those four.
 */
#ifndef SS_INDEX_PIECE_H
#define SS_INDEX_PIECE_H

#include "shard_index.h"

/* Header fields, u64 little-endian each: kind, shard_len, raw_len, n_ent, n_blocks, table_off. */
#define PIECE_FIELDS 6
#define PIECE_HEAD   (8 * PIECE_FIELDS)

/* Entry flags. */
/* BAM, SAM: the read is mapped (counts in the pseudo-bin); lines, BCF: always */
#define E_MAPPED 1
#define E_CONTIG 2  /* the contig changes: its id (records, BCF, SAM) or name (lines) follows */
#define E_BLOCK  4  /* records: the block address moves on by the varint that follows */
#define E_META   8  /* lines: a '#' line before any data line (moves tabix's first offset) */
#define E_RUN    16 /* records left out before this one follow: mapped, then unmapped, varints */

/* The window size the runs are judged by: htslib's min_shift for BAI, TBI and our CSIs. */
#define RUN_SHIFT 14

/*
 * A record the kinds note, before it is written or left out (index_piece.c).
 * after: RECORDS the virtual offset after it (relative to the shard);
 * text kinds the raw offset after it.
 */
typedef struct {
    int32_t tid; /* lines: 0, with new_contig saying whether the name changed */
    int new_contig;
    hts_pos_t beg, end;
    int mapped;
    uint64_t after;
} ss_idx_note_t;

/*
 * Note a record: written at once, or held back while it joins a run
 * (shard_index.h says why that is exact). 0, or -1 out of memory.
 */
int ss_idx_note(ss_idx_piece_t *p, const ss_idx_note_t *r);
/* Write the record held back, if any (before a meta entry, or at the shard's end). 0 or -1. */
int ss_idx_note_flush(ss_idx_piece_t *p);
/* LINES, VCF: write a line's entry, closing a run of run_m + run_u lines left out (index_lines.c).
 */
int ss_idx_write_line(ss_idx_piece_t *p, const ss_idx_note_t *r, uint64_t run_m, uint64_t run_u);

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

/*
 * The saved index at idx_path (fmt: HTS_FMT_BAI, _CSI or _TBI) with
 * runs[2 i] mapped and runs[2 i + 1] unmapped records added to contig i's
 * pseudo-bin, for i < n_runs (index_patch.c). 0, or -1 (errno says why).
 */
int ss_idx_patch_counts(const char *idx_path, int fmt, const uint64_t *runs, int n_runs);

/* A run's counts, after E_RUN in the entry's flags: mapped, then unmapped. */
static inline void ss_idx_entry_run(ss_idx_entry_t *e, uint64_t run_m, uint64_t run_u)
{
    ss_idx_entry_varint(e, run_m);
    ss_idx_entry_varint(e, run_u);
}

#endif
