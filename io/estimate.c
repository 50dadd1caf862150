/*
 * estimate.c -- how much input a region holds, from the index alone.
 *
 * Let S(p) be the file offset where reading for position p starts. The work
 * of a cell [a, b) is the distance S(b) - S(a) in compressed bytes, so
 * adjacent cells add up to their union and no read is counted twice (a sum
 * of index chunks per cell would count reads in bins spanning many cells
 * once per cell).
 *
 * BAM (BAI/CSI): S(p) is the first chunk of an index query for [p, p+1),
 * which htslib has already raised to the linear index (BAI) or bin (CSI)
 * offset for p. Within a contig's reads this is monotone; past the last
 * read, BAI has no linear index and htslib falls back to offset 0, so S is
 * made monotone by a running maximum, and the end of the last cell of a
 * contig is the end of the contig's data. Whole BGZF blocks count by their
 * compressed distance, partial blocks by their uncompressed distance over a
 * typical compression ratio.
 *
 * CRAM: htslib keeps the .crai inside the cram_fd and offers no chunk list,
 * but a range query seeks the file to the container holding a position, so
 * S(p) is the file offset after that seek; the end of a contig's data is the
 * first container of the next contig with data (or the end of the file).
 * Granularity is one container (often tens of kb). The seeks move the file
 * position: pass a handle used only for planning.
 */
#include <htslib/cram.h>
#include <htslib/hfile.h>

#include "ss_io.h"

#define BAM_RATIO 3 /* uncompressed / compressed bytes of a typical BAM block */

/* Compressed bytes between two BGZF virtual offsets. */
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

static int bam_cells(hts_idx_t *idx, int tid, hts_pos_t len, const hts_pos_t *pos, int n,
                     int64_t *work)
{
    uint64_t first, end_data, s, prev, unused;
    if (!chunk_span(idx, tid, pos[0], pos[n], &first, &end_data)) {
        for (int i = 0; i < n; i++)
            work[i] = 0; /* nothing overlaps the cells */
        return 0;
    }
    if (!chunk_span(idx, tid, pos[0], pos[0] + 1, &prev, &unused))
        prev = first;
    for (int i = 1; i <= n; i++) {
        int last = i == n && pos[n] >= len;
        if (last || !chunk_span(idx, tid, pos[i], pos[i] + 1, &s, &unused))
            s = last ? end_data : prev;
        if (s > end_data)
            s = end_data;
        if (s < prev)
            s = prev; /* past the linear index: keep S monotone */
        work[i - 1] = voff_bytes(prev, s);
        prev = s;
    }
    return 0;
}

/* File offset of the container holding (tid, pos): >= 0; -2 if tid has no data; -1 on error. */
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
    off_t off = hf ? htell(hf) : -1;
    return off < 0 ? -1 : (int64_t)off;
}

/* Where tid's data ends: the next contig's first container, or the end of the file. */
static int64_t cram_data_end(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid)
{
    for (int t = tid + 1; h && t < sam_hdr_nref(h); t++) {
        int64_t off = cram_offset(idx, fp, t, 0);
        if (off != -2)
            return off;
    }
    hFILE *hf = cram_fd_get_fp(fp->fp.cram);
    off_t end = hf ? hseek(hf, 0, SEEK_END) : -1;
    return end < 0 ? -1 : (int64_t)end;
}

static int cram_cells(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid, hts_pos_t len,
                      const hts_pos_t *pos, int n, int64_t *work)
{
    int64_t prev = cram_offset(idx, fp, tid, pos[0]), s;
    if (prev == -2) {
        for (int i = 0; i < n; i++)
            work[i] = 0;
        return 0;
    }
    if (prev < 0)
        return -1;
    for (int i = 1; i <= n; i++) {
        if (i == n && pos[n] >= len)
            s = cram_data_end(idx, fp, h, tid);
        else
            s = cram_offset(idx, fp, tid, pos[i]);
        if (s == -1)
            return -1;
        if (s < prev)
            s = prev;
        work[i - 1] = s - prev;
        prev = s;
    }
    return 0;
}

int ss_io_estimate_cells(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid, const hts_pos_t *pos,
                         int n, int64_t *work)
{
    if (!idx || tid < 0 || n < 1 || (h && tid >= sam_hdr_nref(h)))
        return -1;
    hts_pos_t len = h ? sam_hdr_tid2len(h, tid) : HTS_POS_MAX;
    switch (hts_idx_fmt(idx)) {
    case HTS_FMT_BAI:
    case HTS_FMT_CSI:
        return bam_cells(idx, tid, len, pos, n, work);
    case HTS_FMT_CRAI:
        if (!fp || fp->format.format != cram)
            return -1;
        return cram_cells(idx, fp, h, tid, len, pos, n, work);
    default:
        return -1;
    }
}

int64_t ss_io_estimate(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid, hts_pos_t beg,
                       hts_pos_t end)
{
    if (beg < 0)
        beg = 0;
    if (idx && end <= beg && tid >= 0 && (!h || tid < sam_hdr_nref(h)))
        return 0;
    hts_pos_t pos[2] = { beg, end };
    int64_t w;
    return ss_io_estimate_cells(idx, fp, h, tid, pos, 1, &w) < 0 ? -1 : w;
}
