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
 * offset for p. Within a contig's reads this is monotone; in a stretch
 * without reads, and past the last read (where BAI has no linear index), the
 * query may fall back to an earlier (or the same) offset. Where it does, or
 * finds nothing, one record is read: if no read reaches p or beyond, S(p) is
 * the end of the contig's data (else the last cell holding reads would look
 * empty and its reads would weigh on the contig's last cell, far away);
 * otherwise S keeps its running maximum. The end of the last cell of a
 * contig is the end of the contig's data. Whole BGZF blocks count by their
 * compressed distance, partial blocks by their uncompressed distance over the
 * file's compression ratio.
 *
 * CRAM: htslib keeps the .crai inside the cram_fd and offers no chunk list,
 * but a range query seeks the file to the container holding a position, so
 * S(p) is the file offset after that seek; the end of a contig's data is the
 * first container of the next contig with data (or the end of the file).
 * Granularity is one container (often tens of kb). The seeks move the file
 * position: pass a handle used only for planning.
 */
#include <htslib/bgzf.h>
#include <htslib/cram.h>
#include <htslib/hfile.h>
#include <stdlib.h>

#include "ss_estimate.h"

#define DEFAULT_RATIO 3.0 /* uncompressed / compressed bytes of a typical BAM block */

struct ss_io_est_s {
    hts_idx_t *idx;
    samFile *fp;
    sam_hdr_t *h;
    double ratio; /* uncompressed / compressed bytes of the file's first data block */
    int has_ratio;
    bam1_t *rec; /* for the few reads of records (reads_reach, profiles); NULL until then */
};

/* A query's iterator over [beg, end) of tid, with e->rec to read it into; NULL on failure. */
static hts_itr_t *query(ss_io_est_t *e, int tid, hts_pos_t beg, hts_pos_t end)
{
    if (!e->rec && !(e->rec = bam_init1()))
        return NULL;
    return sam_itr_queryi(e->idx, tid, beg, end);
}

/* First and last virtual offsets of the chunks for [beg, end). Returns 0 if there are none. */
static int chunk_span(hts_idx_t *idx, int tid, hts_pos_t beg, hts_pos_t end, uint64_t *first,
                      uint64_t *last);

/*
 * The file's compression ratio, measured on the block holding its first
 * placed read (so it is the same number whoever asks, in any order): a
 * virtual offset's in-block part is in uncompressed bytes, and converting it
 * with the real ratio keeps cells that straddle a block boundary from looking
 * heavy.
 */
static double bam_ratio(ss_io_est_t *e)
{
    if (e->has_ratio)
        return e->ratio;
    e->has_ratio = 1;
    e->ratio = DEFAULT_RATIO;
    BGZF *bg = e->fp && e->fp->format.format == bam && e->fp->is_bgzf ? e->fp->fp.bgzf : NULL;
    uint64_t first = 0, last;
    int found = 0;
    for (int t = 0; bg && e->h && !found && t < sam_hdr_nref(e->h); t++)
        found = chunk_span(e->idx, t, 0, sam_hdr_tid2len(e->h, t), &first, &last);
    if (!found || bg->mt)
        return e->ratio;
    int64_t saved = bgzf_tell(bg);
    /* htslib sets block_clength only when threaded: after a plain read the file sits at the
     * block's end, so the compressed size is the distance from its start */
    if (bgzf_seek(bg, (int64_t)(first & ~(uint64_t)0xffff), SEEK_SET) == 0 &&
        bgzf_read_block(bg) == 0 && bg->block_length > 0) {
        off_t clen = htell(bg->fp) - (off_t)bg->block_address;
        if (clen > 0)
            e->ratio = (double)bg->block_length / (double)clen;
    }
    if (saved >= 0 && bgzf_seek(bg, saved, SEEK_SET) < 0)
        bg->errcode = 0; /* a planning handle: nothing reads from it afterwards */
    return e->ratio;
}

/* Compressed bytes between two BGZF virtual offsets. */
static int64_t voff_bytes(uint64_t u, uint64_t v, double ratio)
{
    if (v <= u)
        return 0;
    int64_t blocks = (int64_t)(v >> 16) - (int64_t)(u >> 16);
    double inner = ((double)(v & 0xffff) - (double)(u & 0xffff)) / ratio;
    int64_t bytes = blocks + (int64_t)inner;
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

/*
 * Whether some record of tid reaches [beg, len): 0 when none does, 1 when one
 * does or the file cannot say (the caller then keeps its estimate as it was).
 */
static int reads_reach(ss_io_est_t *e, int tid, hts_pos_t beg, hts_pos_t len)
{
    if (!e->fp || e->fp->format.format != bam || beg >= len)
        return 1;
    hts_itr_t *it = query(e, tid, beg, len);
    int r = it ? sam_itr_next(e->fp, it, e->rec) : 0;
    hts_itr_destroy(it);
    return it && r == -1 ? 0 : 1;
}

/* S(pos[i]) for i >= 1 (see the top of the file); *past: no read reaches pos[i] or beyond. */
static uint64_t cell_start(ss_io_est_t *e, int tid, hts_pos_t len, hts_pos_t p, int last,
                           uint64_t prev, uint64_t end_data, int *past)
{
    uint64_t s, unused;
    if (last || *past)
        return end_data;
    int found = chunk_span(e->idx, tid, p, p + 1, &s, &unused);
    if (found && s > prev)
        return s > end_data ? end_data : s;
    if (!reads_reach(e, tid, p, len)) {
        *past = 1;
        return end_data;
    }
    return prev; /* a stretch without reads: keep S monotone */
}

static int bam_cells(ss_io_est_t *e, int tid, hts_pos_t len, const hts_pos_t *pos, int n,
                     int64_t *work)
{
    hts_idx_t *idx = e->idx;
    uint64_t first, end_data, prev, unused;
    if (!chunk_span(idx, tid, pos[0], pos[n], &first, &end_data)) {
        for (int i = 0; i < n; i++)
            work[i] = 0; /* nothing overlaps the cells */
        return 0;
    }
    if (!chunk_span(idx, tid, pos[0], pos[0] + 1, &prev, &unused))
        prev = first;
    double ratio = bam_ratio(e);
    int past = 0;
    for (int i = 1; i <= n; i++) {
        uint64_t s =
            cell_start(e, tid, len, pos[i], i == n && pos[n] >= len, prev, end_data, &past);
        if (s < prev)
            s = prev;
        work[i - 1] = voff_bytes(prev, s, ratio);
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

/*
 * S(p) is a step function (one step per container), so a cell where a new
 * container starts would get all of the previous container's bytes. Spread
 * each step over the cells since the previous step, by their length: the
 * container held the reads of those cells.
 */
static void spread_steps(const hts_pos_t *pos, int n, int64_t *work)
{
    int run = 0;
    for (int k = 0; k < n; k++) {
        if (work[k] == 0)
            continue;
        int64_t total = work[k], given = 0;
        hts_pos_t run_bp = pos[k + 1] - pos[run];
        for (int j = run; j <= k; j++) {
            int64_t share =
                j == k ? total - given
                       : (int64_t)((double)total * (double)(pos[j + 1] - pos[j]) / (double)run_bp);
            work[j] = share;
            given += share;
        }
        run = k + 1;
    }
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
    spread_steps(pos, n, work);
    return 0;
}

ss_io_est_t *ss_io_est_init(hts_idx_t *idx, samFile *fp, sam_hdr_t *h)
{
    if (!idx)
        return NULL;
    ss_io_est_t *e = calloc(1, sizeof(*e));
    if (e)
        e->idx = idx, e->fp = fp, e->h = h;
    return e;
}

void ss_io_est_destroy(ss_io_est_t *e)
{
    if (e && e->rec)
        bam_destroy1(e->rec);
    free(e);
}

int ss_io_est_cells(ss_io_est_t *e, int tid, const hts_pos_t *pos, int n, int64_t *work)
{
    if (!e || tid < 0 || n < 1 || (e->h && tid >= sam_hdr_nref(e->h)))
        return -1;
    hts_pos_t len = e->h ? sam_hdr_tid2len(e->h, tid) : HTS_POS_MAX;
    switch (hts_idx_fmt(e->idx)) {
    case HTS_FMT_BAI:
    case HTS_FMT_CSI:
        return bam_cells(e, tid, len, pos, n, work);
    case HTS_FMT_CRAI:
        if (!e->fp || e->fp->format.format != cram)
            return -1;
        return cram_cells(e->idx, e->fp, e->h, tid, len, pos, n, work);
    default:
        return -1;
    }
}

int ss_io_est_profile(ss_io_est_t *e, int tid, hts_pos_t beg, hts_pos_t end, int n_bins,
                      double *bins)
{
    if (!e || !e->fp || e->fp->format.format != bam || end <= beg || n_bins < 1)
        return 1;
    for (int i = 0; i < n_bins; i++)
        bins[i] = 0;
    hts_itr_t *it = query(e, tid, beg, end);
    const bam1_t *b = e->rec;
    int r = 0, any = 0;
    while (it && (r = sam_itr_next(e->fp, it, e->rec)) >= 0) {
        if (b->core.pos < beg || b->core.pos >= end)
            continue; /* started before the cell: the cell before counts it */
        int k = (int)((b->core.pos - beg) * n_bins / (end - beg));
        bins[k] += b->l_data;
        any = 1;
    }
    hts_itr_destroy(it);
    if (!it || r < -1)
        return -1;
    return any ? 0 : 1;
}
