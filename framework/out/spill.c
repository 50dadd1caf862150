/*
 * spill.c -- a shard's output past the output memory budget, in a temporary
 * file of its own (spill.h). Written by the worker making the shard, read
 * back once by the main thread that writes the shard out, then closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/ss_base.h"
#include "spill.h"

/* Read back in pieces of this size: the copy's only buffer. */
#define COPY_CHUNK ((size_t)1 << 20)

static int spill_open(ss_spill_t *sp, const char *dir, int shard)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/.seqshard-shard.XXXXXX", dir && *dir ? dir : ".");
    int fd = mkstemp(path);
    if (fd < 0) {
        ss_error("%s: cannot create a temporary file for shard %d's output (%s); point "
                 "--tmp-dir at a writable directory",
                 dir && *dir ? dir : ".", shard, strerror(errno));
        return -1;
    }
    unlink(path);
    sp->fd = fd;
    sp->len = 0;
    return 0;
}

int ss_spill_append(ss_spill_t *sp, const char *dir, int shard, const char *buf, size_t len)
{
    if (sp->fd < 0 && spill_open(sp, dir, shard) < 0)
        return -1;
    while (len > 0) {
        ssize_t w = pwrite(sp->fd, buf, len, (off_t)sp->len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ss_error("%s: writing shard %d's output to a temporary file failed (%s); free "
                     "space there or point --tmp-dir at a larger file system",
                     dir && *dir ? dir : ".", shard, w == 0 ? strerror(ENOSPC) : strerror(errno));
            return -1;
        }
        buf += w, len -= (size_t)w, sp->len += (uint64_t)w;
    }
    return 0;
}

int ss_spill_copy(const ss_spill_t *sp, int shard, ss_spill_sink_f sink, void *ctx)
{
    if (sp->fd < 0 || sp->len == 0)
        return 0;
    char *chunk = malloc(COPY_CHUNK);
    if (!chunk) {
        ss_error("out of memory writing shard %d", shard);
        return -1;
    }
    int rc = 0;
    for (uint64_t off = 0; rc == 0 && off < sp->len;) {
        size_t want = sp->len - off < COPY_CHUNK ? (size_t)(sp->len - off) : COPY_CHUNK;
        ssize_t got = pread(sp->fd, chunk, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            ss_error("reading shard %d's output back from its temporary file failed (%s)", shard,
                     got == 0 ? "the file is shorter than written" : strerror(errno));
            rc = -1;
            break;
        }
        rc = sink(ctx, chunk, (size_t)got);
        off += (uint64_t)got;
    }
    free(chunk);
    return rc;
}

void ss_spill_close(ss_spill_t *sp)
{
    if (sp->fd >= 0)
        close(sp->fd);
    *sp = SS_SPILL_NONE;
}
