/*
 * shard_index.h -- the output's index built from the shards, not by reading
 * the finished file back (index_piece.c on the workers, index_merge.c on the
 * output's owner).
 *
 * A worker notes, as it writes a shard, what an index builder would see when
 * reading that shard: each record's or line's contig, interval and the
 * virtual offset just past it, with block addresses relative to the shard's
 * first byte (a shard's output is whole BGZF blocks of its own). That is the
 * shard's piece. The owner of the output replays the pieces in shard order
 * through hts_idx_push, each shifted by its shard's file offset, exactly as
 * sam_index (samtools index) and tbx_index (tabix) push what they read; so
 * the index has their bytes, chunk merging, pseudo-bin and n_no_coor
 * included, because htslib's own code builds it.
 *
 * Why a replay rather than per-shard bins merged afterwards: the replay is
 * exact by construction (hts_idx_finish's chunk merging across a shard's
 * edge needs no copy of its rules).
 *
 * Why the replay is short: a record that lies in the same 16 kb windows as
 * the one before it (same contig, not earlier) changes nothing in an htslib
 * index but its offset and the contig's mapped/unmapped counts: its bin is
 * the same, and every linear-index window it touches is already set. The
 * worker leaves such a record out and lets the next record kept carry the
 * count (E_RUN); it keeps the last of a run, whose offset is where the next
 * bin's chunk starts. A pileup line per base thus costs two entries per
 * 16 kb, not 16,384. The merge pushes what is kept and adds the counts to
 * each contig's pseudo-bin in the saved index (index_patch.c), the one
 * figure htslib's interface cannot be given in bulk.
 *
 * Threads: a piece is its worker's until handed over (ss_idx_piece_take);
 * a merge is the main thread's of the rank that owns the output.
 *
 * Private to framework/out/ and framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_SHARD_INDEX_H
#define SS_SHARD_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <htslib/hts.h>
#include <htslib/kstring.h>

/*
 * What a piece holds: BAM records (explicit offsets); tabix text lines
 * (-s1 -b2 -e2); VCF lines as tabix -p vcf reads them (end from REF's length
 * or INFO/END); BCF records (contig id, start and rlen from each record's
 * fixed fields); SAM records of a SAM.gz as sam_index reads them (contig id,
 * start, bam_endpos, mapped: noted as each line is formatted). Those four
 * note raw offsets of BGZF text. CRAI: the .crai lines htslib's index
 * builder writes for the shard's own CRAM.
 */
typedef enum {
    SS_IDX_NONE = 0,
    SS_IDX_RECORDS = 1,
    SS_IDX_LINES = 2,
    SS_IDX_VCF = 3,
    SS_IDX_BCF = 4,
    SS_IDX_CRAI = 5,
    SS_IDX_SAM = 6
} ss_idx_kind_t;

/* Whether a kind notes BGZF text by raw offsets (lines, BCF or SAM records). */
static inline int ss_idx_kind_text(ss_idx_kind_t k)
{
    return k == SS_IDX_LINES || k == SS_IDX_VCF || k == SS_IDX_BCF || k == SS_IDX_SAM;
}

/* One shard's notes as a worker writes it. Plain, owned by the worker's output. */
typedef struct {
    ss_idx_kind_t kind;
    kstring_t ent;    /* fixed header, then the entries (index_piece.c) */
    kstring_t blocks; /* text kinds: compressed size of each BGZF block, as varints */
    uint64_t n_ent, n_blocks;
    int failed;      /* out of memory while noting: the piece is unusable */
    size_t last_len; /* the last piece taken: the next one is reserved from it */
    /* RECORDS, BCF, SAM */
    int32_t tid;   /* the last entry's contig */
    hts_pos_t beg; /* the last entry's start */
    uint64_t coff; /* the last entry's block address */
    int pending;   /* a record waits for the offset where the next one starts */
    int32_t p_tid;
    hts_pos_t p_beg, p_end;
    int p_mapped;
    /* LINES, VCF, BCF */
    kstring_t name;   /* the last data line's contig name */
    kstring_t carry;  /* the head of a line (BCF: a record's fixed fields) whose start
                       * already left memory */
    uint64_t scan_at; /* raw offset where the next line or record starts */
    uint64_t last_u;  /* raw offset after the last line or record written (SAM too) */
    int seen_data;    /* a data line was noted (meta lines after it are not) */
    /* runs (index_piece.c): the last record noted, and the one held back */
    int n_any;                /* a record was noted in this shard */
    int32_t n_tid;            /* its contig (lines: 0, names compared instead) */
    hts_pos_t n_beg;          /* its start */
    hts_pos_t n_wbeg, n_wend; /* the 16 kb windows it spans */
    uint64_t n_after;         /* where a reader stands after it */
    int held;                 /* a record left out so far, kept unless another joins the run */
    int32_t h_tid;
    hts_pos_t h_beg, h_end;
    int h_mapped;
    uint64_t h_after;              /* where a reader stands after it (as the kind notes offsets) */
    uint64_t r_mapped, r_unmapped; /* records left out before the held one */
} ss_idx_piece_t;

/* Forget everything and start shard notes of kind (SS_IDX_NONE: note nothing). Worker. */
void ss_idx_piece_reset(ss_idx_piece_t *p, ss_idx_kind_t kind);
void ss_idx_piece_free(ss_idx_piece_t *p);
/*
 * RECORDS, as the encoder lays them out: a record starts at start_voff
 * (block address relative to the shard). The record before it ends there,
 * which is where a reader's bgzf_tell stands after it; the last one ends at
 * the shard's end (ss_idx_piece_end). 0, or -1 out of memory.
 */
int ss_idx_piece_record_at(ss_idx_piece_t *p, int32_t tid, hts_pos_t beg, hts_pos_t end, int mapped,
                           uint64_t start_voff);
/* RECORDS whose end is known (blocks copied as they are): end_voff as a reader's bgzf_tell
 * after it, block address relative to the shard. 0, or -1. */
int ss_idx_piece_record(ss_idx_piece_t *p, int32_t tid, hts_pos_t beg, hts_pos_t end, int mapped,
                        uint64_t end_voff);
/*
 * LINES, VCF, BCF: text[0..len) is the shard's raw text from raw offset
 * text_off on; note every whole line (BCF: record) not noted yet. The first
 * `leaving` bytes are about to leave memory: the head of an unfinished line
 * among them is kept. final: the shard's text ends at len. 0, or -1 (out of
 * memory, a last line without its newline, a BCF record cut short).
 */
int ss_idx_piece_lines(ss_idx_piece_t *p, const char *text, size_t len, uint64_t text_off,
                       size_t leaving, int final);
/*
 * SAM, as out_shard.c formats each line (BCF: as index_bcf.c finds each record): a
 * record of the shard's text that ends at raw offset end_u, its newline
 * included. Records come in file order. 0, or -1 out of memory.
 */
int ss_idx_piece_text_record(ss_idx_piece_t *p, int32_t tid, hts_pos_t beg, hts_pos_t end,
                             int mapped, uint64_t end_u);
/*
 * CRAI: the shard's .crai lines (ss_cram_enc_index), container offsets
 * counted from a file whose frame header is head_len bytes. 0, or -1 out of
 * memory. Call once, then ss_idx_piece_end(p, shard_len, head_len).
 */
int ss_idx_piece_crai(ss_idx_piece_t *p, const char *text, size_t len);
/* Text kinds: the BGZF blocks z[0..len) just compressed from the shard's text, in order. 0 or -1.
 */
int ss_idx_piece_blocks(ss_idx_piece_t *p, const char *z, size_t len);
/*
 * The shard is done: shard_len bytes of output, raw_len of them before
 * compression (text kinds). The piece is complete. 0, or -1 when it is
 * unusable (SAM: text after the last record noted, which no entry describes).
 */
int ss_idx_piece_end(ss_idx_piece_t *p, uint64_t shard_len, uint64_t raw_len);
/* Move the finished piece's bytes into *out (which must be empty); p starts afresh. */
void ss_idx_piece_take(ss_idx_piece_t *p, kstring_t *out);

/* ---- the merge (index_merge.c): output owner, main thread ---- */

typedef struct ss_idx_merge_s ss_idx_merge_t;

/*
 * An index of kind RECORDS or SAM (BAM, SAM.gz: n_targets contigs of at most
 * max_len bp, as sam_index), BCF (the same, as bcf_index: CSI only), LINES (tabix -s1 -b2
 * -e2) or VCF (tabix -p vcf, as bcftools index; max_len: the longest
 * ##contig length of the header, which sizes a CSI as tbx_index does), as fmt
 * (HTS_FMT_BAI, HTS_FMT_CSI or HTS_FMT_TBI), for a file whose data starts at
 * header_len; or CRAI (samtools index's .crai of a CRAM: fmt and the sizes
 * unused). NULL out of memory.
 */
ss_idx_merge_t *ss_idx_merge_init(ss_idx_kind_t kind, int fmt, int n_targets, hts_pos_t max_len,
                                  uint64_t header_len);
void ss_idx_merge_destroy(ss_idx_merge_t *m);
/*
 * The next shard's piece, its bytes written at file_off: pushed in order.
 * 0; -1 for a piece that does not fit (a wrong kind, an offset gap: a shard
 * dropped or out of order) or htslib refused (-2: a position past the
 * format's limit, or out of order). Call in shard order.
 */
int ss_idx_merge_add(ss_idx_merge_t *m, const char *piece, size_t len, uint64_t file_off);
/* Where the next shard should start (after the header and every shard added). */
uint64_t ss_idx_merge_next_off(const ss_idx_merge_t *m);
/* The shard length piece[0..len) says, or -1 if it is not a piece. */
int64_t ss_idx_piece_shard_len(const char *piece, size_t len);
/* The longest ##contig length of a VCF header's text, read as tbx_index reads it for a CSI. */
int64_t ss_idx_vcf_max_len(const char *text, size_t len);
/*
 * Finish at data_end (where the BGZF EOF block starts) and write the index to
 * idx_path (a file the caller created). 0; -1 when writing failed (errno
 * says why); -2 when the shards added do not end at data_end.
 */
int ss_idx_merge_save(ss_idx_merge_t *m, uint64_t data_end, const char *idx_path);

#endif
