/*
 * engine_index.c -- the output's index from the shards' pieces
 * (out/ss_shard_index.h), without reading the output back.
 *
 * Each worker leaves its shard's piece in e->ipieces[idx]. One rank: the
 * main thread adds each piece as it writes the shard, at the offset it
 * writes it, and frees it, so a run holds only htslib's index and the
 * pieces of the shards waiting to be written. Several ranks: each rank
 * keeps its shards' pieces with the offsets the merge wrote them at, and at
 * the end they travel to rank 0 in one gather (comm.c), which adds them in
 * shard order; a rank holds about 7 bytes per record it wrote until then.
 *
 * The file is read back instead (ss_out_run_index, ss_out_run_index_tabix)
 * when the output's index is not built from pieces (CRAM, SAM.gz, VCF/BCF),
 * when --resume kept shards an earlier run wrote (their pieces are gone),
 * when a kernel's summary follows the shards, and when a piece could not be
 * made (out of memory, or text whose last line has no newline).
 *
 * Main thread.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../comm/ss_comm.h"
#include "ss_engine.h"

int ss_engine_index_init(engine_t *e, int n_shards)
{
    if (e->orun->idx_kind == SS_IDX_NONE)
        return 0;
    e->ipieces = calloc((size_t)(n_shards > 0 ? n_shards : 1), sizeof(*e->ipieces));
    e->ioffs = calloc((size_t)(n_shards > 0 ? n_shards : 1), sizeof(*e->ioffs));
    return e->ipieces && e->ioffs ? 0 : -1;
}

void ss_engine_index_destroy(engine_t *e)
{
    for (int i = 0; e->ipieces && i < e->n_shards; i++)
        free(e->ipieces[i].s);
    free(e->ipieces);
    free(e->ioffs);
    ss_idx_merge_destroy(e->imerge);
    free(e->igathered.s);
    e->ipieces = NULL, e->ioffs = NULL, e->imerge = NULL;
    e->igathered = (kstring_t)KS_INITIALIZE;
}

void ss_engine_index_open(engine_t *e, uint64_t header_len)
{
    if (e->ipieces && e->n_kept == 0)
        e->imerge = ss_out_run_index_merge(e->orun, header_len, ss_engine_tabix_csi(e));
}

/* Give up the merge: the index is built from the file instead. */
static void read_back(engine_t *e)
{
    ss_idx_merge_destroy(e->imerge);
    e->imerge = NULL;
}

/* Add shard idx's piece, written at off. 0, or -1 after ss_error(). */
static int add_piece(engine_t *e, int idx, const char *piece, size_t len, uint64_t off)
{
    const char *output = ss_job_opts(e->job)->output;
    if (!len) {
        read_back(e); /* this shard's piece could not be made */
        return 0;
    }
    int rc = ss_idx_merge_add(e->imerge, piece, len, off);
    if (rc == -2 && e->orun->index_out && strstr(e->orun->index_out, ".bai"))
        ss_error("%s: a .bai index cannot hold contigs of 2^29 bp or more (samtools says "
                 "the same); nothing was written: name the index .csi",
                 output);
    else if (rc == -2)
        ss_error("%s: htslib refused a record of shard %d for the index (it says why above); "
                 "nothing was written",
                 output, idx);
    else if (rc < 0)
        ss_error("internal: shard %d's index piece does not fit where the shard was written "
                 "(byte %llu, the index expected %llu); nothing was written: please report it",
                 idx, (unsigned long long)off,
                 (unsigned long long)ss_idx_merge_next_off(e->imerge));
    return rc < 0 ? -1 : 0;
}

int ss_engine_index_written(engine_t *e, int idx, uint64_t off)
{
    if (!e->ipieces)
        return 0;
    kstring_t *p = &e->ipieces[idx];
    int rc = e->imerge ? add_piece(e, idx, p->s, p->l, off) : 0;
    free(p->s);
    *p = (kstring_t)KS_INITIALIZE;
    return rc;
}

void ss_engine_index_placed(engine_t *e, int idx, uint64_t off)
{
    if (e->ioffs)
        e->ioffs[idx] = off;
}

/* This rank's pieces as [idx u32][off u64][len u64][bytes], shard order. NULL: no memory. */
static int pack_pieces(const engine_t *e, kstring_t *out)
{
    for (int i = 0; i < e->n_shards; i++) {
        if (!e->recs[i].done)
            continue; /* another rank's, or kept from an earlier run */
        uint64_t head[2] = {e->ioffs[i], e->ipieces[i].l};
        uint32_t idx = (uint32_t)i;
        if (kputsn((const char *)&idx, 4, out) < 0 || kputsn((const char *)head, 16, out) < 0 ||
            (e->ipieces[i].l && kputsn(e->ipieces[i].s, e->ipieces[i].l, out) < 0))
            return -1;
    }
    return 0;
}

/* Where shard idx's entry is in the gathered bytes, by shard. 0, or -1 (one missing). */
static int find_pieces(engine_t *e, const char *all, size_t len, size_t *at)
{
    for (int i = 0; i < e->n_shards; i++)
        at[i] = SIZE_MAX;
    for (size_t p = 0; p + 20 <= len;) {
        uint32_t idx;
        uint64_t head[2];
        memcpy(&idx, all + p, 4);
        memcpy(head, all + p + 4, 16);
        if (idx >= (uint32_t)e->n_shards || at[idx] != SIZE_MAX || head[1] > len - p - 20)
            return -1;
        at[idx] = p;
        p += 20 + head[1];
    }
    for (int i = 0; i < e->n_shards; i++)
        if (at[i] == SIZE_MAX)
            return -1;
    return 0;
}

/* Rank 0: add every shard's piece in shard order. 0, or -1 after ss_error(). */
static int add_gathered(engine_t *e, const char *all, size_t len)
{
    size_t *at = malloc((size_t)(e->n_shards > 0 ? e->n_shards : 1) * sizeof(*at));
    if (!at) {
        read_back(e);
        return 0;
    }
    int rc = 0;
    if (find_pieces(e, all, len, at) < 0) {
        ss_error("internal: the ranks' index pieces do not cover every shard once; nothing "
                 "was written: please report it");
        rc = -1;
    }
    for (int i = 0; rc == 0 && e->imerge && i < e->n_shards; i++) {
        uint64_t head[2];
        memcpy(head, all + at[i] + 4, 16);
        rc = add_piece(e, i, all + at[i] + 20, head[1], head[0]);
    }
    free(at);
    return rc;
}

int ss_engine_index_gather(engine_t *e, int rc)
{
    if (!e->ipieces || !e->merge || rc < 0)
        return rc;
    free(e->igathered.s);
    e->igathered = (kstring_t)KS_INITIALIZE;
    kstring_t mine = KS_INITIALIZE;
    int bad = pack_pieces(e, &mine) < 0;
    void *all = NULL;
    size_t len = 0;
    /* every rank gathers even after a local failure, or rank 0 would wait */
    if (ss_comm_gatherv(bad ? "" : mine.s, bad ? 0 : mine.l, &all, &len) < 0)
        bad = 1;
    free(mine.s);
    if (ss_comm_max_int(bad) != 0) {
        read_back(e); /* out of memory somewhere, or past MPI's counts: rank 0 reads it */
        free(all);
        return 0;
    }
    e->igathered = (kstring_t){len, len, all}; /* rank 0's, added when it seals */
    return rc;
}

int ss_engine_index_seal(engine_t *e, uint64_t *data_end)
{
    uint64_t len = e->merge ? ss_merge_file_len(e->merge) : ss_output_bytes(e->out);
    *data_end = len >= sizeof(ss_bgzf_eof) ? len - sizeof(ss_bgzf_eof) : 0;
    if (e->summary.l)
        read_back(e); /* text after the shards, which no piece describes */
    int rc = 0;
    if (e->imerge && e->merge)
        rc = add_gathered(e, e->igathered.s, e->igathered.l);
    free(e->igathered.s);
    e->igathered = (kstring_t)KS_INITIALIZE;
    return rc;
}

/* -o FILE.gz##idx##NAME.csi: the index asked for by name is CSI. */
static int named_csi(const char *name)
{
    size_t l = name ? strlen(name) : 0;
    return l > 4 && strcasecmp(name + l - 4, ".csi") == 0;
}

int ss_engine_tabix_csi(const engine_t *e)
{
    sam_hdr_t *h = ss_job_header(e->job);
    for (int i = 0; i < sam_hdr_nref(h); i++)
        if (sam_hdr_tid2len(h, i) >= (1LL << 29))
            return 1; /* tabix needs CSI past 2^29 - 1 */
    return named_csi(e->orun->index_out);
}
