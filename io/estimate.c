/*
 * estimate.c -- how much input a region holds, from the index alone.
 *
 * BAM (BAI/CSI): let S(p) be the virtual offset where reading for position p
 * starts, i.e. the first chunk an index query for [p, p+1) returns (htslib
 * has already raised it to the linear index's offset for p's 16 kb window).
 * The work of [beg, end) is the distance S(end) - S(beg), in compressed
 * bytes: whole BGZF blocks by their compressed distance, the partial blocks
 * at either end by their uncompressed distance over a typical compression
 * ratio. Distances telescope: adjacent ranges add up to their union, so a
 * grid of cells never counts a read twice, and cells in a gap without reads
 * get zero rather than a share of the bins that span the gap. Where no chunk
 * starts at p (past the contig's last read) the end of the range's data is
 * used instead.
 *
 * CRAM: htslib keeps the .crai inside the cram_fd and offers no chunk list,
 * but a range query seeks the file to the container holding a position, so
 * the file offset after seeking to beg and to end bounds the bytes between.
 * Granularity is one container (often tens of kb), coarse but monotone. The
 * seek moves the file position: pass a handle used only for planning.
 */
#include <htslib/cram.h>
#include <htslib/hfile.h>

#include "ss_io.h"

#define BAM_RATIO 3 /* uncompressed / compressed bytes of a typical BAM block */

/* Compressed bytes between two virtual offsets. */
static int64_t voff_bytes(uint64_t u, uint64_t v)
{
    if (v <= u)
        return 0;
    int64_t blocks = (int64_t)(v >> 16) - (int64_t)(u >> 16);
    int64_t inner = (int64_t)(v & 0xffff) - (int64_t)(u & 0xffff);
    int64_t bytes = blocks + inner / BAM_RATIO;
    return bytes > 0 ? bytes : 1; /* data exists between them */
}

/* First and last virtual offsets of the chunks for [beg, end). Returns 0 if there are none. */
static int chunk_span(hts_idx_t *idx, int tid, hts_pos_t beg, hts_pos_t end, uint64_t *first,
                      uint64_t *last)
{
    hts_itr_t *it = hts_itr_query(idx, tid, beg, end, NULL);
    if (!it)
        return 0; /* htslib: no bins for this contig, i.e. no reads on it */
    int found = it->n_off > 0;
    if (found) {
        *first = it->off[0].u; /* sorted and merged by htslib */
        *last = it->off[0].v;
        for (int i = 1; i < it->n_off; i++)
            if (it->off[i].v > *last)
                *last = it->off[i].v;
    }
    hts_itr_destroy(it);
    return found;
}

static int64_t bam_estimate(hts_idx_t *idx, sam_hdr_t *h, int tid, hts_pos_t beg, hts_pos_t end)
{
    uint64_t a, b, first, last, unused;
    if (!chunk_span(idx, tid, beg, end, &first, &last))
        return 0; /* nothing overlaps the range */
    if (!chunk_span(idx, tid, beg, beg + 1, &a, &unused))
        a = first;
    hts_pos_t len = h ? sam_hdr_tid2len(h, tid) : HTS_POS_MAX;
    if (end >= len || !chunk_span(idx, tid, end, end + 1, &b, &unused))
        b = last;
    return voff_bytes(a, b);
}

/* File offset of the container holding (tid, pos); -2 if tid has no data; -1 on error. */
static int64_t cram_offset(hts_idx_t *idx, samFile *fp, int tid, hts_pos_t pos)
{
    hts_itr_t *it = sam_itr_queryi(idx, tid, pos, pos + 1);
    if (!it)
        return -1;
    int none = it->finished;
    hts_itr_destroy(it);
    if (none)
        return -2;
    hFILE *hf = cram_fd_get_fp(fp->fp.cram);
    if (!hf)
        return -1;
    off_t off = htell(hf);
    return off < 0 ? -1 : (int64_t)off;
}

static int64_t cram_estimate(hts_idx_t *idx, samFile *fp, int tid, hts_pos_t beg, hts_pos_t end)
{
    int64_t a = cram_offset(idx, fp, tid, beg);
    if (a == -2)
        return 0;
    int64_t b = a >= 0 ? cram_offset(idx, fp, tid, end) : -1;
    if (a < 0 || b < 0)
        return -1;
    return b > a ? b - a : 0;
}

int64_t ss_io_estimate(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid, hts_pos_t beg,
                       hts_pos_t end)
{
    if (!idx || tid < 0 || (h && tid >= sam_hdr_nref(h)))
        return -1;
    if (beg < 0)
        beg = 0;
    if (end <= beg)
        return 0;
    switch (hts_idx_fmt(idx)) {
    case HTS_FMT_BAI:
    case HTS_FMT_CSI:
        return bam_estimate(idx, h, tid, beg, end);
    case HTS_FMT_CRAI:
        if (!fp || fp->format.format != cram)
            return -1;
        return cram_estimate(idx, fp, tid, beg, end);
    default:
        return -1;
    }
}
