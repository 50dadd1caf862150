/*
 * mp_gvcf.h -- gVCF blocks (-g), mp_gvcf.c. Private to kernels/mpileup/.
 */
#ifndef SS_MP_GVCF_H
#define SS_MP_GVCF_H

#include <htslib/vcf.h>

/*
 * gVCF blocks (mp_gvcf.c), one writer per worker. mp_gvcf_write takes each
 * record in order: 1 when the record is to be written (MinDP added to a
 * reference-only one too shallow for a block), 0 when a block took it or it
 * continues an earlier shard's block, -1 after ss_error(); a block it closes
 * goes to emit first. rec NULL flushes the open block.
 */
typedef struct mp_gvcf_s mp_gvcf_t;
typedef int (*mp_gvcf_emit_fn)(void *ctx, bcf1_t *block);
mp_gvcf_t *mp_gvcf_init(const int *ranges, int n_ranges);
void mp_gvcf_destroy(mp_gvcf_t *g);
void mp_gvcf_reset(mp_gvcf_t *g);
int mp_gvcf_open(const mp_gvcf_t *g);
int mp_gvcf_write(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec, mp_gvcf_emit_fn emit, void *ctx);
/* Past the shard's end: the open block takes records until it closes; no other starts. */
void mp_gvcf_follow(mp_gvcf_t *g);
/* The block open now belongs to an earlier shard: skip the records that continue it. */
void mp_gvcf_skip_from(mp_gvcf_t *g);
/* -g INT[,...] as bcftools reads it: malloc'ed bounds. 0, or -1 (bad list or OOM). */
int mp_gvcf_parse(const char *arg, int **ranges, int *n);

#endif
