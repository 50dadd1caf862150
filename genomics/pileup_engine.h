/*
 * pileup_engine.h -- the kernels' pileup of one input (pileup, mpileup),
 * with htslib 1.16's semantics (bam_plp_*) and a layout built for speed.
 *
 * htslib keeps the reads of the current window in a linked list of large
 * nodes and re-resolves every read's CIGAR at every position. Here the
 * buffered reads sit in one small array, oldest first, and each read knows
 * the stretch of positions ahead where it is plainly inside an M/=/X
 * operation (not its first or last base, not the base before an indel):
 * there its query position is pos + qoff and nothing else can change, so
 * the column formatter reads the base and quality directly. Every other
 * position goes through pe_resolve(), which gives what htslib's CIGAR
 * resolver gives.
 *
 * What must match htslib exactly, and where it lives:
 *   - which reads enter (the depth cap counts reads still held, pe_push);
 *   - when they leave (end <= pos) and the order of a column (buffer order);
 *   - the positions that get a column, including jumps over gaps;
 *   - mate-overlap quality tweaking (pileup_overlap.c).
 * tests/test_pileup_engine.c runs this engine and htslib's side by side on
 * random reads and compares every field. The mpileup kernel runs on it too
 * (mp_mplp.c), with a constructor that sets each read's client data, as
 * bam_plp_constructor does.
 */
#ifndef SS_GENOMICS_PILEUP_ENGINE_H
#define SS_GENOMICS_PILEUP_ENGINE_H

#include <htslib/sam.h>

/* One buffered read. */
typedef struct {
    bam1_t *b; /* owned (pool) */
    const uint8_t *seq, *qual;
    hts_pos_t beg, end; /* end: beg + reference length, as htslib counts it */
    hts_pos_t fast_end; /* positions after the last resolved one and below this are plain */
    hts_pos_t qoff;     /* query position = pos + qoff on a plain position */
    hts_pos_t x;        /* CIGAR cursor: reference start of operation k */
    int64_t y;          /* CIGAR cursor: query start of operation k */
    int k;              /* CIGAR cursor: current operation, -1 before the first column */
    int rev;
    hts_base_mod_state *mods; /* -M, else NULL */
    bam_pileup_cd cd;         /* the constructor's, else cd.p = mods */
} pe_read_t;

/*
 * Every record the engine holds is a pe_rec_t: htslib's bam1_t first (so that
 * bam_destroy1() frees it and every bam1_t pointer the engine hands out is
 * one), then room for the kernel's own data about the read it holds. mpileup
 * keeps there each read's per-base SNP words (mp_glf.c), worked out once per
 * read instead of at every column. Records are reused for later reads, and
 * so is the kernel's data.
 */
typedef struct {
    bam1_t b;
    /* the kernel's buffer (NULL until it sets one; freed by pe_t's client_free), its
     * room and how much of it holds the read's data: in the record itself, so that the
     * kernel finds them in a cache line it reads anyway */
    void *client;
    int client_m, client_n;
    int quals_changed; /* set when a read enters the record and when the engine changes its
                        * qualities (mate overlaps); the kernel clears it and may set it */
} pe_rec_t;

/* The engine record of b, which must be a read from the engine (pileup columns give them). */
static inline pe_rec_t *pe_rec(const bam1_t *b)
{
    return (pe_rec_t *)b;
}

typedef int (*pe_read_f)(void *data, bam1_t *b);
/* As htslib's: called with the read callback's data when a read enters; < 0 fails. */
typedef int (*pe_construct_f)(void *data, const bam1_t *b, bam_pileup_cd *cd);

typedef struct pe_s {
    pe_read_t *r; /* buffered reads, oldest first */
    int n, m;
    bam1_t **pool; /* records ready for reuse */
    int n_pool, m_pool;
    bam1_t *next;       /* the record being read */
    hts_pos_t pos;      /* the next position to scan */
    hts_pos_t max_pos;  /* start of the last record taken, -1 before any */
    hts_pos_t next_end; /* smallest end among buffered reads */
    int maxcnt;         /* -d: reads held beyond which a read at pos is dropped */
    int eof, error;
    int other_tid; /* no read taken yet on a shard whose contig is not tid 0 */
    int want_mods; /* -M: parse base modifications on entry */
    void *olap;    /* mate-overlap table, NULL with -x */
    pe_read_f read;
    void *data;
    pe_construct_f construct;          /* NULL: none */
    void (*client_free)(void *client); /* frees a record's client data; NULL: none */
    bam_pileup1_t *plp;                /* one column, for the general formatter */
    int m_plp;
} pe_t;

/* e->error after pe_next_pos() returned -1, besides htslib's read error codes (< -1). */
enum { PE_ERR_UNSORTED = 1, PE_ERR_NOMEM = 2, PE_ERR_CIGAR = 3, PE_ERR_CONSTRUCT = 4 };

/* NULL on allocation failure. */
pe_t *pe_init(pe_read_f read, void *data, int maxcnt, int overlaps, int mods);
void pe_destroy(pe_t *e);
/* Forget every read: a shard on contig tid starts afresh, as after bam_plp_reset. */
void pe_reset(pe_t *e, int tid);

/*
 * Read until e->pos is the next position that has a column. Returns 1 (a
 * column at e->pos), 0 at the end of the input, -1 on error (e->error).
 */
int pe_next_pos(pe_t *e);

/* Pass over the column at e->pos without using it (before a shard's first position). */
void pe_skip_column(pe_t *e);

/* After the column at e->pos was used: move on. */
static inline void pe_done_pos(pe_t *e)
{
    e->pos++;
}

/* Fill p with what htslib reports for read r at pos (r covers pos). */
void pe_resolve(pe_read_t *r, hts_pos_t pos, bam_pileup1_t *p);

/*
 * The column at e->pos as htslib's bam_pileup1_t array, made anew for every
 * column, with every aux 0 (the kernel may write them); NULL when out of memory.
 */
const bam_pileup1_t *pe_column(pe_t *e, int *n);

/* Mate overlaps (pileup_overlap.c). */
void *pe_overlap_init(void);
void pe_overlap_destroy(void *olap);
void pe_overlap_clear(void *olap);
/*
 * A read entered the buffer: remember it, or adjust it and its waiting mate
 * (then *mate is that mate, else NULL). 0, -1 on a CIGAR that runs past its
 * sequence, -2 when out of memory.
 */
int pe_overlap_push(void *olap, bam1_t *b, hts_pos_t end, bam1_t **mate);
/* A read left (or was turned away): forget its name. */
void pe_overlap_forget(void *olap, const bam1_t *b);

#endif
