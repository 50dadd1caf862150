/*
 * realign.h -- private to the realign kernel (kernels/realign/).
 *
 * `seqshard realign` does local indel realignment in the manner of GATK3's
 * IndelRealigner, shard by shard, with every decision a function of the
 * reads of one bounded window and the options, so the output is the same
 * bytes at any thread, rank and shard count (contract 7).
 *
 * Realignment is a record step (rl_step.c): `--realign` in front of any
 * kernel that reads records, and `seqshard realign` (realign.c) in front of
 * the framework's record writer. A query's work, in order:
 *   load     every record overlapping the query's range and its halo (rl_halo),
 *            and the reference under them;
 *   targets  positions of indels in eligible reads' CIGARs, soft-clip starts
 *            shared by reads, indels that reads' clusters of mismatches
 *            suggest (rl_mismatch.c), and --known indels (rl_targets.c);
 *   windows  maximal clusters of targets less than RL_GAP apart; a cluster
 *            longer than --max-window is skipped (counted, never realigned);
 *   decide   per window: candidate haplotypes (reference, indels seen in
 *            reads, pairs of them, known indels), each read scored at its best
 *            ungapped offset on each, the best haplotype taken when its LOD
 *            over the original alignments is >= RL_LOD, the reads it improves
 *            realigned (rl_window.c);
 *   records  the realigned reads rebuilt (POS, CIGAR, NM, MD, OA, BQ gone) and
 *            every pair with a moved member given matching PNEXT/TLEN/MC
 *            (rl_record.c); all records written; the framework keeps those
 *            whose final POS is in the shard.
 *
 * Why that is shard-independent: a window's targets and reads lie within
 * max_window + RL_GAP + RL_SPAN_MAX of any read it decides, and a pair's
 * mates lie within --max-isize of each other, so a shard whose halo covers
 * all of it (rl_halo) sees every window that can move a read it owns or the
 * mate of one, whole.
 */
#ifndef SS_KERNEL_REALIGN_H
#define SS_KERNEL_REALIGN_H

#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <stdint.h>

#include "../../framework/ss_framework.h"

#define RL_GAP            10  /* targets closer than this join one window (GATK's 10 bp) */
#define RL_LOD            5   /* (original score - best) / 10 needed to clean a window */
#define RL_MAX_HAPS       8   /* alternative haplotypes per window, by the rank rule */
#define RL_MAX_INDEL      60  /* longest indel (bp) taken as a candidate; longer pass */
#define RL_SPAN_MAX       600 /* reads whose clipped+aligned span is longer pass through */
#define RL_CLIP_CAP       40  /* most a soft-clipped end adds to a read's score */
#define RL_GAP_OPEN       40  /* a gap's first base, in any score (rl_dp.c says why) */
#define RL_GAP_EXT        5   /* each further base of a gap */
#define RL_BAND           8   /* diagonals each side of the best ungapped offset (rl_dp.c) */
#define RL_MIN_READS      2   /* reads that must share an indel or clip start for a target */
#define RL_MIN_CLIP       3   /* shortest soft clip that makes a clip target */
#define RL_DEFAULT_WINDOW 500

/* The step's options, filled by the framework's parser through rl_opt (rl_opts.c). */
typedef struct rl_opts_s {
    char **known; /* --known files, owned */
    int n_known;
    int max_move;   /* --max-move: farthest a read's POS may move */
    int max_isize;  /* --max-isize: farther mates keep their alignments */
    int max_window; /* --max-window: longer windows are skipped */
} rl_opts_t;

/* The step (rl_step.c) and its hooks (rl_opts.c); ss_step.h says what each does. */
extern const ss_step_t ss_step_realign;
extern const ss_opt_t rl_step_opts[];
void rl_opts_default(rl_opts_t *o);
void *rl_opts_new(void);
void rl_opts_free(void *sopts);
int rl_opt(void *sopts, int key, const char *arg, ss_common_opts_t *co, const char *cmd);
int rl_check(const void *sopts, ss_common_opts_t *co, const char *cmd);
int rl_prepare(const void *sopts, const ss_job_t *job, ss_step_reach_t *reach);
/* The context a query reads around its range so every decision it needs is whole. */
hts_pos_t rl_halo(const rl_opts_t *o);

/* `seqshard realign`'s own options (realign.c): the record writer's. */
typedef struct {
    ss_out_format_t format;
    int threads;   /* -@ copy, for the index */
    char *cmdline; /* for @PG CL, owned */
} rl_cmd_opts_t;
void rl_usage(FILE *fp);
int rl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);
void rl_cmd_opts_free(void *kopts);

/* One indel: a deletion of ref[pos, pos+len) (len < 0: -len bases) or an insertion of
 * seq before ref[pos] (len > 0). Left-normalised when it leaves rl_indel_norm. */
typedef struct {
    hts_pos_t pos;
    int len;
    char seq[RL_MAX_INDEL + 1]; /* insertion bases, upper case; "" for a deletion */
} rl_indel_t;

/* The reference under a shard: ref[0] is position beg of the contig; len bases. */
typedef struct {
    const char *s;
    hts_pos_t beg, len, ctg_len;
    const char *name; /* the contig's, for OA tags */
} rl_ref_t;

/* Shift an indel left while the haplotype it makes is unchanged. */
void rl_indel_norm(rl_indel_t *e, const rl_ref_t *ref);
/* Total order of indels: position, then length, then inserted bases. */
int rl_indel_cmp(const rl_indel_t *a, const rl_indel_t *b);

/* What one read is in a shard's block, and what was decided for it. */
typedef struct {
    bam1_t *b;
    hts_pos_t opos, oend;   /* the original aligned span (which region it belongs to) */
    hts_pos_t pos, end;     /* aligned span [pos, end) */
    hts_pos_t ustart, uend; /* with the soft clips: [ustart, uend) */
    int lclip, rclip;       /* soft-clipped bases at each end */
    int eligible;           /* may be realigned (rl_eligible) */
    int win;                /* the window it is scored in, or -1 */
    int orig_score;         /* its original alignment's score */
    int moved;              /* realigned: new_pos / cigar below hold its alignment */
    hts_pos_t new_pos;
    int cig_off, n_cig; /* its new CIGAR in the block's arena */
    int mate;           /* index of its primary mate in the block, or -1 */
    int mm;             /* the indel its mismatches suggest: index in the block's mm, or -1 */
} rl_read_t;

/* A window: [beg, end) of target positions clustered; skipped when too long. */
typedef struct {
    hts_pos_t beg, end;
    int skipped;
    int cleaned;
} rl_window_t;

/* A target: an interval of the reference where reads disagree with it. */
typedef struct {
    hts_pos_t beg, end;
} rl_span_t;

/* A target as found, before the ones too few reads share are dropped (rl_targets.c). */
typedef struct {
    hts_pos_t beg, end;
    int kind;
} rl_raw_target_t;

/* A candidate haplotype: the reference with up to two indels, and the reads carrying it. */
typedef struct {
    int n;
    rl_indel_t ev[2];
    int support;
    int known;
} rl_cand_t;

typedef struct rl_dp_s rl_dp_t; /* a gapped fit's workspace (rl_dp.c) */

/* Counters of a block's decisions, for the report and tests. */
typedef struct {
    uint64_t windows, skipped, cleaned, realigned, unclipped;
} rl_counts_t;

/*
 * A block of reads and the state of deciding it; reused across shards so steady state
 * allocates (almost) nothing. rl_block_init/rl_block_destroy; one thread.
 */
typedef struct rl_block_s rl_block_t;
struct rl_block_s {
    bam1_t **recs; /* records, reused across shards */
    int n, m;
    rl_read_t *reads;  /* [m] */
    rl_indel_t *known; /* known indels of the block */
    int n_known, m_known;
    rl_span_t *tg; /* targets */
    int n_tg, m_tg;
    rl_indel_t *mm; /* indels suggested by reads' mismatch clusters (rl_read_mm_indel) */
    int n_mm, m_mm;
    rl_raw_target_t *raw; /* targets as found */
    int n_raw, m_raw;
    rl_window_t *win;
    int n_win, m_win;
    uint32_t *cig; /* arena of new CIGARs */
    int n_cig, m_cig;
    int *members; /* one window's reads */
    int n_mem, m_mem;
    rl_cand_t *cand; /* one window's candidates */
    int n_cand, m_cand;
    int *score, *off; /* [member][cand + 1]: best score and offset on each haplotype */
    uint8_t *gapped;  /* [member][cand + 1]: the score is a gapped fit's (rl_dp_align) */
    size_t m_score;
    rl_dp_t *dp; /* the gapped fit's workspace */
    int *map;    /* one read's bases on the haplotype (rl_dp_align) */
    int m_map;
    char *hap;          /* one haplotype's bases (upper case) */
    hts_pos_t *hap_ref; /* the reference position of each, -1 inside an insertion */
    int m_hap;
    uint32_t *tmp_cig; /* building one CIGAR */
    int m_tmp_cig;
    kstring_t md, aux;
    void *names; /* qname -> read index (khash), for mates */
    bam1_t *scratch;
};
rl_block_t *rl_block_init(void);
void rl_block_destroy(rl_block_t *k);
/* Forget the previous block's reads (their bam1_t stay allocated for reuse). */
void rl_block_reset(rl_block_t *k);
/* A record to fill with the next read; it joins the block. NULL when out of memory. */
bam1_t *rl_block_next(rl_block_t *k);
/* Drop the record rl_block_next gave last (the source said end of range). */
void rl_block_unget(rl_block_t *k);
int rl_block_n(const rl_block_t *k);
bam1_t *rl_block_rec(rl_block_t *k, int i);
/* Add a known indel (already within the block's reference). 0 or -1 out of memory. */
int rl_block_add_known(rl_block_t *k, const rl_indel_t *e);

/*
 * Decide the block: targets, windows, haplotypes, which reads move, their new
 * records, and their mates' fields. ref covers every read's unclipped span plus
 * RL_MAX_INDEL + 16 where the contig allows. own_beg/own_end: the window starts
 * the counters count (so each window is counted by one shard). Returns 0, or -1
 * out of memory. Records are changed in place.
 */
int rl_block_decide(rl_block_t *k, const rl_opts_t *o, const rl_ref_t *ref, hts_pos_t own_beg,
                    hts_pos_t own_end, rl_counts_t *counts);

/* ---- the parts (each file's own) ---- */

/* The reference base at p, upper case; 'N' outside the block's reference. */
static inline char rl_ref_at(const rl_ref_t *ref, hts_pos_t p)
{
    if (p < ref->beg || p >= ref->beg + ref->len)
        return 'N';
    return (char)(ref->s[p - ref->beg] & ~0x20);
}

/* Whether a read may be realigned: mapped, primary, not dup/QC-fail, MAPQ > 0, no H/N/P,
 * span within RL_SPAN_MAX, and a mate (if any) mapped on the same contig within max_isize. */
int rl_eligible(const bam1_t *b, const rl_opts_t *o);
/*
 * The indels of r's CIGAR, normalised (those longer than RL_MAX_INDEL as they
 * are, without bases), the first max of them into out. Returns how many it has.
 */
int rl_read_indels(const rl_read_t *r, const rl_ref_t *ref, rl_indel_t *out, int max);
/*
 * The indel that explains a cluster of mismatches near one end of r's ungapped
 * alignment, if one does (rl_mismatch.c): 1 and *e (normalised), or 0.
 */
int rl_read_mm_indel(const rl_read_t *r, const rl_ref_t *ref, rl_indel_t *e);
/* Fill r's spans and clips from its record. */
void rl_read_spans(rl_read_t *r);

/* Targets and windows over the block (rl_targets.c). Returns the number of windows or -1. */
int rl_find_windows(rl_block_t *k, const rl_opts_t *o, const rl_ref_t *ref);

/* Score and decide one window (rl_window.c). 0 or -1 out of memory. */
int rl_decide_window(rl_block_t *k, int w, const rl_opts_t *o, const rl_ref_t *ref,
                     rl_counts_t *counts);

/* Rebuild a realigned read's record (rl_record.c). 0 or -1 out of memory. */
int rl_rewrite_read(rl_block_t *k, int i, const rl_ref_t *ref);
/* The qname -> read map fix_mates uses; freed with the block. */
void rl_names_destroy(void *names);
/* Give every pair with a moved member matching PNEXT/TLEN/MC (rl_record.c). 0 or -1. */
int rl_fix_mates(rl_block_t *k, int max_isize);
/* NM and MD of b against ref, into *nm and md. 0 or -1. */
int rl_nm_md(const bam1_t *b, const rl_ref_t *ref, int *nm, kstring_t *md);

/* ---- gapped fits (rl_dp.c) ---- */
#define RL_DP_INF (1 << 29)
/* A workspace, reused across reads. NULL out of memory; rl_dp_destroy accepts NULL. */
rl_dp_t *rl_dp_init(void);
void rl_dp_destroy(rl_dp_t *dp);
/*
 * The cheapest alignment of all of b's bases (its first lclip and last rclip may
 * stay clipped, for RL_CLIP_CAP each) to hap[0, hlen) (4-bit codes), within
 * RL_BAND diagonals of read base 0 at hap[diag]. Returns its cost, RL_DP_INF when
 * every alignment costs more than bound, -1 out of memory. map (qlen ints, may be
 * NULL) gets each read base's hap index, -1 for an inserted base, -2 for a clipped one.
 */
int rl_dp_align(rl_dp_t *dp, const bam1_t *b, int lclip, int rclip, const uint8_t *hap, int hlen,
                int diag, int bound, int *map);

/* ---- known sites (rl_known.c) ---- */
typedef struct rl_known_s rl_known_t;
/* Main thread: each --known file opens, has an index, and names only contigs of h. */
int rl_known_check(const rl_opts_t *o, const sam_hdr_t *h, const char *fasta);
/* A worker's readers of the --known files. NULL after ss_error(). */
rl_known_t *rl_known_open(const rl_opts_t *o);
void rl_known_close(rl_known_t *kn);
/* Add the known indels overlapping [beg, end) of contig name to the block. 0 or -1. */
int rl_known_load(rl_known_t *kn, const char *name, hts_pos_t beg, hts_pos_t end,
                  const rl_ref_t *ref, rl_block_t *k);
/* Turn a VCF REF/ALT at 0-based pos into an indel; 0, or -1 when it is not a simple indel. */
int rl_indel_from_alleles(hts_pos_t pos, const char *ref, const char *alt, rl_indel_t *e);

#endif
