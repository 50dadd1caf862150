/*
 * mc_targets.c -- bcftools call 1.16's -T FILE (and -t FILE): the sites to
 * call. Each line is CHROM and a 1-based POS (read with strtod, as bcftools
 * reads it; anything after is ignored); '#' lines are comments; the first
 * empty line ends the file (htslib's line reader stops there). A record is
 * called only when a target names its contig and its exact position.
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

static int add_position(mc_target_contig_t *c, hts_pos_t pos)
{
    if (c->n == c->m) {
        size_t m = c->m ? 2 * c->m : 64;
        hts_pos_t *p = realloc(c->pos, m * sizeof(*p));
        if (!p)
            return -1;
        c->pos = p, c->m = m;
    }
    c->pos[c->n++] = pos;
    return 0;
}

/* One line as bcftools' tgt_parse reads it. 1 added, 0 comment, -1 bad line, -2 memory. */
static int parse_line(mc_targets_t *t, const char *line)
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
    int i = contig_index(t, s, (size_t)(e - s));
    if (i < 0 || add_position(&t->contigs[i], (hts_pos_t)(uint32_t)v - 1) < 0)
        return -2;
    return 1;
}

static int cmp_pos(const void *a, const void *b)
{
    hts_pos_t x = *(const hts_pos_t *)a, y = *(const hts_pos_t *)b;
    return (x > y) - (x < y);
}

/* Read the lines into t. 0, or -1 after a message. */
static int read_lines(mc_targets_t *t, htsFile *fp, const char *path)
{
    kstring_t line = KS_INITIALIZE;
    int n = 0, r = 0;
    while (r >= 0 && hts_getline(fp, KS_SEP_LINE, &line) > 0) {
        n++;
        r = parse_line(t, line.s);
    }
    if (r == -1)
        fprintf(stderr,
                MC_PFX ": -T %s, line %d: expected CHROM and a 1-based POS, got \"%.60s\"\n", path,
                n, line.s);
    else if (r == -2)
        fprintf(stderr, MC_PFX ": -T %s: out of memory reading the targets\n", path);
    free(line.s);
    return r < 0 ? -1 : 0;
}

int mc_targets_read(mc_opts_t *o, const char *path)
{
    mc_targets_free(&o->targets);
    if (!(o->targets.path = strdup(path)))
        return -1;
    htsFile *fp = hts_open(path, "r");
    if (!fp) {
        fprintf(stderr,
                MC_PFX ": cannot open the targets file %s; give a file of CHROM POS lines "
                       "(bcftools call 1.16 reads -t's argument as a file name too)\n",
                path);
        return -1;
    }
    int r = read_lines(&o->targets, fp, path);
    if (hts_close(fp) < 0 && r == 0) {
        fprintf(stderr, MC_PFX ": error reading the targets file %s\n", path);
        r = -1;
    }
    for (int i = 0; i < o->targets.n_contigs; i++) {
        mc_target_contig_t *c = &o->targets.contigs[i];
        qsort(c->pos, c->n, sizeof(*c->pos), cmp_pos);
    }
    return r;
}

void mc_targets_free(mc_targets_t *t)
{
    for (int i = 0; i < t->n_contigs; i++) {
        free(t->contigs[i].name);
        free(t->contigs[i].pos);
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
