/*
 * mp_region_select.c -- bcftools mpileup's -r/-R regions and -t/-T targets, through
 * htslib's regidx as bcftools reads them. Regions become the run's regions in
 * the order bcftools walks them (contig by contig as first named, each
 * contig's regions by position; overlapping ones are each walked, as in
 * bcftools 1.16). Targets filter reads and columns while the whole file is
 * read: with '^', bcftools 1.16 keeps only the reads that overlap an excluded
 * interval and prints the columns outside them, and so does this.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/ss_exact_fp.h"
#include "mp_select.h"

/* An -R or -T file's lines as regidx reads them, counted, so that a bad one can be named. */
typedef struct {
    const char *path;
    regidx_parse_f parse; /* the parser regidx_init picks for the file's name */
    int lineno;
    char refused[320]; /* why a line was refused, "" if none */
} regions_file_t;

static regidx_parse_f file_parser(const char *path)
{
    static const char *const bed[] = {".bed", ".bed.gz", ".bed.bgz"};
    static const char *const vcf[] = {".vcf", ".vcf.gz"};
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof(bed) / sizeof(*bed); i++)
        if (len >= strlen(bed[i]) && !strcasecmp(path + len - strlen(bed[i]), bed[i]))
            return regidx_parse_bed;
    for (size_t i = 0; i < sizeof(vcf) / sizeof(*vcf); i++)
        if (len >= strlen(vcf[i]) && !strcasecmp(path + len - strlen(vcf[i]), vcf[i]))
            return regidx_parse_vcf;
    return regidx_parse_tab;
}

/*
 * htslib's parser, but an interval that is no interval is refused: a negative start
 * (regidx would clamp it to the contig's start and walk a region nobody asked for), or an
 * end before the start (a reversed line, an empty BED interval, a start with a letter in
 * it): bcftools 1.16 then walks or drops whole contigs, other lines' among them, by
 * regidx's internals. regidx_init calls this once per line, in order, so the count is
 * the line's number.
 */
static int parse_checked(const char *line, char **chr_beg, char **chr_end, hts_pos_t *beg,
                         hts_pos_t *end, void *payload, void *usr)
{
    regions_file_t *f = usr;
    f->lineno++;
    int ret = f->parse(line, chr_beg, chr_end, beg, end, payload, NULL);
    if (ret != 0 || (*beg >= 0 && *end >= *beg))
        return ret;
    int one_based = f->parse != regidx_parse_bed, len = (int)(*chr_end - *chr_beg + 1);
    if (*beg < 0)
        snprintf(f->refused, sizeof(f->refused),
                 "%s:%d: the start %lld on '%.*s' is negative; starts count from %d (%s): "
                 "fix or remove the line",
                 f->path, f->lineno, (long long)*beg + one_based, len, *chr_beg, one_based,
                 one_based ? "1-based tab-separated" : "0-based BED");
    else
        snprintf(f->refused, sizeof(f->refused),
                 "%s:%d: the interval on '%.*s' ends (%lld) before it starts (%lld), or is "
                 "empty; give START <= END (%s): fix or remove the line",
                 f->path, f->lineno, len, *chr_beg, (long long)*end + 1,
                 (long long)*beg + one_based,
                 one_based ? "1-based, inclusive" : "BED: 0-based start, END > START");
    return -2;
}

/* The -r list or -R file as regidx holds it; NULL after a message. */
static regidx_t *load_regions(const mp_opts_t *o)
{
    regidx_t *idx;
    regions_file_t f = {o->regions_file, NULL, 0, ""};
    if (o->regions_file) {
        f.parse = file_parser(o->regions_file);
        idx = regidx_init(o->regions_file, parse_checked, NULL, 0, &f);
    } else {
        idx = regidx_init(NULL, regidx_parse_reg, NULL, sizeof(char *), NULL);
        char *list = strdup(o->regions);
        if (idx && (!list || regidx_insert_list(idx, list, ',') != 0)) {
            regidx_destroy(idx);
            idx = NULL;
        }
        free(list);
    }
    if (!idx && f.refused[0])
        fprintf(stderr, "seqshard mpileup: %s\n", f.refused);
    else if (!idx)
        fprintf(stderr,
                "seqshard mpileup: could not parse the regions %s; give CHR, CHR:BEG "
                "or CHR:BEG-END (-r) or a BED or tab-separated file (-R)\n",
                o->regions_file ? o->regions_file : o->regions);
    return idx;
}

int mp_regions_add(const mp_opts_t *o, ss_common_opts_t *co)
{
    if (!o->regions && !o->regions_file)
        return 0;
    regidx_t *idx = load_regions(o);
    regitr_t *itr = idx ? regitr_init(idx) : NULL;
    if (!itr) {
        regidx_destroy(idx);
        return -1;
    }
    /* a list that names no region selects nothing (bcftools 1.16 crashes on it): the
     * header alone, not the whole genome that no regions at all would mean */
    co->no_regions = regidx_nregs(idx) == 0;
    kstring_t s = KS_INITIALIZE;
    int rc = 0;
    while (rc == 0 && regitr_loop(itr)) {
        s.l = 0;
        if (itr->end >= (hts_pos_t)INT32_MAX)
            ksprintf(&s, "%s:%lld", itr->seq, (long long)itr->beg + 1);
        else
            ksprintf(&s, "%s:%lld-%lld", itr->seq, (long long)itr->beg + 1,
                     (long long)itr->end + 1);
        rc = ss_common_add_region(co, s.s);
    }
    free(s.s);
    regitr_destroy(itr);
    regidx_destroy(idx);
    co->merge_regions = 0; /* bcftools' order, overlaps and all */
    return rc;
}

int mp_targets_load(mp_targets_t *t, const mp_opts_t *o)
{
    memset(t, 0, sizeof(*t));
    const char *arg = o->targets;
    if (!arg)
        return 0;
    t->include = arg[0] != '^';
    arg += !t->include;
    regions_file_t f = {arg, NULL, 0, ""};
    if (o->targets_is_file) {
        f.parse = file_parser(arg);
        t->idx = regidx_init(arg, parse_checked, NULL, 0, &f);
    } else {
        char *list = strdup(arg);
        t->idx = regidx_init(NULL, regidx_parse_reg, NULL, 0, NULL);
        if (t->idx && (!list || regidx_insert_list(t->idx, list, ',') != 0)) {
            regidx_destroy(t->idx);
            t->idx = NULL;
        }
        free(list);
    }
    if (!t->idx && f.refused[0]) {
        ss_error("-T %s", f.refused);
        return -1;
    }
    if (!t->idx) {
        ss_error("%s %s: could not read the targets; give CHR, CHR:BEG or CHR:BEG-END "
                 "(-t) or a BED or tab-separated file (-T)",
                 o->targets_is_file ? "-T" : "-t", arg);
        return -1;
    }
    /* regidx sorts and indexes a contig's list on its first query: do it now, before
     * the workers share it */
    int n;
    char **names = regidx_seq_names(t->idx, &n);
    for (int i = 0; i < n; i++)
        regidx_overlap(t->idx, names[i], 0, 0, NULL);
    return 0;
}

void mp_targets_free(mp_targets_t *t)
{
    if (t->idx)
        regidx_destroy(t->idx);
    memset(t, 0, sizeof(*t));
}

int mp_targets_read(const mp_targets_t *t, regitr_t *itr, const char *ctg, const bam1_t *b)
{
    hts_pos_t beg = b->core.pos, end = bam_endpos(b) - 1;
    int overlap = regidx_overlap(t->idx, ctg, beg, end, itr);
    if (!t->include && !overlap)
        while (regitr_overlap(itr))
            if (beg < itr->beg || end > itr->end) {
                overlap = 1;
                break;
            }
    return overlap;
}

int mp_targets_column(const mp_targets_t *t, const char *ctg, hts_pos_t pos)
{
    int overlap = regidx_overlap(t->idx, ctg, pos, pos, NULL);
    return t->include ? overlap : !overlap;
}
