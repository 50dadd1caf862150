/*
 * reader.c -- a worker's handles on the inputs.
 *
 * At the first ss_reader_begin the reader opens every input and asks the
 * descriptor budget for one descriptor per input plus one per CRAM (the
 * reference FASTA it keeps open). Granted: the files, headers and indexes stay
 * open until ss_reader_destroy, so a shard costs only a seek. Refused: every
 * begin opens them and every end closes them again, so a run over thousands
 * of inputs never runs out of descriptors. The index is loaded once per open.
 *
 * Owned by one worker thread; nothing here is shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <htslib/cram.h>

#include "../base/ss_base.h"
#include "ss_io_private.h"

/*
 * Bytes read from an input per read() call. A worker holds one buffer per
 * input, so with many inputs each gets a share of READ_BUFFERS_TOTAL, and
 * below READ_BUFFER_MIN htslib keeps its own (the file system's block size).
 */
#define READ_BUFFER_MAX (256 << 10)
#define READ_BUFFER_MIN (32 << 10)
#define READ_BUFFERS_TOTAL (4 << 20)

typedef struct {
    samFile *fp;
    sam_hdr_t *h;
    hts_idx_t *idx;
    ss_file_source_t src; /* the file as a record source, bound while open */
} rd_file_t;

struct ss_reader_s {
    ss_io_inputs_t in; /* paths borrowed from the job */
    rd_file_t *f;
    int is_open;       /* files open now */
    int asked;         /* the budget was asked (at the first begin) */
    int holds;         /* the budget granted: keep files open across shards */
    int held;          /* descriptors reserved in the budget */
    int opens;         /* times the inputs were opened */
};

ss_reader_t *ss_reader_init(const ss_io_inputs_t *in)
{
    ss_reader_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->in = *in;
    if (in->n > 0 && !(r->f = calloc((size_t)in->n, sizeof(*r->f)))) {
        free(r);
        return NULL;
    }
    return r;
}

static void close_all(ss_reader_t *r)
{
    for (int i = 0; i < r->in.n; i++) {
        rd_file_t *f = &r->f[i];
        ss_file_source_unbind(&f->src);
        if (f->idx)
            hts_idx_destroy(f->idx);
        if (f->h)
            sam_hdr_destroy(f->h);
        if (f->fp)
            hts_close(f->fp); /* fails only after a read error, already reported */
        memset(f, 0, sizeof(*f));
    }
    r->is_open = 0;
}

samFile *ss_io_open_input(const ss_io_inputs_t *in, int i)
{
    const char *path = in->paths[i];
    samFile *fp = sam_open(path, "r");
    if (!fp) {
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
        /* pileup-like kernels never need MD/NM rebuilt; skipping it saves reference work */
        if (hts_set_opt(fp, CRAM_OPT_DECODE_MD, 0) != 0) {
            ss_error("%s: cannot set CRAM decoding options", path);
            goto fail;
        }
        if (in->reference && hts_set_fai_filename(fp, in->reference) != 0) {
            ss_error("%s: cannot use reference %s for this CRAM; check it is the FASTA the "
                     "CRAM was made against, with a .fai index", path, in->reference);
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
    return fp;
fail:
    sam_close(fp);
    return NULL;
}

hts_idx_t *ss_io_load_index(const ss_io_inputs_t *in, int i, samFile *fp)
{
    const char *path = in->paths[i];
    const char *idx_path = in->index_paths ? in->index_paths[i] : NULL;
    hts_idx_t *idx = idx_path ? sam_index_load2(fp, path, idx_path) : sam_index_load(fp, path);
    if (!idx) {
        if (idx_path)
            ss_error("%s: cannot load its index %s (-X); check that file is the index of this "
                     "input", path, idx_path);
        else
            ss_error("%s: no index found; run 'samtools index %s'", path, path);
    }
    return idx;
}

static int open_one(ss_reader_t *r, int i, int *is_cram)
{
    rd_file_t *f = &r->f[i];
    const char *path = r->in.paths[i];
    if (!(f->fp = ss_io_open_input(&r->in, i)))
        return -1;
    *is_cram = f->fp->format.format == cram;
    if (!(f->h = sam_hdr_read(f->fp))) {
        ss_error("%s: cannot read the header; check the file with samtools quickcheck", path);
        return -1;
    }
    if (!(f->idx = ss_io_load_index(&r->in, i, f->fp)))
        return -1;
    ss_file_source_bind(&f->src, path, f->fp, f->h, f->idx);
    return 0;
}

int ss_reader_begin(ss_reader_t *r)
{
    if (r->is_open)
        return 0;
    int n_cram = 0;
    for (int i = 0; i < r->in.n; i++) {
        int is_cram = 0;
        if (open_one(r, i, &is_cram) < 0) {
            close_all(r);
            return -1;
        }
        n_cram += is_cram;
    }
    r->is_open = 1;
    r->opens++;
    if (!r->asked) {
        r->asked = 1;
        int need = r->in.n + n_cram;
        r->holds = ss_io_budget_take(need);
        r->held = r->holds ? need : 0;
    }
    return 0;
}

void ss_reader_end(ss_reader_t *r)
{
    if (r && r->is_open && !r->holds)
        close_all(r);
}

samFile *ss_reader_file(ss_reader_t *r, int i)
{
    return r->is_open && i >= 0 && i < r->in.n ? r->f[i].fp : NULL;
}

sam_hdr_t *ss_reader_header(ss_reader_t *r, int i)
{
    return r->is_open && i >= 0 && i < r->in.n ? r->f[i].h : NULL;
}

hts_idx_t *ss_reader_index(ss_reader_t *r, int i)
{
    return r->is_open && i >= 0 && i < r->in.n ? r->f[i].idx : NULL;
}

ss_source_t *ss_reader_source(ss_reader_t *r, int i)
{
    return r->is_open && i >= 0 && i < r->in.n ? &r->f[i].src.src : NULL;
}

const char *ss_reader_path(const ss_reader_t *r, int i)
{
    return i >= 0 && i < r->in.n ? r->in.paths[i] : NULL;
}

int ss_reader_n(const ss_reader_t *r)
{
    return r->in.n;
}

int ss_reader_holds(const ss_reader_t *r)
{
    return r->holds;
}

int ss_reader_opens(const ss_reader_t *r)
{
    return r->opens;
}

void ss_reader_destroy(ss_reader_t *r)
{
    if (!r)
        return;
    close_all(r);
    if (r->held)
        ss_io_budget_give(r->held);
    free(r->f);
    free(r);
}
