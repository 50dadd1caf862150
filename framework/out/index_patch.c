/*
 * index_patch.c -- the records the shards' pieces left out (runs: see
 * shard_index.h) added to each contig's pseudo-bin counts in the index
 * htslib saved.
 *
 * htslib counts a contig's mapped and unmapped records one hts_idx_push at a
 * time and has no call that adds many; pushing every left-out record would
 * bring back the serial replay the runs remove. So the saved index is read,
 * the second chunk of each contig's pseudo-bin (mapped, unmapped) is raised,
 * and the index is written again as hts_idx_save_as writes it: BAI plain,
 * CSI and TBI as one BGZF stream at the default level, whose blocks depend
 * only on the bytes, so the file has the bytes htslib would have written had
 * it been given every record.
 *
 * Layouts (SAM specification, section 5; tabix and CSI specifications):
 *   BAI: magic, n_ref; per contig: n_bin, bins {bin, n_chunk, chunks}, n_intv, offsets
 *   TBI: magic, n_ref, 7 int32 of configuration (the last: names' length), names;
 *        then contigs as BAI
 *   CSI: magic, min_shift, depth, l_aux, aux, n_ref; per contig: n_bin,
 *        bins {bin, loffset, n_chunk, chunks}
 * The pseudo-bin is bin 37450 (BAI, TBI) or one past the last real bin (CSI).
 *
 * Main thread of the rank that owns the output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/hts.h>

#include "index_piece.h"

typedef struct {
    uint8_t *s;
    size_t len, at;
    int bad;
} walk_t;

static uint64_t take(walk_t *w, int bytes)
{
    if (w->bad || w->len - w->at < (size_t)bytes) {
        w->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | w->s[w->at + (size_t)i];
    w->at += (size_t)bytes;
    return v;
}

static void skip(walk_t *w, uint64_t bytes)
{
    if (w->bad || w->len - w->at < bytes)
        w->bad = 1;
    else
        w->at += (size_t)bytes;
}

static void add_u64(uint8_t *at, uint64_t add)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | at[i];
    v += add;
    for (int i = 0; i < 8; i++)
        at[i] = (uint8_t)(v >> (8 * i));
}

/* The header up to the contigs: n_ref, and the pseudo-bin's number. 0 or -1. */
static int walk_head(walk_t *w, int fmt, uint64_t *n_ref, uint32_t *meta_bin)
{
    skip(w, 4); /* magic */
    *meta_bin = 37450;
    if (fmt == HTS_FMT_CSI) {
        take(w, 4); /* min_shift */
        uint64_t depth = take(w, 4);
        skip(w, take(w, 4));
        if (depth > 9)
            return -1;
        *meta_bin = (uint32_t)(((1u << (3 * depth + 3)) - 1) / 7 + 1);
    }
    *n_ref = take(w, 4);
    if (fmt == HTS_FMT_TBI) {
        skip(w, 24);
        skip(w, take(w, 4)); /* the names */
    }
    return w->bad ? -1 : 0;
}

/* Add runs[2 i], runs[2 i + 1] to contig i's pseudo-bin counts. 0 or -1 (not an index we wrote). */
static int patch_counts(walk_t *w, int fmt, const uint64_t *runs, int n_runs)
{
    uint64_t n_ref;
    uint32_t meta_bin;
    if (walk_head(w, fmt, &n_ref, &meta_bin) < 0 || n_ref < (uint64_t)n_runs)
        return -1;
    for (uint64_t i = 0; i < n_ref && !w->bad; i++) {
        int patched = 0;
        for (uint64_t n_bin = take(w, 4), b = 0; b < n_bin && !w->bad; b++) {
            uint32_t bin = (uint32_t)take(w, 4);
            if (fmt == HTS_FMT_CSI)
                skip(w, 8);
            uint64_t n_chunk = take(w, 4);
            if (bin == meta_bin && n_chunk == 2 && i < (uint64_t)n_runs && !w->bad &&
                w->len - w->at >= 32) {
                add_u64(w->s + w->at + 16, runs[2 * i]);
                add_u64(w->s + w->at + 24, runs[2 * i + 1]);
                patched = 1;
            }
            skip(w, 16 * n_chunk);
        }
        if (fmt != HTS_FMT_CSI)
            skip(w, 8 * take(w, 4));
        if (!patched && i < (uint64_t)n_runs && (runs[2 * i] || runs[2 * i + 1]))
            return -1; /* counts for a contig with no pseudo-bin: not an index we wrote */
    }
    return w->bad ? -1 : 0;
}

static int read_all(const char *path, kstring_t *out)
{
    BGZF *z = bgzf_open(path, "r");
    if (!z)
        return -1;
    ssize_t n;
    do {
        if (ks_resize(out, out->l + 65536) < 0) {
            bgzf_close(z);
            return -1;
        }
        n = bgzf_read(z, out->s + out->l, 65536);
        out->l += n > 0 ? (size_t)n : 0;
    } while (n > 0);
    return bgzf_close(z) < 0 || n < 0 ? -1 : 0;
}

int ss_idx_patch_counts(const char *idx_path, int fmt, const uint64_t *runs, int n_runs)
{
    kstring_t s = KS_INITIALIZE;
    if (read_all(idx_path, &s) < 0) {
        free(s.s);
        return -1;
    }
    walk_t w = {(uint8_t *)s.s, s.l, 0, 0};
    if (patch_counts(&w, fmt, runs, n_runs) < 0) {
        free(s.s);
        errno = EINVAL;
        return -1;
    }
    BGZF *z = bgzf_open(idx_path, fmt == HTS_FMT_BAI ? "wu" : "w");
    int rc = z && bgzf_write(z, s.s, s.l) == (ssize_t)s.l ? 0 : -1;
    if (z && bgzf_close(z) < 0)
        rc = -1;
    free(s.s);
    return rc;
}
