/*
 * reader.c -- a worker's handles on the inputs.
 *
 * What the job loaded once per process is borrowed, read-only (ss_io_inputs_t):
 * the header, the BAM indexes, each input's format and the CRAM reference.
 * So a BAM opens with no header or index read (its iterator seeks), a CRAM
 * with its header and .crai only (htslib ties those to the handle), and no
 * CRAM handle loads the contig itself.
 *
 * At the first ss_reader_begin the reader asks the descriptor budget for
 * each input in turn: one descriptor, two for a CRAM whose reference is not
 * shared (htslib keeps the FASTA open), and opens those it may keep. A worker
 * keeps at most CRAM_HOLD_MAX CRAMs, whatever the budget: each keeps a
 * decoded slice.
 * Granted ("held"): the file and index stay open until ss_reader_destroy, so
 * a shard costs only a seek. Refused: the file is closed again, and opened
 * per use, in the worker's own descriptors outside the budget (budget.c):
 *   - when it is the reader's only refused input, per shard: every begin
 *     opens it and every end closes it (a kernel then sees it as a file);
 *   - when several are refused, per batch ("streamed"): a query remembers
 *     its range, and ss_reader_next fills a batch of records by opening the
 *     file, reading up to a batch's bytes and closing it again. The pileup
 *     merges every input of a shard at once, so this is what lets 30 inputs
 *     run where only a few may be open.
 * Records come out in the same order either way: a BAM batch resumes the
 * htslib iterator at its next file offset; a CRAM one (whose iterator is tied
 * to the open file) queries again from the last position returned and skips
 * the records at that position it already returned.
 *
 * Standard input ("-") is the job's open file, borrowed and read in one pass
 * by the run's only reader (stdin_next).
 * The shard's window (ss_reader_window) makes its queries cheaper: a CRAM
 * reads the window's records once, from its open handle or one opened for
 * it, and answers every query inside it from them (one slice decode a shard,
 * not three); a BAM query inside it starts at the window's first record.
 *
 * Headers are kept for every input, so ss_reader_header never opens a file.
 * Owned by one worker thread; shared with other workers only what the job
 * lends, and the CRAM reference's handle count, under shared_ref_lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <htslib/bgzf.h>
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

/* Record bytes a streamed batch holds: a share of BATCH_TOTAL per input, within these bounds. */
#define BATCH_TOTAL (8 << 20)
#define BATCH_MIN (32 << 10)
#define BATCH_MAX (1 << 20)

/*
 * CRAM inputs a worker may hold open across shards. A CRAM handle keeps the
 * slice it last decoded (10,000 reads by default: 4-5 MB), and the pileup
 * reads every input of a shard at once, so 333 held CRAMs were 1.7 GB per
 * worker; past this many they are streamed, and a streamed CRAM reads a
 * shard's window in one go (ss_reader_window) and closes again.
 */
#define CRAM_HOLD_MAX 4
/*
 * BAM inputs a worker may hold open: each costs htslib's BGZF buffers, a
 * 64 KiB block in and out (~136 kB), 90 MB per worker for 667 BAMs; a
 * streamed one costs its batch (8 MB shared out, at least BATCH_MIN).
 */
#define BAM_HOLD_MAX 256

/* RD_STDIN: standard input, borrowed from the job (ss_io_inputs_t.stream), read in one pass */
enum { RD_NEW, RD_HELD, RD_PER_SHARD, RD_STREAMED, RD_STDIN };
enum { WIN_NONE, WIN_LOADED, WIN_FAILED }; /* a CRAM input's window this shard */

typedef struct {
    bam1_t **rec;      /* records, reused across batches */
    int n, m, cur;     /* filled, allocated, next to return */
    int done;          /* the query has no more records after this batch */
    hts_pos_t last_pos; /* position of the last record taken, -1 before the first */
    int64_t n_at_last; /* records taken at last_pos */
} rd_batch_t;

typedef struct {
    int mode;          /* RD_* */
    int is_cram;
    samFile *fp;       /* open: held, per shard between begin and end */
    sam_hdr_t *h;      /* kept in every mode from the first open: the job's, or own */
    int own_h;
    hts_idx_t *idx;    /* with fp: the job's (a BAM's), or own */
    int own_idx;
    hts_itr_t *itr;    /* the current query (a streamed BAM's is kept across batches) */
    ss_io_order_t order; /* the current query's records so far (check.c), across batches */
    int q_tid;         /* the current query's range */
    hts_pos_t q_beg, q_end;
    rd_batch_t batch;  /* streamed only */
    kstring_t win;     /* CRAM: the window's records (ss_reader_window), packed (win_put);
                        * the buffer is reused across shards */
    bam1_t *win_read;  /* the record being read into the window */
    int win_state;     /* WIN_*: reset at every ss_reader_end */
    int in_win;        /* the current query is answered from win, from win_cur on */
    size_t win_cur;    /* byte offset of the next packed record */
    bam1_t *ahead;     /* standard input: the first record past the last query, if held */
    int have_ahead;
    rd_batch_t replay; /* standard input: the current contig's first records, for a re-query */
    int replay_tid;    /* the contig they belong to */
    int replay_full;   /* more were read than it holds: a re-query cannot be served */
    int q_behind;      /* standard input: the query is for a contig the stream has passed */
    unsigned char *dropped; /* standard input, per contig: records skipped unreturned */
    uint64_t win_off;  /* BAM: file offset of the window's first record (WIN_LOADED) */
} rd_file_t;

struct ss_reader_s {
    ss_io_inputs_t in; /* paths borrowed from the job */
    rd_file_t *f;
    ss_file_source_t *src; /* [in.n]: each input as a record source (source.c) */
    int shard;             /* the shard being read, for messages; -1 before any */
    int is_open;       /* between begin and end */
    int n_refused;     /* inputs the budget refused */
    int held;          /* descriptors reserved in the budget */
    int opens;         /* times the inputs were opened for a shard (held ones once) */
    int batch_bytes;
    int w_tid;         /* the shard's window (ss_reader_window), -2 when none */
    hts_pos_t w_beg, w_end;
};

ss_reader_t *ss_reader_init(const ss_io_inputs_t *in)
{
    ss_reader_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->in = *in;
    r->shard = -1;
    r->w_tid = -2;
    if (in->n > 0 && (!(r->f = calloc((size_t)in->n, sizeof(*r->f))) ||
                      !(r->src = calloc((size_t)in->n, sizeof(*r->src))))) {
        free(r->f);
        free(r);
        return NULL;
    }
    for (int i = 0; i < in->n; i++)
        ss_file_source_init(&r->src[i], r, i, in->paths[i]);
    int share = in->n > 0 ? BATCH_TOTAL / in->n : BATCH_MAX;
    r->batch_bytes = share < BATCH_MIN ? BATCH_MIN : share > BATCH_MAX ? BATCH_MAX : share;
    return r;
}

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

/* hts_close, under the shared reference's lock for a CRAM. Returns hts_close's result. */
static int close_input(samFile *fp)
{
    if (fp->format.format != cram)
        return hts_close(fp);
    pthread_mutex_lock(&shared_ref_lock);
    int r = hts_close(fp);
    pthread_mutex_unlock(&shared_ref_lock);
    return r;
}

/* Close input i's file and its own index; the header stays. Standard input is the job's. */
static void close_file(rd_file_t *f)
{
    if (f->mode == RD_STDIN)
        return;
    if (f->idx && f->own_idx)
        hts_idx_destroy(f->idx);
    if (f->fp)
        close_input(f->fp); /* fails only after a read error, already reported */
    f->idx = NULL;
    f->fp = NULL;
}

samFile *ss_io_open_input(const ss_io_inputs_t *in, int i)
{
    const char *path = in->paths[i];
    samFile *fp = sam_open(path, "r");
    if (!fp) {
        if (ss_io_fds_exhausted(errno))
            ss_io_error_fds(path, errno);
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
        /* pileup-like kernels never need MD/NM rebuilt; skipping it saves reference work */
        if (hts_set_opt(fp, CRAM_OPT_DECODE_MD, 0) != 0) {
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
    if (open_hook)
        open_hook();
    return fp;
fail:
    close_input(fp);
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
        else if (idx_path)
            ss_error("%s: cannot load its index %s (-X); check that file is the index of this "
                     "input", path, idx_path);
        else
            ss_error("%s: no index found; run 'samtools index %s'", path, path);
    }
    return idx;
}

/* The job's index of input i (a BAM's), or NULL. */
static hts_idx_t *shared_index(const ss_reader_t *r, int i)
{
    return r->in.idx && r->in.hdr ? r->in.idx[i] : NULL;
}

/*
 * Open input i's file and index into f. A BAM with the job's index and
 * header needs neither read: its iterator seeks to the records. Otherwise
 * read the header (into f->h the first time; a CRAM cannot be read past it
 * otherwise) and load the index. 0 or -1.
 */
static int open_file(ss_reader_t *r, int i, rd_file_t *f)
{
    const char *path = r->in.paths[i];
    if (!(f->fp = ss_io_open_input(&r->in, i)))
        return -1;
    f->is_cram = f->fp->format.format == cram;
    if (!f->is_cram && shared_index(r, i)) {
        f->idx = shared_index(r, i);
        f->own_idx = 0;
        if (!f->h)
            f->h = r->in.hdr, f->own_h = 0;
        return 0;
    }
    sam_hdr_t *h = sam_hdr_read(f->fp);
    if (!h) {
        ss_error("%s: cannot read the header; check the file with samtools quickcheck", path);
        goto fail;
    }
    if (!f->h && r->in.hdr) {
        f->h = r->in.hdr, f->own_h = 0; /* the same @SQ lines (job.c checked) */
        sam_hdr_destroy(h);
    } else if (f->h) {
        sam_hdr_destroy(h);
    } else {
        f->h = h, f->own_h = 1;
    }
    if (!(f->idx = ss_io_load_index(&r->in, i, f->fp)))
        goto fail;
    f->own_idx = 1;
    return 0;
fail:
    close_file(f);
    return -1;
}

/* After a failed begin: nothing stays open or reserved, and the next begin starts afresh. */
static void drop_all(ss_reader_t *r)
{
    for (int i = 0; i < r->in.n; i++) {
        if (r->f[i].mode == RD_STDIN)
            continue; /* read once: it stays where it is */
        hts_itr_destroy(r->f[i].itr);
        r->f[i].itr = NULL;
        close_file(&r->f[i]);
        r->f[i].mode = RD_NEW;
    }
    ss_io_budget_give(r->held);
    r->held = r->n_refused = r->is_open = 0;
}

/* Input i's format and header from the job, without opening it. 1 if the job knows them. */
static int known_without_open(ss_reader_t *r, int i, rd_file_t *f)
{
    if (!r->in.is_cram || !r->in.hdr)
        return 0;
    f->is_cram = r->in.is_cram[i];
    if (!f->h)
        f->h = r->in.hdr, f->own_h = 0;
    return 1;
}

/* Standard input: the job's open file and header, and room for the record held back. */
static int borrow_stdin(ss_reader_t *r, rd_file_t *f)
{
    int n = sam_hdr_nref(r->in.stream_hdr);
    if (!f->dropped && !(f->dropped = calloc((size_t)(n > 0 ? n : 1), 1))) {
        ss_error("-: out of memory reading standard input");
        return -1;
    }
    if (!f->ahead && !(f->ahead = bam_init1())) {
        ss_error("-: out of memory reading standard input");
        return -1;
    }
    f->fp = r->in.stream;
    f->h = r->in.stream_hdr;
    f->is_cram = f->fp->format.format == cram;
    f->mode = RD_STDIN;
    f->replay_tid = -2; /* no contig read yet */
    ss_io_order_reset(&f->order);
    return 0;
}

/*
 * First begin: keep each input open if the budget grants it (and, for a
 * CRAM, while the worker holds fewer than CRAM_HOLD_MAX). An input the job
 * described is opened only when kept; others are opened alone to learn
 * their format and header. A held CRAM costs a second descriptor for its
 * reference unless the handles share one (the job's). 0 or -1.
 */
static int first_open(ss_reader_t *r)
{
    int crams = 0, bams = 0;
    for (int i = 0; i < r->in.n; i++) {
        rd_file_t *f = &r->f[i];
        if (i == 0 && r->in.stream) {
            if (borrow_stdin(r, f) < 0)
                return -1;
            continue;
        }
        int known = known_without_open(r, i, f);
        if (!known && open_file(r, i, f) < 0)
            return -1;
        int need = 1 + (f->is_cram && !r->in.cram_refs);
        int may_hold = f->is_cram ? ++crams <= CRAM_HOLD_MAX : ++bams <= BAM_HOLD_MAX;
        if (may_hold && ss_io_budget_take(need)) {
            if (known && open_file(r, i, f) < 0) {
                ss_io_budget_give(need);
                return -1;
            }
            f->mode = RD_HELD;
            r->held += need;
        } else {
            f->mode = RD_PER_SHARD; /* for now: streamed if another one is refused */
            r->n_refused++;
            close_file(f);
        }
    }
    for (int i = 0; r->n_refused > 1 && i < r->in.n; i++)
        if (r->f[i].mode == RD_PER_SHARD)
            r->f[i].mode = RD_STREAMED;
    return 0;
}

int ss_reader_begin(ss_reader_t *r)
{
    if (r->is_open)
        return 0;
    r->is_open = 1; /* from here ss_reader_end closes what is open */
    int opened = 0;
    if (r->in.n > 0 && r->f[0].mode == RD_NEW) {
        if (first_open(r) < 0)
            goto fail;
        opened = 1;
    }
    for (int i = 0; r->n_refused == 1 && i < r->in.n; i++)
        if (r->f[i].mode == RD_PER_SHARD) {
            if (open_file(r, i, &r->f[i]) < 0)
                goto fail;
            opened = 1;
        }
    r->opens += opened;
    return 0;
fail:
    drop_all(r);
    return -1;
}

void ss_reader_end(ss_reader_t *r)
{
    if (!r)
        return;
    r->w_tid = -2;
    for (int i = 0; i < r->in.n; i++) {
        rd_file_t *f = &r->f[i];
        f->win_state = WIN_NONE;
        f->in_win = 0;
        if (f->mode == RD_HELD || f->mode == RD_STDIN)
            continue;
        hts_itr_destroy(f->itr);
        f->itr = NULL;
        close_file(f);
    }
    r->is_open = 0;
}

/* ---- batches and windows ---- */

static bam1_t *batch_slot(rd_batch_t *bt)
{
    if (bt->n == bt->m) {
        int m = bt->m ? 2 * bt->m : 64;
        bam1_t **a = realloc(bt->rec, (size_t)m * sizeof(*a));
        if (!a)
            return NULL;
        memset(a + bt->m, 0, (size_t)(m - bt->m) * sizeof(*a));
        bt->rec = a, bt->m = m;
    }
    if (!bt->rec[bt->n])
        bt->rec[bt->n] = bam_init1();
    return bt->rec[bt->n];
}

static void batch_free(rd_batch_t *bt)
{
    for (int k = 0; k < bt->m; k++)
        if (bt->rec[k])
            bam_destroy1(bt->rec[k]);
    free(bt->rec);
    memset(bt, 0, sizeof(*bt));
}

void ss_reader_window(ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end)
{
    r->w_tid = tid, r->w_beg = beg, r->w_end = end;
}

static int in_window(const ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end)
{
    return tid >= 0 && tid == r->w_tid && r->w_beg <= beg && end <= r->w_end;
}

/*
 * A window's records are packed back to back, each its core, its data
 * length and its data: a CRAM window of a thousand-input cohort is most of a
 * worker's memory, and a bam1_t per record cost 80 bytes of struct and up to
 * twice its data (htslib rounds the data buffer up to a power of two).
 */
typedef struct {
    bam1_core_t core;
    uint32_t l_data;
} win_head_t;
_Static_assert(sizeof(win_head_t) % 8 == 0, "a packed record's data starts 8-aligned");

static int win_put(kstring_t *w, const bam1_t *b)
{
    win_head_t h = { .core = b->core, .l_data = (uint32_t)b->l_data };
    size_t pad = (8 - (size_t)b->l_data % 8) % 8;
    if (ks_resize(w, w->l + sizeof(h) + (size_t)b->l_data + pad + 1) < 0)
        return -1;
    memcpy(w->s + w->l, &h, sizeof(h));
    memcpy(w->s + w->l + sizeof(h), b->data, (size_t)b->l_data);
    w->l += sizeof(h) + (size_t)b->l_data + pad; /* pad: the next record's data is 8-aligned */
    return 0;
}

/* The packed record at *off as a read-only bam1_t; *off moves past it. */
static bam1_t win_view(const kstring_t *w, size_t *off)
{
    win_head_t h;
    memcpy(&h, w->s + *off, sizeof(h));
    bam1_t v = { .core = h.core, .l_data = (int)h.l_data, .m_data = h.l_data,
                 .data = (uint8_t *)w->s + *off + sizeof(h) };
    size_t pad = (8 - (size_t)h.l_data % 8) % 8;
    *off += sizeof(h) + h.l_data + pad;
    return v;
}

/*
 * Read every record of the window into f->win through fp and idx, checked
 * as one stream. Returns 0, or < 0 when the records could not all be read:
 * the caller then reads its queries from the file, which meets the same
 * fault where a query reaches it and reports it as it always has.
 */
static int window_fill(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_idx_t *idx)
{
    if (!f->win_read && !(f->win_read = bam_init1()))
        return -2;
    hts_itr_t *itr = sam_itr_queryi(idx, r->w_tid, r->w_beg, r->w_end);
    if (!itr)
        return -1;
    ss_io_order_t order;
    ss_io_order_reset(&order);
    int ret;
    f->win.l = 0;
    while ((ret = ss_io_itr_next(fp, itr, f->win_read, sam_hdr_nref(f->h), &order)) >= 0)
        if (win_put(&f->win, f->win_read) < 0) {
            ret = -2;
            break;
        }
    hts_itr_destroy(itr);
    return ret == -1 ? 0 : ret;
}

/*
 * Whether input i's window is read (reading it now if not yet this shard):
 * through the open file when there is one, else opened for it and closed
 * again, so the decoded slice goes with the handle. 1, or 0 to read the
 * query from the file instead.
 */
static int window_ready(ss_reader_t *r, int i, rd_file_t *f)
{
    if (f->win_state != WIN_NONE)
        return f->win_state == WIN_LOADED;
    f->win_state = WIN_FAILED;
    samFile *fp = f->fp;
    hts_idx_t *idx = f->idx;
    sam_hdr_t *h = NULL;
    if (!fp) {
        if (!(fp = ss_io_open_input(&r->in, i)))
            return 0; /* said why; the query's own open fails the same way */
        h = sam_hdr_read(fp);
        idx = h ? ss_io_load_index(&r->in, i, fp) : NULL;
    }
    if (idx && window_fill(r, f, fp, idx) == 0)
        f->win_state = WIN_LOADED;
    if (fp != f->fp) {
        if (idx)
            hts_idx_destroy(idx);
        if (h)
            sam_hdr_destroy(h);
        close_input(fp);
    }
    return f->win_state == WIN_LOADED;
}

/*
 * A BAM's window start: the offset of the first record, in file order, that
 * overlaps the window (or of the first record past it). Every record a query
 * inside the window returns overlaps the window too, so it lies at or after
 * this offset; queries then skip what the BAI's 16 kb linear index would
 * have them read first (8 kb of records on average, each time: three queries
 * a shard, and the pileup's time went to inflating it with 667 inputs).
 * Found by reading from the window query's first chunk. 1 if found.
 */
static int bam_window_start(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_idx_t *idx, bam1_t *b)
{
    hts_itr_t *itr = sam_itr_queryi(idx, r->w_tid, r->w_beg, r->w_end);
    int found = 0;
    BGZF *bgzf = fp->fp.bgzf;
    if (itr && itr->off && itr->n_off > 0 && bgzf_seek(bgzf, (int64_t)itr->off[0].u, SEEK_SET) == 0)
        for (;;) {
            uint64_t at = (uint64_t)bgzf_tell(bgzf);
            if (bam_read1(bgzf, b) < 0)
                break; /* the queries meet it, and say what it is */
            const bam1_core_t *c = &b->core;
            if (c->tid != r->w_tid || c->pos >= r->w_end || bam_endpos(b) > r->w_beg) {
                f->win_off = at;
                found = 1;
                break;
            }
        }
    hts_itr_destroy(itr);
    return found;
}

/*
 * Start a BAM query's iterator at the window's first record: chunks that end
 * before it are dropped, the first one kept starts there (hts_itr_t's chunk
 * list is public; the iterator reads it in order, seeking between chunks).
 */
static void bam_skip_to(hts_itr_t *itr, uint64_t off)
{
    if (!itr->off || itr->multi)
        return;
    int k = 0;
    while (k < itr->n_off && itr->off[k].v <= off)
        k++;
    memmove(itr->off, itr->off + k, (size_t)(itr->n_off - k) * sizeof(*itr->off));
    itr->n_off -= k;
    if (itr->n_off > 0 && itr->off[0].u < off)
        itr->off[0].u = off;
}

/* Whether a BAM query through fp and idx may start at the window's first record. */
static int bam_window_ready(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_idx_t *idx)
{
    if (f->win_state == WIN_NONE) {
        bam1_t *b = bam_init1();
        f->win_state = b && bam_window_start(r, f, fp, idx, b) ? WIN_LOADED : WIN_FAILED;
        bam_destroy1(b);
    }
    return f->win_state == WIN_LOADED;
}

/* The window's next record overlapping the query, as the file's iterator would give it. */
static int window_next(ss_reader_t *r, int i, rd_file_t *f, bam1_t *b)
{
    while (f->win_cur < f->win.l) {
        bam1_t s = win_view(&f->win, &f->win_cur);
        if (s.core.pos >= f->q_end) {
            f->win_cur = f->win.l; /* sorted: nothing after it overlaps */
            break;
        }
        if (bam_endpos(&s) <= f->q_beg)
            continue;
        if (!bam_copy1(b, &s)) {
            ss_error("%s: out of memory copying a record", r->in.paths[i]);
            return -4;
        }
        return 0;
    }
    return -1;
}

/* ---- queries ---- */

static rd_file_t *file_of(ss_reader_t *r, int i)
{
    return r->is_open && i >= 0 && i < r->in.n ? &r->f[i] : NULL;
}

static int query_error(ss_reader_t *r, int i, int tid, hts_pos_t beg, hts_pos_t end)
{
    const sam_hdr_t *h = r->f[i].h;
    const char *ctg = h && tid >= 0 && tid < sam_hdr_nref(h) ? sam_hdr_tid2name(h, tid) : NULL;
    if (!ctg) {
        ss_error("%s: cannot query contig #%d: the header has %d contigs (a kernel's bug: "
                 "please report it)", r->in.paths[i], tid + 1, h ? sam_hdr_nref(h) : 0);
        return -1;
    }
    ss_error("%s: cannot query %s:%lld-%lld through the index; check the index matches the "
             "file (samtools index)", r->in.paths[i], ctg, (long long)beg + 1, (long long)end);
    return -1;
}

/*
 * Standard input cannot seek, but a kernel may look at a contig's first
 * reads before reading it (pileup -a asks whether it has any): the records
 * a contig's queries returned are kept, up to REPLAY_MAX, and a new query on
 * the same contig reads them again before going on with the stream. 0, or
 * -1 after ss_error() when more than that would be needed.
 */
#define REPLAY_MAX 4096

static int stdin_query(ss_reader_t *r, int i, rd_file_t *f)
{
    rd_batch_t *rp = &f->replay;
    f->q_behind = f->q_tid >= 0 && f->replay_tid >= 0 && f->q_tid < f->replay_tid;
    if (f->q_behind && !f->dropped[f->q_tid])
        return 0; /* nothing of that contig is left, and nothing of it was lost: empty */
    if (f->q_behind) {
        ss_error("%s: standard input would have to be read again at contig %s, which a "
                 "stream cannot do; give the input as a file", r->in.paths[i],
                 sam_hdr_tid2name(f->h, f->q_tid));
        return -1;
    }
    if (f->q_tid != f->replay_tid || f->q_tid == HTS_IDX_NOCOOR) {
        rp->n = rp->cur = 0; /* a new contig: nothing of it was read yet */
        f->replay_full = 0;
        f->replay_tid = f->q_tid;
        return 0;
    }
    if (f->replay_full) {
        ss_error("%s: standard input would have to be read again at contig %s, which a "
                 "stream cannot do; give the input as a file", r->in.paths[i],
                 sam_hdr_tid2name(f->h, f->q_tid));
        return -1;
    }
    rp->cur = 0; /* the same contig again: first what it returned before */
    return 0;
}

/* Keep a copy of a record standard input returned, for a re-query of its contig. */
static int replay_keep(rd_file_t *f, const bam1_t *b)
{
    rd_batch_t *rp = &f->replay;
    if (f->replay_full || rp->cur < rp->n)
        return 0; /* not kept: it came from the replay itself, or there is no room */
    if (rp->n == REPLAY_MAX) {
        f->replay_full = 1;
        return 0;
    }
    if (rp->n == rp->m) {
        int m = rp->m ? 2 * rp->m : 64;
        bam1_t **a = realloc(rp->rec, (size_t)m * sizeof(*a));
        if (!a)
            return -1;
        memset(a + rp->m, 0, (size_t)(m - rp->m) * sizeof(*a));
        rp->rec = a, rp->m = m;
    }
    if (!rp->rec[rp->n] && !(rp->rec[rp->n] = bam_init1()))
        return -1;
    if (!bam_copy1(rp->rec[rp->n], b))
        return -1;
    rp->n++;
    rp->cur = rp->n;
    return 0;
}

int ss_reader_query(ss_reader_t *r, int i, int tid, hts_pos_t beg, hts_pos_t end)
{
    rd_file_t *f = file_of(r, i);
    if (!f)
        return -1;
    hts_itr_destroy(f->itr);
    f->itr = NULL;
    f->q_tid = tid, f->q_beg = beg, f->q_end = end;
    if (f->mode == RD_STDIN)
        return stdin_query(r, i, f);
    ss_io_order_reset(&f->order);
    f->in_win = 0;
    if (f->is_cram && in_window(r, tid, beg, end) && window_ready(r, i, f)) {
        f->in_win = 1;
        f->win_cur = 0;
        return 0;
    }
    if (f->mode == RD_STREAMED) {
        f->batch.n = f->batch.cur = f->batch.done = 0;
        f->batch.last_pos = -1;
        f->batch.n_at_last = 0;
        return 0; /* the first batch queries */
    }
    if (!(f->itr = sam_itr_queryi(f->idx, tid, beg, end)))
        return query_error(r, i, tid, beg, end);
    if (!f->is_cram && in_window(r, tid, beg, end) && bam_window_ready(r, f, f->fp, f->idx))
        bam_skip_to(f->itr, f->win_off);
    return 0;
}

/*
 * A streamed BAM: the first batch queries (through the job's index, or one
 * loaded for it), the next ones resume at the iterator's offset.
 */
static int bam_resume(ss_reader_t *r, int i, rd_file_t *f, samFile *fp)
{
    if (!f->itr) {
        hts_idx_t *shared = shared_index(r, i);
        hts_idx_t *idx = shared ? shared : ss_io_load_index(&r->in, i, fp);
        f->itr = idx ? sam_itr_queryi(idx, f->q_tid, f->q_beg, f->q_end) : NULL;
        if (f->itr && in_window(r, f->q_tid, f->q_beg, f->q_end) &&
            bam_window_ready(r, f, fp, idx))
            bam_skip_to(f->itr, f->win_off);
        if (idx && !shared)
            hts_idx_destroy(idx); /* a BAM iterator keeps its own copy of the offsets */
        if (!f->itr)
            return idx ? query_error(r, i, f->q_tid, f->q_beg, f->q_end) : -1;
        return 0;
    }
    if (f->itr->curr_off && bgzf_seek(fp->fp.bgzf, (int64_t)f->itr->curr_off, SEEK_SET) < 0) {
        ss_error("%s: cannot seek back to where the last batch of records ended; the file may "
                 "have changed during the run", r->in.paths[i]);
        return -1;
    }
    return 0;
}

/* Whether a CRAM re-query's record b was taken before, or lies outside the first query. */
static int taken_before(const rd_file_t *f, const bam1_t *b, hts_pos_t last, int64_t *skip)
{
    if (b->core.pos < last)
        return 1;
    if (b->core.pos == last && *skip > 0) {
        (*skip)--;
        return 1;
    }
    return bam_endpos(b) <= f->q_beg; /* the re-query starts earlier than the first did */
}

/* Add record k to the batch's position count; the next batch resumes after it. */
static void note_taken(rd_batch_t *bt, const bam1_t *b)
{
    if (b->core.pos == bt->last_pos) {
        bt->n_at_last++;
    } else {
        bt->last_pos = b->core.pos;
        bt->n_at_last = 1;
    }
}


/* Read records of fp's query into the batch, up to its byte share. Returns >= -1 or < -1. */
/*
 * The next record of a streamed input's query, checked (check.c). A CRAM
 * batch queries again from the last position returned and meets again the
 * records it returned there, and those that start before it: they are skipped
 * (*taken set) before the order check, which would see them go backwards.
 */
static int next_checked(rd_file_t *f, samFile *fp, bam1_t *b, hts_pos_t last, int64_t *skip,
                        int *taken)
{
    *taken = 0;
    if (!f->is_cram)
        return ss_io_itr_next(fp, f->itr, b, sam_hdr_nref(f->h), &f->order);
    int ret = sam_itr_next(fp, f->itr, b);
    if (ret < 0)
        return ret;
    if ((*taken = taken_before(f, b, last, skip)))
        return ret;
    int bad = ss_io_check_record(b, sam_hdr_nref(f->h), &f->order);
    return bad < 0 ? bad : ret;
}

static int fill(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_pos_t last, int64_t skip)
{
    rd_batch_t *bt = &f->batch;
    size_t bytes = 0;
    int ret = 0;
    while (bytes < (size_t)r->batch_bytes) {
        bam1_t *b = batch_slot(bt);
        if (!b) {
            ss_error("%s: out of memory for a batch of records", r->in.paths[f - r->f]);
            return -4;
        }
        int taken;
        if ((ret = next_checked(f, fp, b, last, &skip, &taken)) < 0)
            break;
        if (taken)
            continue;
        note_taken(bt, b);
        bytes += (size_t)b->l_data + sizeof(*b);
        bt->n++;
    }
    if (ret == -1)
        bt->done = 1;
    return ret < -1 ? ret : 0;
}

/* A streamed CRAM: query again from the last position taken, and fill. 0 or < -1. */
static int cram_refill(ss_reader_t *r, int i, rd_file_t *f, samFile *fp)
{
    hts_pos_t last = f->batch.last_pos, from = last >= 0 ? last : f->q_beg;
    int64_t skip = f->batch.n_at_last;
    int ret = -4;
    sam_hdr_t *h = sam_hdr_read(fp);
    hts_idx_t *idx = h ? ss_io_load_index(&r->in, i, fp) : NULL;
    if (!h)
        ss_error("%s: cannot read the header; check the file with samtools quickcheck",
                 r->in.paths[i]);
    else if (idx && !(f->itr = sam_itr_queryi(idx, f->q_tid, from, f->q_end)))
        query_error(r, i, f->q_tid, from, f->q_end);
    else if (idx)
        ret = fill(r, f, fp, last, skip);
    hts_itr_destroy(f->itr); /* it reads through this file's own index */
    f->itr = NULL;
    if (idx)
        hts_idx_destroy(idx);
    if (h)
        sam_hdr_destroy(h);
    return ret;
}

/* Open input i, read its next batch, close it. 0, or < -1 (a read error; -4 reported). */
static int refill(ss_reader_t *r, int i, rd_file_t *f)
{
    f->batch.n = f->batch.cur = 0;
    samFile *fp = ss_io_open_input(&r->in, i);
    if (!fp)
        return -4;
    int ret = -4;
    if (f->is_cram)
        ret = cram_refill(r, i, f, fp);
    else if (bam_resume(r, i, f, fp) == 0)
        ret = fill(r, f, fp, -1, 0);
    close_input(fp);
    return ret;
}

const ss_io_order_t *ss_reader_order(ss_reader_t *r, int i)
{
    return i >= 0 && i < r->in.n ? &r->f[i].order : NULL;
}

void ss_reader_set_shard(ss_reader_t *r, int shard_idx)
{
    r->shard = shard_idx;
}

int ss_reader_shard(const ss_reader_t *r)
{
    return r->shard;
}

/*
 * Where a record of standard input lies against the current query: < 0
 * before it (an earlier contig, or ending before beg: skipped, as an index
 * query would never return it), 0 inside, > 0 past it (held for the next).
 */
static int stdin_place(const rd_file_t *f, const bam1_t *a)
{
    int tid = a->core.tid;
    if (f->q_tid == HTS_IDX_NOCOOR)
        return tid == -1 ? 0 : -1;
    if (tid == -1 || tid > f->q_tid)
        return 1;
    if (tid < f->q_tid)
        return -1;
    if (a->core.pos >= f->q_end)
        return 1;
    return bam_endpos(a) <= f->q_beg ? -1 : 0;
}

/*
 * Standard input is read once, in file order, so a query only moves forward
 * (the plan gives its one worker whole contigs in file order): records
 * before the query's range are skipped, the first past it is held for the
 * next query. Every record is checked as it is read.
 */
static int stdin_next(rd_file_t *f, bam1_t *b)
{
    rd_batch_t *rp = &f->replay;
    if (f->q_behind)
        return -1;
    while (rp->cur < rp->n) { /* a re-query: what the contig's earlier queries returned */
        const bam1_t *a = rp->rec[rp->cur++];
        int where = stdin_place(f, a);
        if (where > 0) {
            rp->cur = rp->n; /* sorted: nothing later in it is in range either */
            return -1;
        }
        if (where == 0)
            return bam_copy1(b, a) ? 0 : -4;
    }
    for (;;) {
        if (!f->have_ahead) {
            int ret = sam_read1(f->fp, f->h, f->ahead);
            if (ret < 0)
                return ret;
            int bad = ss_io_check_record(f->ahead, sam_hdr_nref(f->h), &f->order);
            if (bad < 0)
                return bam_copy1(b, f->ahead) ? bad : -4; /* b names the record */
            f->have_ahead = 1;
        }
        int where = stdin_place(f, f->ahead);
        if (where > 0)
            return -1;
        f->have_ahead = 0;
        if (where == 0)
            return bam_copy1(b, f->ahead) && replay_keep(f, f->ahead) == 0 ? 0 : -4;
        if (f->ahead->core.tid >= 0) /* a later query of its contig cannot have it back */
            f->dropped[f->ahead->core.tid] = 1;
    }
}

int ss_reader_next(ss_reader_t *r, int i, bam1_t *b)
{
    rd_file_t *f = file_of(r, i);
    if (!f)
        return -4;
    if (f->mode == RD_STDIN)
        return stdin_next(f, b);
    if (f->in_win)
        return window_next(r, i, f, b);
    if (f->mode != RD_STREAMED)
        return f->itr ? ss_io_itr_next(f->fp, f->itr, b, sam_hdr_nref(f->h), &f->order) : -4;
    rd_batch_t *bt = &f->batch;
    if (bt->cur == bt->n) {
        if (bt->done)
            return -1;
        int ret = refill(r, i, f);
        if (ret < 0)
            return ret;
        if (bt->n == 0)
            return -1;
    }
    if (!bam_copy1(b, bt->rec[bt->cur++])) {
        ss_error("%s: out of memory copying a record", r->in.paths[i]);
        return -4;
    }
    return 0;
}

/* ---- accessors ---- */

samFile *ss_reader_file(ss_reader_t *r, int i)
{
    rd_file_t *f = file_of(r, i);
    return f ? f->fp : NULL;
}

sam_hdr_t *ss_reader_header(ss_reader_t *r, int i)
{
    rd_file_t *f = file_of(r, i);
    return f ? f->h : NULL;
}

hts_idx_t *ss_reader_index(ss_reader_t *r, int i)
{
    rd_file_t *f = file_of(r, i);
    return f ? f->idx : NULL;
}

int ss_reader_is_cram(const ss_reader_t *r, int i)
{
    return i >= 0 && i < r->in.n && r->f[i].is_cram;
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
    int n = 0;
    for (int i = 0; i < r->in.n; i++)
        n += r->f[i].mode == RD_HELD;
    return n;
}

int ss_reader_streams(const ss_reader_t *r)
{
    return r->n_refused > 1 ? r->n_refused : 0;
}

int ss_reader_opens(const ss_reader_t *r)
{
    return r->opens;
}

void ss_reader_destroy(ss_reader_t *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->in.n; i++) {
        rd_file_t *f = &r->f[i];
        hts_itr_destroy(f->itr);
        close_file(f);
        if (f->ahead)
            bam_destroy1(f->ahead);
        batch_free(&f->replay);
        free(f->dropped);
        if (f->h && f->own_h && f->mode != RD_STDIN) /* standard input's header is the job's */
            sam_hdr_destroy(f->h);
        batch_free(&f->batch);
        free(f->win.s);
        if (f->win_read)
            bam_destroy1(f->win_read);
    }
    if (r->held)
        ss_io_budget_give(r->held);
    free(r->src);
    free(r->f);
    free(r);
}

ss_source_t *ss_reader_source(ss_reader_t *r, int i)
{
    return i >= 0 && i < r->in.n ? &r->src[i].src : NULL;
}
