/*
 * ss_bed.h -- BED and positions lists (-l), read with samtools' bed_read
 * semantics (bed.c). Used by the framework's job and planner (the scope of
 * a run) and by kernels that filter by it (pileup, depth, view).
 * ss_bed_t is read-only after ss_bed_read: any thread may query it.
 */
#ifndef SS_BED_H
#define SS_BED_H

#include <htslib/hts.h>

typedef struct ss_bed_s ss_bed_t;

/*
 * Read a BED (3+ columns, 0-based) or positions (2 columns, 1-based) file;
 * sorted and merged per contig. Returns NULL after ss_error() naming the
 * file and line.
 */
ss_bed_t *ss_bed_read(const char *path);
/* 1 if [beg, end) overlaps any interval on contig `name`. */
int ss_bed_overlap(const ss_bed_t *bed, const char *name, hts_pos_t beg, hts_pos_t end);
/* Merged intervals of a contig; *n set to 0 and NULL returned if none. */
const hts_pair_pos_t *ss_bed_intervals(const ss_bed_t *bed, const char *name, int *n);
void ss_bed_destroy(ss_bed_t *bed);

#endif
