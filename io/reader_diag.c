/*
 * reader_diag.c -- why a reader's input failed in a shard, in one line:
 * read_diag.c's or cram_diag.c's message for the file, with the reader's
 * path, header and shard filled in. Kernels call it after a read of
 * ss_reader_source fails.
 *
 * Above reader.c (it reads the reader's accessors) and the two message
 * files; nothing in the reader calls it. The reader's thread.
 */
#include <errno.h>
#include <stdio.h>

#include "../base/ss_base.h"
#include "ss_diag.h"

int ss_io_input_failed(ss_reader_t *rd, int i, int ret, int err, int tid, hts_pos_t beg,
                       hts_pos_t end, const char *reference, const char *ref_opt)
{
    if (ret == SS_IO_REPORTED)
        return -1;
    char where[256];
    snprintf(where, sizeof(where), "%s:%lld-%lld",
             tid >= 0 ? sam_hdr_tid2name(ss_reader_header(rd, i), tid) : "*", (long long)beg + 1,
             (long long)end);
    if (err == ENOMEM) /* htslib's -4 is a bad record or a failed allocation */
        ss_error("%s: out of memory reading shard %d (%s); lower -@ or --shard-size, or give "
                 "the run more memory",
                 ss_reader_path(rd, i), ss_reader_shard(rd), where);
    else
        ss_io_input_read_error(rd, i, ret, tid, where, reference, ref_opt);
    return -1;
}

void ss_io_input_read_error(ss_reader_t *rd, int i, int ret, int tid, const char *where,
                            const char *reference, const char *ref_opt)
{
    const char *path = ss_reader_path(rd, i);
    if (ss_reader_is_cram(rd, i))
        ss_io_cram_read_error(path, ss_reader_header(rd, i), reference, ref_opt,
                              ss_reader_shard(rd), where, tid);
    else
        ss_io_read_error(path, ss_reader_file(rd, i), ret, ss_reader_shard(rd), where);
}
