/*
 * dup_machine.h -- the streaming machine's state, shared by dup_machine.c
 * (arrivals, the buffer) and dup_chain.c (duplicate chains: do tags and
 * optical checks). Private to those two files.
 *
 * samtools keeps a FIFO of reads in file order; here the FIFO is the block
 * itself, [head, arrived], so a slot is the record's index. Links between
 * slots (a chain of duplicates of one original) are indexes, -1 for none.
 */
#ifndef SS_KERNEL_DUP_MACHINE_H
#define SS_KERNEL_DUP_MACHINE_H

#include "markdup.h"

typedef struct {
    dup_key_t pair_key, single_key; /* the entries this read made, when has_* */
    hts_pos_t pos;                  /* samtools' window position: the unclipped 5' end */
    int dup;                        /* next read of its chain of duplicates, or -1 */
    uint8_t has_pair, has_single, dup_checked;
} dup_slot_t;

KHASH_INIT(dup_keys, dup_key_t, int, 1, dup_key_hash, dup_key_equal)

/* One duplicate of a chain, for the optical check between duplicates. */
typedef struct {
    int idx;
    int64_t score, mate_score;
    dup_coords_t at;
    int opt;
} dup_check_t;

struct dup_machine_s {
    const dup_run_t *run;
    const dup_opts_t *o;
    khash_t(dup_keys) * pairs, *singles;
    dup_check_t *list;
    size_t n_list, m_list;
    /*
     * The buffer: a ring of reads by sequence number (q & mask), head the
     * oldest still buffered, tail the next to arrive; links and hash values
     * are sequence numbers, and always name buffered reads (samtools frees
     * what leaves its buffer, so nothing may point there).
     */
    bam1_t **recs;
    dup_slot_t *slots;
    uint8_t *owned;
    int mask, head, tail;
    const char *file;
    dup_counts_t *c, scratch; /* events of reads not owned are counted into scratch */
    dup_emit_fn emit;
    void *ctx;
    int now;          /* the read whose arrival (or chain check) is being decided */
    kstring_t *names; /* -S, gathering: where the owned decisions' names go, or NULL */
    uint16_t exclude;
};

/*
 * -S: a duplicate whose other alignments samtools marks (it has SA or XA, or
 * its mate is unmapped) was marked (kind 'A', optical or not) or became
 * optical ('R'). 0, or -1 after ss_error().
 */
int dup_note_name(dup_machine_t *m, const bam1_t *b, char kind, int optical, const char *ori);

#define REC(m, q)   ((m)->recs[(q) & (m)->mask])
#define SLOT(m, q)  ((m)->slots[(q) & (m)->mask])
#define OWNED(m, q) ((m)->owned[(q) & (m)->mask])

/* Where the events of read i count. */
static inline dup_counts_t *dup_counts_of(dup_machine_t *m, int i)
{
    return OWNED(m, i) ? m->c : &m->scratch;
}

static inline int dup_paired(const bam1_t *b)
{
    return (b->core.flag & BAM_FPAIRED) && !(b->core.flag & BAM_FMUNMAP);
}

/* dup_chain.c: check the chains of the out-of-window originals in [head, upto]. 0 or -1. */
int dup_chains(dup_machine_t *m, int upto, hts_pos_t prev_coord, int prev_tid, int in_range);
/* The window test samtools' buffer uses: 1 while read i may still gain duplicates. */
int dup_in_window(const dup_machine_t *m, int i, hts_pos_t prev_coord, int prev_tid);

#endif
