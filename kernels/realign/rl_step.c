/*
 * rl_step.c -- realignment as a record step (ss_step.h): `--realign` in front
 * of any kernel that reads records, and `seqshard realign` in front of the
 * record writer. A query loads the range and its halo, decides every window
 * there (the block, rl_block.c), then hands out the records a region query of
 * the realigned BAM would return, in its order. Since every decision depends
 * only on a bounded window of reads, the records are the same whatever ranges
 * the reader asks for.
 *
 * A source is owned by one worker thread.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../io/ss_ref.h"
#include "realign.h"

typedef struct {
    ss_source_t src; /* first: a ss_source_t * is a rl_source_t * */
    const rl_opts_t *o;
    ss_source_t *inner; /* the file */
    const sam_hdr_t *h;
    const char *fasta;
    ss_ref_t *ref;
    rl_known_t *known;
    rl_block_t *blk;
    int *out; /* block indexes of the range's records, in output order */
    int n_out, m_out, cur;
    int passthrough;            /* the unplaced reads: straight from the inner source */
    int deferred;               /* the inner source's read error, for the next call to next */
    hts_pos_t own_beg, own_end; /* the shard's range, whose windows it counts */
    hts_pos_t counted_to;       /* windows starting before this were counted already */
    rl_counts_t counts;         /* the shard's */
} rl_source_t;

/*
 * A read of the inner source failed with code r (errno err). Out of memory is
 * said here (-1); any other failure of the file is the consumer's to explain
 * (it names the file's own cause: a CRC, a damaged record), so r comes back
 * for the next call to next, and nothing is said twice.
 */
static int load_error(const rl_source_t *s, int tid, hts_pos_t beg, hts_pos_t end, int r, int err)
{
    if (r == SS_IO_REPORTED || ss_error_raised())
        return -1;
    if (err != ENOMEM)
        return r;
    /* htslib's -4 is a bad record or a failed allocation: errno tells */
    ss_error("%s: out of memory reading %s:%lld-%lld to realign; lower -@ or give the run "
             "more memory",
             s->inner->name, sam_hdr_tid2name(s->h, tid), (long long)beg + 1, (long long)end);
    return -1;
}

/*
 * Every record of [beg, end) of the inner source into the block. 0, -1 after
 * ss_error(), or the inner source's read error (< -1), unsaid.
 */
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

/* The records a region query of [beg, end) returns: final span overlapping it, sorted. */
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
    ss_step_sort(s->blk->recs, s->out, s->n_out);
    return 0;
}

/*
 * The part of [beg, end) whose window starts this query counts: in the
 * shard's range and not counted before (so a shard counts each window once,
 * whatever its kernel asks); windows starting inside a query's range are
 * whole. Empty ([0, 0)) outside it.
 */
static void counted_range(rl_source_t *s, hts_pos_t beg, hts_pos_t end, hts_pos_t *lo,
                          hts_pos_t *hi)
{
    *lo = beg > s->own_beg ? beg : s->own_beg;
    if (*lo < s->counted_to)
        *lo = s->counted_to;
    *hi = end < s->own_end ? end : s->own_end;
    if (*lo >= *hi) {
        *lo = *hi = 0;
        return;
    }
    s->counted_to = *hi;
}

/* Decide [lo, hi) (the range and its halo). 0, -1 after ss_error(), or a read error. */
static int decide(rl_source_t *s, int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t lo, hts_pos_t hi)
{
    hts_pos_t len = sam_hdr_tid2len(s->h, tid), top = hi < len ? hi : len;
    rl_ref_t ref;
    int r = load(s, tid, lo, hi);
    if (r != 0)
        return r;
    if (reference(s, tid, lo, top, &ref) < 0 ||
        rl_known_load(s->known, ref.name, lo, top, &ref, s->blk) < 0)
        return -1;
    hts_pos_t own_lo, own_hi;
    counted_range(s, beg, end, &own_lo, &own_hi);
    if (rl_block_decide(s->blk, s->o, &ref, own_lo, own_hi, &s->counts) < 0) {
        ss_error("out of memory realigning reads; use a smaller --shard-size");
        return -1;
    }
    return 0;
}

static int rl_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    rl_source_t *s = (rl_source_t *)src;
    s->deferred = 0;
    s->n_out = s->cur = 0;
    s->passthrough = tid == SS_IO_UNPLACED;
    if (s->passthrough)
        return ss_source_query(s->inner, tid, beg, end);
    hts_pos_t halo = rl_halo(s->o), len = sam_hdr_tid2len(s->h, tid);
    hts_pos_t lo = beg > halo ? beg - halo : 0;
    hts_pos_t hi = end < len ? (end + halo < len ? end + halo : len) : end;
    int r = decide(s, tid, beg, end, lo, hi);
    if (r < -1) { /* the file's fault: the consumer explains it at its next read */
        s->deferred = r;
        return 0;
    }
    return r < 0 ? -1 : select_range(s, beg, end);
}

static int rl_next(ss_source_t *src, bam1_t *b)
{
    rl_source_t *s = (rl_source_t *)src;
    if (s->passthrough)
        return ss_source_next(s->inner, b);
    if (s->deferred) {
        int r = s->deferred;
        s->deferred = 0;
        return r;
    }
    if (s->cur == s->n_out)
        return -1;
    if (!bam_copy1(b, rl_block_rec(s->blk, s->out[s->cur]))) {
        ss_error("out of memory copying a realigned read");
        return SS_IO_REPORTED;
    }
    b->id = (uint64_t)s->cur++;
    return 0;
}

static void rl_close(ss_source_t *src)
{
    rl_source_t *s = (rl_source_t *)src;
    if (!s)
        return;
    ss_ref_destroy(s->ref);
    rl_known_close(s->known);
    rl_block_destroy(s->blk);
    free(s->out);
    free(s);
}

static ss_source_t *rl_open(const void *sopts, const ss_job_t *job, ss_source_t *inner)
{
    const char *fasta = ss_job_opts(job)->reference;
    rl_source_t *s = ss_alloc_private(sizeof(*s)); /* written per record */
    if (!s || !(s->ref = ss_ref_init(fasta)) || !(s->blk = rl_block_init())) {
        ss_error("out of memory starting realignment");
        rl_close((ss_source_t *)s);
        return NULL;
    }
    s->src = (ss_source_t){.query = rl_query, .next = rl_next, .name = inner->name};
    s->o = sopts, s->inner = inner, s->h = ss_job_header(job), s->fasta = fasta;
    if (!(s->known = rl_known_open(s->o))) {
        rl_close((ss_source_t *)s);
        return NULL;
    }
    return &s->src;
}

static void rl_shard(ss_source_t *src, hts_pos_t beg, hts_pos_t end)
{
    rl_source_t *s = (rl_source_t *)src;
    s->own_beg = beg, s->own_end = end, s->counted_to = beg;
    s->counts = (rl_counts_t){0};
}

/* In the order of rl_counter_names. */
static void rl_counts(const ss_source_t *src, uint64_t *out)
{
    const rl_counts_t *c = &((const rl_source_t *)src)->counts;
    out[0] += c->windows, out[1] += c->skipped, out[2] += c->cleaned;
    out[3] += c->realigned, out[4] += c->unclipped;
}

/* --report's kernel_counts: each window is counted by the shard holding its start. */
static const char *const rl_counter_names[] = {"realign_windows",         "realign_windows_skipped",
                                               "realign_windows_cleaned", "reads_realigned",
                                               "ends_unclipped",          NULL};

const ss_step_t ss_step_realign = {
    .name = "realign",
    .help = "realign reads around indels, as seqshard realign does, before the command reads "
            "them [off]",
    .order = 20, /* after duplicate marking, as the best-practice pipelines order them */
    .title = "Realignment",
    .note = "The command then reads the records `seqshard realign` would write, in one pass,\n"
            "nothing written between; each input is realigned on its own; needs the\n"
            "reference.",
    .opts = rl_step_opts,
    .cram_md = 1, /* NM and MD are written (recomputed for moved reads) and NM read */
    .opts_new = rl_opts_new,
    .opts_free = rl_opts_free,
    .opt = rl_opt,
    .check = rl_check,
    .prepare = rl_prepare,
    .open = rl_open,
    .close = rl_close,
    .counter_names = rl_counter_names,
    .shard = rl_shard,
    .counts = rl_counts,
};
