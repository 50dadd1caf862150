/*
 * merge.c -- the streaming, collective, ordered merge of a multi-rank run.
 *
 * Rank 0 creates the temporary output at setup and every rank opens it with
 * MPI-IO. A shard's offset is the header length plus the sizes of all
 * earlier shards. As a rank's workers finish shards (into the store), its
 * main thread publishes each size in the shared window (comm.c) and reads
 * the sizes other ranks published, from the first shard whose size it does
 * not know yet ("known", a prefix of the shard numbers) onwards. As soon as
 * the prefix reaches one of its pieces, it writes that piece at its offset
 * and releases it from the store. Shards are handed out in order, so the
 * prefix usually trails the newest shard by about one shard per worker, and
 * the output is written while the compute goes on, not after it.
 *
 * No rank funnels another's bytes (standard output, which only rank 0 can
 * write, does: funnel.c). Rank 0 writes the header first and, once
 * every rank agreed it succeeded and the total is known, the tail. Rank 0
 * owns the temporary name and renames it only after that agreement.
 *
 * Invariants (main thread only, no lock): pending holds this rank's pieces
 * that are published but not yet written, sorted by shard; every pending
 * shard is >= known, except the first n_placed, whose offsets were fixed as
 * known passed them; they are written before the step returns.
 */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "merge.h"

/* Sizes read per MPI call: small while waiting (one size is usually what is
 * missing), doubled while whole chunks come back known (catching up). */
#define READ_MIN 64
#define READ_MAX 8192
/* Largest single write: between two, the main thread serves workers and publishes sizes. */
#define WRITE_CHUNK ((size_t)4 << 20)

typedef struct {
    size_t k; /* piece number in the store */
    int idx;  /* shard */
    uint64_t len;
    uint64_t off; /* file offset, once placed */
} pending_t;

struct ss_merge_s {
    ss_store_t *store;
    ss_comm_file_t *f;
    const char *shown; /* -o, for messages; borrowed from the options */
    int n_shards;
    uint64_t header_len;
    size_t seen; /* store pieces published so far */
    pending_t *p;
    size_t np, mp, n_placed;
    int known;          /* sizes of shards 0..known-1 are known here */
    uint64_t known_end; /* header_len + their sum: shard `known`'s offset */
    int64_t *sizes;     /* [READ_MAX] read buffer */
    int read_n;
    uint64_t bytes_mine; /* this rank's pieces, published */
    uint64_t bytes_kept; /* rank 0: the shards kept from an earlier run, in the file already */
    uint64_t bytes_out;  /* written by this rank */
    uint64_t file_len;   /* the whole file's, once ss_merge_finish agreed */
    int failed;
    char tmp[4096];       /* the temporary output's path, as rank 0 broadcast it */
    ss_merge_kept_f kept; /* shards kept from an earlier run, or NULL */
    const void *kept_ctx;
    ss_merge_written_f written; /* told of each piece this rank wrote, or NULL */
    void *written_ctx;
};

/* Rank 0's temporary is the resumable one: a signal keeps it (output_file.c). */
static int is_fixed_tmp(const char *tmp)
{
    size_t l = strlen(tmp), s = strlen(SS_OUTPUT_TMP_FIXED);
    return l > s && strcmp(tmp + l - s, SS_OUTPUT_TMP_FIXED) == 0;
}

ss_merge_t *ss_merge_open(ss_store_t *store, int n_shards, const char *header, size_t header_len,
                          ss_output_t *out, const char *path)
{
    int rank = ss_comm_rank(), bad = 0;
    char tmp[4096] = "";
    ss_merge_t *m = calloc(1, sizeof(*m));
    if (!m || !(m->sizes = malloc(READ_MAX * sizeof(*m->sizes)))) {
        ss_error("rank %d: out of memory for the merge", rank);
        bad = 1;
    }
    if (rank == 0 && out) {
        const char *t = ss_output_tmp_path(out);
        if (t)
            snprintf(tmp, sizeof(tmp), "%s", t);
        else
            ss_error("%s: not a regular file, so the ranks cannot write it at offsets (a "
                     "stream goes through rank 0: a bug that it did not); rerun with -o FILE",
                     path ? path : "-o");
    }
    if (ss_comm_bcast_str(tmp, sizeof(tmp)) < 0) {
        ss_error("rank %d: broadcasting the output's temporary name failed", rank);
        bad = 1;
    }
    /* an empty name: rank 0 could not create the file and said why */
    if (ss_comm_max_int(bad || !*tmp) != 0)
        goto fail;
    if (rank != 0 && ss_output_guard(tmp, is_fixed_tmp(tmp)) < 0) {
        ss_error("rank %d: %s: cannot arrange its removal on SIGTERM", rank, tmp);
        bad = 1;
    }
    ss_comm_file_t *f = ss_comm_file_open(tmp, path);
    if (ss_comm_max_int(bad || !f) != 0) {
        ss_comm_file_close(f);
        goto fail;
    }
    m->f = f;
    snprintf(m->tmp, sizeof(m->tmp), "%s", tmp);
    m->shown = path;
    m->store = store;
    m->n_shards = n_shards;
    m->header_len = m->known_end = header_len;
    m->read_n = READ_MIN;
    if (rank == 0 && header_len) {
        /* a failure here surfaces at the first step, which stops every rank */
        m->failed = ss_comm_file_write_at(f, 0, header, header_len) < 0;
        m->bytes_out = header_len;
    }
    return m;
fail:
    if (rank != 0)
        ss_output_unguard();
    ss_merge_destroy(m);
    return NULL;
}

/* Publish the pieces put since the last step; queue them, sorted by shard. */
static int publish_new(ss_merge_t *m)
{
    size_t n = ss_store_count(m->store);
    for (; m->seen < n; m->seen++) {
        int idx;
        uint64_t len;
        ss_store_piece(m->store, m->seen, &idx, &len);
        if (ss_comm_size_publish(idx, len) < 0)
            return -1;
        if (m->np == m->mp) {
            size_t mp = m->mp ? 2 * m->mp : 64;
            pending_t *p = realloc(m->p, mp * sizeof(*p));
            if (!p) {
                ss_error("rank %d: out of memory queueing shard %d for the merge", ss_comm_rank(),
                         idx);
                return -1;
            }
            m->p = p, m->mp = mp;
        }
        /* workers take shards in increasing order, so this rarely moves anything */
        size_t at = m->np;
        while (at > m->n_placed && m->p[at - 1].idx > idx) {
            m->p[at] = m->p[at - 1];
            at--;
        }
        m->p[at] = (pending_t){m->seen, idx, len, 0};
        m->np++;
        m->bytes_mine += len;
    }
    return 0;
}

/*
 * A kept shard (--resume) must start where this run's sizes put it, or the
 * recomputed shards before it came out another size than the earlier run's
 * and their bytes would overlap it.
 */
static int check_kept(const ss_merge_t *m)
{
    uint64_t off, size;
    if (!m->kept || m->kept(m->kept_ctx, m->known, &off, &size) < 0 || off == m->known_end)
        return 0;
    ss_error("rank %d: %s: shard %d of the earlier run starts at byte %llu, this run puts it at "
             "%llu (the output is not the same as the interrupted run's); rerun without --resume",
             ss_comm_rank(), m->shown, m->known, (unsigned long long)off,
             (unsigned long long)m->known_end);
    return -1;
}

/*
 * Extend the known prefix up to this rank's last pending shard, as far as
 * published sizes allow; fix the offsets of the pending pieces it passes.
 */
static int advance(ss_merge_t *m)
{
    while (m->np > m->n_placed) {
        int last = m->p[m->np - 1].idx;
        int c = last + 1 - m->known < m->read_n ? last + 1 - m->known : m->read_n;
        if (ss_comm_sizes_read(m->known, c, m->sizes, NULL) < 0)
            return -1;
        int i;
        for (i = 0; i < c && m->sizes[i] != SS_COMM_SIZE_UNKNOWN; i++) {
            pending_t *p = m->n_placed < m->np ? &m->p[m->n_placed] : NULL;
            if (p && p->idx == m->known) {
                if ((uint64_t)m->sizes[i] != p->len) {
                    ss_error("rank %d: shard %d: size %lld in the shared window, %llu here "
                             "(an MPI one-sided failure); rerun",
                             ss_comm_rank(), p->idx, (long long)m->sizes[i],
                             (unsigned long long)p->len);
                    return -1;
                }
                p->off = m->known_end;
                m->n_placed++;
            }
            if (check_kept(m) < 0)
                return -1;
            m->known_end += (uint64_t)m->sizes[i];
            m->known++;
        }
        if (i < c) { /* an earlier shard is still being processed somewhere */
            m->read_n = READ_MIN;
            break;
        }
        if (m->read_n < READ_MAX)
            m->read_n *= 2;
    }
    return 0;
}

typedef struct {
    ss_merge_t *m;
    uint64_t base;
    void (*between)(void *);
    void *ctx;
} write_ctx_t;

/*
 * Between two chunks: serve workers' requests, and publish what they put
 * meanwhile, so other ranks waiting for those sizes wait one chunk's write,
 * not the whole backlog's. publish_new only appends after the placed prefix
 * (new shards are >= known), so write_placed's indexes stay valid.
 */
static int write_chunk(void *ctx, uint64_t off, const char *buf, size_t len)
{
    write_ctx_t *w = ctx;
    while (len > 0) {
        size_t n = len < WRITE_CHUNK ? len : WRITE_CHUNK;
        if (ss_comm_file_write_at(w->m->f, w->base + off, buf, n) < 0)
            return -1;
        buf += n, off += n, len -= n;
        if (w->between)
            w->between(w->ctx);
        if (publish_new(w->m) < 0)
            return -1;
    }
    return 0;
}

/* Write the placed pieces (a prefix of pending) and release them. */
static int write_placed(ss_merge_t *m, void (*between)(void *), void *ctx)
{
    size_t w;
    for (w = 0; w < m->n_placed; w++) {
        pending_t p = m->p[w]; /* a copy: publishing between chunks may move the array */
        write_ctx_t wc = {m, p.off, between, ctx};
        if (ss_store_each_chunk(m->store, p.k, write_chunk, &wc) < 0)
            return -1;
        ss_store_release(m->store, p.k);
        m->bytes_out += p.len;
        if (m->written && m->written(m->written_ctx, p.idx, p.off) < 0)
            return -1;
    }
    memmove(m->p, m->p + w, (m->np - w) * sizeof(*m->p));
    m->np -= w;
    m->n_placed = 0;
    return 0;
}

int ss_merge_step(ss_merge_t *m, void (*between)(void *), void *ctx)
{
    if (m->failed)
        return -1;
    if (publish_new(m) < 0 || advance(m) < 0 || write_placed(m, between, ctx) < 0) {
        m->failed = 1;
        return -1;
    }
    return m->np > 0;
}

int ss_merge_finish(ss_merge_t *m, int failed, const char *tail, size_t tail_len)
{
    int rank = ss_comm_rank();
    if (!failed && !m->failed && m->np > 0)
        ss_error("rank %d: %zu shard outputs were never written (a merge bug); rerun", rank, m->np);
    /* one sum tells every rank whether any failed, and the total of all pieces */
    uint64_t v[2] = {failed || m->failed || m->np > 0, m->bytes_mine + m->bytes_kept};
    if (ss_comm_sum_u64(v, 2) < 0) {
        ss_error("rank %d: the MPI agreement at the end of the run failed", rank);
        v[0] = 1;
    }
    int rc = v[0] ? -1 : 0;
    m->file_len = m->header_len + v[1] + tail_len;
    if (rc == 0 && rank == 0 && tail_len) {
        if (ss_comm_file_write_at(m->f, m->header_len + v[1], tail, tail_len) < 0)
            rc = -1;
        else
            m->bytes_out += tail_len;
    }
    /* every rank arrives here together, right after the sum: close waits inside MPI */
    if (ss_comm_file_close(m->f) < 0 && rc == 0) {
        ss_error("%s: closing the output failed; check free space on its file system", m->shown);
        rc = -1;
    }
    m->f = NULL;
    return ss_comm_max_int(rc < 0) != 0 ? -1 : 0;
}

void ss_merge_set_resume(ss_merge_t *m, ss_merge_kept_f kept, const void *kept_ctx,
                         ss_merge_written_f written, void *ctx)
{
    uint64_t off, size;
    m->kept = kept;
    m->kept_ctx = kept_ctx;
    for (int i = 0; ss_comm_rank() == 0 && i < m->n_shards; i++)
        if (kept(kept_ctx, i, &off, &size) == 0)
            m->bytes_kept += size;
    m->written = written;
    m->written_ctx = ctx;
}

const char *ss_merge_tmp_path(const ss_merge_t *m)
{
    return m->tmp;
}

uint64_t ss_merge_file_len(const ss_merge_t *m)
{
    return m->file_len;
}

uint64_t ss_merge_bytes(const ss_merge_t *m)
{
    return m ? m->bytes_out : 0;
}

void ss_merge_destroy(ss_merge_t *m)
{
    if (!m)
        return;
    free(m->sizes);
    free(m->p);
    free(m);
}
