/*
 * store.c -- a rank's finished shard outputs, held until the streaming merge
 * knows where they go (the sizes of all earlier shards, on every rank). Up to
 * a memory cap they stay in memory; past it they are appended to a spill file
 * in --tmp-dir. The spill file is unlinked as soon as it is created, so it
 * disappears in every outcome, crash included. A written piece is released:
 * its memory returns to the cap; spilled bytes stay in the file (appends
 * only, so no piece's bytes ever move), which the file system frees at exit.
 *
 * Threads: ss_store_put is called by workers while the main thread reads,
 * writes out and releases pieces; `lock` guards the piece array (put may
 * move it) and mem_used. A piece's bytes, once put, change only when the
 * main thread releases it, so the main thread reads them without the lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/ss_base.h"
#include "store.h"

typedef struct {
    int idx;
    uint64_t len;
    char *mem;         /* in memory, or NULL when spilled */
    uint64_t file_off; /* where in the spill file */
} piece_t;

struct ss_store_s {
    pthread_mutex_t lock;
    piece_t *a;
    size_t n, m;
    size_t mem_used, mem_cap;
    uint64_t pending; /* bytes put and not yet released, in memory or spilled */
    char dir[4096];
    int fd; /* spill file, -1 until needed */
    uint64_t file_len;
};

ss_store_t *ss_store_init(const char *tmp_dir, size_t mem_cap)
{
    ss_store_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->fd = -1;
    s->mem_cap = mem_cap;
    snprintf(s->dir, sizeof(s->dir), "%s", tmp_dir && *tmp_dir ? tmp_dir : ".");
    return s;
}

/* Create the spill file and unlink it at once. Called with the lock held. */
static int open_spill(ss_store_t *s)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/seqshard-spill.%d.XXXXXX", s->dir, (int)getpid());
    s->fd = mkstemp(path);
    if (s->fd < 0) {
        ss_error("%s: cannot create a spill file (%s); point --tmp-dir at a writable directory "
                 "with free space",
                 s->dir, strerror(errno));
        return -1;
    }
    unlink(path);
    return 0;
}

/* All of p at off, or -1 with errno set (ENOSPC when a write moved nothing). */
static int write_all(int fd, const char *p, size_t len, uint64_t off)
{
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = ENOSPC;
        if (w <= 0)
            return -1;
        p += w, len -= (size_t)w, off += (uint64_t)w;
    }
    return 0;
}

/* Room for one more piece, called with the lock held. 0, or -1 after ss_error(). */
static int grow_locked(ss_store_t *s, int idx)
{
    if (s->n < s->m)
        return 0;
    size_t m = s->m ? 2 * s->m : 64;
    piece_t *a = realloc(s->a, m * sizeof(*a));
    if (!a) {
        ss_error("out of memory storing shard %d", idx);
        return -1;
    }
    s->a = a, s->m = m;
    return 0;
}

static int spill_write_error(const ss_store_t *s, size_t len, int idx)
{
    ss_error("%s: writing %zu bytes of shard %d to a spill file failed (%s); free space "
             "there or point --tmp-dir at a larger file system",
             s->dir, len, idx, strerror(errno));
    return -1;
}

int ss_store_put(ss_store_t *s, int idx, const char *buf, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    if (grow_locked(s, idx) < 0) {
        pthread_mutex_unlock(&s->lock);
        return -1;
    }
    piece_t *p = &s->a[s->n];
    p->idx = idx;
    p->len = len;
    p->mem = NULL;
    if (s->mem_used + len <= s->mem_cap && (p->mem = malloc(len ? len : 1))) {
        memcpy(p->mem, buf, len);
        s->mem_used += len;
    } else if ((s->fd >= 0 || open_spill(s) == 0)) {
        p->file_off = s->file_len;
        /* written under the lock: spills are rare and sequential appends are fast */
        if (write_all(s->fd, buf, len, p->file_off) < 0)
            rc = spill_write_error(s, len, idx);
        s->file_len += len;
    } else {
        rc = -1;
    }
    if (rc == 0) {
        s->n++;
        s->pending += len;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

typedef struct {
    ss_store_t *s;
    int idx;
    uint64_t off;
} copy_t;

static int copy_to_spill(void *ctx, const char *buf, size_t len)
{
    copy_t *c = ctx;
    if (write_all(c->s->fd, buf, len, c->off) < 0)
        return spill_write_error(c->s, len, c->idx);
    c->off += len;
    return 0;
}

int ss_store_put_spilled(ss_store_t *s, int idx, const ss_spill_t *sp, const char *buf, size_t len)
{
    uint64_t total = sp->len + len;
    pthread_mutex_lock(&s->lock);
    int ok = s->fd >= 0 || open_spill(s) == 0;
    copy_t c = {s, idx, s->file_len};
    if (ok)
        s->file_len += total; /* the range is this piece's: other puts append after it */
    pthread_mutex_unlock(&s->lock);
    /* a large copy, so outside the lock; the piece is listed only once it is whole */
    if (!ok || ss_spill_copy(sp, idx, copy_to_spill, &c) < 0 || copy_to_spill(&c, buf, len) < 0)
        return -1;
    pthread_mutex_lock(&s->lock);
    int rc = grow_locked(s, idx);
    if (rc == 0) {
        s->a[s->n++] = (piece_t){.idx = idx, .len = total, .mem = NULL, .file_off = c.off - total};
        s->pending += total;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

size_t ss_store_count(ss_store_t *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void ss_store_piece(ss_store_t *s, size_t k, int *idx, uint64_t *len)
{
    pthread_mutex_lock(&s->lock);
    *idx = s->a[k].idx;
    *len = s->a[k].len;
    pthread_mutex_unlock(&s->lock);
}

uint64_t ss_store_spilled(ss_store_t *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t n = s->file_len;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void ss_store_release(ss_store_t *s, size_t k)
{
    pthread_mutex_lock(&s->lock);
    piece_t *p = &s->a[k];
    if (p->mem) {
        free(p->mem);
        p->mem = NULL;
        s->mem_used -= p->len;
    }
    s->pending -= p->len;
    pthread_mutex_unlock(&s->lock);
}

int ss_store_over_cap(ss_store_t *s)
{
    pthread_mutex_lock(&s->lock);
    int over = s->pending > s->mem_cap;
    pthread_mutex_unlock(&s->lock);
    return over;
}

int ss_store_each_chunk(ss_store_t *s, size_t k, ss_store_chunk_f f, void *ctx)
{
    pthread_mutex_lock(&s->lock);
    piece_t p = s->a[k]; /* a copy: put may move the array while we write */
    pthread_mutex_unlock(&s->lock);
    if (p.mem)
        return p.len ? f(ctx, 0, p.mem, p.len) : 0;
    size_t cap = 8u << 20;
    char *buf = malloc(cap);
    if (!buf) {
        ss_error("out of memory reading back a spilled shard");
        return -1;
    }
    uint64_t done = 0;
    int rc = 0;
    while (rc == 0 && done < p.len) {
        size_t want = p.len - done < cap ? (size_t)(p.len - done) : cap;
        ssize_t r = pread(s->fd, buf, want, (off_t)(p.file_off + done));
        if (r <= 0) {
            ss_error("%s: reading back a spill file failed (%s)", s->dir, strerror(errno));
            rc = -1;
            break;
        }
        rc = f(ctx, done, buf, (size_t)r);
        done += (uint64_t)r;
    }
    free(buf);
    return rc;
}

void ss_store_destroy(ss_store_t *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->n; k++)
        free(s->a[k].mem);
    free(s->a);
    if (s->fd >= 0)
        close(s->fd);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
