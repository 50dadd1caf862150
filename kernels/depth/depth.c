/*
 * depth.c -- `seqshard depth`: samtools depth 1.16, shard by shard.
 *
 * samtools depth (not the pileup engine since 1.13) merges the inputs' reads
 * in coordinate order and adds each read that passes its filters to per-input
 * counts; a position is printed when some counted read spans it (POS to
 * bam_endpos, so deletions, skips and low-quality bases inside a read print
 * as their count, maybe 0), and with -a also when none does. A shard does
 * the same over the reads that overlap it: an index query returns every read
 * that spans one of its positions, wherever it starts. It prints its own
 * positions only; the last shard of a contig also the positions past the
 * contig's end that reads placed there span, as samtools does.
 *
 * What a shard cannot see it asks for: whether the contig has a counted read
 * at all (-a prints contigs with reads only; the run state knows, from a scan
 * in prepare), and for -s the earlier alignments of a read's name (it reads
 * back DP_PAIR_WINDOW bases before the first read it overlaps).
 */
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "../../io/ss_diag.h"
#include "depth.h"
#include "mosdepth.h"

/* Made by prepare, read-only for the workers. */
typedef struct {
    int zeros_everywhere;   /* -aa, or -a with -r: positions without reads print as 0 */
    unsigned char *counted; /* -a alone: [nref] 1 if the contig has a read that counts */
    char *header;           /* -H: the line the output opens with (the framework copies it) */
    mos_run_t *mos;         /* --mosdepth */
} dp_run_t;

typedef struct {
    const dp_opts_t *o;
    const dp_run_t *run;
    const ss_job_t *job;
    ss_reader_t *rd;
    const sam_hdr_t *hdr;
    int n;               /* inputs */
    bam1_t **b;          /* [n] each input's next counted read */
    unsigned char *live; /* [n] b[i] holds one */
    hts_pos_t *last_pos; /* [n] the POS read before, for the order check */
    dp_pairs_t **pairs;  /* [n] -s only */
    dp_ring_t ring;
    dp_fmt_t fmt;
    double bytes_per_bp;       /* output per shard bp seen so far: the next reserve */
    const hts_pair_pos_t *bed; /* the shard contig's -b intervals, and the cursor */
    int bed_n, bed_k;
    uint64_t reads, rows;
    mos_worker_t *mos; /* --mosdepth: the rest is unused */
} dp_worker_t;

static void opts_free(void *kopts)
{
    dp_opts_t *o = kopts;
    if (o)
        mos_opts_free(o->mos);
    free(o);
}

static void run_free(void *run)
{
    dp_run_t *r = run;
    if (r) {
        free(r->counted);
        free(r->header);
        mos_run_free(r->mos);
    }
    free(r);
}

/* ---- prepare ---- */

/* Whether input i has a read on tid that passes the filters. 1, 0, or -1 after ss_error. */
static int has_counted_read(const dp_opts_t *o, samFile *fp, hts_idx_t *idx, int tid, bam1_t *b,
                            const char *path)
{
    uint64_t mapped = 0, unmapped = 0;
    if (hts_idx_get_stat(idx, tid, &mapped, &unmapped) == 0 && mapped + unmapped == 0)
        return 0; /* the index says the contig is empty: no need to look */
    hts_itr_t *itr = sam_itr_queryi(idx, tid, 0, HTS_POS_MAX);
    if (!itr) {
        ss_error("%s: cannot query contig %d; check the index (samtools index)", path, tid);
        return -1;
    }
    int r, found = 0;
    while (!found && (r = sam_itr_next(fp, itr, b)) >= 0)
        found = dp_read_passes(o, b);
    hts_itr_destroy(itr);
    if (!found && r < -1) {
        char where[64];
        snprintf(where, sizeof(where), "contig #%d, for -a", tid);
        ss_io_read_error(path, fp, r, -1, where);
        return -1;
    }
    return found;
}

/*
 * -a prints a contig only if some read on it counts, which a shard cannot
 * know: look once, here. Most contigs answer with their first read; one
 * whose reads all fail the filters is read to its end.
 */
static int scan_counted(const dp_opts_t *o, const ss_job_t *job, unsigned char *counted)
{
    const ss_io_inputs_t *in = ss_job_inputs(job);
    int nref = sam_hdr_nref(ss_job_header(job)), rc = 0;
    bam1_t *b = bam_init1();
    if (!b)
        return ss_error("out of memory checking contigs for reads"), -1;
    for (int i = 0; rc == 0 && i < in->n; i++) {
        samFile *fp = ss_io_open_input(in, i);
        sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
        hts_idx_t *idx = h ? ss_io_load_index(in, i, fp) : NULL;
        if (!idx) {
            if (fp && !h)
                ss_error("%s: cannot read the header", in->paths[i]);
            rc = -1;
        }
        for (int tid = 0; rc == 0 && tid < nref; tid++) {
            if (counted[tid])
                continue;
            int r = has_counted_read(o, fp, idx, tid, b, in->paths[i]);
            if (r < 0)
                rc = -1;
            counted[tid] = r > 0;
        }
        hts_idx_destroy(idx);
        sam_hdr_destroy(h);
        if (fp)
            sam_close(fp);
    }
    bam_destroy1(b);
    return rc;
}

/* "#CHROM\tPOS\t<input>..." as samtools -H prints it; NULL out of memory. */
static char *header_line(const ss_job_t *job)
{
    const ss_io_inputs_t *in = ss_job_inputs(job);
    kstring_t s = KS_INITIALIZE;
    int bad = kputs("#CHROM\tPOS", &s) < 0;
    for (int i = 0; i < in->n; i++)
        bad |= kputc('\t', &s) < 0 || kputs(in->paths[i], &s) < 0;
    bad |= kputc('\n', &s) < 0;
    if (bad) {
        free(s.s);
        return NULL;
    }
    return s.s;
}

static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const dp_opts_t *o = kopts;
    dp_run_t *r = calloc(1, sizeof(*r));
    if (!(*run = r))
        return ss_error("out of memory preparing depth"), -1;
    int region = ss_job_region(job) != NULL;
    if (ss_job_inputs(job)->stream && (o->mos || (o->all == 1 && !region))) {
        ss_error("-: %s needs the input's index, which standard input has none of; give a file%s",
                 o->mos ? "mosdepth mode (as mosdepth)" : "-a (which contigs have reads)",
                 o->mos ? "" : ", or -aa");
        return -1;
    }
    if (o->mos)
        return mos_prepare(o->mos, job, &r->mos, out);
    r->zeros_everywhere = o->all >= 2 || (o->all && region);
    out->format = SS_FMT_TEXT;
    if (o->header && !(out->text_header = r->header = header_line(job)))
        return ss_error("out of memory building the header line"), -1;
    if (o->all == 1 && !region) {
        int nref = sam_hdr_nref(ss_job_header(job));
        if (!(r->counted = calloc((size_t)nref + 1, 1)))
            return ss_error("out of memory preparing depth"), -1;
        if (scan_counted(o, job, r->counted) < 0)
            return -1;
    }
    return 0;
}

/* ---- workers ---- */

static void worker_destroy(void *ws)
{
    dp_worker_t *w = ws;
    if (!w)
        return;
    mos_worker_destroy(w->mos);
    for (int i = 0; i < w->n; i++) {
        if (w->b && w->b[i])
            bam_destroy1(w->b[i]);
        if (w->pairs)
            dp_pairs_destroy(w->pairs[i]);
    }
    free(w->b);
    free(w->live);
    free(w->last_pos);
    free(w->pairs);
    dp_ring_destroy(&w->ring);
    free(w);
}

static int worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int id)
{
    (void)id;
    /* written per read and per base: private cache lines (ss_alloc.h) */
    dp_worker_t *w = ss_alloc_private(sizeof(*w));
    if (!(*ws = w))
        return ss_error("out of memory starting a depth worker"), -1;
    w->o = kopts, w->run = run, w->job = job, w->rd = rd;
    w->hdr = ss_job_header(job);
    if (w->o->mos)
        return mos_worker_init(&w->mos, w->o->mos, w->run->mos, rd) < 0
                   ? (ss_error("out of memory starting a depth worker"), -1)
                   : 0;
    w->n = ss_job_inputs(job)->n;
    w->b = ss_alloc_private((size_t)w->n * sizeof(*w->b));
    w->live = ss_alloc_private((size_t)w->n);
    w->last_pos = ss_alloc_private((size_t)w->n * sizeof(*w->last_pos));
    if (w->o->overlaps)
        w->pairs = ss_alloc_private((size_t)w->n * sizeof(*w->pairs));
    if (!w->b || !w->live || !w->last_pos || (w->o->overlaps && !w->pairs) ||
        dp_ring_init(&w->ring, w->n) < 0)
        return ss_error("out of memory starting a depth worker"), -1;
    for (int i = 0; i < w->n; i++)
        if (!(w->b[i] = ss_bam_private()) || (w->pairs && !(w->pairs[i] = dp_pairs_init())))
            return ss_error("out of memory starting a depth worker"), -1;
    return 0;
}

/* ---- one shard ---- */

/* Whether -b lets position p print; positions come in increasing order. */
static int bed_allows(dp_worker_t *w, hts_pos_t p)
{
    if (!ss_job_bed(w->job))
        return 1;
    while (w->bed_k < w->bed_n && w->bed[w->bed_k].end <= p)
        w->bed_k++;
    return w->bed_k < w->bed_n && w->bed[w->bed_k].beg <= p;
}

/*
 * Print the positions from the ring's lo up to `to`: those a counted read
 * spans with their counts, the others as zeros when zeros print.
 */
static int flush_to(dp_worker_t *w, hts_pos_t to, int zeros, kstring_t *out)
{
    dp_ring_t *r = &w->ring;
    hts_pos_t p = r->lo, covered = to < r->cover ? to : r->cover;
    if (!ss_job_bed(w->job)) {
        hts_pos_t zero_to = zeros ? to : covered;
        if (covered < p)
            covered = p;
        if (zero_to < covered)
            zero_to = covered;
        if (dp_fmt_rows(&w->fmt, out, r, p, covered, 0) < 0 ||
            dp_fmt_rows(&w->fmt, out, r, covered, zero_to, 1) < 0)
            return -1;
        w->rows += (uint64_t)(zero_to - p);
        if (to > r->lo)
            r->lo = to;
        return 0;
    }
    for (; p < covered; p++)
        if (bed_allows(w, p)) {
            if (dp_fmt_row(&w->fmt, out, p, dp_ring_at(r, p), w->n) < 0)
                return -1;
            w->rows++;
        }
    for (; zeros && p < to; p++)
        if (bed_allows(w, p)) {
            if (dp_fmt_zero_row(&w->fmt, out, p, w->n) < 0)
                return -1;
            w->rows++;
        }
    if (to > r->lo)
        r->lo = to;
    return 0;
}

/* Read error r (< -1) of input i in shard sh: one line naming the file, shard and cause. */
static int read_failed(dp_worker_t *w, int i, const ss_shard_t *sh, int r)
{
    const ss_common_opts_t *co = ss_job_opts(w->job);
    return ss_io_input_failed(w->rd, i, r, 0, sh->tid, sh->beg, sh->end, co->reference,
                              co->ref_option);
}

/* Input i's next read that passes the filters into b[i]. 0, or -1 after ss_error. */
static int next_counted(dp_worker_t *w, int i, const ss_shard_t *sh)
{
    ss_source_t *src = ss_reader_source(w->rd, i);
    int r;
    while ((r = ss_source_next(src, w->b[i])) >= 0) {
        w->reads++;
        if (w->b[i]->core.pos < w->last_pos[i]) {
            ss_error("%s: reads out of order in shard %d (%s:%lld): the input is not "
                     "coordinate-sorted; sort it with samtools sort and index it again",
                     src->name, sh->idx, sam_hdr_tid2name(w->hdr, sh->tid),
                     (long long)w->b[i]->core.pos + 1);
            return -1;
        }
        w->last_pos[i] = w->b[i]->core.pos;
        if (dp_read_passes(w->o, w->b[i]))
            break;
    }
    w->live[i] = r >= 0;
    return r < -1 ? read_failed(w, i, sh, r) : 0;
}

/* The input whose next read comes first (the lowest input on a tie, as samtools), or -1. */
static int next_input(const dp_worker_t *w)
{
    int best = -1;
    for (int i = 0; i < w->n; i++)
        if (w->live[i] && (best < 0 || w->b[i]->core.pos < w->b[best]->core.pos))
            best = i;
    return best;
}

/*
 * Where input i's query starts. With -s, DP_PAIR_WINDOW before the first
 * read that overlaps the shard (a read's pairing looks that far back), not
 * before the region's start (samtools reads nothing before it).
 */
static hts_pos_t query_start(dp_worker_t *w, int i, const ss_shard_t *sh)
{
    if (!w->o->overlaps)
        return sh->beg;
    ss_source_t *src = ss_reader_source(w->rd, i);
    hts_pos_t first = sh->beg;
    if (ss_source_query(src, sh->tid, sh->beg, sh->beg + 1) < 0)
        return -1;
    int r = ss_source_next(src, w->b[i]);
    if (r < -1)
        return read_failed(w, i, sh, r);
    if (r >= 0 && w->b[i]->core.pos < first)
        first = w->b[i]->core.pos;
    hts_pos_t beg = first - DP_PAIR_WINDOW;
    if (beg < sh->scope_beg)
        beg = sh->scope_beg;
    return beg > 0 ? beg : 0;
}

static int start_inputs(dp_worker_t *w, const ss_shard_t *sh, hts_pos_t limit)
{
    for (int i = 0; i < w->n; i++) {
        hts_pos_t beg = query_start(w, i, sh);
        if (beg < 0 || ss_source_query(ss_reader_source(w->rd, i), sh->tid, beg, limit) < 0)
            return -1;
        if (w->pairs)
            dp_pairs_clear(w->pairs[i]);
        w->last_pos[i] = -1;
        if (next_counted(w, i, sh) < 0)
            return -1;
    }
    return 0;
}

/* Add input i's current read: print what lies before it, then count it. */
static int add_read(dp_worker_t *w, int i, const ss_shard_t *sh, hts_pos_t limit, int zeros,
                    kstring_t *out)
{
    const bam1_t *b = w->b[i];
    dp_ring_t *r = &w->ring;
    hts_pos_t clip = w->pairs ? dp_pairs_clip(w->pairs[i], b) : 0;
    if (clip < 0)
        return ss_error("out of memory pairing reads (-s) in shard %d", sh->idx), -1;
    if (b->core.pos > r->lo && flush_to(w, b->core.pos, zeros, out) < 0)
        return ss_error("out of memory writing shard %d", sh->idx), -1;
    hts_pos_t end = bam_endpos(b);
    if (end > limit)
        end = limit;
    /* counts past this read's end stick only where an earlier read of the input reached */
    hts_pos_t top = end > r->hi[i] ? end : r->hi[i];
    if (dp_ring_extend(r, end) < 0)
        return ss_error("out of memory counting shard %d (a read spans %lld bp)", sh->idx,
                        (long long)(end - b->core.pos)),
               -1;
    r->hi[i] = top;
    int bad_op = 0;
    if (dp_count_read(r, i, b, w->o, clip, top, &bad_op) < 0)
        return ss_error("%s: read %s in shard %d has CIGAR operation %d, which samtools depth "
                        "does not accept; fix or drop the read",
                        ss_reader_path(w->rd, i), bam_get_qname(b), sh->idx, bad_op),
               -1;
    return 0;
}

/* Whether positions without reads print in this shard's contig. */
static int zeros_print(const dp_worker_t *w, int tid)
{
    if (!w->o->all)
        return 0;
    return w->run->zeros_everywhere || (w->run->counted && w->run->counted[tid]);
}

static int reserve_output(dp_worker_t *w, const ss_shard_t *sh, ss_out_t *out)
{
    double per =
        w->bytes_per_bp > 0 ? w->bytes_per_bp : (double)(w->fmt.ctg_len + 12 + 3 * (size_t)w->n);
    double want = per * (double)(sh->end - sh->beg);
    return ss_out_reserve(out, want < (double)SS_RESERVE_MAX ? (size_t)want : SS_RESERVE_MAX);
}

static int finish(const void *kopts, const void *run, ss_finish_t *fin)
{
    const dp_opts_t *o = kopts;
    const dp_run_t *r = run;
    return o->mos ? mos_finish(o->mos, r->mos, fin) : 0;
}

static int process(void *ws, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    dp_worker_t *w = ws;
    if (w->mos)
        return mos_process(w->mos, sh, out, st);
    kstring_t *text = ss_out_text(out);
    const char *ctg = sam_hdr_tid2name(w->hdr, sh->tid);
    hts_pos_t len = sam_hdr_tid2len(w->hdr, sh->tid);
    /* the contig's last shard also prints what reads placed past its end span */
    hts_pos_t limit = sh->end >= len ? sh->scope_end : sh->end;
    int zeros = zeros_print(w, sh->tid), i;
    dp_fmt_contig(&w->fmt, ctg);
    w->bed = ss_job_bed(w->job) ? ss_bed_intervals(ss_job_bed(w->job), ctg, &w->bed_n) : NULL;
    w->bed_k = 0;
    w->reads = w->rows = 0;
    if (reserve_output(w, sh, out) < 0 || start_inputs(w, sh, limit) < 0)
        return -1;
    dp_ring_reset(&w->ring, sh->beg);
    while ((i = next_input(w)) >= 0)
        if (add_read(w, i, sh, limit, zeros, text) < 0 || next_counted(w, i, sh) < 0 ||
            ss_out_checkpoint(out) < 0) /* many inputs' columns may pass memory */
            return -1;
    hts_pos_t to = w->ring.cover > sh->end ? w->ring.cover : sh->end;
    if (flush_to(w, to, zeros, text) < 0)
        return ss_error("out of memory writing shard %d", sh->idx), -1;
    st->reads += w->reads;
    st->bases += w->rows;
    if (sh->end > sh->beg && ss_out_length(out) > 0)
        w->bytes_per_bp = 1.25 * (double)ss_out_length(out) / (double)(sh->end - sh->beg);
    return 0;
}

const ss_kernel_t ss_kernel_depth = {
    .name = "depth",
    .summary = "depth at each position, identical to samtools depth",
    .usage = dp_usage,
    .parse = dp_parse,
    .opts_free = opts_free,
    .prepare = prepare,
    .run_free = run_free,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .finish = finish,
    .stdin_ok = 1, /* "-": one pass, each contig one shard */
};
