/*
 * plan.c -- cut the job's scope into shards of balanced estimated work.
 *
 * 1. Spans: the parts of the genome to read, in plan order. The regions in
 *    the order the user gave them (overlapping or repeated regions are read
 *    once per mention, as samtools view reads them), or every contig whole
 *    in header order; either intersected with the -l intervals (merged;
 *    neighbours closer than one shard are bridged so an exome does not
 *    become 200,000 tiny shards, while larger gaps are skipped so a BED plan
 *    reads only what it needs). No span crosses a contig. The region "*",
 *    and the end of a whole-genome plan of a kernel that asks for it, is a
 *    span of the unplaced unmapped reads, which becomes one shard.
 * 2. Work: every span is cut on a fixed 16 kb grid (aligned to the BAI linear
 *    index) and each cell's work is estimated from the indexes of the first
 *    few inputs (ss_io_est_cells: compressed bytes).
 * 3. Cuts: target work per shard = shard_size * (total work / total bp), so
 *    --shard-size is in bases of average depth. A kernel whose output grows
 *    with the inputs (ss_out_spec_t) also has each cell's output estimated:
 *    its work times the kernel's bytes per work byte, CRAM work scaled to
 *    BAM's, summed over the estimating inputs and scaled to all of them. A
 *    cell then weighs its work, or its output in work units (the output
 *    target, SS_SHARD_OUTPUT, worth one shard's work), whichever is more, so
 *    a shard makes at most about the output target: 1000 inputs of 30x cut
 *    into shards of ~700 bp instead of 262 kb, 1.3 GB of text each. Such
 *    shards may be shorter than the 1 kb minimum (down to MIN_OUT_SHARD_BP).
 *    Cells are packed greedily up
 *    to the target; a cell heavier than the target is split evenly by bp; a
 *    shard is never shorter than 1 kb (unless its span is) nor longer than
 *    16 * shard_size. When the index says nothing (-1), spans are cut into
 *    equal-bp shards of shard_size. A contig with no reads gets one shard
 *    (with all_contigs, equal-bp shards, as every position is printed).
 *
 * Everything here is a function of the inputs and options: no thread or rank
 * count enters, so every rank computes the same plan.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/ss_budget.h"
#include "../../io/ss_estimate.h"
#include "../cli/cli.h"
#include "plan.h"

#define GRID_SHIFT       14 /* 16 kb cells, the BAI linear index's */
#define GRID             ((hts_pos_t)1 << GRID_SHIFT)
#define MIN_SHARD_BP     1000
#define MAX_SHARD_FACTOR 16
#define MAX_EST_INPUTS   8   /* more inputs change the shape of the work little */
#define MIN_OUT_SHARD_BP 100 /* output-bound shards: below this, queries cost more than reads */
/*
 * A CRAM holds the same reads in fewer bytes than a BAM (the benchmark's
 * 30x E. coli: 70 MB against 125 MB), so its work counts this much more
 * towards the output, which follows the reads.
 */
#define CRAM_OUTPUT_SCALE 1.8
/*
 * A cell's own estimate is coarse (a BAI says nothing finer than 16 kb, a
 * CRAM index nothing finer than a container, ~50 kb at 30x): a cell may show
 * no work where it has reads. The output estimate is therefore at least the
 * span's density over this much around it.
 */
#define DENSITY_REACH ((hts_pos_t)128 << 10)
/*
 * A cell heavier than a shard is cut where its reads are, not evenly by bp:
 * a deep stretch may fill a quarter of a cell and leave the rest empty, and
 * even cuts would give one shard all of it. The reads of such cells are read
 * (the first input's, BAM only) into this many bins, up to this much
 * estimated work per plan; past it, cells are cut evenly. A cell of less
 * work than PROFILE_MIN_WORK (a few thousand reads, milliseconds of any
 * kernel) is cut evenly too: its imbalance costs less than reading it.
 */
#define PROFILE_BINS     64
#define PROFILE_BUDGET   ((int64_t)32 << 20)
#define PROFILE_MIN_WORK ((int64_t)64 << 10)

typedef struct {
    int tid; /* SS_TID_UNPLACED: the unplaced reads, no cells */
    hts_pos_t beg, end;
    hts_pos_t scope_beg, scope_end; /* the region (or contig) the span was cut from */
    int whole_contig;
    size_t cell0; /* index of its first cell in the cell array */
    size_t n_cells;
    double density; /* output work per bp around it (with a spec) */
} span_t;

typedef struct {
    span_t *a;
    size_t n, m;
} spans_t;

typedef struct {
    ss_shard_t *a;
    int n, m;
} shards_t;

typedef struct {
    const ss_job_t *job;
    hts_pos_t shard_size, max_bp;
    int all_contigs;
    int past_end; /* the kernel prints positions past a contig's end */
    spans_t spans;
    int64_t *cell_work; /* per cell, summed over the estimating inputs */
    double *cell_out;   /* per cell, estimated output of all inputs (with spec) */
    size_t n_cells;
    const ss_out_spec_t *spec; /* NULL: no output estimate */
    int n_est;                 /* inputs whose indexes were read */
    double out_target;         /* output per shard */
    hts_pos_t min_bp;          /* MIN_SHARD_BP, or less for output-bound shards */
    int by_bp;                 /* the index could not estimate: equal-bp cuts */
    double target;             /* work per shard */
    ss_io_est_t *prof_est;     /* the first input, to profile heavy cells; NULL: none */
    int64_t prof_left;         /* work of heavy cells still to profile (PROFILE_BUDGET) */
    shards_t out;
} plan_t;

/* Where a heavy cell [beg, end)'s reads start: cum[k], the share before bin k. */
typedef struct {
    hts_pos_t beg, end;
    double cum[PROFILE_BINS + 1];
} profile_t;

static int span_push(spans_t *s, span_t sp)
{
    if (s->n == s->m) {
        size_t m = s->m ? 2 * s->m : 64;
        span_t *a = realloc(s->a, m * sizeof(*a));
        if (!a)
            return -1;
        s->a = a, s->m = m;
    }
    s->a[s->n++] = sp;
    return 0;
}

/* [beg, end) of tid, cut from the scope [lo, hi); an empty range reads nothing. */
static int span_add(plan_t *p, int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t lo, hts_pos_t hi,
                    int whole)
{
    if (end <= beg)
        return 0;
    return span_push(&p->spans, (span_t){.tid = tid,
                                         .beg = beg,
                                         .end = end,
                                         .scope_beg = lo,
                                         .scope_end = hi,
                                         .whole_contig = whole});
}

static int span_add_unplaced(plan_t *p)
{
    return span_push(&p->spans, (span_t){.tid = SS_TID_UNPLACED});
}

/*
 * The span of a scope's positions past its contig's end, for a kernel that
 * prints them (past_end): one base at beg, the first of them asked for. Its
 * shard, ending past the contig, is the scope's last and carries on to the
 * scope's end (ss_shard_t.query_end); a kernel that prints only positions
 * inside contigs gets none.
 */
static int span_add_past_end(plan_t *p, int tid, hts_pos_t beg, hts_pos_t lo, hts_pos_t hi)
{
    if (!p->past_end)
        return 0;
    return span_add(p, tid, beg, beg + 1, lo, hi, 0);
}

/*
 * BED intervals of tid clipped to the scope [lo, hi) and the contig, neighbours
 * closer than a shard bridged. Intervals past the contig's end are the last
 * shard's: a span past the end when no span reaches the end (span_add_past_end).
 */
static int spans_from_bed(plan_t *p, int tid, hts_pos_t lo, hts_pos_t hi)
{
    sam_hdr_t *h = ss_job_header(p->job);
    int n;
    const hts_pair_pos_t *iv = ss_bed_intervals(ss_job_bed(p->job), sam_hdr_tid2name(h, tid), &n);
    hts_pos_t len = sam_hdr_tid2len(h, tid), clip = hi < len ? hi : len;
    hts_pos_t cur_beg = -1, cur_end = -1, past = -1;
    for (int i = 0; i < n; i++) {
        hts_pos_t b = iv[i].beg > lo ? iv[i].beg : lo;
        hts_pos_t e = iv[i].end < clip ? iv[i].end : clip;
        if (past < 0 && b >= len && b < (iv[i].end < hi ? iv[i].end : hi))
            past = b; /* the first position past the end that the scope and -l ask for */
        if (e <= b)
            continue; /* outside the scope, or an empty interval: no position to print */
        if (cur_beg >= 0 && b - cur_end <= p->shard_size) {
            if (e > cur_end)
                cur_end = e;
            continue;
        }
        if (cur_beg >= 0 && span_add(p, tid, cur_beg, cur_end, lo, hi, 0) < 0)
            return -1;
        cur_beg = b, cur_end = e;
    }
    if (cur_beg >= 0 && span_add(p, tid, cur_beg, cur_end, lo, hi, 0) < 0)
        return -1;
    if (past >= 0 && cur_end < len)
        return span_add_past_end(p, tid, past, lo, hi);
    return 0;
}

/*
 * The scope [lo, hi) of tid: the -l intervals within it, or all of it; hi
 * may pass the contig's end (a region's END as given), the spans do only
 * where the scope starts past it (span_add_past_end).
 */
static int spans_from_scope(plan_t *p, int tid, hts_pos_t lo, hts_pos_t hi)
{
    if (ss_job_bed(p->job))
        return spans_from_bed(p, tid, lo, hi);
    hts_pos_t len = sam_hdr_tid2len(ss_job_header(p->job), tid), end = hi < len ? hi : len;
    if (lo >= len && lo < hi)
        return span_add_past_end(p, tid, lo, lo, hi);
    return span_add(p, tid, lo, end, lo, hi, lo == 0 && end == len);
}

static int build_spans(plan_t *p)
{
    sam_hdr_t *h = ss_job_header(p->job);
    int n_reg;
    const ss_interval_t *reg = ss_job_regions(p->job, &n_reg);
    /* each region in the order given, each time it is given */
    for (int i = 0; i < n_reg; i++) {
        int r = reg[i].tid == SS_TID_UNPLACED
                    ? span_add_unplaced(p)
                    : spans_from_scope(p, reg[i].tid, reg[i].beg, reg[i].end);
        if (r < 0)
            return -1;
    }
    if (n_reg > 0 || ss_job_opts(p->job)->no_regions)
        return 0;
    for (int tid = 0; tid < sam_hdr_nref(h); tid++)
        if (spans_from_scope(p, tid, 0, HTS_POS_MAX) < 0)
            return -1;
    /* the unplaced unmapped reads come last in the file, so last in the plan */
    if (ss_job_kernel(p->job)->unplaced && span_add_unplaced(p) < 0)
        return -1;
    return 0;
}

/* The first cell of each span starts at the span, later ones at multiples of GRID. */
static hts_pos_t cell_beg(const span_t *s, size_t k)
{
    hts_pos_t b = ((s->beg >> GRID_SHIFT) + (hts_pos_t)k) << GRID_SHIFT;
    return k == 0 || b < s->beg ? s->beg : b;
}

static hts_pos_t cell_end(const span_t *s, size_t k)
{
    hts_pos_t e = ((s->beg >> GRID_SHIFT) + (hts_pos_t)k + 1) << GRID_SHIFT;
    return e < s->end ? e : s->end;
}

/*
 * Add one input's work per bp over the span and DENSITY_REACH around it to
 * the span's density, and for a CRAM (cram_cells) to each of its cells, in
 * proportion to their length. 0, or -1.
 */
static int add_density(plan_t *p, ss_io_est_t *est, sam_hdr_t *h, span_t *s, double scale,
                       int is_cram)
{
    hts_pos_t len = sam_hdr_tid2len(h, s->tid);
    hts_pos_t beg = s->beg < len ? s->beg : len; /* a span past the end (span_add_past_end) */
    hts_pos_t lo = beg > DENSITY_REACH ? beg - DENSITY_REACH : 0;
    hts_pos_t hi = s->end + DENSITY_REACH < len ? s->end + DENSITY_REACH : len;
    hts_pos_t pos[2] = {lo, hi};
    int64_t w;
    if (hi <= lo || ss_io_est_cells(est, s->tid, pos, 1, &w) < 0)
        return -1;
    double per_bp = scale * (double)w / (double)(hi - lo);
    s->density += per_bp;
    for (size_t k = 0; is_cram && k < s->n_cells; k++)
        p->cell_out[s->cell0 + k] += per_bp * (double)(cell_end(s, k) - cell_beg(s, k));
    return 0;
}

/* Add one input's estimates to every cell. Returns 0, 1 if it cannot estimate, -1 on error. */
static int estimate_input(plan_t *p, samFile *fp, sam_hdr_t *h, hts_idx_t *idx)
{
    hts_pos_t *pos = NULL;
    int64_t *w = NULL;
    size_t cap = 0;
    ss_io_est_t *est = ss_io_est_init(idx, fp, h);
    int r = est ? 0 : -1;
    for (size_t i = 0; r == 0 && i < p->spans.n; i++) {
        const span_t *s = &p->spans.a[i];
        if (s->tid == SS_TID_UNPLACED)
            continue; /* not on the grid: the index has no positions for them */
        if (s->n_cells + 1 > cap) {
            cap = s->n_cells + 1;
            free(pos);
            free(w);
            pos = malloc(cap * sizeof(*pos));
            w = malloc(cap * sizeof(*w));
            if (!pos || !w) {
                r = -1;
                break;
            }
        }
        for (size_t k = 0; k < s->n_cells; k++)
            pos[k] = cell_beg(s, k);
        pos[s->n_cells] = s->end;
        if (ss_io_est_cells(est, s->tid, pos, (int)s->n_cells, w) < 0) {
            r = 1;
            break;
        }
        /*
         * A CRAM's cells are a container's work in the cell where it starts and
         * none in the others, three times too much or nothing for a 16 kb cell:
         * its output counts by its density alone.
         */
        int is_cram = fp->format.format == cram;
        double scale = is_cram ? CRAM_OUTPUT_SCALE : 1;
        for (size_t k = 0; k < s->n_cells; k++) {
            p->cell_work[s->cell0 + k] += w[k];
            if (p->cell_out && !is_cram)
                p->cell_out[s->cell0 + k] += (double)w[k];
        }
        if (p->cell_out && add_density(p, est, h, &p->spans.a[i], scale, is_cram) < 0) {
            r = 1;
            break;
        }
    }
    ss_io_est_destroy(est);
    free(pos);
    free(w);
    return r;
}

/* Inputs after the first are opened here just long enough to read their indexes. */
static int estimate_other(plan_t *p, const char *path)
{
    errno = 0;
    samFile *fp = sam_open(path, "r");
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    hts_idx_t *idx = h ? sam_index_load(fp, path) : NULL;
    int r = idx ? estimate_input(p, fp, h, idx) : -1;
    if (r < 0 && ss_io_fds_exhausted(errno))
        ss_io_error_fds(path, errno);
    else if (r < 0)
        ss_error("%s: cannot read its index for planning; run 'samtools index %s'", path, path);
    if (idx)
        hts_idx_destroy(idx);
    if (h)
        sam_hdr_destroy(h);
    if (fp)
        hts_close(fp);
    return r;
}

static int estimate(plan_t *p)
{
    for (size_t i = 0; i < p->spans.n; i++) {
        span_t *s = &p->spans.a[i];
        s->cell0 = p->n_cells;
        if (s->tid == SS_TID_UNPLACED)
            continue; /* n_cells stays 0 */
        s->n_cells = (size_t)(((s->end - 1) >> GRID_SHIFT) - (s->beg >> GRID_SHIFT) + 1);
        p->n_cells += s->n_cells;
    }
    if (p->n_cells && !(p->cell_work = calloc(p->n_cells, sizeof(*p->cell_work))))
        return -1;
    if (p->n_cells && p->spec && !(p->cell_out = calloc(p->n_cells, sizeof(*p->cell_out))))
        return -1;
    const ss_io_inputs_t *in = ss_job_inputs(p->job);
    int r = estimate_input(p, ss_job_file(p->job), ss_job_header(p->job), ss_job_index(p->job));
    for (int i = 1; r == 0 && i < in->n && i < MAX_EST_INPUTS; i++)
        r = estimate_other(p, in->paths[i]);
    if (r < 0)
        return -1;
    p->n_est = in->n < MAX_EST_INPUTS ? in->n : MAX_EST_INPUTS;
    p->by_bp = r > 0;
    return 0;
}

/*
 * The estimating inputs' scaled work per cell (or the span's density, when
 * more) -> the output of all inputs: times the kernel's bytes per work byte
 * and n_inputs / n_est, plus its bytes per position.
 */
static void estimate_output(plan_t *p)
{
    double per_work = p->spec->out_per_work * ss_job_inputs(p->job)->n / p->n_est;
    for (size_t i = 0; i < p->spans.n; i++) {
        span_t *s = &p->spans.a[i];
        s->density = s->density * per_work + p->spec->out_per_base; /* now output per bp */
        for (size_t k = 0; k < s->n_cells; k++) {
            double *o = &p->cell_out[s->cell0 + k], bp = (double)(cell_end(s, k) - cell_beg(s, k));
            *o = *o * per_work + p->spec->out_per_base * bp;
            if (*o < s->density * bp)
                *o = s->density * bp;
        }
    }
}

/* The work a cell weighs: its own, or its output in work units when that is more. */
static double cell_weight(const plan_t *p, size_t c)
{
    double w = (double)p->cell_work[c];
    if (!p->cell_out)
        return w;
    double o = p->cell_out[c] * p->target / p->out_target;
    return o > w ? o : w;
}

/* The shard length at which output-bound shards reach the output target, if under 1 kb. */
static void output_min_bp(plan_t *p, double total_bp)
{
    p->min_bp = MIN_SHARD_BP;
    if (!p->cell_out || total_bp <= 0)
        return;
    double out = 0;
    for (size_t i = 0; i < p->n_cells; i++)
        out += p->cell_out[i];
    double per_bp = out / total_bp;
    if (per_bp * MIN_SHARD_BP > p->out_target) {
        hts_pos_t bp = (hts_pos_t)(p->out_target / per_bp);
        p->min_bp = bp > MIN_OUT_SHARD_BP ? bp : MIN_OUT_SHARD_BP;
    }
}

/*
 * Equal-bp cuts (the cells show no work): shard_size, or less when the
 * span's output per bp (its density, or what -a prints) would pass the target.
 */
static hts_pos_t bp_size(const plan_t *p, const span_t *s)
{
    hts_pos_t size = p->shard_size;
    double per_bp = !p->spec ? 0 : p->cell_out ? s->density : p->spec->out_per_base;
    if (per_bp > 0) {
        hts_pos_t by_out = (hts_pos_t)(p->out_target / per_bp);
        if (by_out < MIN_OUT_SHARD_BP)
            by_out = MIN_OUT_SHARD_BP;
        if (by_out < size)
            size = by_out;
    }
    return size;
}

static int shard_add(plan_t *p, const span_t *s, hts_pos_t beg, hts_pos_t end, double work)
{
    shards_t *o = &p->out;
    if (o->n == o->m) {
        int m = o->m ? 2 * o->m : 256;
        ss_shard_t *a = realloc(o->a, (size_t)m * sizeof(*a));
        if (!a)
            return -1;
        o->a = a, o->m = m;
    }
    ss_shard_t *sh = &o->a[o->n];
    sh->idx = o->n;
    sh->tid = s->tid;
    sh->beg = beg;
    sh->end = end;
    sh->scope_beg = s->scope_beg;
    sh->scope_end = s->scope_end;
    sh->est_work = p->by_bp ? (uint64_t)(end - beg) : (uint64_t)llround(work);
    sh->query_end = end; /* the plan's last step moves a scope's last one to its END */
    sh->before = 0;      /* a census (census.c) fills it */
    o->n++;
    return 0;
}

/* Equal-bp shards of at most `size` bp over the span. */
static int cut_by_bp(plan_t *p, const span_t *s, hts_pos_t size)
{
    hts_pos_t len = s->end - s->beg;
    hts_pos_t k = (len + size - 1) / size;
    for (hts_pos_t i = 0; i < k; i++) {
        hts_pos_t b = s->beg + len * i / k, e = s->beg + len * (i + 1) / k;
        if (shard_add(p, s, b, e, 0) < 0)
            return -1;
    }
    return 0;
}

/* The cell's profile, when the budget allows and the file gives one. 1 when *pr is set. */
static int profile_cell(plan_t *p, hts_pos_t cb, hts_pos_t ce, int tid, int64_t work, profile_t *pr)
{
    double bins[PROFILE_BINS], total = 0;
    if (!p->prof_est || work < PROFILE_MIN_WORK || work > p->prof_left)
        return 0;
    p->prof_left -= work;
    if (ss_io_est_profile(p->prof_est, tid, cb, ce, PROFILE_BINS, bins) != 0)
        return 0;
    for (int k = 0; k < PROFILE_BINS; k++)
        total += bins[k];
    pr->beg = cb, pr->end = ce, pr->cum[0] = 0;
    for (int k = 0; k < PROFILE_BINS; k++)
        pr->cum[k + 1] = pr->cum[k] + bins[k] / total;
    pr->cum[PROFILE_BINS] = 1;
    return 1;
}

/* The share of the cell's reads that start before x (linear within a bin). */
static double profile_at(const profile_t *pr, hts_pos_t x)
{
    double t = (double)(x - pr->beg) * PROFILE_BINS / (double)(pr->end - pr->beg);
    int k = (int)t;
    if (k >= PROFILE_BINS)
        return 1;
    return pr->cum[k] + (pr->cum[k + 1] - pr->cum[k]) * (t - k);
}

/*
 * Where part j of parts of the cell [cb, ce) begins, after part j-1 began at
 * prev: the even cut, or with a profile where j/parts of the reads lie, each
 * part at least min_bp long.
 */
static hts_pos_t part_beg(const profile_t *pr, hts_pos_t cb, hts_pos_t ce, hts_pos_t parts,
                          hts_pos_t j, hts_pos_t prev, hts_pos_t min_bp)
{
    if (j == 0 || j == parts)
        return j == 0 ? cb : ce;
    if (!pr)
        return cb + (ce - cb) * j / parts;
    hts_pos_t lo = prev + min_bp, hi = ce - (parts - j) * min_bp;
    double f = (double)j / (double)parts;
    while (lo < hi) { /* the first position with that share before it */
        hts_pos_t mid = lo + (hi - lo) / 2;
        if (profile_at(pr, mid) >= f)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/*
 * Greedy packing of cells (split when heavy) into shards near the target:
 * cur weighs what the shard holds (work, or output in work units, per cell:
 * cell_weight), cur_work its work alone, which the shard reports.
 */
static int cut_by_work(plan_t *p, const span_t *s)
{
    int first = p->out.n;
    hts_pos_t cur_beg = s->beg, min_bp = p->min_bp;
    double cur = 0, cur_work = 0;
    for (size_t k = 0; k < s->n_cells; k++) {
        hts_pos_t cb = cell_beg(s, k), ce = cell_end(s, k);
        double w = cell_weight(p, s->cell0 + k), work = (double)p->cell_work[s->cell0 + k];
        hts_pos_t parts = (hts_pos_t)ceil(w / p->target);
        hts_pos_t by_len = (ce - cb + p->max_bp - 1) / p->max_bp;
        if (parts < by_len)
            parts = by_len;
        if (parts > (ce - cb) / min_bp)
            parts = (ce - cb) / min_bp;
        if (parts < 1)
            parts = 1;
        profile_t prof;
        const profile_t *pr =
            parts > 1 && profile_cell(p, cb, ce, s->tid, p->cell_work[s->cell0 + k], &prof) ? &prof
                                                                                            : NULL;
        hts_pos_t ue = cb;
        for (hts_pos_t j = 0; j < parts; j++) {
            hts_pos_t ub = ue;
            ue = part_beg(pr, cb, ce, parts, j + 1, ub, min_bp);
            double share = pr ? profile_at(pr, ue) - profile_at(pr, ub) : 1.0 / (double)parts;
            double uw = w * share, uwork = work * share;
            hts_pos_t cur_bp = ub - cur_beg;
            int too_long = cur_bp + (ue - ub) > p->max_bp;
            int overshoot = cur + uw > p->target && cur + uw - p->target > p->target - cur;
            if (cur_bp > 0 && (too_long || (overshoot && cur_bp >= min_bp))) {
                if (shard_add(p, s, cur_beg, ub, cur_work) < 0)
                    return -1;
                cur_beg = ub, cur = cur_work = 0;
            }
            cur += uw;
            cur_work += uwork;
            if (cur >= p->target && ue - cur_beg >= min_bp) {
                if (shard_add(p, s, cur_beg, ue, cur_work) < 0)
                    return -1;
                cur_beg = ue, cur = cur_work = 0;
            }
        }
    }
    if (cur_beg < s->end) {
        ss_shard_t *prev = p->out.n > first ? &p->out.a[p->out.n - 1] : NULL;
        if (prev && (cur < p->target / 2 || s->end - cur_beg < min_bp) &&
            s->end - prev->beg <= p->max_bp) {
            prev->end = s->end; /* a small tail joins the shard before it */
            prev->est_work += (uint64_t)llround(cur_work);
        } else if (shard_add(p, s, cur_beg, s->end, cur_work) < 0) {
            return -1;
        }
    }
    return 0;
}

static int cut(plan_t *p)
{
    double total_work = 0, total_bp = 0;
    for (size_t i = 0; i < p->n_cells; i++)
        total_work += (double)p->cell_work[i];
    /* bases of spans without reads would dilute the average depth: leave them out */
    for (size_t i = 0; i < p->spans.n; i++) {
        const span_t *s = &p->spans.a[i];
        int64_t w = 0;
        for (size_t k = 0; k < s->n_cells; k++)
            w += p->cell_work[s->cell0 + k];
        if (w > 0 || p->by_bp)
            total_bp += (double)(s->end - s->beg);
    }
    if (total_work <= 0)
        p->by_bp = 1; /* no reads anywhere: nothing to balance */
    p->target = total_bp > 0 ? (double)p->shard_size * total_work / total_bp : 1;
    if (p->cell_out)
        output_min_bp(p, total_bp);
    p->prof_est = ss_io_est_init(ss_job_index(p->job), ss_job_file(p->job), ss_job_header(p->job));
    p->prof_left = PROFILE_BUDGET;
    for (size_t i = 0; i < p->spans.n; i++) {
        const span_t *s = &p->spans.a[i];
        double w = 0;
        for (size_t k = 0; !p->by_bp && k < s->n_cells; k++)
            w += (double)p->cell_work[s->cell0 + k];
        int r;
        if (s->tid == SS_TID_UNPLACED)
            r = shard_add(p, s, 0, 0, 0); /* one shard: the index cannot cut them */
        else if (!p->by_bp && w > 0)
            r = cut_by_work(p, s);
        else if (s->whole_contig && !p->all_contigs && !p->by_bp)
            r = shard_add(p, s, s->beg, s->end, 0); /* no reads: the kernel prints little */
        else
            r = cut_by_bp(p, s, bp_size(p, s));
        if (r < 0)
            return -1;
    }
    return 0;
}

/* SEQSHARD_SHARD_OUTPUT=<bytes> (k/m/g), else SS_SHARD_OUTPUT. */
static double output_target(void)
{
    const char *s = getenv("SEQSHARD_SHARD_OUTPUT");
    hts_pos_t v;
    if (s && *s && ss_parse_size(s, &v) == 0 && v > 0)
        return (double)v;
    return (double)SS_SHARD_OUTPUT;
}

/*
 * Standard input has no index, and is read once, in order: one shard per
 * contig (each read whole, so no read is needed by two shards), then the
 * unplaced reads, all for the run's one worker in plan order.
 */
static int cut_stream(plan_t *p)
{
    p->by_bp = 1; /* no estimate: progress counts bases */
    for (size_t i = 0; i < p->spans.n; i++) {
        const span_t *s = &p->spans.a[i];
        int unplaced = s->tid == SS_TID_UNPLACED;
        if (shard_add(p, s, unplaced ? 0 : s->beg, unplaced ? 0 : s->end, 0) < 0)
            return -1;
    }
    return 0;
}
/* Once the shards are final: the last of each scope also owns what lies past the contig. */
static void set_query_ends(const ss_job_t *job, ss_shard_t *sh, int n)
{
    for (int i = 0; i < n; i++) {
        hts_pos_t len = sh[i].tid >= 0 ? sam_hdr_tid2len(ss_job_header(job), sh[i].tid) : 0;
        int last = sh[i].end >= sh[i].scope_end || sh[i].end >= len;
        sh[i].query_end = last ? sh[i].scope_end : sh[i].end;
    }
}

int ss_plan_build(const ss_job_t *job, const ss_out_spec_t *spec, ss_shard_t **shards, int *n)
{
    const ss_common_opts_t *o = ss_job_opts(job);
    int weighs = spec && (spec->out_per_work > 0 || spec->out_per_base > 0);
    plan_t p = {.job = job,
                .spec = weighs ? spec : NULL,
                .out_target = output_target(),
                .min_bp = MIN_SHARD_BP};
    p.shard_size = o->shard_size >= MIN_SHARD_BP ? o->shard_size : SS_DEFAULT_SHARD_SIZE;
    p.max_bp = MAX_SHARD_FACTOR * p.shard_size;
    p.all_contigs = o->all_contigs;
    p.past_end = ss_job_kernel(job)->past_end;
    *shards = NULL;
    *n = 0;
    int r = build_spans(&p);
    if (r == 0 && ss_job_inputs(job)->stream) {
        r = cut_stream(&p);
    } else {
        if (r == 0)
            r = estimate(&p);
        if (r == 0 && p.cell_out)
            estimate_output(&p);
        if (r == 0)
            r = cut(&p);
    }
    if (r < 0 && !ss_error_raised())
        ss_error("out of memory planning shards");
    ss_io_est_destroy(p.prof_est);
    free(p.spans.a);
    free(p.cell_work);
    free(p.cell_out);
    if (r < 0) {
        free(p.out.a);
        return -1;
    }
    set_query_ends(job, p.out.a, p.out.n);
    *shards = p.out.a;
    *n = p.out.n;
    return 0;
}
