/*
 * rl_source.c -- realignment as a record source: what pileup --realign reads
 * instead of the file. A query decides the range and its halo as the realign
 * kernel decides a shard (the same block, the same rules), then hands out the
 * records a region query of the realigned BAM would return, in its order.
 * Since every decision depends only on a bounded window of reads, the records
 * equal those of `seqshard realign` followed by an index query, whatever
 * ranges the reader asks for.
 *
 * Owned by one worker thread.
 */
#include <errno.h>
#include <stdlib.h>

#include "realign.h"

struct rl_source_s {
    ss_source_t src;        /* first: a ss_source_t * is a rl_source_t * */
    const rl_opts_t *o;
    ss_source_t *inner;     /* the file */
    const sam_hdr_t *h;
    const char *fasta;
    ss_ref_t *ref;
    rl_known_t *known;
    rl_block_t *blk;
    int *out;               /* block indexes of the range's records, in output order */
    int n_out, m_out, cur;
    int passthrough;        /* the unplaced reads: straight from the inner source */
    int counting;           /* count the next query's windows in [count_beg, count_end) */
    hts_pos_t count_beg, count_end;
    uint64_t counts[5];
};

/*
 * A read of the inner source failed with code r (errno err). Out of memory is
 * said here; any other failure is the consumer's to diagnose (pileup names the
 * file's own cause: a CRC, a damaged record), so nothing is said twice. -1.
 */
static int load_error(const rl_source_t *s, int tid, hts_pos_t beg, hts_pos_t end, int r, int err)
{
    if (r == SS_IO_REPORTED || ss_error_raised() || err != ENOMEM)
        return -1;
    /* htslib's -4 is a bad record or a failed allocation: errno tells */
    ss_error("%s: out of memory reading %s:%lld-%lld to realign; lower -@ or give the run "
             "more memory",
             s->inner->name, sam_hdr_tid2name(s->h, tid), (long long)beg + 1, (long long)end);
    return -1;
}

/* Every record of [beg, end) of the inner source into the block. 0, or -1 after ss_error(). */
static int load(rl_source_t *s, int tid, hts_pos_t beg, hts_pos_t end)
{
    rl_block_reset(s->blk);
    if (ss_source_query(s->inner, tid, beg, end) < 0)
        return -1;
    for (;;) {
        bam1_t *b = rl_block_next(s->blk);
        if (!b) {
            ss_error("out of memory holding reads to realign; use a smaller --shard-size");
            return -1;
        }
        errno = 0;
        int r = ss_source_next(s->inner, b);
        if (r < 0) {
            int err = errno;
            rl_block_unget(s->blk);
            return r == -1 ? 0 : load_error(s, tid, beg, end, r, err);
        }
    }
}

/* The reference under [lo, hi) and a read span and an indel either side. */
static int reference(rl_source_t *s, int tid, hts_pos_t lo, hts_pos_t hi, rl_ref_t *ref)
{
    const char *name = sam_hdr_tid2name(s->h, tid);
    hts_pos_t len;
    ss_ref_release(s->ref);
    const char *seq = ss_ref_get(s->ref, tid, name, &len);
    if (!seq && len < 0)
        return -1; /* out of memory: said */
    if (!seq) {
        ss_error("%s: no contig %s in the reference; give the FASTA the input was aligned to",
                 s->fasta, name);
        return -1;
    }
    hts_pos_t pad = RL_SPAN_MAX + RL_MAX_INDEL + 16;
    lo = lo > pad ? lo - pad : 0;
    hi = hi + pad < len ? hi + pad : len;
    if (lo > hi)
        lo = hi;
    if (ss_ref_cover(s->ref, tid, lo, hi) < 0)
        return -1;
    *ref = (rl_ref_t){seq + lo, lo, hi - lo, len, name};
    return 0;
}

/* samtools sort's order: POS, forward strand first, then input order. qsort's
 * comparator takes no context: the block being sorted is this thread's. */
static __thread const rl_block_t *sort_blk;
static int by_final_position(const void *pa, const void *pb)
{
    const bam1_t *a = sort_blk->recs[*(const int *)pa], *b = sort_blk->recs[*(const int *)pb];
    if (a->core.pos != b->core.pos)
        return a->core.pos < b->core.pos ? -1 : 1;
    if (bam_is_rev(a) != bam_is_rev(b))
        return bam_is_rev(a) ? 1 : -1;
    return (*(const int *)pa > *(const int *)pb) - (*(const int *)pa < *(const int *)pb);
}

/* The records a region query of [beg, end) returns: final span overlapping it. */
static int select_range(rl_source_t *s, hts_pos_t beg, hts_pos_t end)
{
    int n = rl_block_n(s->blk);
    if (n > s->m_out) {
        int *a = realloc(s->out, (size_t)n * sizeof(*a));
        if (!a) {
            ss_error("out of memory realigning reads");
            return -1;
        }
        s->out = a, s->m_out = n;
    }
    s->n_out = s->cur = 0;
    for (int i = 0; i < n; i++) {
        const bam1_t *b = rl_block_rec(s->blk, i);
        if (b->core.pos < end && bam_endpos(b) > beg)
            s->out[s->n_out++] = i;
    }
    sort_blk = s->blk;
    if (s->n_out > 1)
        qsort(s->out, (size_t)s->n_out, sizeof(*s->out), by_final_position);
    return 0;
}

static int rl_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    rl_source_t *s = (rl_source_t *)src;
    int counting = s->counting;
    s->counting = 0;
    s->passthrough = tid == SS_IO_UNPLACED;
    if (s->passthrough)
        return ss_source_query(s->inner, tid, beg, end);
    hts_pos_t halo = rl_halo(s->o), len = sam_hdr_tid2len(s->h, tid);
    hts_pos_t lo = beg > halo ? beg - halo : 0;
    hts_pos_t hi = end < len ? (end + halo < len ? end + halo : len) : end;
    rl_ref_t ref;
    rl_counts_t c = {0};
    if (load(s, tid, lo, hi) < 0 || reference(s, tid, lo, hi < len ? hi : len, &ref) < 0 ||
        rl_known_load(s->known, ref.name, lo, hi < len ? hi : len, &ref, s->blk) < 0)
        return -1;
    hts_pos_t own_beg = counting ? s->count_beg : 0, own_end = counting ? s->count_end : 0;
    if (rl_block_decide(s->blk, s->o, &ref, own_beg, own_end, &c) < 0) {
        ss_error("out of memory realigning reads; use a smaller --shard-size");
        return -1;
    }
    s->counts[0] += c.windows, s->counts[1] += c.skipped, s->counts[2] += c.cleaned;
    s->counts[3] += c.realigned, s->counts[4] += c.unclipped;
    return select_range(s, beg, end);
}

static int rl_next(ss_source_t *src, bam1_t *b)
{
    rl_source_t *s = (rl_source_t *)src;
    if (s->passthrough)
        return ss_source_next(s->inner, b);
    if (s->cur == s->n_out)
        return -1;
    if (!bam_copy1(b, rl_block_rec(s->blk, s->out[s->cur]))) {
        ss_error("out of memory copying a realigned read");
        return SS_IO_REPORTED;
    }
    b->id = (uint64_t)s->cur++;
    return 0;
}

rl_source_t *rl_source_init(const rl_opts_t *o, ss_source_t *inner, const sam_hdr_t *h,
                            const char *fasta)
{
    rl_source_t *s = ss_alloc_private(sizeof(*s)); /* written per record */
    if (!s || !(s->ref = ss_ref_init(fasta)) || !(s->blk = rl_block_init())) {
        ss_error("out of memory starting realignment");
        rl_source_destroy(s);
        return NULL;
    }
    s->src = (ss_source_t){ .query = rl_query, .next = rl_next, .name = inner->name };
    s->o = o, s->inner = inner, s->h = h, s->fasta = fasta;
    if (!(s->known = rl_known_open(o))) {
        rl_source_destroy(s);
        return NULL;
    }
    return s;
}

ss_source_t *rl_source_get(rl_source_t *s)
{
    return &s->src;
}

void rl_source_count_next(rl_source_t *s, hts_pos_t beg, hts_pos_t end)
{
    s->counting = 1, s->count_beg = beg, s->count_end = end;
}

void rl_source_counts(const rl_source_t *s, uint64_t out[5])
{
    for (int i = 0; i < 5; i++)
        out[i] = s->counts[i];
}

void rl_source_destroy(rl_source_t *s)
{
    if (!s)
        return;
    ss_ref_destroy(s->ref);
    rl_known_close(s->known);
    rl_block_destroy(s->blk);
    free(s->out);
    free(s);
}
