/*
 * ss_source.h -- a record source: where a kernel's records come from, an
 * input file through its index (io/source.c, over a reader) or a record step
 * in front of it (framework/step/), behind one interface so the kernel does
 * not know which. Included by ss_reader.h (a reader hands out its inputs as
 * sources), the framework's steps and every kernel that reads records.
 */
#ifndef SS_SOURCE_H
#define SS_SOURCE_H

#include <htslib/hts.h>
#include <htslib/sam.h>

/*
 * Where a kernel's records come from: an input file through its index, or
 * (for chained kernels) another kernel in memory. One interface, so a kernel
 * does not know which. A source belongs to one worker thread.
 *
 * query starts a range: [beg, end) on tid, as an htslib region query (every
 * record overlapping it, in file order); tid SS_IO_UNPLACED for the
 * unplaced unmapped records at the file's end. Returns 0, or -1 after
 * ss_error() named the file and range.
 * next gives the range's next record in b, with b->id set to its order in
 * the range (0, 1, ...: moving kernels sort ties by it), every record checked
 * on the way (ids in range, coordinate order, the query's contig: check.c).
 * Returns >= 0, -1 at the end of the range, SS_IO_REPORTED after ss_error()
 * named the file, shard and bad record, or another value < -1: an htslib read
 * error the caller explains (it knows the shard and kernel).
 */
#define SS_IO_REPORTED (-99)
#define SS_IO_UNPLACED (-1)
typedef struct ss_source_s ss_source_t;
struct ss_source_s {
    int (*query)(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end);
    int (*next)(ss_source_t *src, bam1_t *b);
    const char *name; /* the input's path, for messages */
};

static inline int ss_source_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    return src->query(src, tid, beg, end);
}

static inline int ss_source_next(ss_source_t *src, bam1_t *b)
{
    return src->next(src, b);
}

#endif
