/*
 * side_out.c -- a run's side streams: files besides the main output, each
 * in shard order like it, BGZF-compressed by the worker that made the shard
 * and CSI-indexed as tabix -p bed --csi indexes them; and the small files a
 * kernel's finish hook writes from the reductions (reduce.c). See side.h
 * for the flow and the threads.
 *
 * Invariants: piece[k * n_shards + i] is the store's piece number of stream
 * k's bytes of shard i, or -1 until the worker that ran shard i put it (under
 * lock). file[k] exists on rank 0 only, from setup until commit or destroy,
 * and holds head[k] at its start. A file is renamed only by ss_side_commit,
 * after every file of the run (main output included) was complete.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <htslib/tbx.h>

#include "../cli/cli.h"
#include "../comm/comm.h"
#include "../run/run.h"
#include "compress.h"
#include "output_check.h"
#include "output_file.h"
#include "side.h"
#include "store.h"

/* Several ranks: pieces kept in memory before spilling, per worker and for the rank. */
#define STORE_PER_WORKER ((size_t)32 << 20)
#define STORE_BASE       ((size_t)64 << 20)

typedef struct {
    kstring_t buf[SS_OUT_STREAMS]; /* the shard's text of each stream */
    kstring_t z;                   /* its BGZF blocks */
} wbuf_t;

typedef struct {
    char *path;
    kstring_t text;
    ss_output_t *o;
    int committed;
} small_t;

struct ss_side_s {
    int n_streams, n_shards, n_workers;
    ss_stream_spec_t spec[SS_OUT_STREAMS]; /* path and header are our copies */
    kstring_t head[SS_OUT_STREAMS];        /* each file's first bytes, as written */
    ss_output_t *file[SS_OUT_STREAMS];     /* rank 0: the temporary files */
    int committed[SS_OUT_STREAMS];
    int guard[SS_OUT_STREAMS]; /* other ranks: signal slots of the names */
    char *tmp[SS_OUT_STREAMS]; /* several ranks: rank 0's temporary names */
    pthread_mutex_t lock;      /* piece[] and store puts */
    int64_t *piece;
    ss_lineidx_t **lines;              /* one rank: each piece's lines, for the index */
    ss_bedidx_t *bidx[SS_OUT_STREAMS]; /* one rank: indexes built as pieces are written */
    int built[SS_OUT_STREAMS];         /* the index is beside the temporary file */
    ss_store_t *store;
    wbuf_t **w; /* [n_workers] */
    ss_reduce_t *red;
    small_t *small;
    int n_small, m_small;
};

struct ss_finish_s {
    ss_side_t *s;
};

static int copy_specs(ss_side_t *s, const ss_out_spec_t *spec)
{
    for (int k = 0; k < s->n_streams; k++) {
        const ss_stream_spec_t *in = &spec->streams[k];
        s->spec[k] = *in;
        s->spec[k].path = strdup(in->path);
        s->spec[k].header = in->header ? strdup(in->header) : NULL;
        s->guard[k] = -1;
        if (!s->spec[k].path || (in->header && !s->spec[k].header))
            return -1;
        const char *h = in->header ? in->header : "";
        if (in->format == SS_STREAM_BED_GZ && *h) {
            if (ss_bgzf_compress_ks(h, strlen(h), &s->head[k], in->level) < 0)
                return -1;
        } else if (*h && kputs(h, &s->head[k]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Stream k's name, with its index name, fits NAME_MAX: checked now, not after the work. */
static int name_fits(const ss_side_t *s, int k)
{
    const char *path = s->spec[k].path, *slash = strrchr(path, '/');
    size_t len = strlen(slash ? slash + 1 : path);
    size_t ext = s->spec[k].format == SS_STREAM_BED_GZ ? 4 : 0; /* .csi */
    if (len + ext <= NAME_MAX)
        return 1;
    ss_error("%s: file name too long (%zu bytes, at most %d%s); give a shorter prefix", path, len,
             NAME_MAX - (int)ext, ext ? " for the index beside it" : "");
    return 0;
}

/* Rank 0: create every stream's temporary file with its header. 0, or -1 after ss_error(). */
static int open_files(ss_side_t *s)
{
    for (int k = 0; k < s->n_streams; k++)
        if (!name_fits(s, k))
            return -1;
    for (int k = 0; k < s->n_streams; k++) {
        if (!(s->file[k] = ss_output_open(s->spec[k].path)))
            return -1;
        if (!ss_output_tmp_path(s->file[k])) {
            ss_error("%s: side outputs must be regular files, not standard output or a device",
                     s->spec[k].path);
            return -1;
        }
        if (s->head[k].l && ss_output_write(s->file[k], s->head[k].s, s->head[k].l) < 0)
            return -1;
    }
    return 0;
}

static int init_parts(ss_side_t *s, const ss_out_spec_t *spec, const ss_common_opts_t *co)
{
    size_t n = (size_t)s->n_streams * (size_t)s->n_shards;
    s->piece = malloc((n ? n : 1) * sizeof(*s->piece));
    s->w = calloc((size_t)s->n_workers, sizeof(*s->w));
    if (!s->piece || !s->w)
        return -1;
    for (size_t i = 0; i < n; i++)
        s->piece[i] = -1;
    if (!ss_comm_parallel()) {
        /* one rank writes in order: its indexes are built on the way (side_index.c) */
        if (!(s->lines = calloc(n ? n : 1, sizeof(*s->lines))))
            return -1;
        for (int k = 0; k < s->n_streams; k++)
            if (s->spec[k].format == SS_STREAM_BED_GZ &&
                !(s->bidx[k] = ss_bedidx_init(s->head[k].l)))
                return -1;
    }
    if (s->n_streams) {
        char dir[4096];
        if (co->tmp_dir)
            snprintf(dir, sizeof(dir), "%s", co->tmp_dir);
        else
            ss_out_dir_of(s->spec[0].path, dir, sizeof(dir)); /* spill beside the stream */
        /* one rank writes each shard as the ordered writer does, so few pieces wait */
        size_t cap =
            ss_comm_parallel() ? STORE_BASE + STORE_PER_WORKER * (size_t)s->n_workers : SIZE_MAX;
        const char *env = getenv("SEQSHARD_STORE_MEM"); /* as the main store: tests spill */
        hts_pos_t v;
        if (env && *env && ss_parse_size(env, &v) == 0 && ss_comm_parallel())
            cap = (size_t)v;
        if (!(s->store = ss_store_init(dir, cap)))
            return -1;
    }
    if ((spec->n_values || spec->n_hists) &&
        !(s->red = ss_reduce_init(spec->n_values, spec->value_ops, spec->n_hists, s->n_workers)))
        return -1;
    return 0;
}

int ss_side_init(ss_side_t **side, const ss_out_spec_t *spec, const ss_common_opts_t *co,
                 int n_shards, int n_workers)
{
    *side = NULL;
    if (!spec->n_streams && !spec->n_values && !spec->n_hists)
        return 0;
    if (spec->n_streams < 0 || spec->n_streams > SS_OUT_STREAMS) {
        ss_error("internal: a kernel asked for %d side streams (at most %d)", spec->n_streams,
                 SS_OUT_STREAMS);
        return -1;
    }
    ss_side_t *s = calloc(1, sizeof(*s));
    if (!s)
        goto oom;
    *side = s;
    pthread_mutex_init(&s->lock, NULL);
    s->n_streams = spec->n_streams;
    s->n_shards = n_shards;
    s->n_workers = n_workers > 0 ? n_workers : 1;
    if (copy_specs(s, spec) < 0 || init_parts(s, spec, co) < 0)
        goto oom;
    return ss_comm_rank() == 0 ? open_files(s) : 0;
oom:
    ss_error("out of memory preparing the side outputs");
    return -1;
}

int ss_side_attach(ss_side_t *s, ss_out_t *out, int worker)
{
    if (!s)
        return 0;
    if (!(s->w[worker] = ss_alloc_private(sizeof(wbuf_t)))) {
        ss_error("out of memory for worker %d's side outputs", worker);
        return -1;
    }
    ss_out_set_side(out, s, worker);
    return s->red ? ss_reduce_attach(s->red, worker) : 0;
}

kstring_t *ss_out_stream(ss_out_t *o, int k)
{
    int w;
    ss_side_t *s = ss_out_get_side(o, &w);
    return s && k >= 0 && k < s->n_streams ? &s->w[w]->buf[k] : NULL;
}

int64_t *ss_out_values(ss_out_t *o)
{
    int w;
    ss_side_t *s = ss_out_get_side(o, &w);
    return s && s->red ? ss_reduce_values(s->red, w) : NULL;
}

int ss_out_hist_add(ss_out_t *o, int h, const int64_t *bins, size_t n)
{
    int w;
    ss_side_t *s = ss_out_get_side(o, &w);
    return s && s->red ? ss_reduce_hist_add(s->red, h, bins, n) : -1;
}

int ss_side_put(ss_side_t *s, int worker, int idx)
{
    if (!s)
        return 0;
    wbuf_t *w = s->w[worker];
    for (int k = 0; k < s->n_streams; k++) {
        kstring_t *b = &w->buf[k];
        const char *data = b->s ? b->s : "";
        size_t len = b->l;
        ss_lineidx_t *lines = NULL;
        if (s->bidx[k] && len && ss_lineidx_scan(b->s, b->l, &lines) < 0) {
            ss_lineidx_destroy(lines);
            ss_error("out of memory indexing shard %d of %s", idx, s->spec[k].path);
            return -1;
        }
        if (s->spec[k].format == SS_STREAM_BED_GZ && len) {
            if (ss_bgzf_compress_ks(b->s, b->l, &w->z, s->spec[k].level) < 0) {
                ss_error("shard %d: BGZF compression of %s failed (out of memory?)", idx,
                         s->spec[k].path);
                return -1;
            }
            data = w->z.s, len = w->z.l;
        }
        pthread_mutex_lock(&s->lock);
        int rc = ss_store_put(s->store, k * s->n_shards + idx, data, len);
        size_t at = (size_t)k * (size_t)s->n_shards + (size_t)idx;
        if (rc == 0)
            s->piece[at] = (int64_t)ss_store_count(s->store) - 1;
        if (rc == 0 && s->lines)
            s->lines[at] = lines, lines = NULL;
        pthread_mutex_unlock(&s->lock);
        ss_lineidx_destroy(lines);
        b->l = 0;
        if (rc < 0)
            return -1;
    }
    return 0;
}

typedef struct {
    ss_output_t *o;
    ss_bedidx_t *x;        /* the stream's index, or NULL */
    const ss_lineidx_t *t; /* the piece's lines */
    uint64_t len;          /* the piece's length */
} put_ctx_t;

/* A one-rank piece is in memory: one chunk, indexed where it lands. */
static int write_chunk(void *ctx, uint64_t off, const char *buf, size_t len)
{
    put_ctx_t *c = ctx;
    uint64_t at = ss_output_bytes(c->o);
    if (c->x && (off != 0 || len != c->len || ss_bedidx_add(c->x, c->t, at, buf, len) < 0)) {
        ss_error("%s: indexing failed (out of memory, or lines out of order)",
                 ss_output_tmp_path(c->o));
        return -1;
    }
    return ss_output_write(c->o, buf, len);
}

int ss_side_write_shard(ss_side_t *s, int idx)
{
    if (!s)
        return 0;
    for (int k = 0; k < s->n_streams; k++) {
        pthread_mutex_lock(&s->lock);
        int64_t p = s->piece[(size_t)k * (size_t)s->n_shards + (size_t)idx];
        pthread_mutex_unlock(&s->lock);
        if (p < 0) {
            ss_error("internal: shard %d's %s piece is missing", idx, s->spec[k].path);
            return -1;
        }
        size_t at = (size_t)k * (size_t)s->n_shards + (size_t)idx;
        int i;
        uint64_t len;
        ss_store_piece(s->store, (size_t)p, &i, &len);
        put_ctx_t c = {s->file[k], s->bidx[k], s->lines[at], len};
        if (len && ss_store_each_chunk(s->store, (size_t)p, write_chunk, &c) < 0)
            return -1;
        ss_store_release(s->store, (size_t)p);
        ss_lineidx_destroy(s->lines[at]);
        s->lines[at] = NULL;
    }
    return 0;
}

/* ---- several ranks: every piece at its offset ---- */

typedef struct {
    ss_comm_file_t *f;
    uint64_t base;
} at_ctx_t;

static int write_at_chunk(void *ctx, uint64_t off, const char *buf, size_t len)
{
    at_ctx_t *a = ctx;
    return ss_comm_file_write_at(a->f, a->base + off, buf, len);
}

/* Stream k: this rank's pieces at their offsets, rank 0 also the end block. 0 or -1. */
static int write_stream_pieces(ss_side_t *s, int k, ss_comm_file_t *f, const uint64_t *size)
{
    size_t n = (size_t)s->n_shards;
    uint64_t off = s->head[k].l;
    for (size_t i = 0; i < n; off += size[k * n + i], i++) {
        int64_t p = s->piece[k * n + i];
        if (p < 0)
            continue; /* another rank's */
        at_ctx_t a = {f, off};
        if (ss_store_each_chunk(s->store, (size_t)p, write_at_chunk, &a) < 0)
            return -1;
        ss_store_release(s->store, (size_t)p);
    }
    if (ss_comm_rank() == 0 && s->spec[k].format == SS_STREAM_BED_GZ)
        return ss_comm_file_write_at(f, off, ss_bgzf_eof, sizeof(ss_bgzf_eof));
    return 0;
}

int ss_side_share(ss_side_t *s)
{
    int bad = 0;
    if (!s || !ss_comm_parallel())
        return ss_comm_max_int(0);
    for (int k = 0; k < s->n_streams; k++) {
        char tmp[4096] = "";
        if (ss_comm_rank() == 0)
            snprintf(tmp, sizeof(tmp), "%s", ss_output_tmp_path(s->file[k]));
        if (ss_comm_bcast_str(tmp, sizeof(tmp)) < 0 || !*tmp || !(s->tmp[k] = strdup(tmp))) {
            bad = 1;
            continue; /* every rank makes the same calls */
        }
        /* if rank 0 dies, mpirun's SIGTERM to the others removes its files here */
        if (ss_comm_rank() != 0 && (s->guard[k] = ss_signals_remove_on_exit(tmp)) < 0)
            bad = 1;
    }
    if (bad)
        ss_error("rank %d: cannot share or guard the side outputs' temporary names",
                 ss_comm_rank());
    return ss_comm_max_int(bad) ? -1 : 0;
}

static int par_write(ss_side_t *s)
{
    size_t n = (size_t)s->n_streams * (size_t)s->n_shards;
    uint64_t *size = calloc(n ? n : 1, sizeof(*size));
    int bad = !size;
    for (size_t i = 0; !bad && i < ss_store_count(s->store); i++) {
        int idx;
        uint64_t len;
        ss_store_piece(s->store, i, &idx, &len);
        size[idx] = len; /* the store's idx is k * n_shards + shard */
    }
    /* one sum: every rank then knows every offset */
    if (ss_comm_max_int(bad) != 0 || ss_comm_sum_u64(size, n) < 0) {
        free(size);
        return -1;
    }
    int rc = 0, at = 0;
    for (int k = 0; rc == 0 && k < s->n_streams; k++) {
        at = k;
        ss_comm_file_t *f = ss_comm_file_open(s->tmp[k], s->spec[k].path);
        if (ss_comm_max_int(!f) != 0) {
            ss_comm_file_close(f);
            rc = -1;
            break;
        }
        int failed = write_stream_pieces(s, k, f, size) < 0;
        /* every rank is here at once: close waits inside MPI */
        failed |= ss_comm_file_close(f) < 0;
        rc = ss_comm_max_int(failed) ? -1 : 0;
    }
    free(size);
    if (rc < 0 && !ss_error_raised())
        ss_error("%s: writing it failed on another rank (that rank's message says why); free "
                 "space on its file system and rerun",
                 s->spec[at].path);
    return rc;
}

/* One rank: stream k's index, built as it was written, into a temporary of its own that
 * commit renames with the file. 0, or -1 after ss_error(). */
static int save_index(ss_side_t *s, int k, uint64_t data_end)
{
    const char *idx = ss_output_index_tmp(s->file[k], ".csi");
    if (!idx)
        return -1;
    if (ss_bedidx_save(s->bidx[k], data_end, ss_output_tmp_path(s->file[k]), idx) == 0)
        return 0;
    ss_error("%s: writing its CSI index failed; free space on its file system and rerun",
             s->spec[k].path);
    return -1;
}

int ss_side_finish(ss_side_t *s, int rc)
{
    if (!s || rc != 0)
        return rc;
    if (s->n_streams && ss_comm_parallel()) {
        rc = par_write(s);
    } else {
        for (int k = 0; rc == 0 && k < s->n_streams; k++) {
            if (s->spec[k].format != SS_STREAM_BED_GZ)
                continue;
            uint64_t data_end = ss_output_bytes(s->file[k]);
            rc = ss_output_write(s->file[k], ss_bgzf_eof, sizeof(ss_bgzf_eof));
            rc = rc == 0 ? save_index(s, k, data_end) : rc;
            s->built[k] = rc == 0;
        }
        rc = ss_comm_max_int(rc < 0) ? -1 : 0;
    }
    if (rc == 0 && s->red)
        rc = ss_reduce_finish(s->red);
    return rc;
}

/* ---- rank 0: index, finish, rename ---- */

/* tabix -p bed --csi on the finished temporary file; commit renames the index with it. */
static int index_bed(ss_side_t *s, int k)
{
    const char *tmp = ss_output_tmp_path(s->file[k]);
    const char *idx = ss_output_index_tmp(s->file[k], ".csi");
    if (!idx)
        return -1;
    errno = 0;
    if (tbx_index_build2(tmp, idx, 14, &tbx_conf_bed) < 0) {
        ss_error("%s: building its CSI index failed (%s); nothing was written: free space on "
                 "its file system and rerun",
                 s->spec[k].path, errno ? strerror(errno) : "unknown cause");
        return -1;
    }
    return 0;
}

const int64_t *ss_finish_values(const ss_finish_t *f)
{
    return f->s->red ? ss_reduce_result(f->s->red) : NULL;
}

const int64_t *ss_finish_hist(const ss_finish_t *f, int h, size_t *len)
{
    *len = 0;
    return f->s->red ? ss_reduce_result_hist(f->s->red, h, len) : NULL;
}

kstring_t *ss_finish_file(ss_finish_t *f, const char *path)
{
    ss_side_t *s = f->s;
    if (s->n_small == s->m_small) {
        int m = s->m_small ? 2 * s->m_small : 8;
        small_t *a = realloc(s->small, (size_t)m * sizeof(*a));
        if (!a)
            goto oom;
        s->small = a, s->m_small = m;
    }
    small_t *sm = &s->small[s->n_small];
    memset(sm, 0, sizeof(*sm));
    if (!(sm->path = strdup(path)))
        goto oom;
    s->n_small++;
    return &sm->text;
oom:
    ss_error("out of memory preparing %s", path);
    return NULL;
}

int ss_side_seal(ss_side_t *s, const ss_kernel_t *k, const void *kopts, const void *run)
{
    if (!s)
        return 0;
    for (int i = 0; i < s->n_streams; i++)
        if (s->spec[i].format == SS_STREAM_BED_GZ && !s->built[i] && index_bed(s, i) < 0)
            return -1;
    ss_finish_t fin = {s};
    if (k->finish && k->finish(kopts, run, &fin) < 0) {
        if (!ss_error_raised())
            ss_error("%s: writing the final totals failed", k->name);
        return -1;
    }
    for (int i = 0; i < s->n_small; i++) {
        small_t *sm = &s->small[i];
        if (!(sm->o = ss_output_open(sm->path)) ||
            (sm->text.l && ss_output_write(sm->o, sm->text.s, sm->text.l) < 0))
            return -1;
    }
    return 0;
}

/* A committed file (and its index) removed again: a later rename failed. */
static void unpublish(const char *path)
{
    char idx[4200];
    unlink(path);
    snprintf(idx, sizeof(idx), "%s.csi", path);
    unlink(idx);
}

int ss_side_commit(ss_side_t *s)
{
    if (!s)
        return 0;
    int rc = 0;
    for (int k = 0; rc == 0 && k < s->n_streams; k++) {
        ss_output_t *o = s->file[k];
        s->file[k] = NULL;
        rc = ss_output_commit(o);
        s->committed[k] = rc == 0;
    }
    for (int i = 0; rc == 0 && i < s->n_small; i++) {
        ss_output_t *o = s->small[i].o;
        s->small[i].o = NULL;
        rc = ss_output_commit(o);
        s->small[i].committed = rc == 0;
    }
    if (rc == 0)
        return 0;
    /* all or none: what was renamed already goes too */
    for (int k = 0; k < s->n_streams; k++)
        if (s->committed[k])
            unpublish(s->spec[k].path);
    for (int i = 0; i < s->n_small; i++)
        if (s->small[i].committed)
            unpublish(s->small[i].path);
    return -1;
}

void ss_side_destroy(ss_side_t *s)
{
    if (!s)
        return;
    for (int k = 0; k < s->n_streams; k++) {
        ss_output_abort(s->file[k]);
        ss_signals_forget(s->guard[k]);
        free(s->tmp[k]);
        free((char *)s->spec[k].path);
        free((char *)s->spec[k].header);
        free(s->head[k].s);
        ss_bedidx_destroy(s->bidx[k]);
    }
    for (size_t i = 0; s->lines && i < (size_t)s->n_streams * (size_t)s->n_shards; i++)
        ss_lineidx_destroy(s->lines[i]);
    free(s->lines);
    for (int i = 0; i < s->n_small; i++) {
        ss_output_abort(s->small[i].o);
        free(s->small[i].path);
        free(s->small[i].text.s);
    }
    for (int i = 0; s->w && i < s->n_workers; i++) {
        if (!s->w[i])
            continue;
        for (int k = 0; k < SS_OUT_STREAMS; k++)
            free(s->w[i]->buf[k].s);
        free(s->w[i]->z.s);
        free(s->w[i]);
    }
    free(s->w);
    free(s->small);
    free(s->piece);
    ss_store_destroy(s->store);
    ss_reduce_destroy(s->red);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
