/*
 * index_check.c -- does an input's index describe the file beside it?
 *
 * Shards read through the index, so an index made before records were added
 * makes whole contigs invisible: the run would end with exit 0 and a smaller
 * output. htslib only warns when the index is older than the data (and we
 * silence its warnings); the other engineering answer, reading the whole
 * file, would cost a pass over every input. These checks cost a stat and
 * two short reads at job open:
 *   - the index file's mtime against the data's, in whole seconds as htslib
 *     compares them (a copy made with cp keeps index >= data);
 *   - BAI/CSI: the number of contigs against the header, the first record
 *     the index knows against where the header ends, and after the last
 *     mapped record it knows: the end of the file, or the unplaced reads.
 * CRAI has none of these offsets in htslib's API: its lines are checked
 * against the file's container headers instead (crai_check.c).
 */
#include <htslib/bgzf.h>
#include <htslib/cram.h>
#include <htslib/hfile.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ss_diag.h"

/* st's mtime for path (whole seconds), or -1 when it cannot be read. */
static long long mtime_of(const char *path, long long *size)
{
    struct stat st;
    if (strstr(path, "://") || stat(path, &st) != 0)
        return -1;
    if (size)
        *size = (long long)st.st_size;
    return (long long)st.st_mtime;
}

/*
 * The index htslib loads for path when none is given, in its order
 * (hts_idx_check_local): X.csi, base.csi, X.bai, base.bai; X.crai, base.crai.
 * Writes it into buf; 0, or -1 when none of them exists.
 */
static int locate_index(const char *path, int is_cram, char *buf, size_t size)
{
    static const char *bam_ext[] = {".csi", ".bai"}, *cram_ext[] = {".crai"};
    const char **ext = is_cram ? cram_ext : bam_ext;
    int n_ext = is_cram ? 1 : 2;
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    int base_len = dot && (!slash || dot > slash) ? (int)(dot - path) : -1;
    for (int e = 0; e < n_ext; e++) {
        snprintf(buf, size, "%s%s", path, ext[e]);
        if (mtime_of(buf, NULL) >= 0)
            return 0;
        if (base_len < 0)
            continue;
        snprintf(buf, size, "%.*s%s", base_len, path, ext[e]);
        if (mtime_of(buf, NULL) >= 0)
            return 0;
    }
    return -1;
}

/* The offset where the index's reads start (tid START) or its mapped reads end (NOCOOR). */
static int64_t index_offset(hts_idx_t *idx, int tid)
{
    hts_itr_t *itr = sam_itr_queryi(idx, tid, 0, 0);
    int64_t off = itr ? (int64_t)itr->curr_off : -1;
    hts_itr_destroy(itr);
    return off;
}

enum { IDX_OK = 0, IDX_STALE, IDX_OTHER, IDX_PAST_END };

/*
 * After the last mapped read the index knows there must be the unplaced
 * reads it counts, or the end. A mapped read there was added after the
 * index was made (or the index is another file's).
 */
static int check_tail(samFile *fp, hts_idx_t *idx, long long file_size)
{
    int64_t end = index_offset(idx, HTS_IDX_NOCOOR);
    if (end <= 0)
        return IDX_OK; /* no mapped reads indexed: nothing to compare */
    if ((end >> 16) > file_size)
        return IDX_PAST_END;
    bam1_t *b = bam_init1();
    if (!b)
        return IDX_OK; /* out of memory: the run will say so soon enough */
    int r = bgzf_seek(fp->fp.bgzf, end, SEEK_SET) < 0 ? -2 : bam_read1(fp->fp.bgzf, b);
    int tid = b->core.tid;
    bam_destroy1(b);
    if (r < -1)
        return IDX_OTHER;
    if (r == -1)
        return hts_idx_get_n_no_coor(idx) > 0 ? IDX_STALE : IDX_OK;
    return tid >= 0 ? IDX_STALE : IDX_OK;
}

static int check_offsets(samFile *fp, sam_hdr_t *h, hts_idx_t *idx, int64_t data_beg,
                         long long file_size)
{
    if (hts_idx_nseq(idx) != sam_hdr_nref(h))
        return IDX_OTHER;
    int64_t first = index_offset(idx, HTS_IDX_START);
    if (first > 0 && first != data_beg)
        return IDX_OTHER; /* the first indexed read is not where this file's records start */
    return check_tail(fp, idx, file_size);
}

int ss_io_index_problem(const ss_io_inputs_t *in, int i, samFile *fp, sam_hdr_t *h, hts_idx_t *idx,
                        char *msg, size_t size)
{
    const char *path = in->paths[i];
    char found[4096];
    const char *idx_path = in->index_paths ? in->index_paths[i] : NULL;
    int is_cram = fp->format.format == cram;
    int64_t data_beg = is_cram ? htell(cram_fd_get_fp(fp->fp.cram)) : bgzf_tell(fp->fp.bgzf);
    long long size_data = 0;
    long long t_data = mtime_of(path, &size_data);
    if (!idx_path && locate_index(path, is_cram, found, sizeof(found)) == 0)
        idx_path = found;
    long long t_idx = idx_path ? mtime_of(idx_path, NULL) : -1;
    int problem = IDX_OK;
    if (t_data >= 0 && t_idx >= 0 && t_idx < t_data)
        problem = IDX_STALE;
    else if (!is_cram && t_data >= 0)
        problem = check_offsets(fp, h, idx, data_beg, size_data);
    else if (is_cram && t_data >= 0 && idx_path &&
             ss_io_crai_problem(path, fp->format.version.major, idx_path, data_beg, size_data))
        problem = IDX_OTHER;
    const char *name = idx_path ? idx_path : "(its index)";
    switch (problem) {
    case IDX_STALE:
        snprintf(msg, size,
                 "its index %s is older than the file (or does not cover it); "
                 "re-index with samtools index %s",
                 name, path);
        return -1;
    case IDX_OTHER:
        snprintf(msg, size,
                 "its index %s does not match the file; re-index with samtools "
                 "index %s",
                 name, path);
        return -1;
    case IDX_PAST_END:
        snprintf(msg, size,
                 "its index %s points past the end of the file: the file is "
                 "truncated, or the index is another file's; check the file with samtools "
                 "quickcheck, then re-index with samtools index %s",
                 name, path);
        return -1;
    }
    return 0;
}

/* ---- the run's tally against the index's counts ---- */

/* "79,298": counts in messages, grouped as samtools prints none but people read them. */
static const char *grouped(uint64_t v, char *buf, size_t size)
{
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v), k = 0;
    for (int i = 0; i < n && (size_t)k + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

/* What idx counts in slot tid + 1: the pseudo-bin's mapped + unmapped, or n_no_coor for 0. */
static uint64_t index_count(const hts_idx_t *idx, int slot)
{
    uint64_t mapped, unmapped;
    if (slot == 0)
        return hts_idx_get_n_no_coor(idx);
    if (slot - 1 >= hts_idx_nseq(idx)) /* hts_idx_get_stat does not check */
        return 0;
    return hts_idx_get_stat(idx, slot - 1, &mapped, &unmapped) == 0 ? mapped + unmapped : 0;
}

static void describe_slot(const sam_hdr_t *h, int slot, char *buf, size_t size)
{
    if (slot == 0)
        snprintf(buf, size, "the unplaced unmapped reads");
    else
        snprintf(buf, size, "contig %s", sam_hdr_tid2name(h, slot - 1));
}

/* The message: input bad's index does not describe it (-1: one of them), detail in brackets. */
static void tally_message(const ss_io_inputs_t *in, int bad, const char *detail, char *msg,
                          size_t size)
{
    char found[4096];
    if (bad < 0) {
        snprintf(msg, size,
                 "%d inputs: their indexes do not describe the files (%s); "
                 "samtools idxstats and samtools view -c show which one; re-index it with "
                 "samtools index",
                 in->n, detail);
        return;
    }
    const char *path = in->paths[bad];
    const char *idx_path = in->index_paths ? in->index_paths[bad] : NULL;
    if (!idx_path)
        idx_path = locate_index(path, 0, found, sizeof(found)) == 0 ? found : "(its index)";
    snprintf(msg, size,
             "%s: its index %s does not describe the file (%s); re-index it with "
             "samtools index %s",
             path, idx_path, detail, path);
}

void ss_io_tally_expect(const hts_idx_t *idx, int n_contigs, int i, int n_inputs, uint64_t *want)
{
    size_t slots = (size_t)n_contigs + 1;
    int cells = ss_io_tally_len(n_contigs, n_inputs) > 4 * slots;
    for (int slot = 0; slot <= n_contigs; slot++) {
        uint64_t w = index_count(idx, slot);
        want[slot] += w;
        if (cells)
            want[4 * slots + (size_t)i * slots + (size_t)slot] = w;
    }
}

int ss_io_tally_check(const ss_io_inputs_t *in, const sam_hdr_t *h, const uint64_t *got,
                      const uint64_t *want, char *msg, size_t size)
{
    int nc = sam_hdr_nref(h), n_bam = 0, only = -1;
    size_t slots = (size_t)nc + 1;
    int cells = ss_io_tally_len(nc, in->n) > 4 * slots;
    for (int i = 0; i < in->n; i++)
        if (!in->is_cram[i])
            n_bam++, only = i;
    for (int slot = 0; slot <= nc; slot++) {
        uint64_t g = got[slot], w = want[slot];
        uint64_t out = got[2 * slots + (size_t)slot], reached = got[3 * slots + (size_t)slot];
        if (got[slots + (size_t)slot] != 0 || (g == w && out == reached))
            continue; /* not read whole (nothing to compare), or as the indexes count */
        int bad = n_bam == 1 ? only : -1;
        for (int i = 0; g != w && cells && bad < 0 && i < in->n; i++) {
            size_t k = 4 * slots + (size_t)i * slots + (size_t)slot;
            if (!in->is_cram[i] && got[k] != want[k])
                bad = i, g = got[k], w = want[k]; /* that input's own figures */
        }
        char where[600], detail[900], x[32], y[32];
        describe_slot(h, slot, where, sizeof(where));
        if (g != w)
            snprintf(detail, sizeof(detail), "%s: %s records read, the index%s count%s %s", where,
                     grouped(g, x, sizeof(x)), bad < 0 ? "es" : "", bad < 0 ? "" : "s",
                     grouped(w, y, sizeof(y)));
        else
            snprintf(detail, sizeof(detail),
                     "%s: of the %s records that reach past a shard's "
                     "end, the next shard was given %s",
                     where, grouped(out, x, sizeof(x)), grouped(reached, y, sizeof(y)));
        tally_message(in, bad, detail, msg, size);
        return -1;
    }
    return 0;
}
