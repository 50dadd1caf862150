/*
 * depth.h -- private header of `seqshard depth`: samtools depth 1.16's
 * options, the read filters and per-read counting (depth_read.c), the
 * count window (depth_ring.c), overlap removal by read name (depth_pair.c),
 * row formatting (depth_format.c), options (depth_opts.c) and the kernel
 * (depth.c).
 *
 * Threading: options and the run state are read-only once the workers run;
 * a ring, a pair table and a formatter belong to one worker.
 */
#ifndef SS_DEPTH_H
#define SS_DEPTH_H

#include <stdint.h>

#include "../../framework/ss_framework.h"

/* samtools depth's default filter: UNMAP | SECONDARY | QCFAIL | DUP (0x704). */
#define DP_DEFAULT_FLAGS (BAM_FUNMAP | BAM_FSECONDARY | BAM_FQCFAIL | BAM_FDUP)

/*
 * How far back (bases before a read's POS) -s looks for earlier alignments
 * of the same name. samtools keeps one name table for the whole file; a
 * shard cannot, so a read is paired with the alignments of its name that end
 * within this distance before it (every mate that overlaps it does). Only a
 * name with three or more alignments spread over more than this can pair
 * differently (docs/user-guide.md#depth).
 */
#define DP_PAIR_WINDOW 10000

typedef struct {
    int all;                /* -a given this many times: 1 contigs with reads, 2 every contig */
    int flag;               /* skip reads with any of these flags (-g removes, -G adds) */
    int min_bq;             /* -q: bases below this quality are not counted */
    int min_mq;             /* -Q: reads below this MAPQ are skipped */
    int min_len;            /* -l: reads with fewer aligned query bases are skipped */
    int count_del;          /* -J: deletions count */
    int header;             /* -H: print "#CHROM\tPOS\t<inputs>" first */
    int overlaps;           /* -s: a later mate does not count where an earlier one did */
    int custom_index;       /* -X: index files follow the inputs */
    struct mos_opts_s *mos; /* --mosdepth: mosdepth's files instead (mosdepth.h) */
} dp_opts_t;

void dp_opts_default(dp_opts_t *o);
void dp_usage(FILE *fp);
int dp_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);

/* ---- reads (depth_read.c) ---- */

/*
 * Query bases the alignment uses: SEQ's length minus the soft clips at the
 * CIGAR's two ends (clips behind a hard clip stay, as in samtools), or with
 * no SEQ the M/I/=/X lengths.
 */
hts_pos_t dp_qlen_used(const bam1_t *b);
/* 1 if b passes samtools depth's read filters, in its order; 0 if not. */
int dp_read_passes(const dp_opts_t *o, const bam1_t *b);

/* ---- the count window (depth_ring.c) ---- */

/*
 * Per-position counts of n inputs over a sliding window [lo, cover) of one
 * contig, kept in a ring of cap positions (a power of two) of n counts each.
 * Positions enter at cover zeroed and leave at lo when printed, so the
 * memory follows the longest read, not the shard or the contig.
 */
typedef struct {
    int32_t *cnt; /* [cap * n], position p at (p & (cap - 1)) * n */
    size_t cap;
    int n;
    hts_pos_t lo;    /* next position to print */
    hts_pos_t cover; /* counts are valid (zeroed at least) up to here */
    hts_pos_t *hi;   /* [n]: the farthest end of a counted read of each input */
} dp_ring_t;

/* 0, or -1 out of memory. dp_ring_destroy frees what it holds (not r). */
int dp_ring_init(dp_ring_t *r, int n);
void dp_ring_destroy(dp_ring_t *r);
/* Start a shard: nothing counted, printing from lo. */
void dp_ring_reset(dp_ring_t *r, hts_pos_t lo);
/* Make [lo, to) valid, zeroing new positions. 0, or -1 out of memory. */
int dp_ring_extend(dp_ring_t *r, hts_pos_t to);
/* The n counts of position p, lo <= p < cover. */
static inline int32_t *dp_ring_at(const dp_ring_t *r, hts_pos_t p)
{
    return r->cnt + ((size_t)p & (r->cap - 1)) * (size_t)r->n;
}

/*
 * Count read b of input f into the ring, as samtools depth does: M/=/X
 * bases of quality >= min_bq (bases past SEQ always), D bases with -J
 * (tested against the next base's quality), never N; positions below clip
 * (-s) are not counted. Only positions in [r->lo, top) are kept. 0, or -1
 * for a CIGAR operation samtools does not know (op in *bad_op).
 */
int dp_count_read(dp_ring_t *r, int f, const bam1_t *b, const dp_opts_t *o, hts_pos_t clip,
                  hts_pos_t top, int *bad_op);

/* ---- -s: overlap removal by read name (depth_pair.c) ---- */

typedef struct dp_pairs_s dp_pairs_t;

/* NULL out of memory. */
dp_pairs_t *dp_pairs_init(void);
void dp_pairs_destroy(dp_pairs_t *p);
/* Forget every name (between shards). */
void dp_pairs_clear(dp_pairs_t *p);
/*
 * The -s clip of b (a read that passed the filters): the end of the earlier
 * alignment of its name it pairs with, or 0. Records b for later reads.
 * Reads must come in coordinate order. 0 or a position; -1 out of memory.
 */
hts_pos_t dp_pairs_clip(dp_pairs_t *p, const bam1_t *b);

/* ---- rows (depth_format.c) ---- */

/*
 * "CONTIG\tPOS\tD1[\tD2...]\n" rows of consecutive positions, the position
 * counted up in place rather than printed anew.
 */
typedef struct {
    char ctg[1024]; /* "CONTIG\t" */
    size_t ctg_len; /* 0: the name did not fit; rows are built the slow way */
    const char *name;
    char num[24]; /* the 1-based position, digits at num[24 - num_len...] */
    int num_len;
    hts_pos_t next; /* the 0-based position num holds */
} dp_fmt_t;

void dp_fmt_contig(dp_fmt_t *f, const char *name);
/* Append the row of position p (0-based) with counts d[0..n-1]. 0, or -1 out of memory. */
int dp_fmt_row(dp_fmt_t *f, kstring_t *out, hts_pos_t p, const int32_t *d, int n);
/* The same with every count 0. */
int dp_fmt_zero_row(dp_fmt_t *f, kstring_t *out, hts_pos_t p, int n);
/* The rows of positions [from, to) with the ring's counts (lo <= from, to <= cover), or
 * with zeros. 0, or -1 out of memory. */
int dp_fmt_rows(dp_fmt_t *f, kstring_t *out, const dp_ring_t *r, hts_pos_t from, hts_pos_t to,
                int zeros);

#endif
