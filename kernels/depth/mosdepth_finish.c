/*
 * mosdepth_finish.c -- `seqshard depth --mosdepth`: the run state (the
 * streams, the --by BED), and the files written once from the totals the
 * framework reduced over every shard, worker and rank: the summary and the
 * global and region dist files, with mosdepth 0.3.3's rows and rules.
 *
 * Not mosdepth 0.3.3's, on purpose: contigs without reads have their rows
 * and dist lines (depth 0 everywhere); the min of total, total_region and of
 * the first contig's <chrom>_region row is the minimum, where mosdepth's
 * uninitialised minimum prints 0.
 */
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "mosdepth.h"

/* ---- small helpers shared with mosdepth.c ---- */

int mos_put_float(kstring_t *s, double v, int precision)
{
    /* Nim's formatFloat(ffDecimal) is C's "%#.*f": precision 0 keeps the point ("23."),
     * and -1 is "%f" */
    if (precision < 0)
        return ksprintf(s, "%f", v) < 0 ? -1 : 0;
    return ksprintf(s, "%#.*f", precision, v) < 0 ? -1 : 0;
}

int mos_quant_bin(const int64_t *quants, int n, int64_t d)
{
    if (d < quants[0] || d > quants[n - 1])
        return -1;
    for (int i = 0; i < n; i++) {
        if (quants[i] > d)
            return i - 1;
        if (quants[i] == d)
            return i;
    }
    return n - 1;
}

int mos_median(const uint32_t *counts, int64_t n)
{
    int64_t stop = (int64_t)(0.5 + (double)n * 0.5), cum = 0;
    for (int i = 0; i < MOS_MEDIAN_BINS; i++) {
        cum += counts[i];
        if (cum >= stop)
            return i;
    }
    return -1;
}

/* ---- the --by BED ---- */

static int by_start(const void *pa, const void *pb)
{
    const mos_region_t *a = pa, *b = pb;
    if (a->beg != b->beg)
        return a->beg < b->beg ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

static int push_region(mos_run_t *r, int tid, const mos_region_t *x, int *cap)
{
    if (r->n_regions[tid] == cap[tid]) {
        int m = cap[tid] ? 2 * cap[tid] : 16;
        mos_region_t *a = realloc(r->regions[tid], (size_t)m * sizeof(*a));
        if (!a)
            return -1;
        r->regions[tid] = a, cap[tid] = m;
    }
    r->regions[tid][r->n_regions[tid]++] = *x;
    return 0;
}

/* Whitespace mosdepth's strip() removes. */
static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\r' || c == '\n' || c == '\f';
}

/*
 * One BED line, as mosdepth reads it: stripped, tab-separated, three columns
 * at least (a shorter one stops the run, where mosdepth skips it), the fourth a
 * name; blank lines, '#' lines and track lines are skipped.
 * 1 a region in *x (tid in *tid, -1 for a contig not in the header), 0 a
 * line to skip, -1 after ss_error().
 */
static int parse_line(char *s, int line, const sam_hdr_t *hdr, const char *path, mos_region_t *x,
                      int *tid)
{
    while (*s && blank(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && blank(s[n - 1]))
        s[--n] = '\0';
    if (!*s || !strncmp(s, "track ", 6) || s[0] == '#')
        return 0;
    char *f[4] = {s, NULL, NULL, NULL};
    int nf = 1;
    for (char *p = s; *p && nf < 4; p++)
        if (*p == '\t')
            *p = '\0', f[nf++] = p + 1;
    if (nf == 4) {
        char *t = strchr(f[3], '\t');
        if (t)
            *t = '\0';
    }
    if (nf < 3) { /* mosdepth skips it with a warning: a smaller output, so stop */
        ss_error("%s line %d: a BED line needs 3 tab-separated columns (contig, start, end), "
                 "this one has %d; fix the BED",
                 path, line, nf);
        return -1;
    }
    char *e1, *e2;
    long long beg = strtoll(f[1], &e1, 10), end = strtoll(f[2], &e2, 10);
    if (!*f[1] || *e1 || !*f[2] || *e2 || beg < 0 || end < 0) {
        ss_error("%s line %d: start and end must be whole numbers >= 0; fix the BED", path, line);
        return -1;
    }
    if (beg > end) {
        ss_error("%s line %d: start %lld > end %lld; fix the BED", path, line, beg, end);
        return -1;
    }
    *tid = sam_hdr_name2tid((sam_hdr_t *)hdr, f[0]);
    x->beg = beg, x->end = end, x->line = line, x->name = NULL;
    if (*tid >= 0 && nf == 4 && *f[3] && !(x->name = strdup(f[3]))) {
        ss_error("out of memory reading %s", path);
        return -1;
    }
    return 1;
}

int mos_read_bed(mos_run_t *r, const char *path, const sam_hdr_t *hdr)
{
    htsFile *fp = hts_open(path, "r");
    if (!fp) {
        ss_error("%s: cannot open the --by BED file; check the path", path);
        return -1;
    }
    int *cap = calloc((size_t)r->nref + 1, sizeof(*cap)), rc = cap ? 0 : -1, line = 0;
    long missing = 0;
    kstring_t ks = KS_INITIALIZE;
    /* mosdepth reads until hts_getline returns <= 0: an empty line ends the file too */
    while (rc == 0 && hts_getline(fp, '\n', &ks) > 0) {
        mos_region_t x;
        int tid, p = parse_line(ks.s, ++line, hdr, path, &x, &tid);
        if (p < 0)
            rc = -1;
        else if (p > 0 && tid < 0)
            missing++;
        else if (p > 0 && push_region(r, tid, &x, cap) < 0)
            rc = -1;
    }
    int blank = line + 1, after = 0;
    while (rc == 0 && hts_getline(fp, '\n', &ks) >= 0)
        after += ks.l > 0;
    free(ks.s);
    free(cap);
    hts_close(fp);
    if (rc < 0) {
        if (!ss_error_raised())
            ss_error("out of memory reading %s", path);
        return -1;
    }
    if (after) /* mosdepth's reading, kept; but not in silence */
        ss_warn("%s line %d: an empty line ends the BED, as mosdepth reads it: the %d lines "
                "after it are not read; remove the empty line to read them",
                path, blank, after);
    if (missing)
        ss_warn("%s: %ld regions on contigs that are not in the input's header were skipped", path,
                missing);
    for (int t = 0; t < r->nref; t++)
        if (r->n_regions[t])
            qsort(r->regions[t], (size_t)r->n_regions[t], sizeof(mos_region_t), by_start);
    return 0;
}

/* ---- the run state ---- */

void mos_run_free(mos_run_t *r)
{
    if (!r)
        return;
    for (int t = 0; r->regions && t < r->nref; t++) {
        for (int i = 0; i < r->n_regions[t]; i++)
            free(r->regions[t][i].name);
        free(r->regions[t]);
    }
    free(r->regions);
    free(r->n_regions);
    free(r->skip);
    for (int k = 0; k < MOS_N_STREAMS; k++)
        free(r->path[k]);
    free(r->thresholds_header);
    free(r->ops);
    free(r);
}

static char *joined(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

static char *thresholds_header(const mos_opts_t *o)
{
    kstring_t s = KS_INITIALIZE;
    int bad = kputs("#chrom\tstart\tend\tregion", &s) < 0;
    for (int i = 0; i < o->n_thresholds; i++)
        bad |= ksprintf(&s, "\t%dX", o->thresholds[i]) < 0;
    bad |= kputc('\n', &s) < 0;
    if (bad) {
        free(s.s);
        return NULL;
    }
    return s.s;
}

/* Declare the side streams this run writes. 0, or -1 out of memory. */
static int add_streams(mos_run_t *r, const mos_opts_t *o, ss_out_spec_t *out)
{
    static const char *const suffix[MOS_N_STREAMS] = {".per-base.bed.gz", ".regions.bed.gz",
                                                      ".thresholds.bed.gz", ".quantized.bed.gz"};
    int want[MOS_N_STREAMS] = {!o->no_per_base, o->by || o->window, o->n_thresholds > 0,
                               o->n_quants > 0};
    for (int k = 0; k < MOS_N_STREAMS; k++) {
        r->stream[k] = -1;
        if (!want[k])
            continue;
        if (!(r->path[k] = joined(o->prefix, suffix[k])))
            return -1;
        r->stream[k] = out->n_streams;
        out->streams[out->n_streams++] =
            (ss_stream_spec_t){.path = r->path[k],
                               .format = SS_STREAM_BED_GZ,
                               .level = 1,
                               .header = k == MOS_THRESHOLDS ? r->thresholds_header : NULL};
    }
    return 0;
}

int mos_prepare(const mos_opts_t *o, const ss_job_t *job, mos_run_t **run, ss_out_spec_t *out)
{
    mos_run_t *r = calloc(1, sizeof(*r));
    if (!(*run = r))
        goto oom;
    r->o = o;
    r->hdr = ss_job_header(job);
    r->reference = ss_job_opts(job)->reference;
    r->ref_option = ss_job_opts(job)->ref_option;
    r->nref = sam_hdr_nref(r->hdr);
    size_t n = (size_t)r->nref + 1;
    r->regions = calloc(n, sizeof(*r->regions));
    r->n_regions = calloc(n, sizeof(*r->n_regions));
    r->skip = calloc(n, 1);
    r->ops = malloc(n * MOS_NV * sizeof(*r->ops));
    if (!r->regions || !r->n_regions || !r->skip || !r->ops)
        goto oom;
    if (o->by && mos_read_bed(r, o->by, r->hdr) < 0)
        return -1;
    /* mosdepth skips a contig the BED does not name when nothing else needs it */
    int bed_only = o->no_per_base && !o->n_thresholds && !o->n_quants && o->by;
    int only = o->chrom ? sam_hdr_name2tid((sam_hdr_t *)r->hdr, o->chrom) : -1; /* -c */
    for (int t = 0; t < r->nref; t++) {
        r->skip[t] = (bed_only && r->n_regions[t] == 0) || (o->chrom && t != only);
        static const ss_reduce_op_t per[MOS_NV] = {SS_REDUCE_SUM, SS_REDUCE_MIN, SS_REDUCE_MAX,
                                                   SS_REDUCE_SUM, SS_REDUCE_SUM, SS_REDUCE_MIN,
                                                   SS_REDUCE_MAX};
        memcpy(r->ops + (size_t)t * MOS_NV, per, sizeof(per));
    }
    if (o->n_thresholds && !(r->thresholds_header = thresholds_header(o)))
        goto oom;
    out->no_main = 1;
    if (add_streams(r, o, out) < 0)
        goto oom;
    out->n_values = (size_t)r->nref * MOS_NV;
    out->value_ops = r->ops;
    out->n_hists = 2 * r->nref;
    return 0;
oom:
    ss_error("out of memory preparing depth --mosdepth");
    return -1;
}

/* ---- the final files ---- */

typedef struct {
    int64_t len, bases, min, max;
} stat_t;

static int summary_row(kstring_t *s, const char *name, const char *suffix, stat_t st, int prec)
{
    double mean = st.len > 0 ? (double)st.bases / (double)st.len : 0.0;
    int64_t mn = st.min == INT64_MAX ? 0 : st.min, mx = st.max == INT64_MIN ? 0 : st.max;
    if (ksprintf(s, "%s%s\t%lld\t%lld\t", name, suffix, (long long)st.len, (long long)st.bases) <
            0 ||
        mos_put_float(s, mean, prec) < 0 ||
        ksprintf(s, "\t%lld\t%lld\n", (long long)mn, (long long)mx) < 0)
        return -1;
    return 0;
}

static void stat_add(stat_t *a, stat_t b)
{
    a->len += b.len, a->bases += b.bases;
    if (b.min < a->min)
        a->min = b.min;
    if (b.max > a->max)
        a->max = b.max;
}

/*
 * mosdepth's write_distribution: from the deepest bin down, the fraction of
 * counts at >= each depth, summed in that order; bins above 300 that are
 * empty, and fractions below 8e-5, print nothing.
 */
static int dist_lines(kstring_t *s, const char *name, const int64_t *h, size_t n, int prec)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += h[i];
    if (sum < 1)
        return 0;
    double cum = 0;
    for (size_t i = n; i-- > 0;) {
        if (i > 300 && h[i] == 0)
            continue;
        cum += (double)h[i] / (double)sum;
        if (cum < 8e-5)
            continue;
        if (ksprintf(s, "%s\t%zu\t", name, i) < 0 || mos_put_float(s, cum, prec) < 0 ||
            kputc('\n', s) < 0)
            return -1;
    }
    return 0;
}

/* h += a (a's n bins), growing h. 0, or -1 out of memory. */
static int hist_sum(int64_t **h, size_t *hn, const int64_t *a, size_t n)
{
    if (n > *hn) {
        int64_t *b = realloc(*h, n * sizeof(*b));
        if (!b)
            return -1;
        memset(b + *hn, 0, (n - *hn) * sizeof(*b));
        *h = b, *hn = n;
    }
    for (size_t i = 0; i < n; i++)
        (*h)[i] += a[i];
    return 0;
}

typedef struct {
    kstring_t *summary, *global, *region;
    int64_t *gt, *rt; /* the total histograms */
    size_t gtn, rtn;
    stat_t total, total_region;
} fin_t;

/* Contig t's summary rows and dist lines; its counts join the totals. 0, or -1. */
static int contig_out(const mos_opts_t *o, const mos_run_t *run, ss_finish_t *fin, fin_t *f, int t)
{
    const int64_t *v = ss_finish_values(fin) + (size_t)t * MOS_NV;
    const char *name = sam_hdr_tid2name(run->hdr, t);
    int by = o->by || o->window;
    stat_t c = {sam_hdr_tid2len(run->hdr, t), v[MOS_BASES], v[MOS_MIN], v[MOS_MAX]};
    stat_t cr = {v[MOS_RLEN], v[MOS_RBASES], v[MOS_RMIN], v[MOS_RMAX]};
    stat_add(&f->total, c);
    stat_add(&f->total_region, cr);
    if (summary_row(f->summary, name, "", c, o->precision) < 0 ||
        (by && summary_row(f->summary, name, "_region", cr, o->precision) < 0))
        return -1;
    size_t n;
    const int64_t *h = ss_finish_hist(fin, 2 * t, &n);
    if (dist_lines(f->global, name, h, n, o->precision) < 0 || hist_sum(&f->gt, &f->gtn, h, n) < 0)
        return -1;
    if (!by)
        return 0;
    h = ss_finish_hist(fin, 2 * t + 1, &n);
    return dist_lines(f->region, name, h, n, o->precision) < 0 ||
                   hist_sum(&f->rt, &f->rtn, h, n) < 0
               ? -1
               : 0;
}

int mos_finish(const mos_opts_t *o, const mos_run_t *run, ss_finish_t *fin)
{
    int by = o->by || o->window, rc = -1;
    char *ps = joined(o->prefix, ".mosdepth.summary.txt");
    char *pg = joined(o->prefix, ".mosdepth.global.dist.txt");
    char *pr = by ? joined(o->prefix, ".mosdepth.region.dist.txt") : NULL;
    fin_t f = {.total = {0, 0, INT64_MAX, INT64_MIN}, .total_region = {0, 0, INT64_MAX, INT64_MIN}};
    if (!ps || !pg || (by && !pr) || !(f.global = ss_finish_file(fin, pg)) ||
        !(f.summary = ss_finish_file(fin, ps)) || (by && !(f.region = ss_finish_file(fin, pr))))
        goto out;
    if (kputs("chrom\tlength\tbases\tmean\tmin\tmax\n", f.summary) < 0)
        goto out;
    for (int t = 0; t < run->nref; t++)
        if (!run->skip[t] && sam_hdr_tid2len(run->hdr, t) > 0 && contig_out(o, run, fin, &f, t) < 0)
            goto out;
    if (summary_row(f.summary, "total", "", f.total, o->precision) < 0 ||
        (by && summary_row(f.summary, "total_region", "", f.total_region, o->precision) < 0) ||
        dist_lines(f.global, "total", f.gt, f.gtn, o->precision) < 0 ||
        (by && dist_lines(f.region, "total", f.rt, f.rtn, o->precision) < 0))
        goto out;
    rc = 0;
out:
    if (rc < 0 && !ss_error_raised())
        ss_error("out of memory writing the mosdepth summary");
    free(f.gt);
    free(f.rt);
    free(ps);
    free(pg);
    free(pr);
    return rc;
}
