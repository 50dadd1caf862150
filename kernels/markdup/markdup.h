/*
 * markdup.h -- private to the markdup kernel (kernels/markdup/).
 *
 * `seqshard markdup` marks duplicates as samtools markdup 1.16.1 does, shard
 * by shard. samtools decides each read on its own, as it streams the file:
 * a paired read's key holds its own unclipped 5' end and its mate's (from
 * MC), and its score adds the mate's (ms), so the two reads of a pair reach
 * the same verdict without any message between them. What a verdict depends
 * on is the reads around it: those whose keys it shares, and the moving
 * buffer of -l (max read length) that decides how long a key stays known.
 *
 * So each shard replays samtools' streaming machine (dup_machine.c) over its
 * range and a halo either side (DUP_HALO_READS read lengths): the state the
 * machine holds at any read depends only on reads within a few -l of it,
 * so a shard started that far back holds what one run over the file held
 * there, and one that runs that far on has settled every read it owns. A
 * read whose clips and span put its unclipped ends more than -l from its
 * POS breaks that bound (and samtools' own window): the run stops and names
 * the -l to give.
 *
 * Files: markdup.c (the kernel), dup_opts.c (options, --help), dup_key.c
 * (keys, scores, barcodes), dup_optical.c (tile coordinates), dup_machine.c
 * and dup_chain.c (the streaming machine, its chains of duplicates),
 * dup_stream.c (a range through it), dup_names.c (-S's names from every
 * shard), dup_stats.c (-s/-f), dup_step.c (--markdup in front of a command).
 */
#ifndef SS_KERNEL_MARKDUP_H
#define SS_KERNEL_MARKDUP_H

#include <htslib/khash.h>
#include <htslib/sam.h>
#include <regex.h>
#include <stdint.h>

#include "../../framework/ss_framework.h"

#define DUP_MODE_TEMPLATE 0  /* -m t */
#define DUP_MODE_SEQUENCE 1  /* -m s */
#define DUP_MIN_QUALITY   15 /* bases below this add nothing to a read's score */
#define DUP_HALO_READS    8  /* read lengths (-l) a shard replays before and after its range */

/* samtools markdup's options, by their letters. */
typedef struct {
    int remove_dups;    /* -r */
    int max_length;     /* -l */
    int do_stats;       /* -s (or -f) */
    char *stats_file;   /* -f, owned */
    int opt_dist;       /* -d: optical distance; 0 off */
    int clear;          /* -c */
    int tag;            /* -t: do:Z with the original's name */
    int mode;           /* -m: DUP_MODE_* */
    int include_fails;  /* --include-fails */
    int no_pg;          /* --no-PG */
    int supp;           /* -S: mark the other alignments of duplicates too */
    int no_multi_dup;   /* --no-multi-dup */
    int check_chain;    /* chains of duplicates are revisited: -t or -d, without --no-multi-dup */
    char *barcode_tag;  /* --barcode-tag, owned */
    int barcode_name;   /* --barcode-name or --barcode-rgx */
    char *barcode_rgx;  /* --barcode-rgx, owned */
    char *coords_rgx;   /* --read-coords, owned */
    char *coords_order; /* --coords-order, owned; NULL: txy */
    int rgx_x, rgx_y, rgx_t; /* the groups of --read-coords, from --coords-order */
    ss_out_format_t format;
    int threads;   /* -@ copy, for the index */
    char *cmdline; /* @PG CL and the stats' COMMAND, owned */
} dup_opts_t;

/* -S: a duplicate's name, and what its other alignments get (dup_names.c). */
typedef struct {
    char *ori;   /* do:Z with -t, or NULL */
    int optical; /* dt:Z:SQ with -d, else LB */
} dup_name_t;
typedef struct dup_names_s dup_names_t;
dup_names_t *dup_names_init(void);
void dup_names_destroy(dup_names_t *n);
/* Every shard's decisions, in plan order (dup_note_name's format). 0, or -1 after ss_error(). */
int dup_names_take(dup_names_t *n, const char *bytes, size_t len);
/* The duplicate of that name, or NULL. Any thread, once taken. */
const dup_name_t *dup_names_get(const dup_names_t *n, const char *name);

/*
 * Run state: the compiled regexes (regexec is thread-safe) and, with -S, the
 * duplicates' names, filled before the workers start; read-only for them.
 */
typedef struct {
    const dup_opts_t *o;
    regex_t coords, barcode;
    int has_coords, has_barcode;
    dup_names_t *names;
} dup_run_t;

/* A duplicate key, as samtools builds it (a single read's leaves out the mate fields). */
typedef struct {
    hts_pos_t this_coord, other_coord;
    int32_t this_ref, other_ref, barcode;
    int8_t single, leftmost, orientation;
} dup_key_t;

/* The statistics of -s, in samtools' order; each counted once, by the shard owning it. */
typedef struct {
    int64_t reading, writing, excluded, examined, pair, single;
    int64_t duplicate, single_dup, optical, single_optical, np_duplicate, np_opt_duplicate;
} dup_counts_t;
#define DUP_NCOUNTS 12

/* The run state's regexes from o (markdup.c). 0, or -1 after ss_error(). */
int dup_run_init(dup_run_t *r, const dup_opts_t *o);

/* dup_key.c */
hts_pos_t dup_unclipped_start(const bam1_t *b);
hts_pos_t dup_unclipped_end(const bam1_t *b);
/* 0, or -1 when the read has no MC:Z (the message is the caller's). */
int dup_pair_key(const dup_run_t *r, dup_key_t *key, const bam1_t *b);
void dup_single_key(const dup_run_t *r, dup_key_t *key, const bam1_t *b);
int64_t dup_score(const bam1_t *b);
/* The ms tag; -1 when missing. */
int64_t dup_mate_score(const bam1_t *b);
khint_t dup_key_hash(dup_key_t k);
int dup_key_equal(dup_key_t a, dup_key_t b);

/* dup_optical.c: where a read name puts a cluster on the tile. */
typedef struct {
    long x, y;
    int beg, end; /* the part of the name that must match (lane, tile) */
} dup_coords_t;
/* 0, or nonzero when the name holds no coordinates. */
int dup_coords(const dup_run_t *r, const char *name, dup_coords_t *c);
int dup_is_optical(const dup_run_t *r, const char *ori, const dup_coords_t *oc, const char *dup,
                   dup_coords_t *dc);

/* dup_machine.c: samtools markdup's streaming machine. */
typedef struct dup_machine_s dup_machine_t;
dup_machine_t *dup_machine_init(const dup_run_t *run);
void dup_machine_destroy(dup_machine_t *m);
/*
 * One shard's reads through the machine, streamed: dup_machine_begin, then
 * for each read in file order dup_machine_slot (a record to fill, reused)
 * and dup_machine_push (owned: the shard writes it and counts its events),
 * then dup_machine_end. Each read leaves, final, in file order, through
 * emit (0, or -1 after ss_error()); the machine counts what is written
 * (WRITTEN) into c before the hook sees it. names (-S, else NULL): where the
 * owned decisions' names go for the other shards (dup_note_name). slot: NULL
 * after ss_error(); push, end: 0, or -1 after ss_error() (file names the
 * input in messages). The worker's thread.
 */
typedef int (*dup_emit_fn)(void *ctx, bam1_t *b, int owned);
void dup_machine_begin(dup_machine_t *m, const char *file, dup_counts_t *c, kstring_t *names,
                       dup_emit_fn emit, void *ctx);
bam1_t *dup_machine_slot(dup_machine_t *m);
int dup_machine_push(dup_machine_t *m, int owned);
int dup_machine_end(dup_machine_t *m);
/* -c: the read forgets earlier marking (DUP flag, dt and do tags). Any thread. */
void dup_clear_marks(bam1_t *b);

/* dup_stream.c: a range of a file through the machine, for the kernel and the step. */
typedef struct {
    const dup_opts_t *o;
    dup_machine_t *m;
    ss_source_t *src; /* the file (or the step nearer it) */
    const char *file; /* its name, for messages */
} dup_stream_t;
typedef struct {
    int tid;
    hts_pos_t beg, hi;          /* read [beg - dup_halo, hi) */
    hts_pos_t own_beg, own_end; /* reads whose POS lies here are owned */
} dup_span_t;
/* How far around a range the machine must start and run on (the argument above). */
hts_pos_t dup_halo(const dup_opts_t *o);
/*
 * Stream sp through st's machine: dup_machine_begin(c, names, emit, ctx),
 * every read pushed (owned ones counted into *owned_reads), dup_machine_end.
 * 0; -1 after ss_error(); or the source's read error (< -1, unsaid; errno as it
 * failed in *err) for the caller to explain.
 */
int dup_stream(const dup_stream_t *st, const dup_span_t *sp, dup_counts_t *c, kstring_t *names,
               dup_emit_fn emit, void *ctx, uint64_t *owned_reads, int *err);

/* dup_opts.c: the options, by samtools' letters or the codes from DUP_OPT_INCLUDE_FAILS on. */
#define DUP_OPT_INCLUDE_FAILS 0x100
int dup_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);
void dup_opts_free(void *kopts);
void dup_usage(FILE *fp);
/* One option into o (co: -u's level, --reference): 0, 1 (help printed) or -1 after a message. */
int dup_apply(dup_opts_t *o, ss_common_opts_t *co, int key, const char *arg);
/* The options together, on command cmd: 0, or SS_EXIT_USAGE after a message. */
int dup_check(dup_opts_t *o, const char *cmd);
/* The step (dup_step.c). */
extern const ss_step_t ss_step_markdup;

/* dup_stats.c: the -s text, from the counts summed over the run. */
int dup_stats_text(const dup_opts_t *o, const dup_counts_t *c, kstring_t *s);

#endif
