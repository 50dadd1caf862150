/*
 * mp_read.h -- the reads a worker's pileup takes in (mp_read.c): one input's
 * source and read filter, and where a shard's pileup must start. Private to
 * kernels/mpileup/.
 */
#ifndef SS_MP_READ_H
#define SS_MP_READ_H

#include <htslib/regidx.h>
#include <htslib/sam.h>
#include <stdint.h>

#include "../../../framework/ss_framework.h"
#include "../mp_opts.h"
#include "../select/mp_select.h"
#include "mp_ref.h"

/* One input of a worker: its records and what the read filter needs. */
typedef struct {
    ss_source_t *src;
    int i; /* input number */
    const mp_opts_t *o;
    const mp_samples_t *smpl;
    const mp_targets_t *targets; /* -t/-T, or NULL */
    regitr_t *targets_itr;       /* this input's iterator over them */
    const char *ctg;             /* the contig being read */
    const char *ref;             /* the contig by position (NUL-terminated), or NULL */
    hts_pos_t ref_len;
    mp_ref_t *rs;          /* which of it is loaded: each kept read loads its reach */
    hts_pos_t skip_before; /* drop reads starting before this (a range read twice) */
    uint64_t n_read;
    int read_err; /* htslib's code when a read failed, or MP_READ_NOMEM */
} mp_input_t;

/* read_err when keeping a read ran out of memory: no code htslib or the checks return
 * (htslib's -4, which this once was, says a record is damaged) */
#define MP_READ_NOMEM (-1000)

/* bcftools' read filter over the input's source: 0 and a read, or < 0 at the end or error. */
int mp_read_filtered(void *data, bam1_t *b);
/*
 * Where the shard's pileup must start so that its columns from beg on are
 * the whole run's: before the reads over beg began (partial BAQ), and where
 * the depth cap could not have dropped a read. -1 after a read error.
 */
hts_pos_t mp_shard_start(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t scope_beg,
                         int max_depth, bam1_t *scratch);
/*
 * Whether more than limit of the inputs' reads overlap some position of
 * tid:beg-end: an upper bound of any column's pileup there, which holds
 * some of those reads. 1 (also when there are too many reads to tell
 * cheaply), 0, or -1 after a read error (in the input's read_err).
 * scratch is overwritten.
 */
int mp_depth_exceeds(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t end, int limit,
                     bam1_t *scratch);
#define MP_DEPTH_EVENTS_MAX ((size_t)1 << 22) /* 32 MB of events: past it, assume deep */

/*
 * The reads a pass takes in: from its start to a little past its end,
 * because htslib reads one record beyond a column before it hands the column
 * out, and that record's mate overlap can change qualities BAQ then sees.
 */
#define MP_READ_PAST_END 1000
/* end + MP_READ_PAST_END, kept from overflowing past an open end (HTS_POS_MAX). */
static inline hts_pos_t mp_read_past(hts_pos_t end)
{
    return end < HTS_POS_MAX - MP_READ_PAST_END ? end + MP_READ_PAST_END : HTS_POS_MAX;
}
/*
 * Where a query for the reads over columns [beg, end) of in's contig may stop:
 * with a reference, where it ends (the read filter keeps no read starting
 * past it), else end. The columns past a contig's end run to an open end
 * (HTS_POS_MAX), and a query there asks the index for every bin of 2^29 bp.
 */
static inline hts_pos_t mp_kept_end(const mp_input_t *in, hts_pos_t beg, hts_pos_t end)
{
    if (in->ref && end > in->ref_len)
        return in->ref_len > beg ? in->ref_len : beg + 1;
    return end;
}

#endif
