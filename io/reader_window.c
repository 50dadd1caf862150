/*
 * reader_window.c -- the shard's window (ss_reader_window), which makes its
 * CRAM queries cheaper: a CRAM reads the window's records once, from its open
 * handle or one opened for it, and answers every query inside it from them
 * (one slice decode a shard, not three). A BAM query needs no window: it
 * starts at a mark (reader_marks.c). Owned by the reader's worker.
 */
#include <htslib/bgzf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ss_base.h"
#include "reader_priv.h"

void ss_reader_window(ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end)
{
    /* a step in front reads around every query: the window holds that too */
    hts_pos_t reach = r->front_reach;
    r->w_tid = tid;
    r->w_beg = beg > reach ? beg - reach : 0;
    r->w_end = end < HTS_POS_MAX - reach ? end + reach : HTS_POS_MAX;
}

int rd_in_window(const ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end)
{
    return tid >= 0 && tid == r->w_tid && r->w_beg <= beg && end <= r->w_end;
}

/*
 * A window's records are packed back to back, each its core, its data
 * length and its data: a CRAM window of a thousand-input cohort is most of a
 * worker's memory, and a bam1_t per record cost 80 bytes of struct and up to
 * twice its data (htslib rounds the data buffer up to a power of two).
 * They are packed into blocks of WIN_BLOCK bytes that the reader lends its
 * inputs and takes back at the shard's end, not into one buffer per input:
 * that grew by half again each time it filled and kept its largest size
 * across shards, so it held about 1.6 times its records (a 1000-input
 * cohort peaked at 595 MB, 497 MB in blocks). A block's unused tail is what
 * is lost now: 16 KiB per input on average. A record larger than a block
 * gets one of its own, freed when given back.
 */
#define WIN_BLOCK (32 << 10)

struct rd_block_s {
    rd_block_t *next; /* in its window, or in the reader's spare list */
    size_t used, cap; /* bytes of data filled, and allocated */
    unsigned char data[];
};
_Static_assert(offsetof(rd_block_t, data) % 8 == 0, "a block's first record is 8-aligned");

typedef struct {
    bam1_core_t core;
    uint32_t l_data;
} win_head_t;
_Static_assert(sizeof(win_head_t) % 8 == 0, "a packed record's data starts 8-aligned");

/* A block with room for need bytes: a spare one if it fits, else a new one; NULL out of memory. */
static rd_block_t *block_take(ss_reader_t *r, size_t need)
{
    rd_block_t *k = r->win_spare;
    if (k && need <= WIN_BLOCK) {
        r->win_spare = k->next;
    } else {
        size_t cap = need > WIN_BLOCK ? need : WIN_BLOCK;
        if (!(k = malloc(sizeof(*k) + cap)))
            return NULL;
        k->cap = cap;
    }
    k->next = NULL;
    k->used = 0;
    return k;
}

void rd_window_release(ss_reader_t *r, rd_file_t *f)
{
    rd_block_t *next;
    for (rd_block_t *k = f->win; k; k = next) {
        next = k->next;
        if (k->cap == WIN_BLOCK) {
            k->next = r->win_spare;
            r->win_spare = k;
        } else {
            free(k);
        }
    }
    f->win = f->win_tail = f->win_at = NULL;
    f->win_cur = 0;
}

void rd_window_free(ss_reader_t *r)
{
    rd_block_t *next;
    for (rd_block_t *k = r->win_spare; k; k = next) {
        next = k->next;
        free(k);
    }
    r->win_spare = NULL;
    if (r->win_read)
        bam_destroy1(r->win_read);
    r->win_read = NULL;
}

static int win_put(ss_reader_t *r, rd_file_t *f, const bam1_t *b)
{
    win_head_t h = {.core = b->core, .l_data = (uint32_t)b->l_data};
    size_t pad = (8 - (size_t)b->l_data % 8) % 8; /* the next record's data is 8-aligned */
    size_t size = sizeof(h) + (size_t)b->l_data + pad;
    rd_block_t *k = f->win_tail;
    if (!k || k->used + size > k->cap) {
        if (!(k = block_take(r, size)))
            return -1;
        if (f->win_tail)
            f->win_tail->next = k;
        else
            f->win = k;
        f->win_tail = k;
    }
    memcpy(k->data + k->used, &h, sizeof(h));
    memcpy(k->data + k->used + sizeof(h), b->data, (size_t)b->l_data);
    k->used += size;
    return 0;
}

/* The packed record at *off in k as a read-only bam1_t; *off moves past it. */
static bam1_t win_view(const rd_block_t *k, size_t *off)
{
    win_head_t h;
    memcpy(&h, k->data + *off, sizeof(h));
    bam1_t v = {.core = h.core,
                .l_data = (int)h.l_data,
                .m_data = h.l_data,
                .data = (uint8_t *)k->data + *off + sizeof(h)};
    size_t pad = (8 - (size_t)h.l_data % 8) % 8;
    *off += sizeof(h) + h.l_data + pad;
    return v;
}

/*
 * Read every record of the window into f->win through fp and idx, checked
 * as one stream. Returns 0, or < 0 when the records could not all be read
 * (what was read is given back): -1 no iterator, -4 out of memory, else the
 * read's code. The caller then reads its queries from the file, which meets
 * the same fault where a query reaches it and reports it as it always has
 * (window_ready makes an htslib error on a held handle final first).
 */
static int window_fill(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_idx_t *idx)
{
    if (!r->win_read && !(r->win_read = bam_init1()))
        return -4;
    hts_itr_t *itr = sam_itr_queryi(idx, r->w_tid, r->w_beg, r->w_end);
    if (!itr)
        return -1;
    ss_io_order_t order;
    ss_io_order_reset(&order);
    int ret;
    rd_window_release(r, f);
    while ((ret = ss_io_itr_next(fp, itr, r->win_read, sam_hdr_nref(f->h), &order)) >= 0)
        if (win_put(r, f, r->win_read) < 0) {
            ret = -4;
            break;
        }
    hts_itr_destroy(itr);
    if (ret != -1)
        rd_window_release(r, f);
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
    int ret = idx ? window_fill(r, f, fp, idx) : -1;
    if (ret == 0)
        f->win_state = WIN_LOADED;
    else if (fp == f->fp && ret < -1 && ret != -4 && !ss_io_is_bad_record(ret))
        f->failed = ret; /* read again, htslib's CRAM handle dereferences NULL */
    if (fp != f->fp) {
        if (idx)
            hts_idx_destroy(idx);
        if (h)
            sam_hdr_destroy(h);
        rd_close_input(fp);
    }
    return f->win_state == WIN_LOADED;
}

int rd_window_query(ss_reader_t *r, int i, rd_file_t *f)
{
    if (!window_ready(r, i, f))
        return 0;
    f->win_at = f->win;
    f->win_cur = 0;
    return 1;
}

/* The window's next record overlapping the query, as the file's iterator would give it. */
int rd_window_next(ss_reader_t *r, int i, rd_file_t *f, bam1_t *b)
{
    for (; f->win_at; f->win_at = f->win_at->next, f->win_cur = 0)
        while (f->win_cur < f->win_at->used) {
            bam1_t s = win_view(f->win_at, &f->win_cur);
            if (s.core.pos >= f->q_end) {
                f->win_at = NULL; /* sorted: nothing after it overlaps */
                return -1;
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
