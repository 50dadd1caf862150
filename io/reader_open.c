/*
 * reader_open.c -- opening an input and loading its index, the way every
 * reader does: the read buffer, the CRAM decoding options and the job's
 * shared reference, --input-fmt-option, and the message when it fails.
 *
 * The bottom of the reader: reader.c (held and per-shard inputs, batches)
 * and reader_window.c (a streamed CRAM's window) open files through it, and
 * it calls nothing of theirs. Any thread; the shared reference's handle
 * count is kept under shared_ref_lock.
 */
#include <errno.h>
#include <htslib/cram.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "../base/ss_base.h"
#include "reader_priv.h"
#include "ss_budget.h"
#include "ss_diag.h"

/*
 * Bytes read from an input per read() call. A worker holds one buffer per
 * input, so with many inputs each gets a share of READ_BUFFERS_TOTAL, and
 * below READ_BUFFER_MIN htslib keeps its own (the file system's block size).
 */
#define READ_BUFFER_MAX    (256 << 10)
#define READ_BUFFER_MIN    (32 << 10)
#define READ_BUFFERS_TOTAL (4 << 20)

/*
 * htslib counts the handles on a shared reference (refs_t) without a lock
 * (cram_io.c: CRAM_OPT_SHARED_REF does count++, refs_free --count), so
 * workers take this lock to join or leave the shared reference.
 */
static pthread_mutex_t shared_ref_lock = PTHREAD_MUTEX_INITIALIZER;

static void (*open_hook)(void); /* set before any reader runs, then only read */

void ss_io_set_open_hook(void (*hook)(void))
{
    open_hook = hook;
}

static int share_reference(samFile *fp, void *refs)
{
    pthread_mutex_lock(&shared_ref_lock);
    int r = hts_set_opt(fp, CRAM_OPT_SHARED_REF, refs);
    pthread_mutex_unlock(&shared_ref_lock);
    return r;
}

int rd_close_input(samFile *fp)
{
    if (fp->format.format != cram)
        return hts_close(fp);
    pthread_mutex_lock(&shared_ref_lock);
    int r = hts_close(fp);
    pthread_mutex_unlock(&shared_ref_lock);
    return r;
}

samFile *ss_io_open_input(const ss_io_inputs_t *in, int i)
{
    const char *path = in->paths[i];
    samFile *fp = sam_open(path, "r");
    if (!fp) {
        if (ss_io_fds_exhausted(errno))
            ss_io_error_fds(path, errno);
        else if (errno == ENOMEM)
            ss_error("%s: out of memory opening it; lower -@ or give the run more memory", path);
        else
            ss_error("%s: cannot open: %s; check the file still exists and is readable", path,
                     strerror(errno));
        return NULL;
    }
    /*
     * htslib reads through a buffer of the file system's block size (often
     * 4 KiB), so each BGZF block costs two or three read() calls: 13,100 for
     * pileup over the 125 MB benchmark BAM, 730 with this buffer. A
     * --input-fmt-option block_size=N below still overrides it.
     */
    int buffer = in->n > 0 ? READ_BUFFERS_TOTAL / in->n : READ_BUFFER_MAX;
    if (buffer > READ_BUFFER_MAX)
        buffer = READ_BUFFER_MAX;
    if (buffer >= READ_BUFFER_MIN && hts_set_opt(fp, HTS_OPT_BLOCK_SIZE, buffer) != 0) {
        ss_error("%s: cannot allocate its read buffer (out of memory)", path);
        goto fail;
    }
    if (fp->format.format == cram) {
        /* pileup-like kernels never need MD/NM rebuilt; skipping it saves reference work.
         * -1 is htslib's default, which samtools decodes with */
        if (hts_set_opt(fp, CRAM_OPT_DECODE_MD, in->cram_md ? -1 : 0) != 0) {
            ss_error("%s: cannot set CRAM decoding options", path);
            goto fail;
        }
        /*
         * The job's reference, shared: else every handle opens the FASTA and
         * loads the contig itself (4.9 MB for E. coli, per CRAM per worker).
         */
        if (in->reference && in->cram_refs && share_reference(fp, in->cram_refs) != 0) {
            ss_error("%s: cannot share the reference %s with the other CRAM inputs", path,
                     in->reference);
            goto fail;
        }
        if (in->reference && !in->cram_refs && hts_set_fai_filename(fp, in->reference) != 0) {
            ss_error("%s: cannot use reference %s for this CRAM; check it is the FASTA the "
                     "CRAM was made against, with a .fai index",
                     path, in->reference);
            goto fail;
        }
    }
    for (int k = 0; k < in->n_fmt_opts; k++) {
        hts_opt *opts = NULL;
        int bad = hts_opt_add(&opts, in->fmt_opts[k]) < 0 || hts_opt_apply(fp, opts) < 0;
        hts_opt_free(opts);
        if (bad) {
            ss_error("%s: --input-fmt-option '%s' is not an option htslib knows for this file",
                     path, in->fmt_opts[k]);
            goto fail;
        }
    }
    if (in->whole_records && fp->format.format == cram &&
        (hts_set_opt(fp, CRAM_OPT_REQUIRED_FIELDS, INT_MAX) != 0 ||
         hts_set_opt(fp, CRAM_OPT_DECODE_MD, -1) != 0)) {
        ss_error("%s: cannot set CRAM decoding options", path);
        goto fail;
    }
    if (open_hook)
        open_hook();
    return fp;
fail:
    rd_close_input(fp);
    return NULL;
}

hts_idx_t *ss_io_load_index(const ss_io_inputs_t *in, int i, samFile *fp)
{
    const char *path = in->paths[i];
    const char *idx_path = in->index_paths ? in->index_paths[i] : NULL;
    errno = 0;
    hts_idx_t *idx = idx_path ? sam_index_load2(fp, path, idx_path) : sam_index_load(fp, path);
    if (idx && open_hook)
        open_hook();
    if (!idx) {
        /* htslib tries several names; out of descriptors, each of them fails with EMFILE */
        if (ss_io_fds_exhausted(errno))
            ss_io_error_fds(idx_path ? idx_path : path, errno);
        else if (errno == ENOMEM) /* a damaged index asks htslib for absurd sizes too */
            ss_error("%s: out of memory loading its index: the index may be damaged (re-index "
                     "with samtools index %s), or the run needs more memory (lower -@)",
                     path, path);
        else if (idx_path)
            ss_error("%s: cannot load its index %s (-X); check that file is the index of this "
                     "input",
                     path, idx_path);
        else
            ss_io_index_error(path, errno);
    }
    return idx;
}
