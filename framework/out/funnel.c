/*
 * funnel.c -- the ordered output of a multi-rank run to standard output,
 * which only rank 0 can write, in order, as a stream.
 *
 * Every rank publishes each finished shard's size in the shared window, with
 * its own rank beside it (comm.c). Rank 0 writes the header, then shard after
 * shard as soon as each one's size is known: its own from its store, the
 * others' by asking the rank that holds the shard, which sends it in chunks
 * that rank 0 writes as they arrive. A piece moves only when rank 0 asked for
 * it, so no rank sends what rank 0 will not take, and each rank holds its own
 * finished shards in its store (memory-capped, the rest spilled to --tmp-dir)
 * until asked: no rank holds the whole output. A file (-o) stays the fast
 * path: there every rank writes its own pieces at their offsets (merge.c).
 *
 * Main thread only; the MPI calls are comm.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "funnel.h"

/* One message of a piece: rank 0 writes each as it comes. */
#define CHUNK ((size_t)4 << 20)
/* Sizes read per MPI call. */
#define READ_N 256

struct ss_funnel_s {
    ss_store_t *store;
    ss_output_t *out; /* rank 0: standard output */
    int n_shards;
    size_t seen;   /* store pieces published so far */
    size_t *piece; /* [n_shards]: this rank's store piece of each shard, or SIZE_MAX */
    int n_held;    /* this rank's pieces not sent or written yet */
    int known;     /* rank 0: sizes of shards 0..known-1 are known */
    int next;      /* rank 0: the next shard to write */
    int64_t *size; /* rank 0: [n_shards] */
    int *owner;    /* rank 0: [n_shards] */
    char *buf;     /* rank 0: [CHUNK], a received chunk */
    uint64_t bytes_mine, bytes_out;
    int failed;
};

ss_funnel_t *ss_funnel_open(ss_store_t *store, int n_shards, const char *header, size_t header_len,
                            ss_output_t *out)
{
    int rank = ss_comm_rank(), root = rank == 0, bad = 0;
    ss_funnel_t *f = calloc(1, sizeof(*f));
    size_t n = (size_t)(n_shards > 0 ? n_shards : 1);
    if (!f || !(f->piece = malloc(n * sizeof(*f->piece))) ||
        (root && (!(f->size = malloc(n * sizeof(*f->size))) ||
                  !(f->owner = malloc(n * sizeof(*f->owner))) || !(f->buf = malloc(CHUNK))))) {
        ss_error("rank %d: out of memory for the output's funnel", rank);
        bad = 1;
    }
    if (root && !out)
        bad = 1; /* rank 0 could not open standard output and said why */
    if (ss_comm_max_int(bad) != 0) {
        ss_funnel_destroy(f);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        f->piece[i] = SIZE_MAX;
    f->store = store, f->out = out, f->n_shards = n_shards;
    if (root && header_len) { /* a failure surfaces at the first step */
        f->failed = ss_output_write(out, header, header_len) < 0;
        f->bytes_out = header_len;
    }
    return f;
}

/* Publish the pieces put since the last step. 0 or -1. */
static int publish_new(ss_funnel_t *f)
{
    size_t n = ss_store_count(f->store);
    for (; f->seen < n; f->seen++) {
        int idx;
        uint64_t len;
        ss_store_piece(f->store, f->seen, &idx, &len);
        if (ss_comm_size_publish(idx, len) < 0)
            return -1;
        f->piece[idx] = f->seen;
        f->n_held++;
        f->bytes_mine += len;
    }
    return 0;
}

typedef struct {
    ss_funnel_t *f;
    void (*between)(void *);
    void *ctx;
} chunk_ctx_t;

/* A chunk of one of this rank's pieces: rank 0 writes it, the others send it. */
static int put_chunk(void *ctx, uint64_t off, const char *buf, size_t len)
{
    chunk_ctx_t *c = ctx;
    (void)off;
    while (len > 0) {
        size_t n = len < CHUNK ? len : CHUNK;
        int r =
            ss_comm_rank() == 0 ? ss_output_write(c->f->out, buf, n) : ss_comm_piece_send(buf, n);
        if (r < 0)
            return -1;
        buf += n, len -= n;
        if (c->between)
            c->between(c->ctx);
        if (publish_new(c->f) < 0)
            return -1;
    }
    return 0;
}

/* This rank's piece of shard idx, written (rank 0) or sent, then released. 0 or -1. */
static int put_own(ss_funnel_t *f, int idx, void (*between)(void *), void *ctx)
{
    size_t k = f->piece[idx];
    if (k == SIZE_MAX) {
        ss_error("rank %d: asked for shard %d, which it does not hold (a funnel bug); rerun",
                 ss_comm_rank(), idx);
        return -1;
    }
    chunk_ctx_t c = {f, between, ctx};
    int idx_k;
    uint64_t len;
    ss_store_piece(f->store, k, &idx_k, &len);
    if (len > 0 && ss_store_each_chunk(f->store, k, put_chunk, &c) < 0)
        return -1;
    ss_store_release(f->store, k);
    f->piece[idx] = SIZE_MAX;
    f->n_held--;
    f->bytes_out += len;
    return 0;
}

/* Rank 0: another rank's shard idx, asked for and written as its chunks come. 0 or -1. */
static int take_other(ss_funnel_t *f, int idx, void (*between)(void *), void *ctx)
{
    int owner = f->owner[idx];
    if (ss_comm_ask(owner, idx) < 0)
        return -1;
    for (int64_t got = 0; got < f->size[idx];) {
        size_t n;
        if (ss_comm_piece_recv(owner, f->buf, CHUNK, &n) < 0) {
            if (!ss_comm_stop_raised())
                ss_error("rank 0: receiving shard %d from rank %d failed", idx, owner);
            return -1;
        }
        if (ss_output_write(f->out, f->buf, n) < 0)
            return -1;
        got += (int64_t)n;
        f->bytes_out += n;
        if (between)
            between(ctx);
        if (publish_new(f) < 0)
            return -1;
    }
    return 0;
}

/* Rank 0: learn the sizes published since, in shard order. 0 or -1. */
static int learn_sizes(ss_funnel_t *f)
{
    while (f->known < f->n_shards) {
        int c = f->n_shards - f->known < READ_N ? f->n_shards - f->known : READ_N, i;
        if (ss_comm_sizes_read(f->known, c, f->size + f->known, f->owner + f->known) < 0)
            return -1;
        for (i = 0; i < c && f->size[f->known] != SS_COMM_SIZE_UNKNOWN; i++)
            f->known++;
        if (i < c)
            break;
    }
    return 0;
}

/* Rank 0: write every shard whose size is known, in order. 0 or -1. */
static int write_known(ss_funnel_t *f, void (*between)(void *), void *ctx)
{
    if (learn_sizes(f) < 0)
        return -1;
    for (; f->next < f->known; f->next++) {
        int r = f->owner[f->next] == 0 ? put_own(f, f->next, between, ctx)
                                       : take_other(f, f->next, between, ctx);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* Another rank: send every piece rank 0 asked for. 0 or -1. */
static int serve_asks(ss_funnel_t *f, void (*between)(void *), void *ctx)
{
    int idx, r;
    while ((r = ss_comm_asked(&idx)) == 1)
        if (put_own(f, idx, between, ctx) < 0)
            return -1;
    return r;
}

int ss_funnel_step(ss_funnel_t *f, void (*between)(void *), void *ctx)
{
    if (f->failed)
        return -1;
    int root = ss_comm_rank() == 0;
    if (publish_new(f) < 0 ||
        (root ? write_known(f, between, ctx) : serve_asks(f, between, ctx)) < 0) {
        f->failed = 1;
        return -1;
    }
    return root ? f->next < f->n_shards : f->n_held > 0;
}

int ss_funnel_finish(ss_funnel_t *f, int failed, const char *tail, size_t tail_len)
{
    int rank = ss_comm_rank();
    int left = rank == 0 ? f->next < f->n_shards : f->n_held > 0;
    if (!failed && !f->failed && left)
        ss_error("rank %d: shard outputs were never written (a funnel bug); rerun", rank);
    uint64_t v[1] = {failed || f->failed || left};
    if (ss_comm_sum_u64(v, 1) < 0) {
        ss_error("rank %d: the MPI agreement at the end of the run failed", rank);
        v[0] = 1;
    }
    int rc = v[0] ? -1 : 0;
    if (rc == 0 && rank == 0 && tail_len) {
        if (ss_output_write(f->out, tail, tail_len) < 0)
            rc = -1;
        else
            f->bytes_out += tail_len;
    }
    return ss_comm_max_int(rc < 0) != 0 ? -1 : 0;
}

void ss_funnel_end(ss_funnel_t *f)
{
    (void)f;
    ss_comm_pieces_closed();
}

uint64_t ss_funnel_bytes(const ss_funnel_t *f)
{
    return f && ss_comm_rank() == 0 ? f->bytes_out : 0;
}

void ss_funnel_destroy(ss_funnel_t *f)
{
    if (!f)
        return;
    free(f->piece);
    free(f->size);
    free(f->owner);
    free(f->buf);
    free(f);
}
