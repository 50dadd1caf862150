/*
 * mc_site_targets.c -- bcftools call 1.16's -T FILE (and -t FILE): the sites to
 * call. Each line is CHROM and a 1-based POS (read with strtod, as bcftools
 * reads it; anything after is ignored); '#' lines are comments; the first
 * empty line ends the file (htslib's line reader stops there). A record is
 * called only when a target names its contig and its exact position. With
 * -C alleles a third column gives the target's alleles (REF,ALT...), kept in
 * the file's order among the targets of one position (mc_alleles.c).
 *
 * bcftools goes on calling every site when it cannot open or parse the file;
 * seqshard stops with the line at fault instead, so a typo never gives a
 * whole-genome output that looks like the one asked for.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/kseq.h> /* KS_SEP_LINE: a line ends at \n or \r\n */
#include <htslib/kstring.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

/* The contig named name, added when new; -1 when out of memory. */
static int contig_index(mc_targets_t *t, const char *name, size_t len)
{
    for (int i = t->n_contigs - 1; i >= 0; i--) /* a file is usually grouped by contig */
        if (strlen(t->contigs[i].name) == len && !strncmp(t->contigs[i].name, name, len))
            return i;
    mc_target_contig_t *c = realloc(t->contigs, (t->n_contigs + 1) * sizeof(*c));
    if (!c)
        return -1;
    t->contigs = c;
    c += t->n_contigs;
    memset(c, 0, sizeof(*c));
    if (!(c->name = strndup(name, len)))
        return -1;
    return t->n_contigs++;
}

/* A target at pos; als (owned from here): its alleles with -C alleles, else NULL. */
static int add_target(mc_target_contig_t *c, hts_pos_t pos, char **als)
{
    if (c->n == c->m) {
        size_t m = c->m ? 2 * c->m : 64;
        hts_pos_t *p = realloc(c->pos, m * sizeof(*p));
        if (!p)
            return -1;
        c->pos = p;
        char ***a = als ? realloc(c->als, m * sizeof(*a)) : NULL; /* every target has them */
        if (als && !a)
            return -1;
        c->als = a;
        c->m = m;
    }
    if (als)
        c->als[c->n] = als;
    c->pos[c->n++] = pos;
    return 0;
}

static void free_alleles(char **als)
{
    for (int i = 0; als && als[i]; i++)
        free(als[i]);
    free(als);
}

/*
 * -C alleles: the alleles after POS as bcftools' tgt_parse reads them: from
 * one character past the number to the line's end, split at commas (a tab
 * or further columns stay in the last allele, as there). NULL-terminated;
 * *n alleles. NULL when there is no third column or no memory (*n = -1).
 */
static char **parse_alleles(const char *s, int *n)
{
    *n = -1;
    if (!*s || !s[1])
        return NULL;
    s++;
    int k = 1;
    for (const char *p = s; *p; p++)
        k += *p == ',';
    char **als = calloc((size_t)k + 1, sizeof(*als));
    for (int i = 0; als && i < k; i++) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!(als[i] = strndup(s, len))) {
            free_alleles(als);
            return NULL;
        }
        s += len + 1;
    }
    *n = als ? k : -1;
    return als;
}

/*
 * One line as bcftools' tgt_parse reads it. 1 added, 0 comment, -1 bad line,
 * -2 memory, -3 (-C alleles) no REF and ALT after POS, -4 an empty allele ("A,,").
 */
static int parse_line(mc_targets_t *t, const char *line, int alleles)
{
    const char *s = line;
    while (*s && isspace((unsigned char)*s))
        s++;
    if (*s == '#')
        return 0;
    const char *e = s;
    while (*e && !isspace((unsigned char)*e))
        e++;
    if (e == s || !*e)
        return -1;
    char *end;
    double v = strtod(e + 1, &end);
    if (end == e + 1 || !(v >= 1 && v < 4294967296.0)) /* bcftools keeps it in 32 bits */
        return -1;
    int n = 0;
    char **als = alleles ? parse_alleles(end, &n) : NULL;
    if (alleles && n < 2) {
        free_alleles(als);
        return n < 0 && *end && end[1] ? -2 : -3;
    }
    for (int k = 0; alleles && k < n; k++)
        if (!als[k][0]) { /* bcftools calls on with it, other QUALs than ours */
            free_alleles(als);
            return -4;
        }
    int i = contig_index(t, s, (size_t)(e - s));
    if (i < 0 || add_target(&t->contigs[i], (hts_pos_t)(uint32_t)v - 1, als) < 0) {
        free_alleles(als);
        return -2;
    }
    return 1;
}

typedef struct {
    hts_pos_t pos;
    size_t order;
    char **als;
} target_t;

static int cmp_target(const void *a, const void *b)
{
    const target_t *x = a, *y = b;
    if (x->pos != y->pos)
        return (x->pos > y->pos) - (x->pos < y->pos);
    return (x->order > y->order) - (x->order < y->order);
}

/* A contig's targets by position, those at one position in the file's order. 0 or -1. */
static int sort_targets(mc_target_contig_t *c)
{
    target_t *t = malloc((c->n ? c->n : 1) * sizeof(*t));
    if (!t)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        t[i] = (target_t){c->pos[i], i, c->als ? c->als[i] : NULL};
    qsort(t, c->n, sizeof(*t), cmp_target);
    for (size_t i = 0; i < c->n; i++) {
        c->pos[i] = t[i].pos;
        if (c->als)
            c->als[i] = t[i].als;
    }
    free(t);
    return 0;
}

static int cmp_pos(const void *a, const void *b)
{
    hts_pos_t x = *(const hts_pos_t *)a, y = *(const hts_pos_t *)b;
    return (x > y) - (x < y);
}

/* Read the lines into t. 0, or -1 after a message. */
static int read_lines(mc_targets_t *t, htsFile *fp, const char *path, int alleles)
{
    kstring_t line = KS_INITIALIZE;
    int n = 0, r = 0;
    while (r >= 0 && hts_getline(fp, KS_SEP_LINE, &line) > 0) {
        n++;
        r = parse_line(t, line.s, alleles);
    }
    if (r == -1)
        fprintf(stderr,
                MC_PFX ": -T %s, line %d: expected CHROM and a 1-based POS, got \"%.60s\"\n", path,
                n, line.s);
    else if (r == -3)
        fprintf(stderr,
                MC_PFX ": -T %s, line %d: -C alleles needs a third column, REF and ALT joined "
                       "by commas (e.g. A,T), got \"%.60s\"\n",
                path, n, line.s);
    else if (r == -4)
        fprintf(stderr,
                MC_PFX ": -T %s, line %d: -C alleles: an empty allele in \"%.60s\"; give REF "
                       "and ALT as bases joined by commas (e.g. A,T)\n",
                path, n, line.s);
    else if (r == -2)
        fprintf(stderr, MC_PFX ": -T %s: out of memory reading the targets\n", path);
    free(line.s);
    return r < 0 ? -1 : 0;
}

int mc_targets_read(mc_opts_t *o)
{
    const char *path = o->targets.path;
    htsFile *fp = hts_open(path, "r");
    if (!fp) {
        fprintf(stderr,
                MC_PFX ": cannot open the targets file %s; give a file of CHROM POS lines "
                       "(bcftools call 1.16 reads -t's argument as a file name too)\n",
                path);
        return -1;
    }
    int r = read_lines(&o->targets, fp, path, o->constrain_alleles);
    if (hts_close(fp) < 0 && r == 0) {
        fprintf(stderr, MC_PFX ": error reading the targets file %s\n", path);
        r = -1;
    }
    for (int i = 0; r == 0 && i < o->targets.n_contigs; i++)
        if (sort_targets(&o->targets.contigs[i]) < 0) {
            fprintf(stderr, MC_PFX ": -T %s: out of memory sorting the targets\n", path);
            r = -1;
        }
    return r;
}

void mc_targets_free(mc_targets_t *t)
{
    for (int i = 0; i < t->n_contigs; i++) {
        free(t->contigs[i].name);
        free(t->contigs[i].pos);
        for (size_t j = 0; t->contigs[i].als && j < t->contigs[i].n; j++)
            free_alleles(t->contigs[i].als[j]);
        free(t->contigs[i].als);
    }
    free(t->contigs);
    free(t->path);
    memset(t, 0, sizeof(*t));
}

int mc_targets_contig(const mc_targets_t *t, const char *name)
{
    for (int i = 0; i < t->n_contigs; i++)
        if (!strcmp(t->contigs[i].name, name))
            return i;
    return -1;
}

int mc_targets_has(const mc_targets_t *t, int contig, hts_pos_t pos)
{
    if (contig < 0)
        return 0;
    const mc_target_contig_t *c = &t->contigs[contig];
    return bsearch(&pos, c->pos, c->n, sizeof(*c->pos), cmp_pos) != NULL;
}

size_t mc_targets_lower(const mc_target_contig_t *c, hts_pos_t pos)
{
    size_t a = 0, b = c->n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (c->pos[mid] < pos)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

void mc_targets_at(const mc_targets_t *t, int contig, hts_pos_t pos, size_t *lo, size_t *hi)
{
    *lo = *hi = 0;
    if (contig < 0)
        return;
    const mc_target_contig_t *c = &t->contigs[contig];
    *lo = *hi = mc_targets_lower(c, pos);
    while (*hi < c->n && c->pos[*hi] == pos)
        (*hi)++;
}

int mc_targets_within(const mc_opts_t *o, const char *contig, hts_pos_t beg, hts_pos_t end)
{
    int i = mc_targets_contig(&o->targets, contig);
    if (i < 0)
        return 0;
    const mc_target_contig_t *c = &o->targets.contigs[i];
    size_t t = mc_targets_lower(c, beg);
    return t < c->n && c->pos[t] < end;
}
