/*
 * pileup_read.c -- which reads enter the pileup, and where a shard starts.
 *
 * The filter reproduces samtools mpileup 1.16's read callback, in its order,
 * because the order matters: BAQ rewrites base qualities before -C reads
 * them, and -C lowers MAPQ before -q tests it. The pileup's reads are taken
 * a batch ahead so that BAQ runs on many at once (pl_ahead_t); the filters
 * and BAQ of each read stay what they were, and so does the order.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pileup.h"

/* Which step of samtools' filter a read reached. */
enum { DROP = 0, KEEP = 1, KEEP_BAQ = 2, REF_ERROR = -1 };

/*
 * The filters before BAQ: DROP, KEEP, KEEP_BAQ (keep, once BAQ ran), or
 * REF_ERROR when the reference could not be read (reported). May rewrite b.
 */
static int keep_before_baq(pl_input_t *in, bam1_t *b, int may_baq)
{
    const pl_opts_t *o = in->opts;
    bam1_core_t *c = &b->core;

    if (c->tid < 0 || (c->flag & BAM_FUNMAP))
        return DROP;
    if (o->rflag_require && !(o->rflag_require & c->flag))
        return DROP;
    if (o->rflag_filter && (o->rflag_filter & c->flag))
        return DROP;
    if (in->bed && o->all == 0 &&
        !ss_bed_overlap(in->bed, sam_hdr_tid2name(in->hdr, c->tid), c->pos, bam_endpos(b)))
        return DROP;
    if (o->rg_exclude) {
        uint8_t *rg = bam_aux_get(b, "RG");
        if (rg && khash_str2int_get(o->rg_exclude, (const char *)(rg + 1), NULL) == 0)
            return DROP;
    }
    if (o->illumina13) {
        uint8_t *q = bam_get_qual(b);
        for (int i = 0; i < c->l_qseq; ++i)
            q[i] = q[i] > 31 ? q[i] - 31 : 0;
    }
    if (!in->ref)
        return KEEP;
    /*
     * The reference window must hold what BAQ and -C read (the read's
     * span and a band of up to its length on each side) and the deleted
     * bases the formatter prints.
     */
    hts_pos_t rlen = bam_cigar2rlen(c->n_cigar, bam_get_cigar(b)), m = c->l_qseq + rlen + 64;
    if (ss_ref_cover(in->ref_src, in->ref_tid, c->pos - m, c->pos + rlen + m) < 0) {
        in->read_err = -4;
        return REF_ERROR;
    }
    if (in->ref_len <= c->pos) {
        if (!in->warned_beyond_ref++)
            ss_warn("%s: reads on %s start past the end of the reference; skipped, as "
                    "samtools mpileup does",
                    in->path, sam_hdr_tid2name(in->hdr, c->tid));
        return DROP;
    }
    /*
     * BAQ is the expensive step. Reads that end before the shard's first
     * position only steer the depth cap, which BAQ cannot change; with -C
     * the MAPQ depends on BAQ'd qualities, so then every read gets it.
     */
    if (in->do_baq && (o->cap_q > 10 || (may_baq && bam_endpos(b) > in->baq_from)))
        return KEEP_BAQ;
    return KEEP;
}

static int baq_flag(const pl_input_t *in)
{
    return in->opts->redo_baq ? 7 : 3;
}

/* The filters after BAQ, in samtools' order: -C lowers MAPQ before -q tests it. */
static int keep_after_baq(pl_input_t *in, bam1_t *b)
{
    const pl_opts_t *o = in->opts;
    bam1_core_t *c = &b->core;
    if (in->ref && o->cap_q > 10) {
        int q = sam_cap_mapq(b, in->ref, in->ref_len, o->cap_q);
        if (q < 0)
            return 0;
        if (c->qual > q)
            c->qual = q;
    }
    if (c->qual < o->min_mq)
        return 0;
    if (!o->orphans && (c->flag & BAM_FPAIRED) && !(c->flag & BAM_FPROPER_PAIR))
        return 0;
    return 1;
}

/*
 * samtools' whole read filter on one read: 1 keeps it, 0 drops it, -1 when
 * the reference could not be read (reported). May rewrite b.
 */
static int keep_read(pl_input_t *in, bam1_t *b, int may_baq)
{
    int k = keep_before_baq(in, b, may_baq);
    if (k == REF_ERROR)
        return -1;
    if (k == DROP)
        return 0;
    if (k == KEEP_BAQ)
        baq_one(in->baq, b, in->ref, in->ref_len, baq_flag(in));
    return keep_after_baq(in, b);
}

/*
 * Reads taken ahead. rec[next..n) passed the filters before BAQ and had BAQ;
 * each remembers the source's return value and how many source records it
 * stands for (itself and the dropped ones before it), so n_read counts what
 * the pileup consumed, as before. end: what the source said after rec[n-1]
 * (0: not at the end yet).
 */
struct pl_ahead_s {
    bam1_t **rec;
    bam1_t **baq; /* the batch's reads that get BAQ */
    int *src_ret, *baq_ret;
    uint64_t *consumed;
    int cap, n, next, end;
    int end_src;   /* end came from the source (else: reported already) */
    uint64_t tail; /* source records dropped after the last one taken */
};

pl_ahead_t *pl_ahead_init(int cap)
{
    pl_ahead_t *a = ss_alloc_private(sizeof(*a));
    if (!a)
        return NULL;
    a->cap = cap;
    a->rec = calloc(cap, sizeof(*a->rec));
    a->baq = calloc(cap, sizeof(*a->baq));
    a->src_ret = calloc(cap, sizeof(*a->src_ret));
    a->baq_ret = calloc(cap, sizeof(*a->baq_ret));
    a->consumed = calloc(cap, sizeof(*a->consumed));
    if (!a->rec || !a->baq || !a->src_ret || !a->baq_ret || !a->consumed)
        goto fail;
    for (int i = 0; i < cap; i++)
        if (!(a->rec[i] = ss_bam_private()))
            goto fail;
    return a;
fail:
    pl_ahead_destroy(a);
    return NULL;
}

void pl_ahead_destroy(pl_ahead_t *a)
{
    if (!a)
        return;
    for (int i = 0; a->rec && i < a->cap; i++)
        if (a->rec[i])
            bam_destroy1(a->rec[i]);
    free(a->rec);
    free(a->baq);
    free(a->src_ret);
    free(a->baq_ret);
    free(a->consumed);
    free(a);
}

static void ahead_reset(pl_ahead_t *a)
{
    a->n = a->next = a->end = a->end_src = 0;
    a->tail = 0;
}

/* Take up to cap filtered reads, then BAQ those that need it, together. */
static void ahead_fill(pl_input_t *in)
{
    pl_ahead_t *a = in->ahead;
    uint64_t consumed = 0;
    int n_baq = 0, ret = 0;
    a->n = a->next = 0;
    while (a->n < a->cap) {
        bam1_t *b = a->rec[a->n];
        errno = 0; /* htslib gives -4 for a bad record and for a failed allocation alike */
        if ((ret = ss_source_next(in->src, b)) < 0) {
            a->end = ret;
            a->end_src = 1;
            in->read_errno = errno;
            break;
        }
        if (b->core.pos < in->skip_before)
            continue; /* handed out from the range before (follow) */
        consumed++;
        hts_pos_t end = bam_endpos(b);
        if (end - b->core.pos > in->longest)
            in->longest = end - b->core.pos; /* the CRAM window's reach (pileup.c) */
        if (b->core.pos < in->shard_end && end > in->held_end)
            in->held_end = end;
        int k = keep_before_baq(in, b, 1);
        if (k == REF_ERROR) {
            a->end = -4; /* the reference could not be read: reported */
            break;
        }
        if (k == DROP)
            continue;
        if (k == KEEP_BAQ)
            a->baq[n_baq++] = b;
        a->src_ret[a->n] = ret;
        a->consumed[a->n++] = consumed;
        consumed = 0;
    }
    a->tail = consumed;
    if (n_baq &&
        baq_batch(in->baq, a->baq, n_baq, in->ref, in->ref_len, baq_flag(in), a->baq_ret) < 0) {
        ss_error("%s: out of memory for BAQ; lower -@", in->path);
        a->n = 0;
        a->end = -4;
    }
}

/*
 * The reads past a shard (pl_query_shard). htslib fills a column only once a read
 * starting after it has entered the pileup, so the reference run prints a shard's
 * last columns after the first read starting at or past the shard's end entered.
 * Entering, that read adjusts the qualities it shares with its mate (mate-overlap
 * detection), and a mate inside a deletion shows in those columns the quality of its
 * base after the deletion, which may be one of them. So the shard's pileup takes
 * that read too, and nothing after it. The first range reaches `reach` past the
 * shard; past it the read is looked for on to the farthest end of the reads taken
 * (past that it overlaps none of them and changes nothing), never past follow_end
 * (the scope: the reference run reads no further). So a reach of the longest read's
 * span needs no second range.
 */
int pl_query_shard(pl_input_t *in, int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t reach,
                   hts_pos_t follow_end)
{
    hts_pos_t to = reach < follow_end - end ? end + reach : follow_end; /* end may be the max */
    if (pl_query(in, tid, beg, to) < 0)
        return -1;
    in->shard_end = end, in->follow_end = follow_end, in->queried_to = to;
    return 0;
}

/* The range ended before the read past the shard: look on. 1 looking, 0 done, -1 error. */
static int follow_on(pl_input_t *in)
{
    hts_pos_t to = in->held_end < in->follow_end ? in->held_end : in->follow_end;
    if (in->shard_end < 0 || to <= in->queried_to)
        return 0;
    hts_pos_t from = in->queried_to;
    ahead_reset(in->ahead);
    if (ss_source_query(in->src, in->q_tid, from, to) < 0)
        return -1;
    in->skip_before = from, in->queried_to = to;
    return 1;
}

int pl_read_filtered(void *data, bam1_t *b)
{
    pl_input_t *in = data;
    pl_ahead_t *a = in->ahead;
    if (in->past_end)
        return -1;
    for (;;) {
        while (a->next < a->n) {
            int i = a->next++;
            bam1_t *r = a->rec[i];
            in->n_read += a->consumed[i];
            if (!keep_after_baq(in, r))
                continue;
            bam1_t t = *b; /* hand the record over: the engine's buffer comes back to us */
            *b = *r;
            *r = t;
            in->past_end = in->shard_end >= 0 && b->core.pos >= in->shard_end;
            return a->src_ret[i];
        }
        if (a->end) {
            int ret = a->end;
            in->n_read += a->tail;
            a->tail = 0;
            int more = ret == -1 ? follow_on(in) : 0;
            if (more > 0)
                continue;
            if (more < 0)
                return SS_IO_REPORTED;
            if (ret < -1 && a->end_src)
                in->read_err = ret;
            return ret;
        }
        ahead_fill(in);
    }
}

int pl_query(pl_input_t *in, int tid, hts_pos_t beg, hts_pos_t end)
{
    if (in->ahead)
        ahead_reset(in->ahead);
    in->shard_end = in->skip_before = -1;
    in->held_end = 0, in->past_end = 0;
    in->q_tid = tid;
    return ss_source_query(in->src, tid, beg, end);
}

/* Kept for the caller, which knows the shard and says what failed (pileup.c pileup_error). */
static int read_error(pl_input_t *in, int ret)
{
    in->read_errno = errno;
    in->read_err = ret;
    return -1;
}

int pl_check_unplaced(pl_input_t *in, int n, bam1_t *b, uint64_t *reads)
{
    for (int i = 0; i < n; i++) {
        int ret;
        if (ss_source_query(in[i].src, SS_IO_UNPLACED, 0, 0) < 0)
            return -1;
        while ((ret = ss_source_next(in[i].src, b)) >= 0)
            (*reads)++;
        if (ret < -1)
            return read_error(&in[i], ret);
    }
    return 0;
}

int pl_has_reads(pl_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t end, bam1_t *b)
{
    if (beg >= end)
        return 0;
    for (int i = 0; i < n; i++) {
        int ret;
        if (pl_query(&in[i], tid, beg, end) < 0)
            return -1;
        while ((ret = ss_source_next(in[i].src, b)) >= 0) {
            int keep = keep_read(&in[i], b, 0);
            if (keep)
                return keep;
        }
        if (ret < -1)
            return read_error(&in[i], ret);
    }
    return 0;
}

/* A min-heap of read ends: the reads the pileup would still hold. */
typedef struct {
    hts_pos_t *a;
    size_t n, m;
} end_heap_t;

static int heap_push(end_heap_t *h, hts_pos_t v)
{
    if (h->n == h->m) {
        size_t m = h->m ? h->m * 2 : 256;
        hts_pos_t *a = realloc(h->a, m * sizeof(*a));
        if (!a)
            return -1;
        h->a = a, h->m = m;
    }
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2] > v) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = v;
    return 0;
}

static void heap_pop(end_heap_t *h)
{
    hts_pos_t v = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= v)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = v;
}

/*
 * Is q a safe point for input `in`? htslib drops a read starting at P when
 * the pileup already holds more than max_depth reads, and it holds exactly
 * the accepted reads that end at or after P. If, counting every filtered
 * read as accepted, no read from the earliest start of those covering q-1 up
 * to q could be dropped, then every read covering q-1 was accepted by the
 * reference run too, and a fresh pileup started at q-1 holds the same reads
 * (and pairs the same mates) from q on. "End at or after P" counts the reads
 * whose last base is P - 1 (htslib frees a read only when it fills P), so the
 * reads are taken from those overlapping from - 1. Returns 1, 0, or -1 on error.
 */
static int safe_point(pl_input_t *in, int tid, hts_pos_t q, hts_pos_t scope_beg, int max_depth,
                      bam1_t *b, end_heap_t *heap)
{
    hts_pos_t from = q - 1;
    int ret;
    if (pl_query(in, tid, q - 1, q) < 0)
        return -1;
    while ((ret = ss_source_next(in->src, b)) >= 0) {
        int keep = keep_read(in, b, 0);
        if (keep < 0)
            return -1;
        if (keep) {
            if (b->core.pos < from)
                from = b->core.pos;
            break; /* sorted: the first kept read starts earliest */
        }
    }
    if (ret < -1)
        return read_error(in, ret);
    from = from - 1 > scope_beg ? from - 1 : scope_beg;
    if (pl_query(in, tid, from, q) < 0)
        return -1;
    heap->n = 0;
    while ((ret = ss_source_next(in->src, b)) >= 0) {
        int keep = keep_read(in, b, 0);
        if (keep < 0)
            return -1;
        if (!keep)
            continue;
        hts_pos_t p = b->core.pos;
        while (heap->n && heap->a[0] < p)
            heap_pop(heap);
        if ((int64_t)heap->n + 1 > max_depth)
            return 0;
        if (heap_push(heap, p + bam_cigar2rlen(b->core.n_cigar, bam_get_cigar(b))) < 0) {
            ss_error("out of memory while planning a pileup shard");
            return -1;
        }
    }
    if (ret < -1)
        return read_error(in, ret);
    return 1;
}

hts_pos_t pl_safe_start(pl_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t scope_beg,
                        int max_depth, bam1_t *b)
{
    if (beg <= scope_beg)
        return scope_beg;
    if (max_depth == INT_MAX)
        return beg - 1; /* no depth cap: the reads covering beg-1 are all there is */
    end_heap_t heap = {NULL, 0, 0};
    hts_pos_t q = beg, step = 1024, start = scope_beg;
    while (q > scope_beg) {
        int safe = 1;
        for (int i = 0; i < n && safe == 1; i++)
            safe = safe_point(&in[i], tid, q, scope_beg, max_depth, b, &heap);
        if (safe < 0) {
            start = -1;
            break;
        }
        if (safe) {
            start = q - 1;
            break;
        }
        q = beg - step;
        step *= 2;
    }
    free(heap.a);
    return start;
}
