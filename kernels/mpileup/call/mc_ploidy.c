/*
 * mc_ploidy.c -- ploidy definitions as bcftools call 1.16 reads them
 * (ploidy.c, with regidx.c's parsing of CHROM FROM TO): the presets of
 * --ploidy, --ploidy-file, and the lookup from a position to each sex's
 * ploidy.
 *
 * Two of bcftools' ways are kept because they decide ploidies: a "* * * SEX
 * PLOIDY" line sets the default of the sex added last, not necessarily of
 * SEX; and where a rule covers a position, sexes the rules there leave out
 * get the overall default, not their own.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <htslib/kseq.h>
#include <htslib/kstring.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

typedef struct {
    const char *name, *about, *text;
} preset_t;

static const preset_t presets[] = {
    {"GRCh37", "Human Genome reference assembly GRCh37 / hg19",
     "X 1 60000 M 1\nX 2699521 154931043 M 1\nY 1 59373566 M 1\nY 1 59373566 F 0\n"
     "MT 1 16569 M 1\nMT 1 16569 F 1\nchrX 1 60000 M 1\nchrX 2699521 154931043 M 1\n"
     "chrY 1 59373566 M 1\nchrY 1 59373566 F 0\nchrM 1 16569 M 1\nchrM 1 16569 F 1\n"
     "*  * *     M 2\n*  * *     F 2\n"},
    {"GRCh38", "Human Genome reference assembly GRCh38 / hg38",
     "X 1 9999 M 1\nX 2781480 155701381 M 1\nY 1 57227415 M 1\nY 1 57227415 F 0\n"
     "MT 1 16569 M 1\nMT 1 16569 F 1\nchrX 1 9999 M 1\nchrX 2781480 155701381 M 1\n"
     "chrY 1 57227415 M 1\nchrY 1 57227415 F 0\nchrM 1 16569 M 1\nchrM 1 16569 F 1\n"
     "*  * *     M 2\n*  * *     F 2\n"},
    {"X", "Treat male samples as haploid and female as diploid regardless of the chromosome name",
     "*  * *     M 1\n*  * *     F 2\n"},
    {"Y", "Treat male samples as haploid and female as no-copy, regardless of the chromosome name",
     "*  * *     M 1\n*  * *     F 0\n"},
    {"1", "Treat all samples as haploid", "*  * *     * 1\n"},
    {"2", "Treat all samples as diploid", "*  * *     * 2\n"},
};
#define N_PRESETS ((int)(sizeof(presets) / sizeof(presets[0])))

void mc_ploidy_free(mc_ploidy_t *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_rules; i++)
        free(p->rules[i].chrom);
    for (int i = 0; i < p->n_sexes; i++)
        free(p->sexes[i]);
    free(p->rules);
    free(p->sexes);
    free(p->sex_default);
    memset(p, 0, sizeof(*p));
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

static const char *skip_word(const char *s)
{
    while (*s && !isspace((unsigned char)*s))
        s++;
    return s;
}

/* The sex's index, added (its default unset: -1) when new; -1 when out of memory. */
static int sex_index(mc_ploidy_t *p, const char *name, size_t len)
{
    for (int i = 0; i < p->n_sexes; i++)
        if (strlen(p->sexes[i]) == len && !strncmp(p->sexes[i], name, len))
            return i;
    char **sexes = realloc(p->sexes, (p->n_sexes + 1) * sizeof(*sexes));
    if (!sexes)
        return -1;
    p->sexes = sexes;
    int *dflt = realloc(p->sex_default, (p->n_sexes + 1) * sizeof(*dflt));
    if (!dflt)
        return -1;
    p->sex_default = dflt;
    if (!(p->sexes[p->n_sexes] = strndup(name, len)))
        return -1;
    p->sex_default[p->n_sexes] = -1;
    return p->n_sexes++;
}

/*
 * CHROM FROM TO as regidx_parse_tab reads them: 1-based coordinates made
 * 0-based, TO missing or unreadable meaning FROM. where: "FILE:LINE" for
 * messages. 1: a blank or comment line, 0: read, -1: not readable (after a
 * message).
 */
static int parse_region(const char *line, const char *where, mc_ploidy_rule_t *r)
{
    const char *chrom = skip_space(line);
    if (!*chrom || *chrom == '#')
        return 1;
    const char *end = skip_word(chrom);
    if (!(r->chrom = strndup(chrom, end - chrom)))
        return -1;
    if (!*end) {
        r->beg = 0;
        r->end = UINT32_MAX;
        return 0;
    }
    char *next;
    uint32_t from = strtod(end + 1, &next);
    if (next == end + 1 || from == 0)
        goto bad;
    r->beg = r->end = from - 1;
    if (next[0] && next[1]) {
        const char *to_s = next + 1;
        uint32_t to = strtod(to_s, &next);
        if (next != to_s && (!*next || isspace((unsigned char)*next))) {
            if (to == 0)
                goto bad;
            r->end = to - 1;
        }
    }
    return 0;
bad:
    fprintf(stderr, MC_PFX ": %s: \"%.80s\": FROM and TO are 1-based positions; fix the line\n",
            where, line);
    return -1;
}

/*
 * SEX PLOIDY, the fourth and fifth words of line, into r. A ploidy the
 * callers cannot call (bcftools keeps it in a byte, so -1 would be 255) is
 * refused here, before any work. 0, or -1 after a message.
 */
static int parse_sex_ploidy(mc_ploidy_t *p, const char *line, const char *where,
                            mc_ploidy_rule_t *r)
{
    const char *s = skip_space(line);
    for (int i = 0; i < 3; i++) {
        s = skip_word(s);
        if (!*s)
            goto bad;
        s = skip_space(s);
    }
    const char *sex_end = skip_word(s);
    if (!*s || !*sex_end || !*skip_space(sex_end))
        goto bad;
    char *end;
    long ploidy = strtol(sex_end, &end, 10);
    if (end == sex_end)
        goto bad;
    if (ploidy < 0 || ploidy > 2) {
        fprintf(stderr,
                MC_PFX ": %s: \"%.80s\": ploidy %ld is not one bcftools call 1.16 can call "
                       "(it stops or miscalls at variants); give 0, 1 or 2\n",
                where, line, ploidy);
        return -1;
    }
    if ((r->sex = sex_index(p, s, sex_end - s)) < 0)
        return -1;
    r->ploidy = (int)ploidy;
    if (p->min < 0 || r->ploidy < p->min)
        p->min = r->ploidy;
    if (p->max < 0 || r->ploidy > p->max)
        p->max = r->ploidy;
    return 0;
bad:
    fprintf(stderr, MC_PFX ": %s: \"%.80s\": give CHROM FROM TO SEX PLOIDY\n", where, line);
    return -1;
}

static int add_rule(mc_ploidy_t *p, const mc_ploidy_rule_t *r)
{
    mc_ploidy_rule_t *rules = realloc(p->rules, (p->n_rules + 1) * sizeof(*rules));
    if (!rules)
        return -1;
    p->rules = rules;
    /* regidx's order: by start, the longer first; equal ones as they came */
    int i = p->n_rules;
    while (i > 0 && (rules[i - 1].beg > r->beg ||
                     (rules[i - 1].beg == r->beg && rules[i - 1].end < r->end))) {
        rules[i] = rules[i - 1];
        i--;
    }
    rules[i] = *r;
    p->n_rules++;
    return 0;
}

/* One line of a definition (where: "FILE:LINE" for messages). 0, or -1 after a message. */
static int parse_line(mc_ploidy_t *p, const char *line, const char *where)
{
    mc_ploidy_rule_t r = {0};
    const char *s = skip_space(line);
    int is_default = s[0] == '*' && (!s[1] || isspace((unsigned char)s[1]));
    if (!is_default) {
        int ret = parse_region(line, where, &r);
        if (ret != 0) {
            free(r.chrom);
            return ret > 0 ? 0 : -1;
        }
    }
    if (parse_sex_ploidy(p, line, where, &r) < 0) {
        free(r.chrom);
        return -1;
    }
    if (is_default) {
        p->sex_default[p->n_sexes - 1] = r.ploidy;
        return 0;
    }
    if (add_rule(p, &r) < 0) {
        free(r.chrom);
        return -1;
    }
    return 0;
}

/*
 * Defaults for the sexes no "*" line set, as ploidy.c does after reading (dflt 2).
 * A sex "*" (in a rule) without its own "* * * * PLOIDY" line makes the default
 * unset, which bcftools calls as ploidy -1: refused. 0, or -1 after a message.
 */
static int finish(mc_ploidy_t *p, const char *where)
{
    int dflt = 2;
    for (int i = 0; i < p->n_sexes; i++)
        if (!strcmp(p->sexes[i], "*"))
            dflt = p->sex_default[i];
    if (dflt < 0) {
        fprintf(stderr,
                MC_PFX ": %s: a rule names sex '*' but no \"* * * * PLOIDY\" line gives its "
                       "default, which bcftools call then takes as ploidy -1; add that line\n",
                where);
        return -1;
    }
    for (int i = 0; i < p->n_sexes; i++)
        if (p->sex_default[i] == -1)
            p->sex_default[i] = dflt;
    p->dflt = dflt;
    if (p->min < 0 || dflt < p->min)
        p->min = dflt;
    if (p->max < 0 || dflt > p->max)
        p->max = dflt;
    return 0;
}

static void start(mc_ploidy_t *p)
{
    memset(p, 0, sizeof(*p));
    p->min = p->max = -1;
}

/* A definition given as text, one line per line. 0, or -1 after a message. */
int mc_ploidy_text(const char *text, mc_ploidy_t *p)
{
    start(p);
    const char *s = text;
    while (*s) {
        s = skip_space(s);
        const char *e = s;
        while (*e && *e != '\r' && *e != '\n')
            e++;
        char *line = strndup(s, e - s);
        if (!line || parse_line(p, line, "--ploidy") < 0) {
            free(line);
            mc_ploidy_free(p);
            return -1;
        }
        free(line);
        s = skip_space(e);
    }
    if (finish(p, "--ploidy") < 0) {
        mc_ploidy_free(p);
        return -1;
    }
    return 0;
}

/*
 * After an empty line, which ends the file for bcftools (htslib's line reader
 * returns 0 there): warn when lines with words follow, as those are not read.
 */
static void warn_unread(htsFile *fp, kstring_t *line, const char *fname, int lineno)
{
    while (hts_getline(fp, KS_SEP_LINE, line) >= 0)
        if (*skip_space(line->s)) {
            fprintf(stderr,
                    "Warning: %s:%d: an empty line ends the --ploidy-file, as in bcftools call "
                    "1.16; the lines after it are not read (remove it to use them)\n",
                    fname, lineno);
            return;
        }
}

/* The lines of fp, up to the first empty one. 0, or -1 after a message. */
static int read_lines(htsFile *fp, const char *fname, mc_ploidy_t *p)
{
    kstring_t line = KS_INITIALIZE;
    char where[PATH_MAX + 32];
    int lineno = 0, r, ret = 0;
    while (ret == 0 && (r = hts_getline(fp, KS_SEP_LINE, &line)) > 0) {
        snprintf(where, sizeof(where), "%s:%d", fname, ++lineno);
        ret = parse_line(p, line.s, where);
    }
    if (ret == 0 && r == 0)
        warn_unread(fp, &line, fname, lineno + 1);
    else if (ret == 0 && r < -1) {
        fprintf(stderr, MC_PFX ": %s: cannot read the --ploidy-file after line %d\n", fname,
                lineno);
        ret = -1;
    }
    ks_free(&line);
    return ret;
}

/* --ploidy-file: the file's lines, as bcftools call 1.16 reads them. 0, or -1 after a message. */
int mc_ploidy_file(const char *fname, mc_ploidy_t *p)
{
    start(p);
    htsFile *fp = hts_open(fname, "r");
    if (!fp) {
        fprintf(stderr, MC_PFX ": %s: cannot open the --ploidy-file: %s; check the path\n", fname,
                strerror(errno));
        return -1;
    }
    int ret = read_lines(fp, fname, p);
    if (hts_close(fp) != 0 && ret == 0) {
        fprintf(stderr, MC_PFX ": %s: cannot read the --ploidy-file\n", fname);
        ret = -1;
    }
    if (ret == 0)
        ret = finish(p, fname);
    if (ret < 0)
        mc_ploidy_free(p);
    return ret;
}

static void list_presets(int detailed)
{
    fprintf(stderr, "Predefined ploidies (--ploidy NAME; NAME? shows one). Columns: CHROM, "
                    "FROM, TO (1-based, inclusive), SEX, PLOIDY; '*' is any value not defined.\n");
    for (int i = 0; i < N_PRESETS; i++)
        fprintf(stderr, "%s\n   .. %s\n%s", presets[i].name, presets[i].about,
                detailed ? presets[i].text : "");
}

/* --ploidy NAME. NAME? prints the definition; both that and an unknown name return -1. */
int mc_ploidy_preset(const char *name, mc_ploidy_t *p)
{
    size_t len = strlen(name);
    int detailed = len > 0 && name[len - 1] == '?';
    if (detailed)
        len--;
    for (int i = 0; i < N_PRESETS; i++) {
        if (strlen(presets[i].name) != len || strncasecmp(presets[i].name, name, len))
            continue;
        if (detailed) {
            fputs(presets[i].text, stderr);
            return -1;
        }
        return mc_ploidy_text(presets[i].text, p);
    }
    fprintf(stderr, MC_PFX ": --ploidy %s: not a predefined ploidy\n", name);
    list_presets(detailed);
    return -1;
}

int mc_ploidy_max(const mc_ploidy_t *p)
{
    return p->dflt > p->max ? p->dflt : p->max;
}

/* Indices of the rules on chrom into *idx (grown to n_rules). 0, or -1. */
int mc_ploidy_rules_on(const mc_ploidy_t *p, const char *chrom, int **idx, int *n)
{
    *n = 0;
    if (!p->n_rules)
        return 0;
    if (!*idx && !(*idx = malloc(p->n_rules * sizeof(**idx))))
        return -1;
    for (int i = 0; i < p->n_rules; i++)
        if (!strcmp(p->rules[i].chrom, chrom))
            (*idx)[(*n)++] = i;
    return 0;
}

/*
 * Each sex's ploidy at pos (0-based) of the contig whose rules are
 * rules[0..n_rules): with no rule there, the sexes' defaults; else the
 * overall default, overridden by each rule there that differs from it, in
 * the rules' order.
 */
void mc_ploidy_query(const mc_ploidy_t *p, const int *rules, int n_rules, const int *sex_default,
                     int n_sexes, hts_pos_t pos, int *sex2ploidy)
{
    int hit = 0;
    for (int i = 0; i < n_rules; i++) {
        const mc_ploidy_rule_t *r = &p->rules[rules[i]];
        if (r->beg > pos || r->end < pos)
            continue;
        if (!hit) {
            for (int s = 0; s < n_sexes; s++)
                sex2ploidy[s] = p->dflt;
            hit = 1;
        }
        if (r->ploidy != p->dflt)
            sex2ploidy[r->sex] = r->ploidy;
    }
    if (!hit)
        memcpy(sex2ploidy, sex_default, n_sexes * sizeof(*sex2ploidy));
}
