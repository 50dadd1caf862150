/*
 * mc_samples.c -- bcftools call 1.16's sample lists: -s/-S (which samples
 * are called, in which order, and each one's sex or own ploidy; a PED file
 * gives names and sexes) and -G (which samples share allele frequencies).
 *
 * bcftools' own ways are kept where they change the output: a line without
 * a sex gives the sample its own ploidy 2; the header's sample names are the
 * first words of the list's first lines, whether those lines were used or
 * skipped; a -G group is known by its name without the first character.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/khash_str2int.h>
#include <htslib/kstring.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

static void free_lines(char **lines, int n)
{
    for (int i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* Append "NAME SEX" unless NAME is there already. 0, or -1 when out of memory. */
static int ped_add(void *seen, char ***lines, int *n, const char *name, char sex)
{
    if (khash_str2int_has_key(seen, name))
        return 0;
    char **grown = realloc(*lines, (*n + 1) * sizeof(**lines));
    if (!grown)
        return -1;
    *lines = grown;
    kstring_t s = KS_INITIALIZE;
    if (ksprintf(&s, "%s %c", name, sex) < 0)
        return -1;
    (*lines)[*n] = ks_release(&s);
    char *key = strdup(name);
    if (!key || khash_str2int_inc(seen, key) < 0) {
        free(key);
        return -1;
    }
    (*n)++;
    return 0;
}

/*
 * The columns of a PED line (family sample father mother sex ...) split in
 * place as bcftools splits them: cols[0..3] start columns 2 to 5. 0, or -1:
 * not a PED line.
 */
static int ped_columns(char *line, char *cols[4])
{
    int j = 0;
    char *p = line;
    while (*p && j < 5) {
        if (!isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        *p++ = 0;
        while (isspace((unsigned char)*p))
            p++;
        if (j < 4)
            cols[j] = p;
        j++;
    }
    return j < 4 || (cols[3][0] != '1' && cols[3][0] != '2') ? -1 : 0;
}

/*
 * vals as a PED file, into "NAME SEX" lines (parents get M and F). 1 and
 * *out set: it was one; 0: it was not; -1: out of memory.
 */
static int ped_parse(char **vals, int nvals, char ***out, int *nout)
{
    char **lines = NULL;
    int n = 0, ret = 1;
    void *seen = khash_str2int_init();
    if (!seen)
        return -1;
    for (int i = 0; i < nvals && ret == 1; i++) {
        char *line = strdup(vals[i]), *col[4];
        if (!line) {
            ret = -1;
        } else if (ped_columns(line, col) < 0) {
            ret = 0;
        } else if (ped_add(seen, &lines, &n, col[0], col[3][0] == '1' ? 'M' : 'F') < 0) {
            ret = -1;
        } else if (strcmp(col[1], "0") && strcmp(col[2], "0")) {
            if (ped_add(seen, &lines, &n, col[1], 'M') < 0 ||
                ped_add(seen, &lines, &n, col[2], 'F') < 0)
                ret = -1;
        }
        free(line);
    }
    khash_str2int_destroy_free(seen);
    if (ret != 1) {
        free_lines(lines, n);
        return ret;
    }
    *out = lines;
    *nout = n;
    return 1;
}

/* -s LIST (is_file 0) or -S FILE into o->sample_lines. 0, or -1 after a message. */
int mc_samples_read(mc_opts_t *o, const char *arg, int is_file)
{
    int n;
    char **lines = hts_readlist(arg, is_file, &n);
    if (!lines) {
        fprintf(stderr, MC_PFX ": could not read the file: %s\n", arg);
        return -1;
    }
    char **ped;
    int nped, r = ped_parse(lines, n, &ped, &nped);
    if (r < 0) {
        free_lines(lines, n);
        return -1;
    }
    if (r > 0) {
        free_lines(lines, n);
        lines = ped;
        n = nped;
    } else if (is_file) {
        fprintf(stderr, "Note: could not parse as PED: %s\n", arg);
    }
    free_lines(o->sample_lines, o->n_sample_lines);
    o->sample_lines = lines;
    o->n_sample_lines = n;
    o->samples_is_file = is_file;
    free(o->samples_path);
    o->samples_path = is_file ? strdup(arg) : NULL;
    return is_file && !o->samples_path ? -1 : 0;
}

void mc_samples_free(mc_samples_t *s)
{
    if (!s)
        return;
    free(s->imap);
    if (s->names)
        free_lines(s->names, s->n);
    free(s->sample2sex);
    free(s->sex_default);
    memset(s, 0, sizeof(*s));
}

/* The sex's index among the definition's and the added ones (ploidy_add_sex). */
static int add_sex(const mc_ploidy_t *p, char ***added, mc_samples_t *s, const char *sex)
{
    for (int i = 0; i < s->n_sexes; i++)
        if (!strcmp(i < p->n_sexes ? p->sexes[i] : (*added)[i - p->n_sexes], sex))
            return i;
    int n_added = s->n_sexes - p->n_sexes;
    char **grown = realloc(*added, (n_added + 1) * sizeof(*grown));
    int *dflt = realloc(s->sex_default, (s->n_sexes + 1) * sizeof(*dflt));
    if (grown)
        *added = grown;
    if (dflt)
        s->sex_default = dflt;
    if (!grown || !dflt || !((*added)[n_added] = strdup(sex)))
        return -1;
    s->sex_default[s->n_sexes] = p->dflt;
    return s->n_sexes++;
}

/* A line's name as bcftools leaves it in its list: cut after the first word. */
static char *listed_name(const char *line)
{
    const char *s = line;
    while (*s && isspace((unsigned char)*s))
        s++;
    if (*s == '#')
        return strdup(line);
    while (*s && !isspace((unsigned char)*s))
        s++;
    return strndup(line, s - line);
}

/*
 * A list line's sex: the rest of the line from its second word (bcftools
 * takes all of it, trailing blanks too), or 0, 1, 2 alone (the sample's
 * own ploidy); none: "2". The sex's index, minus the ploidy, or INT32_MIN.
 */
static int line_sex(const mc_ploidy_t *p, char ***added, mc_samples_t *s, const char *rest)
{
    if (!*rest)
        rest = "2";
    if (rest[1] == 0 && rest[0] >= '0' && rest[0] <= '2')
        return -(rest[0] - '0');
    int id = add_sex(p, added, s, rest);
    return id < 0 ? INT32_MIN : id;
}

/*
 * The list's samples in the header: imap (output -> input) and each one's
 * sex or ploidy, lines that name no sample or name one again skipped (with
 * a warning when verbose). 0, or -1 after a message.
 */
static int match_lines(const mc_opts_t *o, const bcf_hdr_t *h, int verbose, mc_samples_t *s,
                       char ***added, int *old2new)
{
    for (int i = 0; i < o->n_sample_lines; i++) {
        const char *line = o->sample_lines[i], *w = line;
        while (*w && isspace((unsigned char)*w))
            w++;
        if (!*w) {
            fprintf(stderr, MC_PFX ": could not parse the sample line \"%s\"\n", line);
            return -1;
        }
        if (*w == '#')
            continue;
        const char *e = w;
        while (*e && !isspace((unsigned char)*e))
            e++;
        char *name = strndup(w, e - w);
        int ismpl = name ? bcf_hdr_id2int(h, BCF_DT_SAMPLE, name) : -1;
        if (ismpl < 0 || old2new[ismpl] != -1) {
            if (verbose && name)
                fprintf(stderr,
                        ismpl < 0 ? "Warning: No such sample in the VCF: %s\n"
                                  : "Warning: The sample is listed multiple times: %s\n",
                        name);
            free(name);
            if (!name)
                return -1;
            continue;
        }
        free(name);
        while (*e && isspace((unsigned char)*e))
            e++;
        int sex = line_sex(&o->ploidy, added, s, e);
        if (sex == INT32_MIN)
            return -1;
        s->sample2sex[s->n] = sex;
        s->imap[s->n] = ismpl;
        old2new[ismpl] = s->n++;
    }
    return 0;
}

/*
 * The header's samples as bcftools names them (the first words of the first
 * lines) and the map from them; bcftools stops when one is not a sample.
 */
static int name_samples(const mc_opts_t *o, const bcf_hdr_t *h, mc_samples_t *s, int map_needed)
{
    int n_hdr = bcf_hdr_nsamples(h);
    if (!map_needed && s->n < n_hdr) {
        fprintf(stderr,
                MC_PFX
                ": -s/-S lists the first %d of the %d samples in their order; "
                "bcftools 1.16 then reads past its ploidy table: list all samples, or reorder "
                "them\n",
                s->n, n_hdr);
        return -1;
    }
    if (!(s->names = calloc(s->n ? s->n : 1, sizeof(*s->names))))
        return -1;
    for (int i = 0; i < s->n; i++) {
        if (!(s->names[i] = listed_name(o->sample_lines[i])))
            return -1;
        int id = bcf_hdr_id2int(h, BCF_DT_SAMPLE, s->names[i]);
        if (id < 0) {
            fprintf(stderr, MC_PFX ": No such sample: %s\n", s->names[i]);
            return -1;
        }
        s->imap[i] = id;
    }
    return 0;
}

static int copy_sexes(const mc_ploidy_t *p, mc_samples_t *s)
{
    s->n_sexes = p->n_sexes;
    if (!(s->sex_default = malloc((p->n_sexes + 1) * sizeof(int))))
        return -1;
    if (p->n_sexes)
        memcpy(s->sex_default, p->sex_default, p->n_sexes * sizeof(int));
    return 0;
}

/*
 * -s/-S against the input header: the output samples, the subset map, and
 * each sample's sex (bcftools' set_samples). Without a list: all samples,
 * each of the definition's last sex. 0, or -1 after a message.
 */
int mc_samples_resolve(const mc_opts_t *o, const bcf_hdr_t *h, int verbose, mc_samples_t *s)
{
    memset(s, 0, sizeof(*s));
    int n_hdr = bcf_hdr_nsamples(h);
    if (copy_sexes(&o->ploidy, s) < 0 || !(s->sample2sex = malloc((n_hdr + 1) * sizeof(int))))
        goto fail;
    if (!o->sample_lines) {
        s->n = n_hdr;
        for (int i = 0; i < n_hdr; i++)
            s->sample2sex[i] = s->n_sexes - 1;
        return 0;
    }
    char **added = NULL;
    int *old2new = malloc((n_hdr + 1) * sizeof(int));
    s->imap = malloc((n_hdr + 1) * sizeof(int));
    int ret = old2new && s->imap ? 0 : -1;
    for (int i = 0; ret == 0 && i < n_hdr; i++)
        old2new[i] = -1;
    if (ret == 0)
        ret = match_lines(o, h, verbose, s, &added, old2new);
    int map_needed = 0;
    for (int i = 0; ret == 0 && i < s->n; i++)
        map_needed |= s->imap[i] != i;
    if (ret == 0)
        ret = name_samples(o, h, s, map_needed);
    free_lines(added, s->n_sexes - o->ploidy.n_sexes);
    free(old2new);
    if (ret < 0)
        goto fail;
    if (!map_needed) {
        free(s->imap);
        s->imap = NULL;
    }
    return 0;
fail:
    mc_samples_free(s);
    return -1;
}

static int group_tag(mc_caller_t *c)
{
    const char *tag = c->o->groups_tag;
    if (tag) {
        int id = bcf_hdr_id2int(c->hdr, BCF_DT_ID, tag);
        if (id < 0 || !bcf_hdr_idinfo_exists(c->hdr, BCF_HL_FMT, id)) {
            fprintf(stderr, MC_PFX ": --group-samples-tag %s: no such FORMAT tag\n", tag);
            return -1;
        }
        c->grp_tag = tag;
        return 0;
    }
    static const char *const tags[] = {"QS", "AD"};
    for (int i = 0; i < 2; i++) {
        int id = bcf_hdr_id2int(c->hdr, BCF_DT_ID, tags[i]);
        if (id >= 0 && bcf_hdr_idinfo_exists(c->hdr, BCF_HL_FMT, id)) {
            c->grp_tag = tags[i];
            return 0;
        }
    }
    fprintf(stderr, MC_PFX ": -G needs FORMAT/QS or FORMAT/AD: run mpileup with -a QS or -a AD, "
                           "or name another tag with --group-samples-tag\n");
    return -1;
}

static int alloc_groups(mc_caller_t *c, int n)
{
    c->n_grp = n;
    return (c->grp = calloc(n ? n : 1, sizeof(*c->grp))) ? 0 : -1;
}

/* One group per sample (-G -), or all samples in one (no -G). */
static int simple_groups(mc_caller_t *c, int per_sample)
{
    if (alloc_groups(c, per_sample ? c->nsmpl : 1) < 0)
        return -1;
    for (int g = 0; g < c->n_grp; g++) {
        mc_group_t *grp = &c->grp[g];
        grp->nsmpl = per_sample ? 1 : c->nsmpl;
        if (!(grp->smpl = malloc((grp->nsmpl + 1) * sizeof(int))))
            return -1;
        for (int i = 0; i < grp->nsmpl; i++)
            grp->smpl[i] = per_sample ? g : i;
    }
    return 0;
}

/*
 * The group of each listed sample (1-based in smpl2grp; 0: not listed), the
 * groups numbered in order of first appearance. The count, or -1.
 */
static int read_group_lines(mc_caller_t *c, int *smpl2grp, int *grp_size)
{
    const mc_opts_t *o = c->o;
    void *grp2idx = khash_str2int_init();
    int n_grp = 0, ret = grp2idx ? 0 : -1;
    for (int i = 0; ret == 0 && i < o->n_group_lines; i++) {
        const char *line = o->group_lines[i], *p = line;
        while (*p && !isspace((unsigned char)*p))
            p++;
        const char *name_end = p;
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p) {
            fprintf(stderr,
                    MC_PFX ": could not parse the line in %s, expected a sample name "
                           "followed by tab and a population name: %s\n",
                    o->groups, line);
            ret = -1;
            break;
        }
        char *name = strndup(line, name_end - line);
        int ismpl = name ? bcf_hdr_id2int(c->hdr, BCF_DT_SAMPLE, name) : -1;
        if (ismpl >= 0 && smpl2grp[ismpl]) {
            fprintf(stderr, MC_PFX ": the sample \"%s\" is listed twice in %s\n", name, o->groups);
            ret = -1;
        }
        free(name);
        if (ismpl < 0 || ret < 0) {
            ret = name ? ret : -1;
            continue;
        }
        const char *key = p + 1; /* bcftools keys groups by the name past its first letter */
        int igrp;
        if (khash_str2int_get(grp2idx, key, &igrp) < 0) {
            char *k = strdup(key);
            if (!k || khash_str2int_set(grp2idx, k, n_grp) < 0) {
                free(k);
                ret = -1;
                continue;
            }
            igrp = n_grp++;
        }
        grp_size[igrp]++;
        smpl2grp[ismpl] = igrp + 1;
    }
    if (grp2idx)
        khash_str2int_destroy_free(grp2idx);
    return ret < 0 ? -1 : n_grp;
}

/* -G FILE: every sample must be in the file. 0, or -1 after a message. */
static int file_groups(mc_caller_t *c)
{
    int *smpl2grp = calloc(c->nsmpl + 1, sizeof(int));
    int *grp_size = calloc(c->nsmpl + 1, sizeof(int));
    int n_grp = smpl2grp && grp_size ? read_group_lines(c, smpl2grp, grp_size) : -1;
    int ret = n_grp < 0 ? -1 : 0;
    if (n_grp == 0) {
        fprintf(stderr, MC_PFX ": could not parse the file, no matching samples found: %s\n",
                c->o->groups);
        ret = -1;
    }
    if (ret == 0)
        ret = alloc_groups(c, n_grp);
    for (int i = 0; ret == 0 && i < c->nsmpl; i++) {
        if (!smpl2grp[i]) {
            fprintf(stderr, MC_PFX ": the sample \"%s\" is not listed in %s\n", c->hdr->samples[i],
                    c->o->groups);
            ret = -1;
            break;
        }
        mc_group_t *grp = &c->grp[smpl2grp[i] - 1];
        if (!grp->smpl && !(grp->smpl = malloc(grp_size[smpl2grp[i] - 1] * sizeof(int))))
            ret = -1;
        else
            grp->smpl[grp->nsmpl++] = i;
    }
    free(smpl2grp);
    free(grp_size);
    return ret;
}

/* The groups of -m's allele frequency estimate (bcftools' init_sample_groups). */
int mc_groups_init(mc_caller_t *c)
{
    if (!c->o->groups)
        return simple_groups(c, 0);
    if (group_tag(c) < 0)
        return -1;
    if (!strcmp(c->o->groups, "-"))
        return simple_groups(c, 1);
    return file_groups(c);
}

void mc_groups_free(mc_caller_t *c)
{
    for (int i = 0; c->grp && i < c->n_grp; i++) {
        free(c->grp[i].smpl);
        free(c->grp[i].qsum);
    }
    free(c->grp);
    c->grp = NULL;
    c->n_grp = 0;
}
