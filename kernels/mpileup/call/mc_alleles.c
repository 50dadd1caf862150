/*
 * mc_alleles.c -- bcftools call 1.16's -C alleles: genotypes called for the
 * alleles -T's file gives at each site, not for the alleles mpileup saw.
 *
 * Two steps, as bcftools takes them. Matching (vcfcall.c's next_line): each
 * record of a position, in mpileup's order, takes the target there that fits
 * it best: a pair scores 1 for compatible REFs plus 1 per target ALT the
 * record has, negated when one is an indel and the other is not; ties go to
 * the first target in the file; a target is used once, and a record left
 * without one is not called. Constraining (mcall.c's
 * mcall_constrain_alleles): the record's alleles become the target's (plus
 * mpileup's unseen allele), and PL, QS and the FORMAT tags of one value per
 * allele are rearranged to them; an allele the record lacks takes the
 * unseen allele's values.
 *
 * REF and ALT compare as bcftools' vcmp does: case-blind, a longer REF's
 * extra bases expected at the end of the other record's ALTs.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

/* vcmp: how two REFs differ. ndref > 0: the first is longer by dref; < 0: the second. */
typedef struct {
    const char *dref; /* the longer REF's extra bases (compared case-blind) */
    int ndref;
} vcmp_t;

/* 0 when the REFs are compatible (one is a prefix of the other), else -1. */
static int vcmp_set_ref(vcmp_t *v, const char *ref1, const char *ref2)
{
    v->ndref = 0;
    const char *a = ref1, *b = ref2;
    while (*a && *b && toupper((unsigned char)*a) == toupper((unsigned char)*b))
        a++, b++;
    if (!*a && !*b)
        return 0;
    if (*a && *b)
        return -1;
    v->dref = *a ? a : b;
    int n = (int)strlen(v->dref);
    v->ndref = *a ? n : -n;
    return 0;
}

/* Whether rest is exactly the REF tail dref[0..n), case-blind. */
static int tail_matches(const char *rest, const char *dref, int n)
{
    int j = 0;
    while (j < n && rest[j] && toupper((unsigned char)rest[j]) == toupper((unsigned char)dref[j]))
        j++;
    return j == n && !rest[j];
}

/* The index of al2 among als1[0..nals1), compared as vcmp_find_allele; -1: absent. */
static int vcmp_find_allele(const vcmp_t *v, char *const *als1, int nals1, const char *al2)
{
    for (int i = 0; i < nals1; i++) {
        const char *a = als1[i], *b = al2;
        while (*a && *b && toupper((unsigned char)*a) == toupper((unsigned char)*b))
            a++, b++;
        if (*a && *b)
            continue;
        if (!v->ndref) {
            if (!*a && !*b)
                return i;
            continue;
        }
        if (*a) {
            if (v->ndref > 0 && tail_matches(a, v->dref, v->ndref))
                return i;
            continue;
        }
        if (v->ndref < 0 && tail_matches(b, v->dref, -v->ndref))
            return i;
    }
    return -1;
}

/* bcftools' is_indel for mpileup's alleles (n >= 2): an allele longer than one base. */
static int alleles_indel(int n, char *const *als)
{
    if (als[1][0] == '<')
        return 0;
    for (int i = 0; i < n; i++)
        if (als[i][0] != '<' && als[i][1])
            return 1;
    return 0;
}

static int n_alleles(char *const *als)
{
    int n = 0;
    while (als[n])
        n++;
    return n;
}

/* How well target alleles tgt fit rec (next_line's nmatch_als). */
static int match_score(const bcf1_t *rec, char *const *tgt)
{
    int n = n_alleles(tgt), score = 0;
    vcmp_t v;
    if (vcmp_set_ref(&v, rec->d.allele[0], tgt[0]) == 0) {
        score = 1;
        for (int j = 1; rec->n_allele > 1 && j < n; j++)
            score += vcmp_find_allele(&v, rec->d.allele + 1, rec->n_allele - 1, tgt[j]) >= 0;
    }
    int rec_indel = alleles_indel(rec->n_allele, rec->d.allele) ? 1 : -1;
    return score * rec_indel * (alleles_indel(n, tgt) ? 1 : -1);
}

/* The PL of new genotype k for one sample (mcall_constrain_alleles' rules). */
static int32_t constrained_pl(const int32_t *ori, const int *pl_map, int k, int unseen)
{
    int32_t pl = ori[pl_map[k]];
    if (pl == bcf_int32_missing && unseen >= 0) {
        /* a genotype mpileup gave no value: that of the allele with the unseen one */
        int ia, ib;
        bcf_gt2alleles(pl_map[k], &ia, &ib);
        int k_ori = bcf_alleles2gt(ia, unseen);
        if (ori[k_ori] == bcf_int32_missing)
            k_ori = bcf_alleles2gt(ib, unseen);
        if (ori[k_ori] == bcf_int32_missing)
            k_ori = bcf_alleles2gt(unseen, unseen);
        pl = ori[k_ori];
    }
    if (!k && pl == bcf_int32_vector_end)
        pl = bcf_int32_missing;
    return pl;
}

/* PL rearranged to the nals alleles of als_map. 0 or -1. */
static int constrain_pls(mc_caller_t *c, bcf1_t *rec, int nals, int unseen)
{
    int k = 0;
    for (int i = 0; i < nals; i++)
        for (int j = 0; j <= i; j++) {
            int a = c->als_map[i], b = c->als_map[j];
            c->pl_map[k++] = a > b ? a * (a + 1) / 2 + b : b * (b + 1) / 2 + a;
        }
    c->nPLs = bcf_get_format_int32(c->hdr, rec, "PL", &c->PLs, &c->mPLs);
    int npls_ori = c->nPLs / c->nsmpl, npls_new = k;
    if (c->nPLs <= 0 || mc_grow(&c->itmp, &c->mitmp, (size_t)npls_new * c->nsmpl, 4) < 0)
        return -1;
    for (int s = 0; s < c->nsmpl; s++)
        for (k = 0; k < npls_new; k++)
            c->itmp[s * npls_new + k] = constrained_pl(c->PLs + s * npls_ori, c->pl_map, k, unseen);
    return bcf_update_format_int32(c->hdr, rec, "PL", c->itmp, npls_new * c->nsmpl) < 0 ? -1 : 0;
}

/* INFO/QS and the FORMAT tags of one value per allele, rearranged likewise. 0 or -1. */
static int constrain_per_allele(mc_caller_t *c, bcf1_t *rec, int nals)
{
    mc_group_t *g = &c->grp[0];
    int nqs = bcf_get_info_float(c->hdr, rec, "QS", &g->qsum, &g->mqsum);
    if (mc_grow(&c->GPs, &c->mGPs, (size_t)nals, sizeof(float)) < 0)
        return -1;
    for (int i = 0; i < nals; i++)
        c->GPs[i] = c->als_map[i] < nqs ? g->qsum[c->als_map[i]] : 0;
    if (bcf_update_info_float(c->hdr, rec, "QS", c->GPs, nals) < 0)
        return -1;
    for (int i = 0; i < rec->n_fmt; i++) {
        bcf_fmt_t *fmt = &rec->d.fmt[i];
        if (bcf_hdr_id2length(c->hdr, BCF_HL_FMT, fmt->id) != BCF_VL_R)
            continue;
        int type = bcf_hdr_id2type(c->hdr, BCF_HL_FMT, fmt->id);
        const char *key = bcf_hdr_int2id(c->hdr, BCF_DT_ID, fmt->id);
        int per = fmt->n;
        if (bcf_get_format_values(c->hdr, rec, key, &c->tmp_ori, &c->mtmp_ori, type) <= 0)
            continue;
        if (mc_grow(&c->tmp_new, &c->mtmp_new, (size_t)c->nsmpl * nals, 4) < 0)
            return -1;
        for (int s = 0; s < c->nsmpl; s++)
            for (int k = 0; k < nals; k++)
                memcpy((char *)c->tmp_new + 4 * ((size_t)s * nals + k),
                       (char *)c->tmp_ori + 4 * ((size_t)s * per + c->als_map[k]), 4);
        if (bcf_update_format(c->hdr, rec, key, c->tmp_new, c->nsmpl * nals, type) < 0)
            return -1;
    }
    return 0;
}

/*
 * The record's alleles made the target's (c->tgt_als), mpileup's unseen
 * allele kept last; an allele the record lacks reads the unseen allele's
 * values (bcftools reads REF's when there is none). c->unseen follows. 0 or -1.
 */
int mc_constrain_alleles(mc_caller_t *c, bcf1_t *rec)
{
    char *const *tgt = c->tgt_als;
    int ntgt = n_alleles(tgt), unseen = c->unseen, nals = 1, has_new = 0;
    if (ntgt > 5) {
        mc_fail(c,
                "-C alleles: at most 5 alleles are accepted, got %d at %s:%" PRIhts_pos
                " (as bcftools); give that target fewer ALTs",
                ntgt, bcf_seqname_safe(c->hdr, rec), rec->pos + 1);
        return -1;
    }
    vcmp_t v;
    if (vcmp_set_ref(&v, rec->d.allele[0], tgt[0]) < 0) {
        mc_fail(c,
                "-C alleles: the reference alleles are not compatible at %s:%" PRIhts_pos
                " .. %s vs %s (as bcftools); correct the targets' REF there",
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1, tgt[0], rec->d.allele[0]);
        return -1;
    }
    size_t n = (size_t)ntgt + 1;
    if (mc_grow(&c->als, &c->mals, n, sizeof(*c->als)) < 0 ||
        mc_grow(&c->als_map, &c->mals_map, n, sizeof(*c->als_map)) < 0 ||
        mc_grow(&c->pl_map, &c->mpl_map, n * (n + 1) / 2, sizeof(*c->pl_map)) < 0)
        return -1;
    c->als[0] = tgt[0];
    c->als_map[0] = 0;
    for (int i = 1; i < ntgt; i++, nals++) {
        c->als[nals] = tgt[i];
        int j = vcmp_find_allele(&v, rec->d.allele + 1, rec->n_allele - 1, tgt[i]);
        has_new |= j < 0;
        c->als_map[nals] = j >= 0 ? j + 1 : unseen >= 0 ? unseen : rec->n_allele - 1;
    }
    if (unseen) {
        c->als_map[nals] = unseen;
        c->als[nals++] = rec->d.allele[unseen];
    }
    if (!has_new && nals == rec->n_allele)
        return 0;
    if (bcf_update_alleles(c->hdr, rec, c->als, nals) < 0 ||
        constrain_pls(c, rec, nals, unseen) < 0 || constrain_per_allele(c, rec, nals) < 0)
        return -1;
    if (unseen)
        c->unseen = nals - 1;
    return 0;
}

int mc_call_site(mc_caller_t *c, bcf1_t **recs, int n, bcf1_t *out, mc_emit_fn emit, void *ctx)
{
    c->err[0] = '\0';
    size_t lo = 0, hi = 0;
    int contig = n ? mc_site_targets(c, recs[0], &lo, &hi) : -1;
    char ***als = contig >= 0 ? c->o->targets.contigs[contig].als : NULL;
    if (!als || hi == lo)
        return 0; /* no target here: bcftools never reads these records */
    if (mc_grow(&c->site_used, &c->msite_used, hi - lo, 1) < 0)
        return -1;
    memset(c->site_used, 0, hi - lo);
    /* bcftools means to score every record of the site against every target, but its
     * iterator over the targets is spent on the first record: each record in turn takes
     * its best target among those left */
    for (int i = 0; i < n; i++) {
        if (bcf_unpack(recs[i], BCF_UN_STR) < 0)
            return -1;
        int best = 0;
        size_t best_t = SIZE_MAX;
        for (size_t t = lo; t < hi; t++) {
            if (c->site_used[t - lo])
                continue;
            int score = match_score(recs[i], als[t]);
            if (score > best || best_t == SIZE_MAX)
                best = score, best_t = t;
        }
        if (best_t == SIZE_MAX)
            continue; /* every target here is taken: bcftools does not call it */
        c->site_used[best_t - lo] = 1;
        mc_missed_taken(c, best_t);
        c->tgt_als = als[best_t];
        int r = mc_call(c, recs[i], out);
        c->tgt_als = NULL;
        if (r < 0 || (r == 1 && emit(ctx, out) < 0))
            return -1;
    }
    return 0;
}
