/*
 * merge.c -- the collective, ordered merge of a multi-rank run.
 *
 * Every rank holds the outputs of the shards it processed (ss_store_t). The
 * ranks sum a per-shard size vector (each fills its own entries), so each
 * knows every shard's final offset: header length + sizes of all earlier
 * shards. Each rank then writes its own pieces at their offsets with MPI-IO;
 * rank 0 writes the header first and the BGZF EOF block last. No rank
 * funnels another's bytes. Rank 0 owns the temporary name and renames it
 * into place only when every rank reports success.
 */
#include <stdlib.h>
#include <string.h>

#include "ss_comm.h"
#include "ss_internal.h"
#include "ss_store.h"

typedef struct {
    ss_comm_file_t *f;
    uint64_t base;
} write_ctx_t;

static int write_chunk(void *ctx, uint64_t off, const char *buf, size_t len)
{
    write_ctx_t *w = ctx;
    return ss_comm_file_write_at(w->f, w->base + off, buf, len);
}

/* Offsets of every shard from the summed sizes. Returns the total length. */
static uint64_t offsets(uint64_t *sizes, int n, uint64_t header_len)
{
    uint64_t at = header_len;
    for (int i = 0; i < n; i++) {
        uint64_t len = sizes[i];
        sizes[i] = at; /* the vector now holds offsets */
        at += len;
    }
    return at;
}

int ss_merge_collective(const ss_merge_t *m)
{
    int rank = ss_comm_rank(), rc = 0;
    uint64_t *sizes = calloc((size_t)m->n_shards + 1, sizeof(*sizes));
    char tmp[4096] = "";
    if (!sizes) {
        ss_error("rank %d: out of memory for the merge", rank);
        rc = -1;
    }
    for (size_t k = 0; rc == 0 && k < ss_store_count(m->store); k++) {
        int idx;
        uint64_t len;
        ss_store_piece(m->store, k, &idx, &len);
        sizes[idx] = len;
    }
    /* every rank must agree the run succeeded before any byte is written */
    if (ss_comm_max_int(rc < 0 || ss_error_raised()) != 0)
        goto out_fail;
    if (ss_comm_sum_u64(sizes, (size_t)m->n_shards) < 0) {
        ss_error("rank %d: exchanging shard sizes failed", rank);
        goto out_fail;
    }
    uint64_t total = offsets(sizes, m->n_shards, m->header_len);
    if (rank == 0 && m->out) {
        const char *t = ss_output_tmp_path(m->out);
        snprintf(tmp, sizeof(tmp), "%s", t ? t : "");
    }
    if (ss_comm_bcast_str(tmp, sizeof(tmp)) < 0 || !*tmp) {
        if (rank == 0)
            ss_error("a multi-rank run needs -o FILE on a file system all ranks share");
        rc = -1;
    }
    if (ss_comm_max_int(rc < 0) != 0)
        goto out_fail;
    ss_comm_file_t *f = ss_comm_file_open(tmp);
    if (ss_comm_max_int(f == NULL) != 0) {
        ss_comm_file_close(f);
        goto out_fail;
    }
    write_ctx_t w = {f, 0};
    if (rank == 0 && m->header_len)
        rc = ss_comm_file_write_at(f, 0, m->header, m->header_len);
    for (size_t k = 0; rc == 0 && k < ss_store_count(m->store); k++) {
        int idx;
        uint64_t len;
        ss_store_piece(m->store, k, &idx, &len);
        w.base = sizes[idx];
        rc = ss_store_each_chunk(m->store, k, write_chunk, &w);
    }
    if (rc == 0 && rank == 0 && m->eof_len)
        rc = ss_comm_file_write_at(f, total, m->eof, m->eof_len);
    if (ss_comm_file_close(f) < 0)
        rc = -1;
    if (ss_comm_max_int(rc < 0) != 0)
        goto out_fail;
    free(sizes);
    return 0;
out_fail:
    free(sizes);
    return -1;
}
