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
 * Standard input ("-") is read by reader_stdin.c, the shard's window by
 * reader_window.c; the state they share is in reader_priv.h. Files are
 * opened by reader_open.c, below all of them; the inputs are handed out as
 * record sources by source.c, above this file.
 *
 * Headers are kept for every input, so ss_reader_header never opens a file.
 * Owned by one worker thread; shared with other workers only what the job
 * lends, and the CRAM reference's handle count, under shared_ref_lock
 * (reader_open.c).
 */
#include <htslib/bgzf.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ss_base.h"
#include "reader_priv.h"
#include "ss_budget.h"

/* Record bytes a streamed batch holds: a share of BATCH_TOTAL per input, within these bounds. */
#define BATCH_TOTAL (8 << 20)
#define BATCH_MIN   (32 << 10)
#define BATCH_MAX   (1 << 20)

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

ss_reader_t *ss_reader_init(const ss_io_inputs_t *in)
{
    ss_reader_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->in = *in;
    r->shard = -1;
    r->w_tid = -2;
    r->own_tid = -2;
    if (in->n > 0 && (!(r->f = calloc((size_t)in->n, sizeof(*r->f))) ||
                      !(r->src = calloc((size_t)in->n, sizeof(*r->src))))) {
        free(r->f);
        free(r);
        return NULL;
    }
    int share = in->n > 0 ? BATCH_TOTAL / in->n : BATCH_MAX;
    r->batch_bytes = share < BATCH_MIN ? BATCH_MIN : share > BATCH_MAX ? BATCH_MAX : share;
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
        rd_close_input(f->fp); /* fails only after a read error, already reported */
    f->idx = NULL;
    f->fp = NULL;
    f->failed = 0; /* a new handle starts clean */
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
            if (rd_stdin_borrow(r, f) < 0)
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
    rd_own_end(r);
    r->w_tid = -2;
    for (int i = 0; i < r->in.n; i++) {
        rd_file_t *f = &r->f[i];
        f->win_state = WIN_NONE;
        f->in_win = 0;
        rd_window_release(r, f);
        if (f->mode == RD_HELD || f->mode == RD_STDIN)
            continue;
        hts_itr_destroy(f->itr);
        f->itr = NULL;
        close_file(f);
    }
    r->is_open = 0;
}

/* ---- batches ---- */

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
                 "please report it)",
                 r->in.paths[i], tid + 1, h ? sam_hdr_nref(h) : 0);
        return -1;
    }
    ss_error("%s: cannot query %s:%lld-%lld through the index; check the index matches the "
             "file (samtools index)",
             r->in.paths[i], ctg, (long long)beg + 1, (long long)end);
    return -1;
}

/*
 * A BAM iterator over the unplaced reads of a file without mapped ones
 * starts at offset 0, which hts_itr_next takes for "do not seek": it reads
 * from where fp is, the header here (a held BAM shares the job's header and
 * never reads its own), and fails. Start it after the header. 0, or -1 after
 * ss_error().
 */
static int rest_from_records(ss_reader_t *r, int i, rd_file_t *f, samFile *fp)
{
    if (f->is_cram || !f->itr->read_rest || f->itr->curr_off != 0)
        return 0;
    if (!f->data_beg) {
        sam_hdr_t *h = bgzf_seek(fp->fp.bgzf, 0, SEEK_SET) == 0 ? sam_hdr_read(fp) : NULL;
        if (!h) {
            ss_error("%s: cannot read the header again; check the file with samtools "
                     "quickcheck",
                     r->in.paths[i]);
            return -1;
        }
        sam_hdr_destroy(h);
        f->data_beg = bgzf_tell(fp->fp.bgzf);
    }
    f->itr->curr_off = (uint64_t)f->data_beg;
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
    rd_own_query(r, f);
    if (f->mode == RD_STDIN)
        return rd_stdin_query(r, i, f);
    ss_io_order_reset(&f->order);
    f->in_win = 0;
    if (f->is_cram && rd_in_window(r, tid, beg, end) && rd_window_query(r, i, f)) {
        f->in_win = 1;
        return 0;
    }
    if (f->mode == RD_STREAMED) {
        f->failed = 0; /* every batch opens its own handle */
        f->batch.n = f->batch.cur = f->batch.done = 0;
        f->batch.last_pos = -1;
        f->batch.n_at_last = 0;
        return 0; /* the first batch queries */
    }
    if (f->failed)
        return 0; /* the next read says so; a query would read the broken handle */
    if (!(f->itr = sam_itr_queryi(f->idx, tid, beg, end)))
        return query_error(r, i, tid, beg, end);
    if (rest_from_records(r, i, f, f->fp) < 0)
        return -1;
    if (!f->is_cram)
        rd_bam_start(r, f, f->fp, f->itr, tid, beg);
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
        if (f->itr)
            rd_bam_start(r, f, fp, f->itr, f->q_tid, f->q_beg);
        if (idx && !shared)
            hts_idx_destroy(idx); /* a BAM iterator keeps its own copy of the offsets */
        if (!f->itr)
            return idx ? query_error(r, i, f->q_tid, f->q_beg, f->q_end) : -1;
        return rest_from_records(r, i, f, fp);
    }
    if (f->itr->curr_off && bgzf_seek(fp->fp.bgzf, (int64_t)f->itr->curr_off, SEEK_SET) < 0) {
        ss_error("%s: cannot seek back to where the last batch of records ended; the file may "
                 "have changed during the run",
                 r->in.paths[i]);
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

/* Read records of fp's query into the batch, up to its byte share. Returns >= -1 or < -1. */
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
    /* a read-to-the-end iterator seeks once and forgets where it was: the next batch resumes here
     */
    if (ret >= 0 && !f->is_cram && f->itr->read_rest)
        f->itr->curr_off = (uint64_t)bgzf_tell(fp->fp.bgzf);
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
    rd_close_input(fp);
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
 * A read of f failed with ret (< -1): an htslib error is final for the
 * stream (rd_file_t.failed); a bad record (check.c) leaves the handle sound,
 * and -4 was reported. Returns ret.
 */
static int read_failed(rd_file_t *f, int ret)
{
    if (ret != -4 && !ss_io_is_bad_record(ret))
        f->failed = ret;
    return ret;
}

/* The query's next record from wherever f's records are: ss_reader_next's result. */
static int next_record(ss_reader_t *r, int i, rd_file_t *f, bam1_t *b)
{
    if (f->mode == RD_STDIN)
        return rd_stdin_next(f, b);
    if (f->in_win)
        return rd_window_next(r, i, f, b);
    if (f->failed)
        return f->failed; /* final: the handle's state is undefined after it */
    if (f->mode != RD_STREAMED) {
        int ret = f->itr ? ss_io_itr_next(f->fp, f->itr, b, sam_hdr_nref(f->h), &f->order) : -4;
        return ret < -1 ? read_failed(f, ret) : ret;
    }
    rd_batch_t *bt = &f->batch;
    if (bt->cur == bt->n) {
        if (bt->done)
            return -1;
        int ret = refill(r, i, f);
        if (ret < 0)
            return read_failed(f, ret);
        if (bt->n == 0)
            return -1;
    }
    if (!bam_copy1(b, bt->rec[bt->cur++])) {
        ss_error("%s: out of memory copying a record", r->in.paths[i]);
        return -4;
    }
    return 0;
}

int ss_reader_next(ss_reader_t *r, int i, bam1_t *b)
{
    rd_file_t *f = file_of(r, i);
    if (!f)
        return -4;
    int ret = next_record(r, i, f, b);
    if (ret >= 0) {
        rd_own_note(r, f, b);
        r->records++;
    }
    return ret;
}

uint64_t ss_reader_records(const ss_reader_t *r)
{
    return r->records;
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

/* A worker's inflated blocks (ss_reader_cache_blocks): a shard's start in pileup, a quarter
 * of a 64 kb shard's time inflated again without them (benchmarks.md). */
#define BLOCK_CACHE_TOTAL ((size_t)2 << 20)
/* htslib's BGZF cache keeps nothing smaller than one 64 KiB block, and a few are needed. */
#define BLOCK_CACHE_MIN ((size_t)256 << 10)

void ss_reader_cache_blocks(ss_reader_t *r)
{
    size_t each = BLOCK_CACHE_TOTAL / (size_t)(r->in.n > 0 ? r->in.n : 1);
    if (each < BLOCK_CACHE_MIN)
        return;
    for (int i = 0; i < r->in.n; i++) {
        samFile *fp = ss_reader_file(r, i); /* NULL when streamed: nothing to seek back to */
        if (fp && fp->format.compression == bgzf)
            bgzf_set_cache_size(fp->fp.bgzf, (int)each); /* a size only: cheap per shard */
    }
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
        rd_window_release(r, f);
        rd_marks_free(f);
    }
    rd_window_free(r);
    if (r->mark_read)
        bam_destroy1(r->mark_read);
    if (r->held)
        ss_io_budget_give(r->held);
    free(r->tally);
    free(r->src);
    free(r->front);
    free(r->f);
    free(r);
}
