/*
 * mp_ref.h -- the reference window a worker reads (mp_ref.c): the shard's
 * stretch of its contig, loaded as the reads, BAQ and the indel code reach
 * it. Private to kernels/mpileup/.
 */
#ifndef SS_MP_REF_H
#define SS_MP_REF_H

#include <htslib/hts.h>

/*
 * The shard's stretch of its contig's reference, as the indel code reads it:
 * seq holds each base at its contig position (an address range as long as
 * the contig, NUL at len), but only a stretch is loaded (io/ref.c). [lo, hi)
 * is known to be loaded; a read elsewhere asks mp_ref_need first, and an
 * unloaded position is never read (its pages are not even readable).
 */
typedef struct {
    const char *seq;
    hts_pos_t len;
    hts_pos_t lo, hi;
    struct ss_ref_s *src;
    int tid;
} mp_ref_t;
/* How far a scan that runs out of the loaded stretch loads on at a time. */
#define MP_REF_STEP ((hts_pos_t)1 << 16)
/*
 * Load [lo, hi) of r's contig, clipped to it (the NUL at len included when hi
 * passes it). 0, or -1 after ss_error() with errno ENOMEM, so the column
 * fails its shard rather than losing its indel record. Worker thread.
 */
int mp_ref_need(mp_ref_t *r, hts_pos_t lo, hts_pos_t hi);

#endif
