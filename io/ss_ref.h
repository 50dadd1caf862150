/*
 * ss_ref.h -- the reference FASTA (ref.c): per-worker windows of contigs,
 * loaded by stretches so memory follows the shard, and the check that a
 * header's contigs are the FASTA's. Used by kernels that print or compare
 * reference bases (pileup, mpileup, realign, view's CRAM reference checks).
 * An ss_ref_t belongs to one worker thread.
 */
#ifndef SS_REF_H
#define SS_REF_H

#include <htslib/hts.h>
#include <htslib/sam.h>
#include <stddef.h>

typedef struct ss_ref_s ss_ref_t;

/* NULL path gives a cache that always answers "no reference". */
ss_ref_t *ss_ref_init(const char *fasta);
/*
 * Contig `name` (as stored in the FASTA: case kept), indexed by position, its
 * length in *len; only positions covered by ss_ref_cover() may be read.
 * Keeps the last two contigs. Returns NULL if there is no reference or the
 * contig is missing from it (*len 0), or with *len -1 after ss_error() when
 * its address space cannot be had (out of memory: never print it as N).
 * Pointer valid until the next call for a third contig.
 */
const char *ss_ref_get(ss_ref_t *ref, int tid, const char *name, hts_pos_t *len);
/*
 * Make positions [lo, hi) of contig tid (one of the last two got) readable,
 * clipped to the contig. Returns 0, or -1 after ss_error().
 */
int ss_ref_cover(ss_ref_t *ref, int tid, hts_pos_t lo, hts_pos_t hi);
/* Give back every covered window (between shards): memory follows the shard. */
void ss_ref_release(ss_ref_t *ref);
void ss_ref_destroy(ss_ref_t *ref);

/* Contigs of a header that the FASTA lacks or has with another length. */
typedef struct {
    int n;            /* how many */
    int tid;          /* the first, or -1 */
    hts_pos_t fa_len; /* its length in the FASTA, -1 when missing there */
} ss_ref_mismatch_t;

/*
 * Compare every @SQ of h with the FASTA's .fai (loaded, never written):
 * contigs missing there or of another length (lengths_only: the latter).
 * Returns m->n (0: all match), -1 if the .fai cannot be loaded (unsaid), or
 * -2 after ss_error() when memory ran out loading it. Any thread.
 */
int ss_ref_check_contigs(const char *fasta, const sam_hdr_t *h, int lengths_only,
                         ss_ref_mismatch_t *m);
/* As ss_ref_check_contigs (lengths_only 0), for the contigs whose only[tid] is set. */
int ss_ref_check_only(const char *fasta, const sam_hdr_t *h, const unsigned char *only,
                      ss_ref_mismatch_t *m);
/* "ref.fa has no contig X (N bp in in.bam) (and 2 more contigs differ)", into buf. */
void ss_ref_describe_mismatch(const char *fasta, const sam_hdr_t *h, const char *input,
                              const ss_ref_mismatch_t *m, char *buf, size_t size);

#endif
