/*
 * engine_index.c -- the output's index from the shards' pieces
 * (out/shard_index.h), without reading the output back.
 *
 * Each worker leaves its shard's piece in e->ipieces[idx]. One rank: the
 * main thread adds each piece as it writes the shard, at the offset it
 * writes it, and frees it, so a run holds only htslib's index and the
 * pieces of the shards waiting to be written. Several ranks: each rank
 * keeps its shards' pieces with the offsets the merge wrote them at; at the
 * end rank 0 asks each shard's rank for its piece in shard order (comm.c's
 * ask and send, as the funnel does) and adds it, so rank 0 holds one piece
 * at a time and a rank holds about 7 bytes per record (4 per text line) it
 * wrote until then.
 *
 * The file is read back instead (ss_out_run_index, ss_out_run_index_tabix)
 * when the output's index is not built from pieces (a SAM.gz without header
 * lines, text with data lines in its header),
 * when --resume kept shards an earlier run wrote (their pieces are gone),
 * when a kernel's summary follows the shards, and when a piece could not be
 * made (out of memory, or text whose last line has no newline).
 *
 * Main thread.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../comm/comm.h"
#include "engine.h"

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
    e->ipieces = NULL, e->ioffs = NULL, e->imerge = NULL;
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
    double t0 = ss_now();
    int rc = ss_idx_merge_add(e->imerge, piece, len, off);
    e->index_merge_s += ss_now() - t0;
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

/* One message of a piece on its way to rank 0. */
#define CHUNK ((size_t)4 << 20)

/*
 * Collective: rank 0 learns which rank holds each shard's piece (every rank
 * sends the (rank, shard) pairs it ran); owner may be NULL elsewhere. -1 on
 * rank 0 when a shard has no piece or two (kept shards, or a bug), or no memory.
 */
static int learn_owners(const engine_t *e, int *owner)
{
    kstring_t mine = KS_INITIALIZE;
    int bad = 0, rank = ss_comm_rank();
    for (int i = 0; i < e->n_shards && !bad; i++)
        if (e->recs[i].done) /* run here: not another rank's, nor kept from an earlier run */
            bad = kputsn((const char *)&rank, sizeof(int), &mine) < 0 ||
                  kputsn((const char *)&i, sizeof(int), &mine) < 0;
    int *all = NULL;
    size_t len = 0;
    if (ss_comm_gatherv(bad ? "" : mine.s, bad ? 0 : mine.l, (void **)&all, &len) < 0)
        bad = 1;
    free(mine.s);
    if (rank != 0 || !owner) {
        free(all);
        return bad || (rank == 0 && !owner) ? -1 : 0;
    }
    for (int i = 0; i < e->n_shards; i++)
        owner[i] = -1;
    for (size_t k = 0; !bad && k + 1 < len / sizeof(int); k += 2) {
        int r = all[k], idx = all[k + 1];
        if (idx < 0 || idx >= e->n_shards || owner[idx] >= 0)
            bad = 1;
        else
            owner[idx] = r;
    }
    for (int i = 0; i < e->n_shards && !bad; i++)
        bad = owner[i] < 0;
    free(all);
    return bad ? -1 : 0;
}

/* Rank 0: shard idx's piece from owner, its offset first. 0, or -1 (an MPI failure, a stop). */
static int fetch_piece(int owner, int idx, kstring_t *piece, uint64_t *off)
{
    uint64_t head[2];
    size_t got;
    if (ss_comm_ask(owner, idx) < 0 || ss_comm_piece_recv(owner, head, sizeof(head), &got) < 0 ||
        got != sizeof(head))
        return -1;
    if (ks_resize(piece, head[1] + 1) < 0) {
        /* the owner is already sending: there is no way back but to stop every rank */
        ss_error("rank 0: out of memory for shard %d's index piece; every rank stops", idx);
        ss_comm_abort(1);
    }
    piece->l = 0;
    while (piece->l < head[1]) {
        size_t want = head[1] - piece->l < CHUNK ? head[1] - piece->l : CHUNK;
        if (ss_comm_piece_recv(owner, piece->s + piece->l, want, &got) < 0 || got == 0)
            return -1;
        piece->l += got;
    }
    *off = head[0];
    return 0;
}

/*
 * Rank 0: every shard's piece in shard order, its own or asked of its owner,
 * added to the merge. A piece that does not fit still lets the others be
 * fetched, so no rank waits for an ask that never comes. 0, or -1.
 */
static int collect_root(engine_t *e, const int *owner)
{
    kstring_t got = KS_INITIALIZE;
    int rc = 0;
    for (int i = 0; i < e->n_shards; i++) {
        uint64_t off = e->ioffs[i];
        kstring_t *p = &e->ipieces[i];
        if (owner[i] != 0) {
            if (fetch_piece(owner[i], i, &got, &off) < 0) {
                if (!ss_comm_stop_raised())
                    ss_error("rank 0: receiving shard %d's index piece from rank %d failed", i,
                             owner[i]);
                if (ss_comm_raise_stop(ss_error_raised()))
                    ss_error_flush();
                else
                    ss_error_quiet();
                rc = -1;
                break;
            }
            p = &got;
        }
        if (rc == 0 && e->imerge)
            rc = add_piece(e, i, p->s, p->l, off);
        if (p != &got) {
            free(p->s);
            *p = (kstring_t)KS_INITIALIZE;
        }
    }
    free(got.s);
    return rc;
}

/* Another rank: send rank 0 each piece it asks for, until every one of ours went. 0 or -1. */
static int serve_pieces(engine_t *e)
{
    int held = 0, idx;
    for (int i = 0; i < e->n_shards; i++)
        held += e->recs[i].done != 0;
    while (held > 0) {
        int r = ss_comm_asked(&idx);
        if (r == 0 && !ss_comm_stop_raised()) {
            nanosleep(&(struct timespec){0, 200000}, NULL); /* rank 0 is adding a piece */
            continue;
        }
        if (r <= 0 || idx < 0 || idx >= e->n_shards || !e->recs[idx].done)
            return -1;
        kstring_t *p = &e->ipieces[idx];
        uint64_t head[2] = {e->ioffs[idx], p->l};
        int rc = ss_comm_piece_send(head, sizeof(head));
        for (size_t at = 0; rc == 0 && at < p->l; at += CHUNK)
            rc = ss_comm_piece_send(p->s + at, p->l - at < CHUNK ? p->l - at : CHUNK);
        if (rc < 0)
            return -1;
        free(p->s);
        *p = (kstring_t)KS_INITIALIZE;
        held--;
    }
    return 0;
}

int ss_engine_index_collect(engine_t *e, int rc)
{
    if (!e->ipieces || !e->merge || rc < 0)
        return rc;
    int root = ss_comm_rank() == 0;
    int *owner = root ? malloc((size_t)(e->n_shards > 0 ? e->n_shards : 1) * sizeof(int)) : NULL;
    /* rank 0 without a merge (kept shards) reads the file back: nothing travels */
    int skip = learn_owners(e, owner) < 0 || (root && !e->imerge);
    if (ss_comm_max_int(skip) != 0) {
        read_back(e);
        free(owner);
        return rc;
    }
    int r = root ? collect_root(e, owner) : serve_pieces(e);
    free(owner);
    if (r < 0 && !root && !ss_comm_stop_raised())
        ss_error("rank %d: sending index pieces to rank 0 failed", ss_comm_rank());
    return ss_comm_max_int(r < 0) != 0 ? -1 : rc;
}

int ss_engine_index_seal(engine_t *e, uint64_t *data_end)
{
    uint64_t len = e->merge ? ss_merge_file_len(e->merge) : ss_output_bytes(e->out);
    /* where the trailer starts: CRAM's EOF container, or the BGZF EOF block */
    uint64_t tail = e->orun->format == SS_FMT_CRAM ? e->orun->cram.eof.l : sizeof(ss_bgzf_eof);
    *data_end = len >= tail ? len - tail : 0;
    if (e->summary.l)
        read_back(e); /* text after the shards, which no piece describes */
    return 0;
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
