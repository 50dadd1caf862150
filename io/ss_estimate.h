/*
 * ss_estimate.h -- how much work a region holds, from the index alone
 * (estimate.c). Used by the framework's planner to cut the scope into
 * shards of even work.
 */
#ifndef SS_ESTIMATE_H
#define SS_ESTIMATE_H

#include <htslib/hts.h>
#include <htslib/sam.h>
#include <stdint.h>

/*
 * Estimated work of consecutive cells [pos[i], pos[i+1]) on tid, i < n (pos
 * holds n + 1 increasing positions), into work[0..n-1], in compressed bytes,
 * from the index alone (BAI/CSI chunk offsets; CRAM container offsets;
 * io/estimate.c says how). Cells add up: the estimates are differences of one
 * monotone file offset, so no read counts twice, and past a contig's last
 * read (where a BAI says nothing) cells get 0. The estimator measures the file's
 * compression ratio once (on the block of its first placed read, so answers
 * never depend on call order). idx, fp and h are borrowed. NULL if idx is
 * NULL or out of memory. One thread at a time.
 */
typedef struct ss_io_est_s ss_io_est_t;
ss_io_est_t *ss_io_est_init(hts_idx_t *idx, samFile *fp, sam_hdr_t *h);
int ss_io_est_cells(ss_io_est_t *e, int tid, const hts_pos_t *pos, int n, int64_t *work);
void ss_io_est_destroy(ss_io_est_t *e);
/*
 * How a BAM's reads fall within [beg, end) of tid, finer than the index can
 * say: bins[0..n_bins) (each (end - beg) / n_bins bp, the last to end) get the
 * bytes of the records that start in them. Reads the records, so use it on
 * few cells. 0; 1 when the file is not a BAM or holds no read starting there;
 * -1 when it cannot be read (the caller keeps its coarse estimate).
 */
int ss_io_est_profile(ss_io_est_t *e, int tid, hts_pos_t beg, hts_pos_t end, int n_bins,
                      double *bins);

#endif
