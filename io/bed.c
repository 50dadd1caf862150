/*
 * bed.c -- region lists for -l, read the way samtools 1.16 reads them
 * (bedidx.c bed_read), so that a position or read is kept exactly when
 * samtools mpileup keeps it.
 *
 * Per line: leading white space skipped; blank and '#' lines skipped; the
 * contig name runs to the first white space; then one number is a 1-based
 * position (VCF-like), two are a 0-based half-open BED interval. A line with
 * no number, or with end < start, is an error unless its name is "browser"
 * or "track". Plain and gzip/BGZF-compressed files are read alike.
 *
 * Deliberate differences from samtools: error messages give the line's real
 * number in the file (samtools does not count empty lines), and positions
 * above HTS_POS_MAX are an error rather than wrapping negative.
 *
 * Overlap: samtools keeps each contig's intervals sorted but NOT merged
 * (bed_unify is not called by bed_read), and bed_overlap answers "is there
 * an interval i with i.end > beg && i.beg < end". We keep the sorted raw
 * intervals with a running maximum of their ends, which answers the same
 * question for every query (empty and touching ones included) by one binary
 * search. The merged list (samtools' bed_unify rule: an interval that starts
 * at or before the current end joins it) serves the planner.
 */
#include <ctype.h>
#include <errno.h>
#include <htslib/bgzf.h>
#include <htslib/khash_str2int.h>
#include <htslib/kstring.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ss_base.h"
#include "ss_bed.h"

typedef struct {
    char *name;
    hts_pair_pos_t *raw; /* sorted by (beg, end) */
    hts_pos_t *max_end;  /* max_end[i] = max(raw[0..i].end) */
    int n_raw, m_raw;
    hts_pair_pos_t *merged; /* samtools' bed_unify of raw */
    int n_merged;
} bed_contig_t;

struct ss_bed_s {
    void *names; /* khash_str2int: name -> index into ctg */
    bed_contig_t *ctg;
    int n_ctg, m_ctg;
};

void ss_bed_destroy(ss_bed_t *bed)
{
    if (!bed)
        return;
    khash_str2int_destroy(bed->names); /* keys are owned by ctg[].name */
    for (int i = 0; i < bed->n_ctg; i++) {
        free(bed->ctg[i].name);
        free(bed->ctg[i].raw);
        free(bed->ctg[i].max_end);
        free(bed->ctg[i].merged);
    }
    free(bed->ctg);
    free(bed);
}

static bed_contig_t *contig_get(ss_bed_t *bed, const char *name)
{
    int i;
    if (khash_str2int_get(bed->names, name, &i) == 0)
        return &bed->ctg[i];
    if (bed->n_ctg == bed->m_ctg) {
        int m = bed->m_ctg ? 2 * bed->m_ctg : 16;
        bed_contig_t *c = realloc(bed->ctg, (size_t)m * sizeof(*c));
        if (!c)
            return NULL;
        bed->ctg = c;
        bed->m_ctg = m;
    }
    bed_contig_t *c = &bed->ctg[bed->n_ctg];
    memset(c, 0, sizeof(*c));
    if (!(c->name = strdup(name)))
        return NULL;
    /* the hash keeps pointers to the names, which do not move when ctg grows */
    if (khash_str2int_set(bed->names, c->name, bed->n_ctg) < 0) {
        free(c->name);
        return NULL;
    }
    return &bed->ctg[bed->n_ctg++];
}

static int contig_add(bed_contig_t *c, hts_pos_t beg, hts_pos_t end)
{
    if (c->n_raw == c->m_raw) {
        int m = c->m_raw ? 2 * c->m_raw : 4;
        hts_pair_pos_t *a = realloc(c->raw, (size_t)m * sizeof(*a));
        if (!a)
            return -1;
        c->raw = a;
        c->m_raw = m;
    }
    c->raw[c->n_raw].beg = beg;
    c->raw[c->n_raw].end = end;
    c->n_raw++;
    return 0;
}

static int cmp_pair(const void *pa, const void *pb)
{
    const hts_pair_pos_t *a = pa, *b = pb;
    if (a->beg != b->beg)
        return a->beg < b->beg ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

/* Sort, build the running maximum and the merged list. */
static int contig_finish(bed_contig_t *c)
{
    qsort(c->raw, (size_t)c->n_raw, sizeof(*c->raw), cmp_pair);
    c->max_end = malloc((size_t)c->n_raw * sizeof(*c->max_end));
    c->merged = malloc((size_t)c->n_raw * sizeof(*c->merged));
    if (!c->max_end || !c->merged)
        return -1;
    int k = -1;
    for (int i = 0; i < c->n_raw; i++) {
        hts_pos_t prev = i ? c->max_end[i - 1] : c->raw[i].end;
        c->max_end[i] = c->raw[i].end > prev ? c->raw[i].end : prev;
        if (k >= 0 && c->merged[k].end >= c->raw[i].beg) {
            if (c->merged[k].end < c->raw[i].end)
                c->merged[k].end = c->raw[i].end;
        } else {
            c->merged[++k] = c->raw[i];
        }
    }
    c->n_merged = k + 1;
    return 0;
}

/*
 * Parse one line. Returns 1 with name, beg and end set for an interval, 0 for a
 * line to skip, -1 after ss_error().
 */
static int parse_line(char *s, const char *path, int lineno, char **name, hts_pos_t *beg,
                      hts_pos_t *end)
{
    uint64_t b = 0, e = 0;
    int num = 0;
    while (*s && isspace((unsigned char)*s))
        s++;
    if (*s == '\0' || *s == '#')
        return 0;
    char *p = s;
    while (*p && !isspace((unsigned char)*p))
        p++;
    if (*p) {
        *p = '\0';
        num = sscanf(p + 1, "%" SCNu64 " %" SCNu64, &b, &e);
    }
    if (num == 1) {
        e = b; /* one number: a 1-based position */
        b--;
    }
    if (num < 1 || e < b) {
        if (strcmp(s, "browser") == 0 || strcmp(s, "track") == 0)
            return 0;
        if (num < 1)
            ss_error("%s:%d: no start position after '%s'; lines must be 'contig start end' "
                     "(BED, 0-based) or 'contig position' (1-based)",
                     path, lineno, s);
        else if (num == 1)
            ss_error("%s:%d: position 0 on '%s'; single positions count from 1", path, lineno, s);
        else
            ss_error("%s:%d: end (%" PRIu64 ") is less than start (%" PRIu64 ") on '%s'; "
                     "fix the line",
                     path, lineno, e, b, s);
        return -1;
    }
    if (e > (uint64_t)HTS_POS_MAX) {
        ss_error("%s:%d: position %" PRIu64 " on '%s' is too large; fix the line", path, lineno, e,
                 s);
        return -1;
    }
    *name = s;
    *beg = (hts_pos_t)b;
    *end = (hts_pos_t)e;
    return 1;
}

ss_bed_t *ss_bed_read(const char *path)
{
    ss_bed_t *bed = calloc(1, sizeof(*bed));
    kstring_t line = KS_INITIALIZE;
    BGZF *fp = NULL;
    int lineno = 0, ret;
    if (!bed || !(bed->names = khash_str2int_init()))
        goto oom;
    if (!(fp = bgzf_open(path, "r"))) {
        ss_error("%s: cannot open the region list: %s; check the -l path", path, strerror(errno));
        goto fail;
    }
    while ((ret = bgzf_getline(fp, '\n', &line)) >= 0) {
        char *name;
        hts_pos_t beg, end;
        lineno++;
        if (!line.s || line.l == 0)
            continue;
        int r = parse_line(line.s, path, lineno, &name, &beg, &end);
        if (r < 0)
            goto fail;
        if (r == 0)
            continue;
        bed_contig_t *c = contig_get(bed, name);
        if (!c || contig_add(c, beg, end) < 0)
            goto oom;
    }
    if (ret < -1) {
        ss_error("%s: read error after line %d of the region list; check the file (is it a "
                 "truncated .gz?)",
                 path, lineno);
        goto fail;
    }
    if (bgzf_close(fp) < 0) {
        fp = NULL;
        ss_error("%s: error closing the region list; check the file", path);
        goto fail;
    }
    fp = NULL;
    for (int i = 0; i < bed->n_ctg; i++)
        if (contig_finish(&bed->ctg[i]) < 0)
            goto oom;
    free(line.s);
    return bed;
oom:
    ss_error("%s: out of memory reading the region list", path);
fail:
    if (fp)
        bgzf_close(fp);
    free(line.s);
    ss_bed_destroy(bed);
    return NULL;
}

static const bed_contig_t *contig_find(const ss_bed_t *bed, const char *name)
{
    int i;
    if (!bed || !name || khash_str2int_get(bed->names, name, &i) != 0)
        return NULL;
    return &bed->ctg[i];
}

int ss_bed_overlap(const ss_bed_t *bed, const char *name, hts_pos_t beg, hts_pos_t end)
{
    const bed_contig_t *c = contig_find(bed, name);
    if (!c || c->n_raw == 0)
        return 0;
    /* k = how many intervals start before end; any of them ending after beg overlaps */
    int lo = 0, hi = c->n_raw;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (c->raw[mid].beg < end)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && c->max_end[lo - 1] > beg;
}

const hts_pair_pos_t *ss_bed_intervals(const ss_bed_t *bed, const char *name, int *n)
{
    const bed_contig_t *c = contig_find(bed, name);
    *n = c ? c->n_merged : 0;
    return c && c->n_merged ? c->merged : NULL;
}
