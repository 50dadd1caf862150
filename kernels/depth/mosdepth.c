/*
 * mosdepth.c -- `seqshard depth --mosdepth`: one shard's lines of mosdepth's
 * per-base, quantized, regions and thresholds files, and its share of the
 * summary and dist totals.
 *
 * A shard walks the depth of its contig (mosdepth_count.c) in chunks, from
 * one position before its range, so it knows whether the run of equal depth
 * at its first position started before it. It owns:
 *   - the runs (per-base: equal depth; quantized: equal bin) that start in
 *     its range, reading on past its end until the last one ends;
 *   - the --by regions that start in its range (the contig's last shard also
 *     those that start past the contig's end), reading on to their ends;
 *   - the summary and global-dist counts of its own positions.
 * Each thing is counted by one shard, whose walk sees all of it, so the
 * output is the same for any shard size. Memory is a chunk's depths, the
 * regions a shard owns and, with -m, a 64k-bin count per region being read.
 *
 * mosdepth's quantized output takes the bin of a contig's last base from the
 * base before it (its loop stops one short); that is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "../../io/ss_diag.h"
#include "mosdepth.h"

#define CHUNK     ((hts_pos_t)1 << 16) /* positions counted at a time */
#define FIRST_EXT 1024                 /* past the range: grown by doubling to CHUNK */

typedef struct {
    hts_pos_t beg, end, cend; /* as given; cend: end cut at the contig's length */
    const char *name;
    double mean; /* sum of depth / (end - beg), in position order */
    int64_t len, sum, min, max;
    uint32_t *med; /* -m, while being read: [MOS_MEDIAN_BINS] */
    int64_t med_n;
    double value; /* the printed mean or median */
    int64_t *thr; /* [n_thresholds] */
} racc_t;

typedef struct {
    int64_t val;
    hts_pos_t start;
    int owned, open;
} run_t;

struct mos_worker_s {
    const mos_opts_t *o;
    const mos_run_t *run;
    ss_reader_t *rd;
    mos_counter_t *cnt;
    racc_t *acc;
    int n_acc, m_acc;
    int64_t *thr;        /* the regions' threshold counts, [m_acc * n_thresholds] */
    uint32_t **med_free; /* -m: spare count tables */
    int n_med_free, m_med_free;
    int64_t *gh, *rh; /* the shard's global and region histograms */
    size_t ghn, rhn;
    char prefix[1024]; /* "CONTIG\t" */
    size_t prefix_len;
};

/* ---- formatting ---- */

static inline void put_u(kstring_t *s, uint64_t v)
{
    char b[24];
    int i = 24;
    do
        b[--i] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    memcpy(s->s + s->l, b + i, (size_t)(24 - i));
    s->l += (size_t)(24 - i);
}

/* "CONTIG\tbeg\tend\t" with room for 64 more bytes. 0, or -1 out of memory. */
static int line_start(mos_worker_t *w, kstring_t *s, hts_pos_t beg, hts_pos_t end)
{
    if (ks_resize(s, s->l + w->prefix_len + 112) < 0)
        return -1;
    memcpy(s->s + s->l, w->prefix, w->prefix_len);
    s->l += w->prefix_len;
    put_u(s, (uint64_t)beg);
    s->s[s->l++] = '\t';
    put_u(s, (uint64_t)end);
    s->s[s->l++] = '\t';
    return 0;
}

/* ---- worker ---- */

int mos_worker_init(mos_worker_t **wp, const mos_opts_t *o, const mos_run_t *run, ss_reader_t *rd)
{
    mos_worker_t *w = ss_alloc_private(sizeof(*w));
    if (!(*wp = w))
        return -1;
    w->o = o, w->run = run, w->rd = rd;
    return (w->cnt = mos_counter_init(o)) ? 0 : -1;
}

void mos_worker_destroy(mos_worker_t *w)
{
    if (!w)
        return;
    mos_counter_destroy(w->cnt);
    for (int i = 0; i < w->n_med_free; i++)
        free(w->med_free[i]);
    for (int i = 0; i < w->n_acc; i++)
        free(w->acc[i].med);
    free(w->med_free);
    free(w->acc);
    free(w->thr);
    free(w->gh);
    free(w->rh);
    free(w);
}

/* h[v]++, growing h (zeroed) when v is past it. 0, or -1 out of memory. */
static inline int hist_add(int64_t **h, size_t *n, int64_t v)
{
    if (v > MOS_MAX_COVERAGE)
        v = MOS_CLAMPED;
    if (v < 0)
        return 0;
    if ((size_t)v >= *n) {
        size_t m = *n ? *n : 1024;
        while (m <= (size_t)v)
            m *= 2;
        int64_t *a = realloc(*h, m * sizeof(*a));
        if (!a)
            return -1;
        memset(a + *n, 0, (m - *n) * sizeof(*a));
        *h = a, *n = m;
    }
    (*h)[v]++;
    return 0;
}

/* ---- the regions a shard owns ---- */

static racc_t *new_acc(mos_worker_t *w)
{
    int nt = w->o->n_thresholds;
    if (w->n_acc == w->m_acc) {
        int m = w->m_acc ? 2 * w->m_acc : 64;
        racc_t *a = realloc(w->acc, (size_t)m * sizeof(*a));
        int64_t *t = nt ? realloc(w->thr, (size_t)m * (size_t)nt * sizeof(*t)) : w->thr;
        if (a)
            w->acc = a;
        if (t)
            w->thr = t;
        if (!a || (nt && !t))
            return NULL;
        w->m_acc = m;
    }
    racc_t *r = &w->acc[w->n_acc++];
    memset(r, 0, sizeof(*r));
    r->min = INT64_MAX, r->max = INT64_MIN;
    return r;
}

static int add_region(mos_worker_t *w, hts_pos_t beg, hts_pos_t end, const char *name,
                      hts_pos_t clen)
{
    racc_t *r = new_acc(w);
    if (!r)
        return -1;
    r->beg = beg, r->end = end, r->name = name;
    r->cend = end < clen ? end : clen;
    if (r->cend < beg)
        r->cend = beg; /* past the contig's end: nothing to read */
    return 0;
}

/* The first BED interval of the contig that starts at or after pos. */
static int lower_bound(const mos_region_t *a, int n, hts_pos_t pos)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid].beg < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The shard's regions, in output order; their farthest end in *hi. 0, or -1. */
static int own_regions(mos_worker_t *w, const ss_shard_t *sh, hts_pos_t clen, hts_pos_t *hi)
{
    w->n_acc = 0;
    int last = sh->end >= clen;
    if (w->o->window) {
        hts_pos_t W = w->o->window;
        for (hts_pos_t s = (sh->beg + W - 1) / W * W; s < sh->end && s < clen; s += W)
            if (add_region(w, s, s + W < clen ? s + W : clen, NULL, clen) < 0)
                return -1;
    } else if (w->o->by) {
        const mos_region_t *a = w->run->regions[sh->tid];
        int n = w->run->n_regions[sh->tid];
        int i0 = lower_bound(a, n, sh->beg), i1 = last ? n : lower_bound(a, n, sh->end);
        for (int i = i0; i < i1; i++)
            if (add_region(w, a[i].beg, a[i].end, a[i].name, clen) < 0)
                return -1;
    }
    int nt = w->o->n_thresholds;
    for (int i = 0; i < w->n_acc; i++) {
        w->acc[i].thr = nt ? w->thr + (size_t)i * (size_t)nt : NULL;
        for (int t = 0; t < nt; t++)
            w->acc[i].thr[t] = 0;
        if (w->acc[i].cend > *hi)
            *hi = w->acc[i].cend;
    }
    return 0;
}

static uint32_t *take_med(mos_worker_t *w)
{
    uint32_t *m =
        w->n_med_free ? w->med_free[--w->n_med_free] : malloc(MOS_MEDIAN_BINS * sizeof(*m));
    if (m)
        memset(m, 0, MOS_MEDIAN_BINS * sizeof(*m));
    return m;
}

static int give_med(mos_worker_t *w, uint32_t *m)
{
    if (w->n_med_free == w->m_med_free) {
        int n = w->m_med_free ? 2 * w->m_med_free : 8;
        uint32_t **a = realloc(w->med_free, (size_t)n * sizeof(*a));
        if (!a) {
            free(m);
            return 0;
        }
        w->med_free = a, w->m_med_free = n;
    }
    w->med_free[w->n_med_free++] = m;
    return 0;
}

/* Add the depths d of [s, e) (d[0] is position s) to region r. 0, or -1 out of memory. */
static int region_take(mos_worker_t *w, racc_t *r, const int32_t *d, hts_pos_t s, hts_pos_t e)
{
    const mos_opts_t *o = w->o;
    double L = (double)(r->end - r->beg);
    int bed = o->by != NULL, nt = o->n_thresholds;
    if (o->median && !r->med && !(r->med = take_med(w)))
        return -1;
    int32_t last = 0;
    double q = 0; /* v / L for v = last: divided again only where the depth changes */
    for (hts_pos_t p = s; p < e; p++) {
        int32_t v = d[p - s];
        if (v != last)
            q = (double)v / L, last = v;
        r->mean += q; /* mosdepth's sum of v / L in position order, the same doubles */
        r->sum += v;
        if (v < r->min)
            r->min = v;
        if (v > r->max)
            r->max = v;
        for (int t = 0; t < nt && v >= o->thresholds[t]; t++)
            r->thr[t]++;
        if (r->med) {
            r->med[v >= MOS_MEDIAN_BINS ? MOS_MEDIAN_BINS - 1 : v < 0 ? 0 : v]++;
            r->med_n++;
        }
        if (bed && hist_add(&w->rh, &w->rhn, v) < 0)
            return -1;
    }
    r->len += e - s;
    return 0;
}

/* -m: the region was read to its end; its median, and its count table back to the pool. */
static void median_done(mos_worker_t *w, racc_t *r)
{
    if (!r->med)
        return;
    r->value = mos_median(r->med, r->med_n);
    give_med(w, r->med);
    r->med = NULL;
}

/* The region is read whole: its printed value (and with a window, its dist count). */
static int region_done(mos_worker_t *w, racc_t *r)
{
    if (r->med)
        median_done(w, r);
    else if (!w->o->median)
        r->value = r->mean;
    if (w->o->window) { /* the fraction of windows: each counts at its rounded value */
        int64_t bin = (int64_t)(r->value + 0.5);
        if (bin > MOS_WINDOW_DIST_BINS - 1)
            bin = MOS_WINDOW_DIST_BINS - 1;
        if (hist_add(&w->rh, &w->rhn, bin) < 0)
            return -1;
    }
    return 0;
}

/* ---- runs of equal depth (per-base) and of equal bin (quantized) ---- */

typedef struct {
    mos_worker_t *w;
    const ss_shard_t *sh;
    hts_pos_t clen;
    kstring_t *base, *quant; /* the streams, or NULL */
    run_t rb, rq;
    int32_t prev;            /* the depth before the position being read */
    int64_t bases, min, max; /* the shard's own positions */
} walk_t;

static int emit_base(walk_t *k, hts_pos_t s, hts_pos_t e, int64_t v)
{
    if (line_start(k->w, k->base, s, e) < 0)
        return -1;
    put_u(k->base, (uint64_t)v);
    k->base->s[k->base->l++] = '\n';
    return 0;
}

static int emit_quant(walk_t *k, hts_pos_t s, hts_pos_t e, int64_t bin)
{
    const mos_opts_t *o = k->w->o;
    if (bin < 0 || bin >= o->n_quants - 1)
        return 0; /* depths outside every bin print nothing */
    if (line_start(k->w, k->quant, s, e) < 0 || kputs(o->qlabels[bin], k->quant) < 0 ||
        kputc('\n', k->quant) < 0)
        return -1;
    return 0;
}

/* Value val at position p of a run tracker: a change ends the run before it. */
static inline int run_step(walk_t *k, run_t *r, hts_pos_t p, int64_t val, int quant)
{
    if (!r->open || val == r->val)
        return 0;
    if (r->owned &&
        (quant ? emit_quant(k, r->start, p, r->val) : emit_base(k, r->start, p, r->val)) < 0)
        return -1;
    if (p >= k->sh->end) {
        r->open = 0; /* the next run is the next shard's */
        return 0;
    }
    r->start = p, r->val = val, r->owned = 1;
    return 0;
}

static int run_close(walk_t *k, run_t *r, int quant)
{
    if (!r->open || !r->owned)
        return 0;
    r->open = 0;
    return quant ? emit_quant(k, r->start, k->clen, r->val)
                 : emit_base(k, r->start, k->clen, r->val);
}

static inline int64_t qbin(const walk_t *k, hts_pos_t p, int32_t v)
{
    const mos_opts_t *o = k->w->o;
    if (p == k->clen - 1 && p > 0)
        v = k->prev; /* mosdepth: the last base is in the run of the one before it */
    return mos_quant_bin(o->quants, o->n_quants, v);
}

/* Start the trackers at position p (the shard's first, or the one before it). */
static void runs_start(walk_t *k, hts_pos_t p, int32_t v)
{
    int owned = p >= k->sh->beg;
    if (k->base)
        k->rb = (run_t){v, p, owned, 1};
    if (k->quant)
        k->rq = (run_t){qbin(k, p, v), p, owned, 1};
}

/* ---- the walk ---- */

/* The summary and global-dist counts of the shard's own positions in d[0..n). 0, or -1. */
static int own_counts(walk_t *k, const int32_t *d, size_t n)
{
    mos_worker_t *w = k->w;
    int32_t mn = INT32_MAX, mx = INT32_MIN;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += d[i];
        mn = d[i] < mn ? d[i] : mn;
        mx = d[i] > mx ? d[i] : mx;
    }
    if (!n)
        return 0;
    k->bases += sum;
    k->min = mn < k->min ? mn : k->min;
    k->max = mx > k->max ? mx : k->max;
    if (mx > MOS_MAX_COVERAGE || mn < 0) { /* mosdepth's clamp: the slow way */
        for (size_t i = 0; i < n; i++)
            if (hist_add(&w->gh, &w->ghn, d[i]) < 0)
                return -1;
        return 0;
    }
    if (hist_add(&w->gh, &w->ghn, mx) < 0) /* room for every depth of the chunk */
        return -1;
    w->gh[mx]--;
    for (size_t i = 0; i < n; i++)
        w->gh[d[i]]++;
    return 0;
}

/* Per-base runs over positions [p, c1) (d[0] is c0): only where the depth changes. */
static int base_runs(walk_t *k, const int32_t *d, hts_pos_t c0, hts_pos_t p, hts_pos_t c1)
{
    run_t *r = &k->rb;
    while (p < c1 && r->open) {
        while (p < c1 && d[p - c0] == r->val)
            p++;
        if (p < c1 && run_step(k, r, p, d[p - c0], 0) < 0)
            return -1;
    }
    return 0;
}

/* The positions [c0, c1) with depths d: every consumer's share. 0, or -1 out of memory. */
static int consume(walk_t *k, const int32_t *d, hts_pos_t c0, hts_pos_t c1)
{
    mos_worker_t *w = k->w;
    const ss_shard_t *sh = k->sh;
    hts_pos_t p = c0;
    if (p == (sh->beg > 0 ? sh->beg - 1 : 0)) {
        runs_start(k, p, d[0]);
        if (p < sh->beg)
            k->prev = d[0], p++;
        else if (k->quant)
            k->prev = d[0]; /* position 0: its run started above */
    }
    hts_pos_t o0 = p > sh->beg ? p : sh->beg, o1 = c1 < sh->end ? c1 : sh->end;
    if (o0 < o1 && own_counts(k, d + (o0 - c0), (size_t)(o1 - o0)) < 0)
        return -1;
    hts_pos_t from = p > 0 ? p : 1; /* position 0 opened the runs */
    if (k->base && base_runs(k, d, c0, from, c1) < 0)
        return -1;
    if (k->quant)
        for (hts_pos_t q = from; q < c1; q++) {
            int32_t v = d[q - c0];
            if (k->rq.open && run_step(k, &k->rq, q, qbin(k, q, v), 1) < 0)
                return -1;
            k->prev = v;
        }
    for (int i = 0; i < w->n_acc; i++) {
        racc_t *r = &w->acc[i];
        hts_pos_t s = r->beg > c0 ? r->beg : c0, e = r->cend < c1 ? r->cend : c1;
        if (s < e && region_take(w, r, d + (s - c0), s, e) < 0)
            return -1;
        if (r->cend <= c1)
            median_done(w, r); /* one count table per region being read, not per region */
    }
    return 0;
}

/* Where the next query ends: the own range in chunks, then as far as regions and runs need. */
static hts_pos_t next_end(const walk_t *k, hts_pos_t c0, hts_pos_t hi, hts_pos_t *ext)
{
    const ss_shard_t *sh = k->sh;
    hts_pos_t c1;
    if (c0 < sh->end) {
        c1 = c0 + CHUNK < sh->end ? c0 + CHUNK : sh->end;
    } else {
        c1 = c0 + *ext;
        if (c1 < hi)
            c1 = hi;
        if (c1 > c0 + CHUNK)
            c1 = c0 + CHUNK;
        if (*ext < CHUNK)
            *ext *= 2;
    }
    return c1 < k->clen ? c1 : k->clen;
}

static int walk(walk_t *k, hts_pos_t hi, uint64_t *reads)
{
    mos_worker_t *w = k->w;
    const ss_shard_t *sh = k->sh;
    ss_source_t *src = ss_reader_source(w->rd, 0);
    hts_pos_t c0 = sh->beg > 0 ? sh->beg - 1 : 0, ext = FIRST_EXT;
    if (mos_count_start(w->cnt, src, sh->tid, c0, k->clen, sh->idx) < 0)
        return -1;
    while (c0 < k->clen) {
        hts_pos_t c1 = next_end(k, c0, hi, &ext);
        const int32_t *d = mos_count_next(w->cnt, c1, reads);
        if (!d || consume(k, d, c0, c1) < 0)
            return -1;
        c0 = c1;
        int runs_open = (k->base && k->rb.open) || (k->quant && k->rq.open);
        if (c0 >= sh->end && c0 >= hi && !runs_open)
            break;
    }
    if (c0 >= k->clen && (run_close(k, &k->rb, 0) < 0 || run_close(k, &k->rq, 1) < 0))
        return -1;
    return 0;
}

/* ---- one shard ---- */

static int put_float_line(mos_worker_t *w, kstring_t *s, const racc_t *r)
{
    if (line_start(w, s, r->beg, r->end) < 0)
        return -1;
    if (r->name && (kputs(r->name, s) < 0 || kputc('\t', s) < 0))
        return -1;
    return mos_put_float(s, r->value, w->o->precision) < 0 || kputc('\n', s) < 0 ? -1 : 0;
}

static int put_thresholds_line(mos_worker_t *w, kstring_t *s, const racc_t *r)
{
    if (line_start(w, s, r->beg, r->end) < 0 || kputs(r->name ? r->name : "unknown", s) < 0)
        return -1;
    for (int t = 0; t < w->o->n_thresholds; t++)
        if (kputc('\t', s) < 0 || kputll((long long)r->thr[t], s) < 0)
            return -1;
    return kputc('\n', s) < 0 ? -1 : 0;
}

/* The regions' lines, in order, and their share of the <chrom>_region row. */
static int regions_out(mos_worker_t *w, ss_out_t *out, int64_t *v)
{
    const mos_run_t *run = w->run;
    kstring_t *reg =
        run->stream[MOS_REGIONS] >= 0 ? ss_out_stream(out, run->stream[MOS_REGIONS]) : NULL;
    kstring_t *thr =
        run->stream[MOS_THRESHOLDS] >= 0 ? ss_out_stream(out, run->stream[MOS_THRESHOLDS]) : NULL;
    for (int i = 0; i < w->n_acc; i++) {
        racc_t *r = &w->acc[i];
        if (region_done(w, r) < 0 || (reg && put_float_line(w, reg, r) < 0) ||
            (thr && put_thresholds_line(w, thr, r) < 0))
            return -1;
        v[MOS_RLEN] += r->len;
        v[MOS_RBASES] += r->sum;
        if (r->len && r->min < v[MOS_RMIN])
            v[MOS_RMIN] = r->min;
        if (r->len && r->max > v[MOS_RMAX])
            v[MOS_RMAX] = r->max;
    }
    return 0;
}

/* Add a shard histogram to the worker's histogram h, and clear it. 0, or -1. */
static int flush_hist(ss_out_t *out, int h, int64_t *a, size_t n)
{
    size_t top = n;
    while (top > 0 && a[top - 1] == 0)
        top--;
    if (!top)
        return 0;
    if (ss_out_hist_add(out, h, a, top) < 0)
        return -1;
    memset(a, 0, top * sizeof(*a));
    return 0;
}

int mos_process(mos_worker_t *w, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    const mos_run_t *run = w->run;
    const char *ctg = sam_hdr_tid2name(run->hdr, sh->tid);
    hts_pos_t clen = sam_hdr_tid2len(run->hdr, sh->tid);
    if (run->skip[sh->tid] || clen <= 0 || sh->beg >= clen)
        return 0; /* mosdepth leaves the contig out (-n, --by BED without it) */
    w->prefix_len = (size_t)snprintf(w->prefix, sizeof(w->prefix), "%s\t", ctg);
    if (w->prefix_len >= sizeof(w->prefix)) {
        ss_error("contig name %.40s... is longer than 1000 characters; mosdepth output "
                 "cannot hold it",
                 ctg);
        return -1;
    }
    hts_pos_t hi = sh->end;
    if (own_regions(w, sh, clen, &hi) < 0)
        return ss_error("out of memory for shard %d's regions", sh->idx), -1;
    walk_t k = {.w = w, .sh = sh, .clen = clen, .min = INT64_MAX, .max = INT64_MIN};
    if (run->stream[MOS_PER_BASE] >= 0)
        k.base = ss_out_stream(out, run->stream[MOS_PER_BASE]);
    if (run->stream[MOS_QUANTIZED] >= 0)
        k.quant = ss_out_stream(out, run->stream[MOS_QUANTIZED]);
    uint64_t reads = 0;
    if (walk(&k, hi, &reads) < 0) {
        int err = mos_count_read_error(w->cnt);
        char where[256];
        snprintf(where, sizeof(where), "%s:%lld-%lld", ctg, (long long)sh->beg + 1,
                 (long long)sh->end);
        if (err)
            ss_io_input_read_error(w->rd, 0, err, sh->tid, where, run->reference, run->ref_option);
        else if (!ss_error_raised())
            ss_error("out of memory in shard %d (%s)", sh->idx, where);
        return -1;
    }
    int64_t *v = ss_out_values(out) + (size_t)sh->tid * MOS_NV;
    v[MOS_BASES] += k.bases;
    if (k.min < v[MOS_MIN])
        v[MOS_MIN] = k.min;
    if (k.max > v[MOS_MAX])
        v[MOS_MAX] = k.max;
    if (regions_out(w, out, v) < 0 || flush_hist(out, 2 * sh->tid, w->gh, w->ghn) < 0 ||
        flush_hist(out, 2 * sh->tid + 1, w->rh, w->rhn) < 0) {
        if (!ss_error_raised())
            ss_error("out of memory writing shard %d", sh->idx);
        return -1;
    }
    st->reads += reads;
    st->bases += (uint64_t)(sh->end - sh->beg);
    return 0;
}
